import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.util.Properties;

/**
 * The oracle for the differential test of our .properties codec: loads each input with
 * java.util.Properties.load(InputStream) (as Kafka's Utils.loadProps does) and prints the
 * resulting map with every string as hex UTF-16 code units, so nothing is lost in transit.
 *
 * Input: int count, then per case int length + bytes. Output: one line per case,
 * "OK n k1 v1 ..." or "ERR".
 */
public class PropertiesOracle {
    public static void main(String[] args) throws Exception {
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(new FileInputStream(args[0])));
             PrintStream out = new PrintStream(new BufferedOutputStream(new FileOutputStream(args[1])), false, "US-ASCII")) {
            int count = in.readInt();
            for (int i = 0; i < count; i++) {
                byte[] bytes = new byte[in.readInt()];
                in.readFully(bytes);
                Properties props = new Properties();
                try {
                    props.load(new ByteArrayInputStream(bytes));
                } catch (IllegalArgumentException e) {
                    out.print("ERR\n");
                    continue;
                }
                StringBuilder line = new StringBuilder("OK ").append(props.size());
                for (String key : props.stringPropertyNames()) {
                    line.append(' ').append(hex(key)).append(' ').append(hex(props.getProperty(key)));
                }
                out.print(line.append('\n'));
            }
        }
    }

    private static String hex(String s) {
        StringBuilder sb = new StringBuilder("x");
        for (char c : s.toCharArray()) {
            sb.append(String.format("%04x", (int) c));
        }
        return sb.toString();
    }
}
