import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import joptsimple.OptionParser;
import joptsimple.OptionSet;
import joptsimple.OptionSpec;
import net.sourceforge.argparse4j.inf.ArgumentParser;
import net.sourceforge.argparse4j.inf.ArgumentParserException;
import net.sourceforge.argparse4j.inf.Namespace;

/**
 * Feeds argument lists to the real parsers of Kafka's tools (tests/tool_cli_oracle.rs).
 *
 * <p>Input: one case per line, {@code TOOL ARG...}, tab-separated, every field as hex UTF-16
 * units. Output, one line per case: {@code ERR <exception class>} or {@code OK} followed by
 * {@code NAME=VALUES} words (hex), one per option the parser saw, VALUES joined with U+0001; jopt
 * tools add {@code [arguments]} for the non-option arguments. Option names are the table's
 * canonical names: first long name (sorted), else {@code -x}.
 */
public class ToolCliOracle {
    static final class ExitCalled extends RuntimeException {
        ExitCalled() {
            super("exit");
        }
    }

    public static void main(String[] a) throws Exception {
        org.apache.kafka.common.utils.Exit.setExitProcedure((c, m) -> {
            throw new ExitCalled();
        });
        PrintStream realOut = System.out;
        PrintStream sink = new PrintStream(OutputStream.nullOutputStream());
        System.setOut(sink);
        System.setErr(sink);
        Map<String, Object> parsers = new TreeMap<>();
        StringBuilder out = new StringBuilder();
        for (String line : Files.readAllLines(Path.of(a[0]), StandardCharsets.US_ASCII)) {
            String[] fields = line.split("\t", -1);
            String tool = unhex(fields[0]);
            String[] argv = new String[fields.length - 1];
            for (int i = 1; i < fields.length; i++) {
                argv[i - 1] = unhex(fields[i]);
            }
            Object parser = parsers.get(tool);
            if (parser == null) {
                parser = parserOf(tool);
                parsers.put(tool, parser);
            }
            try {
                Map<String, String> seen = parser instanceof OptionParser jopt ? jopt(jopt, argv) : argparse((ArgumentParser) parser, argv);
                out.append("OK");
                for (Map.Entry<String, String> e : seen.entrySet()) {
                    out.append(' ').append(hex(e.getKey())).append('=').append(hex(e.getValue()));
                }
            } catch (joptsimple.OptionException | ArgumentParserException e) {
                out.append("ERR ").append(e.getClass().getSimpleName());
            }
            out.append('\n');
        }
        Files.writeString(Path.of(a[1]), out.toString());
        System.setOut(realOut);
    }

    static Map<String, String> jopt(OptionParser parser, String[] argv) {
        OptionSet set = parser.parse(argv);
        Map<String, String> seen = new TreeMap<>();
        // The raw argument strings: OptionSet.valuesOf would convert them (a tool calls it later;
        // the parser itself does not convert).
        Map<?, ?> raw = (Map<?, ?>) field(set, "optionsToArguments");
        for (OptionSpec<?> spec : set.specs()) {
            List<String> values = new ArrayList<>();
            Object list = raw.get(spec);
            if (list != null) {
                for (Object v : (List<?>) list) {
                    values.add(String.valueOf(v));
                }
            }
            seen.put(canonical(spec.options()), String.join("\u0001", values));
        }
        List<String> rest = new ArrayList<>();
        for (Object v : set.nonOptionArguments()) {
            rest.add(String.valueOf(v));
        }
        if (!rest.isEmpty()) {
            seen.put("[arguments]", String.join("\u0001", rest));
        }
        return seen;
    }

    /** Values in the Namespace, for every option of every (sub)parser whose dest is set. */
    static Map<String, String> argparse(ArgumentParser parser, String[] argv) throws ArgumentParserException {
        Namespace ns = parser.parseArgs(argv);
        Map<String, String> seen = new TreeMap<>();
        collect(parser, ns, seen);
        return seen;
    }

