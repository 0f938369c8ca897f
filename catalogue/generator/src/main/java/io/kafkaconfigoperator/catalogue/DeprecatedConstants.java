package io.kafkaconfigoperator.catalogue;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Enumeration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * Second deprecation signal: Kafka marks the Java constant that names a deprecated key
 * {@code @Deprecated} (e.g. {@code StreamsConfig.CACHE_MAX_BYTES_BUFFERING_CONFIG}), and
 * {@code @Deprecated} is kept at run time.
 *
 * <p>Scans every class whose simple name ends in "Config" or "Configs" in the Kafka jars
 * (kafka-*.jar, connect-*.jar) on the classpath and reads its static final String fields. A key
 * name counts as deprecated when at least one {@code @Deprecated} constant has it as value and no
 * constant without {@code @Deprecated} does (so a renamed constant, e.g. a typo alias kept for
 * compatibility, does not make the key deprecated).
 */
final class DeprecatedConstants {
    /** key name -> classes.fields of the deprecated constants naming it */
    private final Map<String, Set<String>> deprecated = new TreeMap<>();
    private final Set<String> notDeprecated = new TreeSet<>();

    static DeprecatedConstants scan() throws IOException {
        DeprecatedConstants d = new DeprecatedConstants();
        ClassLoader cl = DeprecatedConstants.class.getClassLoader();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String file = new File(entry).getName();
            if (!(file.startsWith("kafka-") || file.startsWith("connect-")) || !file.endsWith(".jar")) {
                continue;
            }
            try (JarFile jar = new JarFile(entry)) {
                Enumeration<JarEntry> entries = jar.entries();
                while (entries.hasMoreElements()) {
                    String name = entries.nextElement().getName();
                    if (!name.startsWith("org/apache/kafka/") || !name.endsWith(".class")) {
                        continue;
                    }
                    String binary = name.substring(0, name.length() - ".class".length()).replace('/', '.');
                    String simple = binary.substring(Math.max(binary.lastIndexOf('.'), binary.lastIndexOf('$')) + 1);
                    if (simple.endsWith("Config") || simple.endsWith("Configs")) {
                        d.scanClass(cl, binary);
                    }
                }
            }
        }
        return d;
    }

    private void scanClass(ClassLoader cl, String binary) {
        try {
            Class<?> c = Class.forName(binary, false, cl);
            for (Field f : c.getDeclaredFields()) {
                int mod = f.getModifiers();
                if (!Modifier.isStatic(mod) || !Modifier.isFinal(mod) || f.getType() != String.class) {
                    continue;
                }
                f.setAccessible(true);
                Object value = f.get(null);
                if (!(value instanceof String s)) {
                    continue;
                }
                if (f.isAnnotationPresent(Deprecated.class)) {
                    deprecated.computeIfAbsent(s, k -> new TreeSet<>()).add(c.getName() + "." + f.getName());
                } else {
                    notDeprecated.add(s);
                }
            }
        } catch (Throwable t) {
            // a class that cannot be loaded or initialised here (missing optional dependency) is skipped
        }
    }

    boolean isDeprecated(String key) {
        return deprecated.containsKey(key) && !notDeprecated.contains(key);
    }

    /** The deprecated constants naming this key, for the debug listing. */
    Set<String> constants(String key) {
        return deprecated.getOrDefault(key, Set.of());
    }
}
