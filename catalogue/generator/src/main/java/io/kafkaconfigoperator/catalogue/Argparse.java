package io.kafkaconfigoperator.catalogue;

import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import net.sourceforge.argparse4j.inf.ArgumentParser;
import net.sourceforge.argparse4j.inf.ArgumentParserException;

/**
 * Reads an argparse4j (0.7.x) ArgumentParserImpl into the option table (see ToolOptions), through
 * its private fields: optargs_, posargs_, arggroups_, subparsers_.
 */
final class Argparse {
    private Argparse() {
    }

    static void read(String tool, ArgumentParser parser, Map<String, Object> table) {
        Object main = ToolOptions.field(parser, "mainParser_");
        ArgumentParser top = main != null ? (ArgumentParser) main : parser;
        verifyAbbreviations(tool, top);
        table.put("abbreviations", true);
        readParser(tool, top, table);
    }

    private static void readParser(String tool, Object parser, Map<String, Object> out) {
        Object prefix = ToolOptions.field(parser, "prefixPattern_");
        if (!"-".equals(ToolOptions.field(prefix, "prefixChars_"))) {
            throw new IllegalStateException(tool + ": prefix characters other than '-' are not supported");
        }
        if (ToolOptions.field(parser, "fromFilePrefixPattern_") != null) {
            throw new IllegalStateException(tool + ": a from-file prefix (@file) is not supported");
        }
        if ((Boolean) ToolOptions.field(parser, "negNumFlag_")) {
            throw new IllegalStateException(tool + ": options that look like negative numbers are not supported");
        }
        List<?> groups = (List<?>) ToolOptions.field(parser, "arggroups_");
        Map<Object, Integer> mutexIndex = new IdentityHashMap<>();
        List<Map<String, Object>> mutex = new ArrayList<>();
        for (Object group : groups) {
            if ((Boolean) ToolOptions.field(group, "mutex_")) {
                mutexIndex.put(group, mutex.size());
                Map<String, Object> g = new LinkedHashMap<>();
                List<String> members = new ArrayList<>();
                for (Object arg : (List<?>) ToolOptions.field(group, "args_")) {
                    members.add(names(tool, arg).get(0));
                }
                g.put("options", members);
                g.put("required", ToolOptions.field(group, "required_"));
                mutex.add(g);
            }
        }
        List<Map<String, Object>> options = new ArrayList<>();
        for (Object arg : (List<?>) ToolOptions.field(parser, "optargs_")) {
            Map<String, Object> o = new LinkedHashMap<>();
            List<String> names = names(tool, arg);
            o.put("names", names);
            String action = action(arg);
            boolean consumes = consumes(arg);
            String nargs = nargs(arg);
            o.put("argument", !consumes ? "none" : (nargs == null || nargs.equals("+") || !nargs.equals("?") && !nargs.equals("*")) ? "required" : "optional");
            o.put("repeatable", action.equals("append") || action.equals("appendConst") || action.equals("count"));
            o.put("required", ToolOptions.field(arg, "required_"));
            List<String> longs = names.stream().filter(n -> !n.startsWith("-")).toList();
            o.put("carries", ToolOptions.carries(tool, longs, (String) ToolOptions.field(arg, "help_")));
            o.put("action", action);
            if (consumes) {
                if (nargs != null) {
                    o.put("nargs", nargs);
                }
                putTypeAndChoices(arg, o);
            }
            Object group = ToolOptions.field(arg, "argumentGroup_");
            if (group != null && mutexIndex.containsKey(group)) {
                o.put("mutexGroup", mutexIndex.get(group));
            }
            options.add(o);
        }
        options.sort(java.util.Comparator.comparing(o -> ((List<?>) o.get("names")).get(0).toString()));
        out.put("options", options);
        List<Map<String, Object>> positionals = new ArrayList<>();
        for (Object arg : (List<?>) ToolOptions.field(parser, "posargs_")) {
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("name", ToolOptions.field(arg, "name_"));
            String nargs = nargs(arg);
            p.put("nargs", nargs == null ? "1" : nargs);
            putTypeAndChoices(arg, p);
            positionals.add(p);
        }
        out.put("positionals", positionals);
        out.put("mutexGroups", mutex);
        Object subparsers = ToolOptions.field(parser, "subparsers_");
        Map<?, ?> parsers = (Map<?, ?>) ToolOptions.field(subparsers, "parsers_");
        List<Map<String, Object>> subs = new ArrayList<>();
        Map<Object, Boolean> seen = new IdentityHashMap<>();
        for (Object sub : parsers.values()) {
            if (seen.put(sub, Boolean.TRUE) != null) {
                continue;
            }
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("name", ToolOptions.field(sub, "command_"));
            s.put("aliases", new ArrayList<>((Collection<?>) ToolOptions.field(sub, "aliases_")));
            readParser(tool, ToolOptions.field(sub, "parser_"), s);
            subs.add(s);
        }
        subs.sort(java.util.Comparator.comparing(s -> (String) s.get("name")));
        out.put("subcommands", subs);
    }

