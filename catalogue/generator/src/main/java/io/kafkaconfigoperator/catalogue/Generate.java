package io.kafkaconfigoperator.catalogue;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.ConfigKey;
import org.apache.kafka.common.config.ConfigDef.Validator;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Writes catalogue/kafka-configs.json from the ConfigDefs of the Kafka jars on the classpath.
 *
 * <p>Usage: {@code Generate <expected-kafka-version> <output-file>}. Run through catalogue/generate.sh.
 * The output is deterministic: no timestamps, sets and keys sorted by name, fixed field order,
 * pure ASCII.
 */
public final class Generate {

    /** Longest doc text kept; the first sentence is cut here (at a word boundary) if longer. */
    private static final int MAX_DOC = 400;

    /** Set CATALOGUE_DEBUG_DEPRECATED=1 to print every key's full plain-text doc and deprecation verdict to stderr. */
    private static final boolean DEBUG_DEPRECATED = System.getenv("CATALOGUE_DEBUG_DEPRECATED") != null;

    private static DeprecatedConstants deprecatedConstants;

    private Generate() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: Generate <expected-kafka-version> <output-file>");
            System.exit(2);
        }
        String expected = args[0];
        String version = kafkaClientsVersion();
        if (!expected.equals(version)) {
            throw new IllegalStateException("kafka-clients on the classpath is " + version + ", expected " + expected);
        }

        deprecatedConstants = DeprecatedConstants.scan();
        Map<String, ConfigDef> defs = configDefs();
        Map<String, Map<String, Object>> sets = new TreeMap<>();

        // --- clients -------------------------------------------------------------------------
        sets.put("producer", set("org.apache.kafka.clients.producer.ProducerConfig", "ProducerConfig.configDef()",
            defs.get("producer"), null, null));
        ConfigDef consumer = defs.get("consumer");
        sets.put("consumer", set("org.apache.kafka.clients.consumer.ConsumerConfig", "ConsumerConfig.configDef()",
            consumer, null, null));
        sets.put("admin", set("org.apache.kafka.clients.admin.AdminClientConfig", "AdminClientConfig.configDef()",
            defs.get("admin"), null, null));

        // The share consumer (KafkaShareConsumer) is configured by the package-private
        // ShareConsumerConfig, which extends ConsumerConfig and passes ConsumerConfig's own CONFIG to
        // AbstractConfig: it has no ConfigDef of its own. It rejects (ConfigException "... cannot be
        // set when using a share group.") any key in its SHARE_GROUP_UNSUPPORTED_CONFIGS.
        String shareClass = "org.apache.kafka.clients.consumer.ShareConsumerConfig";
        @SuppressWarnings("unchecked")
        List<String> rejected = (List<String>) staticField(shareClass, "SHARE_GROUP_UNSUPPORTED_CONFIGS");
        Set<String> rejectedSet = new TreeSet<>(rejected);
        Map<String, Object> share = set(shareClass,
            "ConsumerConfig.configDef() minus ShareConsumerConfig.SHARE_GROUP_UNSUPPORTED_CONFIGS (reflection)",
            consumer, null, rejectedSet);
        share.put("basedOn", "consumer");
        share.put("rejectedKeys", new ArrayList<>(rejectedSet));
        sets.put("share-consumer", share);

        // --- broker / controller / topic -------------------------------------------------------
        // kafka.server.KafkaConfig.configDef() (kafka_2.13) is a getter for this same object.
        Map<String, String> updateModes = new TreeMap<>(
            org.apache.kafka.server.config.DynamicBrokerConfig.dynamicConfigUpdateModes());
        Function<ConfigKey, Map<String, Object>> updateMode =
            (key) -> Map.of("updateMode", updateModes.getOrDefault(key.name, "read-only"));
        sets.put("broker", set("org.apache.kafka.server.config.AbstractKafkaConfig",
            "AbstractKafkaConfig.CONFIG_DEF (= kafka.server.KafkaConfig.configDef())",
            defs.get("broker"), updateMode, null));
        // A KRaft controller reads its server.properties with the same KafkaConfig (process.roles
        // decides the role), so its keys are the broker's, repeated here so that every set is
        // self-contained.
        Map<String, Object> controller = set("org.apache.kafka.server.config.AbstractKafkaConfig",
            "AbstractKafkaConfig.CONFIG_DEF (KRaft controllers and brokers share kafka.server.KafkaConfig)",
            defs.get("controller"), updateMode, null);
        Object controllerKeys = controller.remove("keys");
        controller.put("sameAs", "broker");
        controller.put("keys", controllerKeys);
        sets.put("controller", controller);

        // serverDefault: the broker key whose value is the topic key's default (Kafka's docs'
        // "Server Default Property" column)
        Map<String, String> synonyms = org.apache.kafka.server.config.ServerTopicConfigSynonyms.TOPIC_CONFIG_SYNONYMS;
        sets.put("topic", set("org.apache.kafka.storage.internals.log.LogConfig", "LogConfig.configDefCopy()",
            defs.get("topic"), (key) -> {
                Map<String, Object> extra = new LinkedHashMap<>();
                extra.put("serverDefault", synonyms.get(key.name));
                return extra;
            }, null));

        // --- connect ---------------------------------------------------------------------------
        String distributed = "org.apache.kafka.connect.runtime.distributed.DistributedConfig";
        sets.put("connect-worker", set(distributed, "DistributedConfig.config(Crypto.SYSTEM) (private; reflection)",
            defs.get("connect-worker"), null, null));
        String standalone = "org.apache.kafka.connect.runtime.standalone.StandaloneConfig";
        sets.put("connect-worker-standalone", set(standalone, "StandaloneConfig.CONFIG (private; reflection)",
            defs.get("connect-worker-standalone"), null, null));

        // --- MirrorMaker 2 ----------------------------------------------------------------------
        String mm = "org.apache.kafka.connect.mirror.MirrorMakerConfig";
        sets.put("mirror-maker", set(mm, "MirrorMakerConfig.config() (private; reflection)",
            defs.get("mirror-maker"), null, null));
        for (String[] c : new String[][]{
            {"mirror-source", "org.apache.kafka.connect.mirror.MirrorSourceConfig"},
            {"mirror-checkpoint", "org.apache.kafka.connect.mirror.MirrorCheckpointConfig"},
            {"mirror-heartbeat", "org.apache.kafka.connect.mirror.MirrorHeartbeatConfig"}}) {
            String simple = c[1].substring(c[1].lastIndexOf('.') + 1);
            sets.put(c[0], set(c[1], simple + ".CONNECTOR_CONFIG_DEF (protected; reflection)",
                defs.get(c[0]), null, null));
        }

        // --- streams ---------------------------------------------------------------------------
        sets.put("streams", set("org.apache.kafka.streams.StreamsConfig", "StreamsConfig.configDef()",
            defs.get("streams"), null, null));

        // --- write -----------------------------------------------------------------------------
        StringBuilder out = new StringBuilder();
        out.append("{\n");
        out.append("  \"kafkaVersion\": ");
        Json.string(out, version);
        out.append(",\n  \"generatedBy\": \"catalogue/generate.sh\",\n");
        out.append("  \"sets\": {\n");
        int si = 0;
        for (Map.Entry<String, Map<String, Object>> s : sets.entrySet()) {
            out.append("    ");
            Json.string(out, s.getKey());
            out.append(": {\n");
            int fi = 0;
            Map<String, Object> fields = s.getValue();
            for (Map.Entry<String, Object> f : fields.entrySet()) {
                out.append("      ");
                Json.string(out, f.getKey());
                out.append(": ");
                if (f.getKey().equals("keys")) {
                    List<?> keys = (List<?>) f.getValue();
                    out.append("[\n");
                    for (int i = 0; i < keys.size(); i++) {
                        out.append("        ");
                        Json.write(out, keys.get(i));
                        out.append(i + 1 < keys.size() ? ",\n" : "\n");
                    }
                    out.append("      ]");
                } else {
                    Json.write(out, f.getValue());
                }
                out.append(++fi < fields.size() ? ",\n" : "\n");
            }
            out.append("    }");
            out.append(++si < sets.size() ? ",\n" : "\n");
        }
        out.append("  }\n}\n");

        Files.write(Path.of(args[1]), out.toString().getBytes(StandardCharsets.US_ASCII));

        StringBuilder summary = new StringBuilder("kafka " + version + ":");
        for (Map.Entry<String, Map<String, Object>> s : sets.entrySet()) {
            Object keys = s.getValue().get("keys");
            summary.append(' ').append(s.getKey()).append('=')
                .append(((List<?>) keys).size());
        }
        System.err.println(summary);
    }

    // ------------------------------------------------------------------------------------------

    /**
     * Every set's ConfigDef, by set name, reached as the "Sets" table of catalogue/README.md says
     * (share-consumer: ConsumerConfig's; controller: the broker's). ValidatorOracle uses the same.
     */
    static Map<String, ConfigDef> configDefs() throws ReflectiveOperationException {
        Map<String, ConfigDef> defs = new TreeMap<>();
        defs.put("producer", org.apache.kafka.clients.producer.ProducerConfig.configDef());
        defs.put("consumer", org.apache.kafka.clients.consumer.ConsumerConfig.configDef());
        defs.put("share-consumer", defs.get("consumer"));
        defs.put("admin", org.apache.kafka.clients.admin.AdminClientConfig.configDef());
        defs.put("broker", org.apache.kafka.server.config.AbstractKafkaConfig.CONFIG_DEF);
        defs.put("controller", defs.get("broker"));
        defs.put("topic", org.apache.kafka.storage.internals.log.LogConfig.configDefCopy());
        Object cryptoSystem = staticField("org.apache.kafka.connect.runtime.distributed.Crypto", "SYSTEM");
        defs.put("connect-worker", (ConfigDef) staticMethod("org.apache.kafka.connect.runtime.distributed.DistributedConfig",
            "config", new Class<?>[]{Class.forName("org.apache.kafka.connect.runtime.distributed.Crypto")}, cryptoSystem));
        defs.put("connect-worker-standalone",
            (ConfigDef) staticField("org.apache.kafka.connect.runtime.standalone.StandaloneConfig", "CONFIG"));
        defs.put("mirror-maker",
            (ConfigDef) staticMethod("org.apache.kafka.connect.mirror.MirrorMakerConfig", "config", new Class<?>[0]));
        defs.put("mirror-source", (ConfigDef) staticField("org.apache.kafka.connect.mirror.MirrorSourceConfig", "CONNECTOR_CONFIG_DEF"));
        defs.put("mirror-checkpoint",
            (ConfigDef) staticField("org.apache.kafka.connect.mirror.MirrorCheckpointConfig", "CONNECTOR_CONFIG_DEF"));
        defs.put("mirror-heartbeat",
            (ConfigDef) staticField("org.apache.kafka.connect.mirror.MirrorHeartbeatConfig", "CONNECTOR_CONFIG_DEF"));
        defs.put("streams", org.apache.kafka.streams.StreamsConfig.configDef());
        return defs;
    }

    /** What AppInfoParser reports, read the way it does (the class moved between releases). */
    private static String kafkaClientsVersion() throws java.io.IOException {
        java.util.Properties p = new java.util.Properties();
        try (java.io.InputStream in = Generate.class.getClassLoader().getResourceAsStream("kafka/kafka-version.properties")) {
            if (in == null) {
                throw new IllegalStateException("kafka/kafka-version.properties (kafka-clients) not on the classpath");
            }
            p.load(in);
        }
        return p.getProperty("version", "unknown").trim();
    }

    private static Map<String, Object> set(String source, String accessor, ConfigDef def,
                                           Function<ConfigKey, Map<String, Object>> extra, Set<String> skip) {
        Map<String, Object> set = new LinkedHashMap<>();
        set.put("source", source);
        set.put("accessor", accessor);
        List<Object> keys = new ArrayList<>();
        for (ConfigKey key : new TreeMap<>(def.configKeys()).values()) {
            if (skip != null && skip.contains(key.name)) {
                continue;
            }
            keys.add(key(key, extra));
        }
        set.put("keys", keys);
        return set;
    }

    private static Map<String, Object> key(ConfigKey key, Function<ConfigKey, Map<String, Object>> extra) {
        Map<String, Object> k = new LinkedHashMap<>();
        k.put("name", key.name);
        k.put("type", key.type.name());
        k.put("default", renderDefault(key));
        k.put("hasDefault", key.hasDefault());
        k.put("importance", key.importance == null ? null : key.importance.name());
        k.put("validator", validator(key.validator));
        k.put("validatorText", key.validator == null ? null : text(key.validator));
        boolean byDoc = Docs.isDeprecated(key.name, key.documentation);
        boolean byConstant = deprecatedConstants.isDeprecated(key.name);
        boolean deprecated = byDoc || byConstant;
        if (DEBUG_DEPRECATED) {
            System.err.println("DEPRECATED? " + deprecated + " doc=" + byDoc + " constant=" + byConstant
                + deprecatedConstants.constants(key.name) + " " + key.name + " :: " + Docs.plain(key.documentation));
        }
        k.put("deprecated", deprecated);
        k.put("internal", key.internalConfig);
        if (extra != null) {
            k.putAll(new TreeMap<>(extra.apply(key)));
        }
        k.put("doc", Docs.firstSentence(key.documentation, MAX_DOC));
        return k;
    }

    /** The default as Kafka renders it in a .properties value; passwords are never revealed. */
    static String renderDefault(ConfigKey key) {
        if (!key.hasDefault() || key.defaultValue == null) {
            return null;
        }
        if (key.type == ConfigDef.Type.PASSWORD) {
            return "[hidden]";
        }
        return ConfigDef.convertToString(key.defaultValue, key.type);
    }

    // --- validators ---------------------------------------------------------------------------

    private static final Pattern IDENTITY = Pattern.compile("[\\w.$/]*(\\$\\$Lambda|@[0-9a-f]{4,})[\\w.$/@]*");

    /** validator.toString(), with JVM identity hashes / lambda class names (which change run to run) masked. */
    static String text(Validator v) {
        String s = String.valueOf(v);
        Matcher m = IDENTITY.matcher(s);
        return m.find() ? m.replaceAll(Matcher.quoteReplacement("<" + lambdaFree(v.getClass().getName()) + ">")) : s;
    }

    /** "Foo$$Lambda$123/0x..." -> "Foo": the class whose code holds the lambda. */
    private static String lambdaHost(String className) {
        int i = className.indexOf("$$Lambda");
        if (i < 0) {
            throw new IllegalStateException("not a lambda class: " + className);
        }
        return className.substring(0, i);
    }

    /** "Foo$$Lambda$123/0x..." (differs run to run) -> "Foo$$Lambda". */
    private static String lambdaFree(String className) {
        int i = className.indexOf("$$Lambda");
        return i < 0 ? className : className.substring(0, i + "$$Lambda".length());
    }

    @SuppressWarnings("unchecked")
    static Object validator(Validator v) {
        if (v == null) {
            return null;
        }
        Map<String, Object> m = new LinkedHashMap<>();
        Class<?> c = v.getClass();
        if (c == ConfigDef.Range.class) {
            m.put("kind", "range");
            m.put("min", number(field(v, "min")));
            m.put("max", number(field(v, "max")));
        } else if (c == ConfigDef.ValidString.class) {
            // ValidString.in(null, "a", ...) accepts an unset (null) value: Kafka's list holds a
            // null, written here as allowNull so that "values" stays a list of strings
            List<Object> values = new ArrayList<>((Collection<?>) field(v, "validStrings"));
            boolean allowNull = values.removeIf(x -> x == null);
            m.put("kind", "validString");
            m.put("values", values);
            m.put("allowNull", allowNull);
        } else if (c == ConfigDef.CaseInsensitiveValidString.class) {
            m.put("kind", "caseInsensitiveValidString");
            // stored upper-cased in a HashSet: sort for a stable order
            m.put("values", new ArrayList<>(new TreeSet<>((Collection<String>) field(v, "validStrings"))));
        } else if (c == ConfigDef.ValidList.class) {
            Object validString = field(v, "validString");
            m.put("kind", "validList");
            m.put("values", new ArrayList<>((Collection<?>) field(validString, "validStrings")));
            m.put("allowEmpty", field(v, "isEmptyAllowed"));
            m.put("allowNull", field(v, "isNullAllowed"));
        } else if (c == ConfigDef.NonEmptyString.class) {
            m.put("kind", "nonEmptyString");
        } else if (c == ConfigDef.NonEmptyStringWithoutControlChars.class) {
            m.put("kind", "nonEmptyStringWithoutControlChars");
        } else if (c == ConfigDef.NonNullValidator.class) {
            m.put("kind", "nonNullValidator");
        } else if (c == ConfigDef.ListSize.class) {
            m.put("kind", "listSize");
            m.put("maxSize", field(v, "maxSize"));
        } else if (c == ConfigDef.CompositeValidator.class) {
            m.put("kind", "composite");
            List<Object> parts = new ArrayList<>();
            for (Object part : (List<?>) field(v, "validators")) {
                parts.add(validator((Validator) part));
            }
            m.put("validators", parts);
        } else if (c == ConfigDef.LambdaValidator.class) {
            // The lambda's code cannot be read, but the class that defines it can: the engine
            // keeps what each one does in a table keyed by definedIn + description.
            m.put("kind", "lambda");
            m.put("definedIn", lambdaHost(field(v, "ensureValid").getClass().getName()));
            m.put("description", text(v));
        } else if (KafkaValidators.describe(v, m)) {
            // a Kafka validator class outside ConfigDef whose behaviour has a structured kind
        } else {
            m.put("kind", "other");
            m.put("class", lambdaFree(c.getName()));
            m.put("description", text(v));
        }
        return m;
    }

    private static Object number(Object n) {
        if (n == null) {
            return null;
        }
        if (n instanceof Double || n instanceof Float) {
            double d = ((Number) n).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                throw new IllegalStateException("non-finite range bound " + n);
            }
            return new Json.Num(Double.toString(d));
        }
        if (n instanceof Integer || n instanceof Long || n instanceof Short || n instanceof Byte) {
            return new Json.Num(n.toString());
        }
        throw new IllegalStateException("unexpected range bound type " + n.getClass());
    }

    // --- reflection ---------------------------------------------------------------------------

    static Object field(Object target, String name) {
        try {
            Class<?> c = target.getClass();
            while (c != null) {
                try {
                    Field f = c.getDeclaredField(name);
                    f.setAccessible(true);
                    return f.get(target);
                } catch (NoSuchFieldException e) {
                    c = c.getSuperclass();
                }
            }
            throw new NoSuchFieldException(target.getClass().getName() + "." + name);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    static Object staticField(String className, String name) throws ReflectiveOperationException {
        Field f = Class.forName(className).getDeclaredField(name);
        f.setAccessible(true);
        return f.get(null);
    }

    private static Object staticMethod(String className, String name, Class<?>[] types, Object... args)
        throws ReflectiveOperationException {
        Method m = Class.forName(className).getDeclaredMethod(name, types);
        m.setAccessible(true);
        return m.invoke(null, args);
    }

}
