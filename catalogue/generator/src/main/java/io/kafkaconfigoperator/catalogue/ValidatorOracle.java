package io.kafkaconfigoperator.catalogue;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.ConfigKey;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

/**
 * Kafka's own verdict on config values, for the differential check of the engine's typed
 * validation (conformance/validators.py). For each stdin line {@code <set> TAB <key> TAB
 * <base64 UTF-8 value>} it runs exactly what {@code ConfigDef.parse} runs for that key of that
 * set's ConfigDef (the package-private {@code ConfigDef.parseValue(key, value, true)}: parseType,
 * ValidList de-duplication, the validator) and prints {@code accept}, {@code reject TAB <base64
 * "ExceptionClass: message">}, or {@code missing} for a key the set does not have.
 *
 * <p>Run with the generator's classpath (conformance/validators.py builds it with Maven).
 */
public final class ValidatorOracle {

    private ValidatorOracle() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, ConfigDef> defs = Generate.configDefs();
        Method parseValue = ConfigDef.class.getDeclaredMethod("parseValue", ConfigKey.class, Object.class, boolean.class);
        parseValue.setAccessible(true);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            String[] fields = line.split("\t", -1);
            if (fields.length != 3) {
                throw new IllegalArgumentException("expected <set> TAB <key> TAB <base64 value>, got " + line);
            }
            ConfigDef def = defs.get(fields[0]);
            ConfigKey key = def == null ? null : def.configKeys().get(fields[1]);
            if (key == null) {
                out.println("missing");
                continue;
            }
            String value = new String(Base64.getDecoder().decode(fields[2]), StandardCharsets.UTF_8);
            try {
                parseValue.invoke(def, key, value, true);
                out.println("accept");
            } catch (InvocationTargetException e) {
                Throwable why = e.getCause();
                String text = why.getClass().getSimpleName() + ": " + why.getMessage();
                out.println("reject\t" + Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8)));
            }
        }
        out.flush();
    }
}
