package io.kafkaconfigoperator.catalogue;

import java.util.List;
import java.util.Map;

/**
 * A tiny deterministic JSON writer.
 *
 * <p>Objects are {@link java.util.LinkedHashMap}s and are written in insertion order (the
 * generator inserts fields in a fixed order). Output is pure ASCII: every character outside
 * printable ASCII is written as a {@code \\uXXXX} escape, so the file compares byte for byte
 * whatever the platform encoding.
 */
final class Json {
    private Json() {
    }

    /** A number written verbatim (already a valid JSON number literal). */
    record Num(String literal) {
    }

    static void write(StringBuilder out, Object value) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String s) {
            string(out, s);
        } else if (value instanceof Boolean b) {
            out.append(b.booleanValue() ? "true" : "false");
        } else if (value instanceof Num n) {
            out.append(n.literal());
        } else if (value instanceof Integer || value instanceof Long || value instanceof Short) {
            out.append(value.toString());
        } else if (value instanceof Map<?, ?> map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : map.entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                string(out, (String) e.getKey());
                out.append(':');
                write(out, e.getValue());
            }
            out.append('}');
        } else if (value instanceof List<?> list) {
            out.append('[');
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) {
                    out.append(',');
                }
                write(out, list.get(i));
            }
            out.append(']');
        } else {
            throw new IllegalArgumentException("cannot write " + value.getClass() + " as JSON");
        }
    }

    static void string(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20 || c > 0x7e) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