    /** "type" and "choices", each only when the argument has one. */
    private static void putTypeAndChoices(Object arg, Map<String, Object> out) {
        String type = type(arg);
        if (type != null) {
            out.put("type", type);
        }
        List<String> choices = choices(arg);
        if (choices != null) {
            out.put("choices", choices);
        }
    }

    private static List<String> names(String tool, Object arg) {
        String[] flags = (String[]) ToolOptions.field(arg, "flags_");
        if (flags == null) {
            return List.of((String) ToolOptions.field(arg, "name_"));
        }
        List<String> longs = new ArrayList<>();
        List<String> shorts = new ArrayList<>();
        for (String flag : flags) {
            if (flag.startsWith("--") && flag.length() > 2) {
                longs.add(flag.substring(2));
            } else if (flag.length() == 2 && flag.charAt(0) == '-' && flag.charAt(1) != '-') {
                shorts.add(flag.substring(1));
            } else {
                throw new IllegalStateException(tool + ": option flag " + flag + " is neither --long nor -x");
            }
        }
        return ToolOptions.sortNames(longs, shorts);
    }

    private static String action(Object arg) {
        // argparse4j's own actions by their factory name (store, storeTrue, append, help, version,
        // ...); a tool's own action class by its simple name (e.g. PrintVersionAndExitAction).
        Class<?> cls = ToolOptions.field(arg, "action_").getClass();
        String name = cls.getSimpleName();
        if (!cls.getName().startsWith("net.sourceforge.argparse4j.impl.action.")) {
            return name;
        }
        name = name.substring(0, name.length() - "ArgumentAction".length());
        return Character.toLowerCase(name.charAt(0)) + name.substring(1);
    }

    private static boolean consumes(Object arg) {
        return ((net.sourceforge.argparse4j.inf.ArgumentAction) ToolOptions.field(arg, "action_")).consumeArgument();
    }

    /** argparse4j's own nargs notation, or null when nargs was not set (exactly one value). */
    private static String nargs(Object arg) {
        int min = (Integer) ToolOptions.field(arg, "minNumArg_");
        int max = (Integer) ToolOptions.field(arg, "maxNumArg_");
        if (min == -1) {
            return null;
        }
        if (min == 0 && max == 1) {
            return "?";
        }
        if (max == Integer.MAX_VALUE) {
            return min == 0 ? "*" : min == 1 ? "+" : null;
        }
        if (min == max) {
            return Integer.toString(min);
        }
        throw new IllegalStateException("nargs min " + min + " max " + max);
    }

    private static String type(Object arg) {
        Object type = ToolOptions.field(arg, "type_");
        if (type == null) {
            return null;
        }
        String cls = type.getClass().getSimpleName();
        if (cls.equals("ReflectArgumentType")) {
            return ToolOptions.simpleType((Class<?>) ToolOptions.field(type, "type_"));
        }
        if (cls.equals("StringArgumentType")) {
            return null;
        }
        if (cls.equals("FileArgumentType")) {
            // new File(value): any string, unless a verification (exists, can read, ...) is on
            for (String check : List.of("acceptSystemIn", "verifyExists", "verifyNotExists", "verifyIsFile",
                    "verifyIsDirectory", "verifyCanRead", "verifyCanWrite", "verifyCanWriteParent",
                    "verifyCanCreate", "verifyCanExecute", "verifyIsAbsolute")) {
                if ((Boolean) ToolOptions.field(type, check)) {
                    throw new IllegalStateException("argparse4j fileType()." + check + " is not supported");
                }
            }
            return "File";
        }
        throw new IllegalStateException("argparse4j argument type " + type.getClass().getName() + " is not supported");
    }

    private static List<String> choices(Object arg) {
        Object choice = ToolOptions.field(arg, "choice_");
        if (choice == null) {
            return null;
        }
        if (!choice.getClass().getSimpleName().equals("CollectionArgumentChoice")) {
            throw new IllegalStateException("argparse4j choice " + choice.getClass().getName() + " is not supported");
        }
        List<String> values = new ArrayList<>();
        for (Object v : (Collection<?>) ToolOptions.field(choice, "values_")) {
            values.add(String.valueOf(v));
        }
        return values;
    }

    /** argparse4j 0.7 always resolves a unique prefix of a flag; checked, not assumed. */
    private static void verifyAbbreviations(String tool, ArgumentParser parser) {
        Map<?, ?> index = (Map<?, ?>) ToolOptions.field(parser, "optargIndex_");
        for (Object key : index.keySet()) {
            String flag = (String) key;
            if (!flag.startsWith("--") || flag.length() < 5) {
                continue;
            }
            String prefix = flag.substring(0, flag.length() - 1);
            if (index.keySet().stream().filter(k -> ((String) k).startsWith(prefix)).count() != 1) {
                continue;
            }
            try {
                parser.parseArgs(new String[] {prefix, "1"});
            } catch (ArgumentParserException e) {
                if (e.getClass().getSimpleName().equals("UnrecognizedArgumentException")
                    && prefix.equals(((net.sourceforge.argparse4j.internal.UnrecognizedArgumentException) e).getArgument())) {
                    throw new IllegalStateException(tool + ": argparse4j refused the abbreviation " + prefix);
                }
            }
            return;
        }
        throw new IllegalStateException(tool + ": no option to check abbreviations with");
    }
}
