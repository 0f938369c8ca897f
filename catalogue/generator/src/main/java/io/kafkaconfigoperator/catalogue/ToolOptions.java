package io.kafkaconfigoperator.catalogue;

import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads every command-line tool's option table out of the real parser objects in the Kafka jars
 * on the classpath (jopt-simple {@code OptionParser} or argparse4j {@code ArgumentParser}), for
 * catalogue/kafka-tool-options.json. Only reflection is used: nothing here names an option.
 *
 * <p>Usage (through catalogue/generate.sh, one JVM per Kafka release, each with that release's
 * classpath):
 * <pre>
 *   ToolOptions read EXPECTED_KAFKA_VERSION FROM_LINE tools.yaml FRAGMENT_OUT
 *   ToolOptions combine CATALOGUE_KAFKA_VERSION OUT FRAGMENT...
 * </pre>
 * {@code read} writes one release's entry; {@code combine} joins the entries (newest first) into
 * the final file. Reading fails loudly when a tool's parser cannot be found or an option looks
 * like it carries properties or a file but matches no rule of {@link #CARRIES_RULES}.
 */
public final class ToolOptions {
    private ToolOptions() {
    }

    /** Thrown by the exit/halt procedure we install, so a tool's exit never ends the generator. */
    static final class ExitCalled extends RuntimeException {
        ExitCalled(int code, String message) {
            super("Exit.exit(" + code + ", " + message + ")");
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 5 && args[0].equals("read")) {
            read(args[1], args[2], Path.of(args[3]), Path.of(args[4]));
        } else if (args.length >= 4 && args[0].equals("combine")) {
            combine(args[1], Path.of(args[2]), List.of(args).subList(3, args.length));
        } else {
            System.err.println("usage: ToolOptions read VERSION FROM_LINE tools.yaml OUT | combine VERSION OUT FRAGMENT...");
            System.exit(2);
        }
    }

    // --- tools.yaml --------------------------------------------------------------------------

    record Tool(String name, String mainClass, boolean positionalConfigFile) {
    }

    /** The `tools:` entries of catalogue/tools.yaml (name, mainClass, positionalConfigFile). */
    static List<Tool> tools(Path yaml) throws Exception {
        Pattern nameLine = Pattern.compile("^  - name: (\\S+)\\s*$");
        Pattern fieldLine = Pattern.compile("^    (mainClass|positionalConfigFile): (\\S+)\\s*$");
        List<Tool> tools = new ArrayList<>();
        String name = null;
        String mainClass = null;
        boolean positional = false;
        for (String line : Files.readAllLines(yaml, StandardCharsets.UTF_8)) {
            Matcher n = nameLine.matcher(line);
            if (n.matches()) {
                if (name != null) {
                    tools.add(new Tool(name, mainClass, positional));
                }
                name = n.group(1);
                mainClass = null;
                positional = false;
                continue;
            }
            Matcher f = fieldLine.matcher(line);
            if (f.matches() && name != null) {
                if (f.group(1).equals("mainClass")) {
                    mainClass = f.group(2);
                } else {
                    positional = f.group(2).equals("true");
                }
            }
        }
        if (name != null) {
            tools.add(new Tool(name, mainClass, positional));
        }
        if (tools.size() < 20) {
            throw new IllegalStateException("read only " + tools.size() + " tools from " + yaml + "; has its layout changed?");
        }
        return tools;
    }

    // --- read one release ----------------------------------------------------------------------

    static void read(String expected, String fromLine, Path yaml, Path out) throws Exception {
        String version = org.apache.kafka.common.utils.AppInfoParser.getVersion();
        if (!expected.equals(version)) {
            throw new IllegalStateException("kafka-clients on the classpath is " + version + ", expected " + expected);
        }
        // A tool that decides to exit throws instead (Kafka's tools exit through these).
        org.apache.kafka.common.utils.Exit.setExitProcedure((code, message) -> {
            throw new ExitCalled(code, message);
        });
        org.apache.kafka.common.utils.Exit.setHaltProcedure((code, message) -> {
            throw new ExitCalled(code, message);
        });
        // Some parsers exit the JVM themselves (argparse4j's parseArgsOrFail, System.exit in a
        // tool): refuse that too, so a probe fails with an exception instead of ending the run.
        // Java 17 needs -Djava.security.manager=allow for this (generate.sh passes it).
        installNoExit();
        PrintStream realOut = System.out;
        PrintStream realErr = System.err;
        List<Map<String, Object>> tables = new ArrayList<>();
        List<Map<String, Object>> without = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        for (Tool tool : tools(yaml)) {
            if (tool.mainClass() == null) {
                without.add(entry(tool.name(), null,
                    "not a command-line tool: a set of client configurations (selectRoles)"));
                continue;
            }
            if (tool.positionalConfigFile()) {
                without.add(entry(tool.name(), tool.mainClass(),
                    "started with the rendered properties file as its positional argument; the operator renders no options for it"));
                continue;
            }
            try {
                // Tools print usage and warnings while being probed; keep the generator's output clean.
                PrintStream sink = new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8);
                System.setOut(sink);
                System.setErr(sink);
                Map<String, Object> table;
                try {
                    table = readTool(tool);
                } finally {
                    System.setOut(realOut);
                    System.setErr(realErr);
                }
                tables.add(table);
            } catch (Throwable e) {
                failures.add(tool.name() + " (" + tool.mainClass() + "): " + describe(e));
            }
        }
        if (!failures.isEmpty()) {
            throw new IllegalStateException("cannot read the option parser of " + failures.size()
                + " tool(s) in Kafka " + version + ":\n  " + String.join("\n  ", failures));
        }
        Map<String, Object> release = new LinkedHashMap<>();
        release.put("kafkaVersion", version);
        release.put("fromKafkaVersion", fromLine);
        release.put("tools", tables);
        release.put("withoutTable", without);
        Files.write(out, pretty(release).getBytes(StandardCharsets.US_ASCII));
    }

    @SuppressWarnings("removal")
    private static void installNoExit() {
        System.setSecurityManager(new SecurityManager() {
            @Override
            public void checkExit(int status) {
                throw new ExitCalled(status, "System.exit");
            }

            @Override
            public void checkPermission(java.security.Permission perm) {
                // everything else is allowed
            }

            @Override
            public void checkPermission(java.security.Permission perm, Object context) {
                // everything else is allowed
            }
        });
    }

    private static Map<String, Object> entry(String name, String mainClass, String reason) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("mainClass", mainClass);
        m.put("reason", reason);
        return m;
    }

    private static String describe(Throwable e) {
        StringBuilder sb = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (!(t instanceof InvocationTargetException)) {
                if (sb.length() > 0) {
                    sb.append(" <- ");
                }
                sb.append(t);
            }
        }
        return sb.toString();
    }

    static Map<String, Object> readTool(Tool tool) throws Exception {
        Class<?> main = Class.forName(tool.mainClass());
        Object parser = findParser(tool, main);
        Map<String, Object> table = new LinkedHashMap<>();
        table.put("name", tool.name());
        table.put("mainClass", tool.mainClass());
        if (parser instanceof joptsimple.OptionParser jopt) {
            table.put("parser", "jopt-simple");
            Jopt.read(tool.name(), jopt, table);
        } else if (parser instanceof net.sourceforge.argparse4j.inf.ArgumentParser arg) {
            table.put("parser", "argparse4j");
            Argparse.read(tool.name(), arg, table);
        } else if (parser instanceof PositionalOnly p) {
            // No option parser at all: the tool reads its arguments by position (kafka-e2e-latency
            // before 4.2). Every argument is positional, "--x" included.
            table.put("parser", "none");
            table.put("abbreviations", false);
            table.put("options", List.of());
            table.put("positionals", p.positionals());
        } else {
            throw new IllegalStateException("no parser found");
        }
        return table;
    }

    // --- finding the parser object --------------------------------------------------------------

    /**
     * Minimal argument lists that let an options class's constructor finish, tried in order after
     * the empty one. They only get the constructor past the tool's own argument checks; the option
     * table itself is read from the parser, never from here.
     */
    private static final List<String[]> PROBE_ARGVS = List.of(
        new String[] {},
        new String[] {"--bootstrap-server", "localhost:9092"},
        new String[] {"--bootstrap-server", "localhost:9092", "--topic", "t"},
        new String[] {"--bootstrap-server", "localhost:9092", "--topic", "t", "--group", "g"},
        new String[] {"--bootstrap-server", "localhost:9092", "--list"},
        new String[] {"--bootstrap-server", "localhost:9092", "--describe"},
        new String[] {"--bootstrap-server", "localhost:9092", "--topic", "t", "--num-records", "1"},
        new String[] {"--bootstrap-server", "localhost:9092", "--topic", "t", "--messages", "1"},
        new String[] {"--bootstrap-server", "localhost:9092", "--topic", "t", "--num-messages", "1"},
        new String[] {"--bootstrap-server", "localhost:9092", "--topic", "t", "--num-records", "1",
            "--record-size", "1", "--producer-acks", "1"},
        new String[] {"--bootstrap-server", "localhost:9092", "--application-id", "a"},
        new String[] {"--bootstrap-server", "localhost:9092", "--election-type", "preferred",
            "--all-topic-partitions"},
        new String[] {"--bootstrap-server", "localhost:9092", "--offset-json-file", "/dev/null"});

    private static Object findParser(Tool tool, Class<?> main) throws Exception {
        List<String> tried = new ArrayList<>();
        // 1. argparse4j: a static no-argument argParser() (ProducerPerformance, Verifiable*).
        try {
            Method m = main.getDeclaredMethod("argParser");
            if (Modifier.isStatic(m.getModifiers())) {
                m.setAccessible(true);
                return m.invoke(null);
            }
        } catch (NoSuchMethodException e) {
            tried.add("no static argParser()");
        }
        // 2. jopt-simple: an options class holding the OptionParser (nested in the main class, or
        //    <Main>Options / <Main>CommandOptions / <Main>Opts beside it).
        List<Class<?>> candidates = new ArrayList<>();
        for (Class<?> nested : main.getDeclaredClasses()) {
            if (parserField(nested) != null) {
                candidates.add(nested);
            }
        }
        for (String suffix : List.of("Options", "CommandOptions", "Opts")) {
            try {
                Class<?> c = Class.forName(main.getName() + suffix);
                if (parserField(c) != null) {
                    candidates.add(c);
                }
            } catch (ClassNotFoundException e) {
                // not this name
            }
        }
        for (Class<?> c : candidates) {
            var ctor = c.getDeclaredConstructor(String[].class);
            ctor.setAccessible(true);
            for (String[] argv : PROBE_ARGVS) {
                try {
                    Object options = ctor.newInstance((Object) argv);
                    Field f = parserField(c);
                    f.setAccessible(true);
                    return f.get(options);
                } catch (InvocationTargetException e) {
                    tried.add(c.getSimpleName() + "(" + String.join(" ", argv) + "): " + describe(e.getCause()));
                }
            }
        }
        // 3. argparse4j parsers built inside a static execute(String...): run it with an argument
        //    no parser knows; argparse4j's exception carries the parser that refused it.
        for (Method m : main.getDeclaredMethods()) {
            if (!m.getName().equals("execute") || !Modifier.isStatic(m.getModifiers())
                || m.getParameterCount() == 0 || m.getParameterTypes()[0] != String[].class) {
                continue;
            }
            m.setAccessible(true);
            Object[] params = new Object[m.getParameterCount()];
            params[0] = new String[] {"--kco-probe-no-such-option"};
            net.sourceforge.argparse4j.ArgumentParsers.CREATED.clear();
            try {
                m.invoke(null, params);
                tried.add("execute accepted an unknown option");
            } catch (InvocationTargetException e) {
                for (Throwable t = e.getCause(); t != null; t = t.getCause()) {
                    if (t instanceof net.sourceforge.argparse4j.inf.ArgumentParserException ape) {
                        return ape.getParser();
                    }
                }
                // The tool caught the parse error and exited (parseArgsOrFail, handleError + Exit):
                // the parser it built is the first one created during the call (subcommand
                // parsers are not made through ArgumentParsers).
                List<net.sourceforge.argparse4j.inf.ArgumentParser> created =
                    List.copyOf(net.sourceforge.argparse4j.ArgumentParsers.CREATED);
                if (created.size() == 1) {
                    return created.get(0);
                }
                tried.add("execute: " + describe(e.getCause()) + "; parsers created: " + created.size());
            }
        }
        // 4. No parser library in the tool's classes at all: its USAGE message, which it prints for
        //    a wrong argument count, names the positional arguments.
        if (!usesParserLibrary(main)) {
            for (Method m : main.getDeclaredMethods()) {
                if (!m.getName().equals("execute") || m.getParameterCount() != 1 || m.getParameterTypes()[0] != String[].class
                    || !Modifier.isStatic(m.getModifiers())) {
                    continue;
                }
                m.setAccessible(true);
                try {
                    m.invoke(null, (Object) new String[] {});
                } catch (InvocationTargetException e) {
                    String message = String.valueOf(e.getCause().getMessage());
                    Matcher usage = Pattern.compile("^USAGE: java " + Pattern.quote(main.getName()) + " (.*)$").matcher(message.strip());
                    if (usage.matches()) {
                        return PositionalOnly.fromUsage(usage.group(1));
                    }
                    tried.add("execute(): " + describe(e.getCause()));
                }
            }
        }
        throw new IllegalStateException("no option parser found; tried: " + String.join("; ", tried));
    }

    /** A tool without an option parser: its positional arguments from its USAGE line. */
    record PositionalOnly(List<Map<String, Object>> positionals) {
        static PositionalOnly fromUsage(String usage) {
            List<Map<String, Object>> out = new ArrayList<>();
            String nargs = "1";
            for (String word : usage.trim().split("\\s+")) {
                if (word.equals("[optional]")) {
                    nargs = "?";
                    continue;
                }
                if (!word.matches("[a-z_]+")) {
                    throw new IllegalStateException("unexpected word in USAGE: " + word);
                }
                Map<String, Object> p = new LinkedHashMap<>();
                p.put("name", word);
                p.put("nargs", nargs);
                out.add(p);
                nargs = "1";
            }
            return new PositionalOnly(out);
        }
    }

    /** Whether the class (or a nested class) mentions jopt-simple or argparse4j in its bytecode. */
    private static boolean usesParserLibrary(Class<?> main) throws Exception {
        List<Class<?>> classes = new ArrayList<>(List.of(main.getDeclaredClasses()));
        classes.add(main);
        for (Class<?> c : classes) {
            String resource = "/" + c.getName().replace('.', '/') + ".class";
            try (var in = c.getResourceAsStream(resource)) {
                String bytes = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
                if (bytes.contains("joptsimple/") || bytes.contains("argparse4j/")) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The first field of type OptionParser in the class or its superclasses. */
    private static Field parserField(Class<?> c) {
        for (Class<?> k = c; k != null && k != Object.class; k = k.getSuperclass()) {
            for (Field f : k.getDeclaredFields()) {
                if (f.getType() == joptsimple.OptionParser.class && !Modifier.isStatic(f.getModifiers())) {
                    return f;
                }
            }
        }
        return null;
    }

    static Object field(Object o, String name) {
        for (Class<?> k = o.getClass(); k != null; k = k.getSuperclass()) {
            try {
                Field f = k.getDeclaredField(name);
                f.setAccessible(true);
                return f.get(o);
            } catch (NoSuchFieldException e) {
                // look further up
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }
        throw new IllegalStateException("no field " + name + " in " + o.getClass().getName()
            + " (private API moved? see catalogue/README.md)");
    }

    // --- which options carry property sets or files ---------------------------------------------

    /** An option "looks like" it carries properties or a file when a long name matches this. */
    static final Pattern LOOKS_LIKE = Pattern.compile(
        "^(.*[-.]config|config|.*[-.]config-file|config-file|.*-property|property|.*-properties|properties|.*-props|props)$");

    /**
     * Rules, first match wins: a regular expression on the long name, one on the description
     * (lower case, whitespace collapsed), and the verdict ("file", "properties", or "none" for
     * options whose key=value pairs configure something other than the tool's own clients).
     */
    record Rule(Pattern name, Pattern description, String verdict) {
    }

    static final List<Rule> CARRIES_RULES = List.of(
        // kafka-topics --config / --delete-config, kafka-configs --add-config(-file) / --delete-config:
        // the configuration of the topic/broker/client entity being changed, not of the tool's client.
        new Rule(Pattern.compile("^(config|delete-config|add-config|add-config-file)$"),
            Pattern.compile(".*(topic configuration|configs? to (add|remove|be removed)|config keys to remove|config(uration)? override|path to a properties file with configs to add|no longer supported).*"),
            "none"),
        new Rule(Pattern.compile(".*"),
            Pattern.compile(".*(propert(y|ies) file|config(uration)?s? (properties )?file|config file|file containing|file with (client|admin|producer|consumer) config).*"),
            "file"),
        new Rule(Pattern.compile(".*"),
            Pattern.compile(".*(key=value|user-defined properties|properties in the form|kafka producer related configuration properties|(producer|consumer|admin|client|formatter|reader) propert(y|ies)|properties to initialize the message (formatter|reader)|related configuration properties).*"),
            "properties"));

    static Object carries(String tool, List<String> longNames, String description) {
        boolean looks = longNames.stream().anyMatch(n -> LOOKS_LIKE.matcher(n).matches());
        String doc = description == null ? "" : description.toLowerCase(java.util.Locale.ROOT).replaceAll("\\s+", " ");
        for (Rule rule : CARRIES_RULES) {
            boolean nameMatches = longNames.stream().anyMatch(n -> rule.name().matcher(n).matches());
            if (nameMatches && rule.description().matcher(doc).matches()) {
                if (!looks && !rule.verdict().equals("none")) {
                    throw new IllegalStateException(tool + " --" + String.join("/--", longNames)
                        + ": its description reads like a " + rule.verdict() + " option but its name does not;"
                        + " extend ToolOptions.LOOKS_LIKE or CARRIES_RULES. Description: " + description);
                }
                return rule.verdict().equals("none") ? null : rule.verdict();
            }
        }
        if (looks) {
            throw new IllegalStateException(tool + " --" + String.join("/--", longNames)
                + " looks like it carries properties or a file, but no rule of ToolOptions.CARRIES_RULES"
                + " classifies it. Description: " + description);
        }
        return null;
    }

    // --- output ------------------------------------------------------------------------------

    /** One release entry: fields one per line, one option per line. */
    static String pretty(Map<String, Object> release) {
        StringBuilder out = new StringBuilder();
        out.append("    {\n");
        out.append("      \"kafkaVersion\": ");
        Json.write(out, release.get("kafkaVersion"));
        out.append(",\n      \"fromKafkaVersion\": ");
        Json.write(out, release.get("fromKafkaVersion"));
        out.append(",\n      \"tools\": [\n");
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> tools = (List<Map<String, Object>>) release.get("tools");
        for (int t = 0; t < tools.size(); t++) {
            out.append("        {\n");
            int i = 0;
            for (Map.Entry<String, Object> e : tools.get(t).entrySet()) {
                out.append("          ");
                Json.string(out, e.getKey());
                out.append(": ");
                writeListOnePerLine(out, e.getValue(), "          ");
                out.append(++i < tools.get(t).size() ? ",\n" : "\n");
            }
            out.append(t + 1 < tools.size() ? "        },\n" : "        }\n");
        }
        out.append("      ],\n      \"withoutTable\": ");
        writeListOnePerLine(out, release.get("withoutTable"), "      ");
        out.append("\n    }");
        return out.toString();
    }

    /** Lists of objects one element per line (subcommands' own lists nested likewise). */
    private static void writeListOnePerLine(StringBuilder out, Object value, String indent) {
        if (!(value instanceof List<?> list) || list.isEmpty() || !(list.get(0) instanceof Map)) {
            Json.write(out, value);
            return;
        }
        out.append("[\n");
        for (int i = 0; i < list.size(); i++) {
            Map<?, ?> item = (Map<?, ?>) list.get(i);
            boolean nested = item.values().stream().anyMatch(v -> v instanceof List<?> l && !l.isEmpty() && l.get(0) instanceof Map);
            out.append(indent).append("  ");
            if (!nested) {
                Json.write(out, item);
            } else {
                out.append("{\n");
                int j = 0;
                for (Map.Entry<?, ?> e : item.entrySet()) {
                    out.append(indent).append("    ");
                    Json.string(out, (String) e.getKey());
                    out.append(": ");
                    writeListOnePerLine(out, e.getValue(), indent + "    ");
                    out.append(++j < item.size() ? ",\n" : "\n");
                }
                out.append(indent).append("  }");
            }
            out.append(i + 1 < list.size() ? ",\n" : "\n");
        }
        out.append(indent).append("]");
    }

    static void combine(String catalogueVersion, Path out, List<String> fragments) throws Exception {
        StringBuilder sb = new StringBuilder();
        sb.append("{\n  \"kafkaVersion\": ");
        Json.write(sb, catalogueVersion);
        sb.append(",\n  \"generatedBy\": \"catalogue/generate.sh\",\n  \"releases\": [\n");
        for (int i = 0; i < fragments.size(); i++) {
            sb.append(Files.readString(Path.of(fragments.get(i)), StandardCharsets.US_ASCII));
            sb.append(i + 1 < fragments.size() ? ",\n" : "\n");
        }
        sb.append("  ]\n}\n");
        Files.write(out, sb.toString().getBytes(StandardCharsets.US_ASCII));
    }

    // --- shared helpers ------------------------------------------------------------------------

    /** Names sorted: long names (no dashes) first, then short ones as "-x". */
    static List<String> sortNames(Collection<String> longs, Collection<String> shorts) {
        List<String> names = new ArrayList<>(new java.util.TreeSet<>(longs));
        for (String s : new java.util.TreeSet<>(shorts)) {
            names.add("-" + s);
        }
        return names;
    }

    static <T> List<T> distinct(Collection<T> values) {
        Map<T, Boolean> seen = new IdentityHashMap<>();
        List<T> out = new ArrayList<>();
        for (T v : values) {
            if (seen.put(v, Boolean.TRUE) == null) {
                out.add(v);
            }
        }
        return out;
    }

    static String simpleType(Class<?> c) {
        if (c == null || c == String.class) {
            return null;
        }
        return c.getName().startsWith("java.lang.") ? c.getSimpleName() : c.getName();
    }

    static <V> Map<String, V> sorted(Map<String, V> m) {
        return new TreeMap<>(m);
    }
}
