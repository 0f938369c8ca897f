package io.kafkaconfigoperator.catalogue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import joptsimple.AbstractOptionSpec;
import joptsimple.OptionException;
import joptsimple.OptionParser;
import joptsimple.OptionSpec;

/** Reads a jopt-simple OptionParser (5.0.x) into the option table (see ToolOptions). */
final class Jopt {
    private Jopt() {
    }

    static void read(String tool, OptionParser parser, Map<String, Object> table) {
        Object names = ToolOptions.field(parser, "recognizedOptions");
        boolean abbreviations = names instanceof joptsimple.internal.AbbreviationMap;
        boolean posixlyCorrect = (Boolean) ToolOptions.field(parser, "posixlyCorrect");
        if ((Boolean) ToolOptions.field(parser, "allowsUnrecognizedOptions")) {
            throw new IllegalStateException(tool + ": the parser allows unrecognized options; the table format has no field for that");
        }

        List<Map<String, Object>> options = new ArrayList<>();
        List<AbstractOptionSpec<?>> specs = new ArrayList<>();
        for (OptionSpec<?> spec : ToolOptions.distinct(parser.recognizedOptions().values())) {
            if (spec.getClass().getSimpleName().equals("NonOptionArgumentSpec")) {
                continue;
            }
            specs.add((AbstractOptionSpec<?>) spec);
        }
        for (AbstractOptionSpec<?> spec : specs) {
            List<String> longs = new ArrayList<>();
            List<String> shorts = new ArrayList<>();
            for (String name : spec.options()) {
                (name.length() == 1 ? shorts : longs).add(name);
            }
            Map<String, Object> option = new LinkedHashMap<>();
            option.put("names", ToolOptions.sortNames(longs, shorts));
            String kind = !spec.acceptsArguments() ? "none" : spec.requiresArgument() ? "required" : "optional";
            if (spec.getClass().getSimpleName().equals("AlternativeLongOptionSpec")) {
                throw new IllegalStateException(tool + ": -W long options are not supported");
            }
            option.put("argument", kind);
            // jopt-simple keeps every occurrence of every option (OptionSet.valuesOf); whether the
            // tool uses them all or fails in OptionSet.valueOf is the tool's code, not the parser.
            option.put("repeatable", true);
            option.put("required", spec.isRequired());
            option.put("carries", ToolOptions.carries(tool, longs, spec.description()));
            if (!kind.equals("none")) {
                Object converter = ToolOptions.field(spec, "converter");
                String type = converter == null ? null
                    : ToolOptions.simpleType(((joptsimple.ValueConverter<?>) converter).valueType());
                if (type != null) {
                    option.put("type", type);
                }
                String separator = (String) ToolOptions.field(spec, "valueSeparator");
                if (!separator.equals("\u0000")) {
                    option.put("valueSeparator", separator);
                }
            }
            if (spec.isForHelp()) {
                option.put("help", true);
            }
            // requiredIf(...)/availableIf(...) and their Unless forms: checked by OptionParser.parse
            // after the last argument (unless a forHelp option is present).
            for (String rule : List.of("requiredIf", "requiredUnless", "availableIf", "availableUnless")) {
                for (Map.Entry<?, ?> e : ((Map<?, ?>) ToolOptions.field(parser, rule)).entrySet()) {
                    if (((List<?>) e.getKey()).containsAll(spec.options())) {
                        List<String> others = new ArrayList<>();
                        for (Object other : (java.util.Collection<?>) e.getValue()) {
                            others.add(primary((OptionSpec<?>) other));
                        }
                        java.util.Collections.sort(others);
                        option.put(rule, others);
                    }
                }
            }
            options.add(option);
        }
        options.sort(Comparator.comparing(o -> ((List<?>) o.get("names")).get(0).toString()));

        verifyAbbreviations(tool, parser, specs, abbreviations);
        verifyAttachedValue(tool, parser, specs);

        table.put("abbreviations", abbreviations);
        table.put("posixlyCorrect", posixlyCorrect);
        table.put("options", options);
        // jopt-simple accepts any number of non-option arguments anywhere (after "--" too).
        Map<String, Object> rest = new LinkedHashMap<>();
        rest.put("name", "[arguments]");
        rest.put("nargs", "*");
        table.put("positionals", List.of(rest));
    }

    /** The first name of an option as the table writes it (long names first, no dashes). */
    static String primary(OptionSpec<?> spec) {
        List<String> longs = new ArrayList<>();
        List<String> shorts = new ArrayList<>();
        for (String name : spec.options()) {
            (name.length() == 1 ? shorts : longs).add(name);
        }
        return ToolOptions.sortNames(longs, shorts).get(0);
    }

    /** True when the parser recognized the option: any other failure (missing required options) is fine. */
    private static boolean recognized(OptionParser parser, String... argv) {
        try {
            parser.parse(argv);
            return true;
        } catch (OptionException e) {
            return !e.getClass().getSimpleName().equals("UnrecognizedOptionException");
        }
    }

    /** Checks the private field against what the parser does with a unique prefix. */
    private static void verifyAbbreviations(String tool, OptionParser parser, List<AbstractOptionSpec<?>> specs, boolean expected) {
        List<String> all = new ArrayList<>();
        specs.forEach(s -> all.addAll(s.options()));
        for (AbstractOptionSpec<?> spec : specs) {
            for (String name : spec.options()) {
                if (name.length() < 4) {
                    continue;
                }
                String prefix = name.substring(0, name.length() - 1);
                if (all.stream().filter(n -> n.startsWith(prefix)).count() != 1) {
                    continue;
                }
                boolean accepted = spec.acceptsArguments()
                    ? recognized(parser, "--" + prefix, "1") : recognized(parser, "--" + prefix);
                if (accepted != expected) {
                    throw new IllegalStateException(tool + ": parser field says abbreviations=" + expected
                        + " but --" + prefix + " was " + (accepted ? "accepted" : "refused"));
                }
                return;
            }
        }
        throw new IllegalStateException(tool + ": no option to check abbreviations with");
    }

    /** The Rust parser assumes "--name=value" works for options that take an argument. */
    private static void verifyAttachedValue(String tool, OptionParser parser, List<AbstractOptionSpec<?>> specs) {
        for (AbstractOptionSpec<?> spec : specs) {
            if (spec.requiresArgument() && !spec.isRequired()) {
                String name = spec.options().stream().filter(n -> n.length() > 1).findFirst().orElse(null);
                if (name == null) {
                    continue;
                }
                try {
                    var set = parser.parse("--" + name + "=a=b");
                    if (!set.valuesOf(spec).equals(List.of("a=b")) && !set.valuesOf(spec).toString().equals("[a=b]")) {
                        throw new IllegalStateException(tool + ": --" + name + "=a=b gave " + set.valuesOf(spec));
                    }
                } catch (OptionException e) {
                    if (e.getClass().getSimpleName().equals("UnrecognizedOptionException")) {
                        throw new IllegalStateException(tool + ": --" + name + "=value was refused", e);
                    }
                }
                return;
            }
        }
    }
}