    static void collect(Object parser, Namespace ns, Map<String, String> seen) {
        for (Object arg : (List<?>) field(parser, "optargs_")) {
            String dest = (String) call(arg, "getDest");
            Object value = ns.getAttrs().get(dest);
            if (value == null || ns.getAttrs().get(dest) == field(arg, "default_")) {
                continue;
            }
            List<String> names = new ArrayList<>();
            for (String flag : (String[]) field(arg, "flags_")) {
                names.add(flag.startsWith("--") ? flag.substring(2) : flag.substring(1));
            }
            String text;
            if (value instanceof List<?> list) {
                List<String> items = new ArrayList<>();
                for (Object v : list) {
                    items.add(String.valueOf(v));
                }
                text = String.join("\u0001", items);
            } else {
                text = String.valueOf(value);
            }
            seen.put(canonical(names), text);
        }
        Object subparsers = field(parser, "subparsers_");
        for (Object sub : ((Map<?, ?>) field(subparsers, "parsers_")).values()) {
            collect(field(sub, "parser_"), ns, seen);
        }
    }

    /** The table's canonical name: first long name in sorted order, else the short one as -x. */
    static String canonical(List<String> names) {
        String best = null;
        String shortest = null;
        for (String n : names) {
            if (n.length() > 1) {
                if (best == null || n.compareTo(best) < 0) {
                    best = n;
                }
            } else if (shortest == null || n.compareTo(shortest) < 0) {
                shortest = n;
            }
        }
        return best != null ? best : "-" + shortest;
    }

    static Object parserOf(String tool) throws Exception {
        switch (tool) {
            case "kafka-console-consumer":
                return joptOf("org.apache.kafka.tools.consumer.ConsoleConsumerOptions",
                    "--bootstrap-server", "localhost:9092", "--topic", "t");
            case "kafka-console-producer":
                return joptOf("org.apache.kafka.tools.ConsoleProducer$ConsoleProducerOptions",
                    "--bootstrap-server", "localhost:9092", "--topic", "t");
            case "kafka-consumer-groups":
                return joptOf("org.apache.kafka.tools.consumer.group.ConsumerGroupCommandOptions");
            case "kafka-producer-perf-test": {
                Method m = Class.forName("org.apache.kafka.tools.ProducerPerformance").getDeclaredMethod("argParser");
                m.setAccessible(true);
                return m.invoke(null);
            }
            case "kafka-metadata-quorum": {
                Method m = Class.forName("org.apache.kafka.tools.MetadataQuorumCommand").getDeclaredMethod("execute", String[].class);
                m.setAccessible(true);
                try {
                    m.invoke(null, (Object) new String[] {"--no-such-option"});
                } catch (InvocationTargetException e) {
                    if (e.getCause() instanceof ArgumentParserException ape) {
                        return ape.getParser();
                    }
                    throw e;
                }
                throw new IllegalStateException("metadata-quorum accepted an unknown option");
            }
            default:
                throw new IllegalArgumentException("no oracle for " + tool);
        }
    }

    static OptionParser joptOf(String cls, String... argv) throws Exception {
        Constructor<?> ctor = Class.forName(cls).getDeclaredConstructor(String[].class);
        ctor.setAccessible(true);
        Object options = ctor.newInstance((Object) argv);
        for (Class<?> k = options.getClass(); k != null; k = k.getSuperclass()) {
            for (Field f : k.getDeclaredFields()) {
                if (f.getType() == OptionParser.class) {
                    f.setAccessible(true);
                    return (OptionParser) f.get(options);
                }
            }
        }
        throw new IllegalStateException("no OptionParser in " + cls);
    }

    static Object field(Object o, String name) {
        for (Class<?> k = o.getClass(); k != null; k = k.getSuperclass()) {
            try {
                Field f = k.getDeclaredField(name);
                f.setAccessible(true);
                return f.get(o);
            } catch (NoSuchFieldException e) {
                // superclass
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }
        throw new IllegalStateException("no field " + name);
    }

    static Object call(Object o, String method) {
        try {
            Method m = o.getClass().getMethod(method);
            m.setAccessible(true);
            return m.invoke(o);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    static String unhex(String s) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i + 4 <= s.length(); i += 4) {
            sb.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
        }
        return sb.toString();
    }

    static String hex(String s) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            sb.append(String.format("%04x", (int) s.charAt(i)));
        }
        return sb.toString();
    }
}
