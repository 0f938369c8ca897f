package io.kafkaconfigoperator.catalogue;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Doc-string handling: plain-text first sentence, and the deprecation heuristic. */
final class Docs {
    private Docs() {
    }

    private static final Pattern TAG = Pattern.compile("</?[a-zA-Z][a-zA-Z0-9]*(\\s[^<>]*)?/?>");
    /** Tags that separate words (list items, paragraphs, line breaks, table cells): replaced by a space. */
    private static final Pattern BLOCK_TAG = Pattern.compile(
        "</?(br|p|li|ul|ol|dl|dt|dd|div|table|thead|tbody|tr|td|th|pre|h[1-6])(\\s[^<>]*)?/?>", Pattern.CASE_INSENSITIVE);
    private static final Pattern SPACE = Pattern.compile("\\s+");

    /** HTML tags removed (block tags become a space), common entities decoded, whitespace collapsed. */
    static String plain(String doc) {
        if (doc == null) {
            return "";
        }
        String s = BLOCK_TAG.matcher(doc).replaceAll(" ");
        s = TAG.matcher(s).replaceAll("");
        s = s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'")
            .replace("&nbsp;", " ").replace("&amp;", "&");
        return SPACE.matcher(s).replaceAll(" ").trim();
    }

    private static final String[] ABBREVIATIONS = {"e.g.", "i.e.", "etc.", "vs.", "approx.", "incl.", "ex.", "No."};

    /**
     * The first sentence of the plain-text doc: up to the first '.', '!' or '?' followed by a space
     * (not one ending a common abbreviation such as "e.g."), cut at a word boundary to at most
     * {@code max} characters (then ending in "...").
     */
    static String firstSentence(String doc, int max) {
        String s = plain(doc);
        int end = s.length();
        for (int i = 0; i + 1 < s.length(); i++) {
            char c = s.charAt(i);
            if ((c == '.' || c == '!' || c == '?') && s.charAt(i + 1) == ' ' && !endsWithAbbreviation(s, i + 1)) {
                end = i + 1;
                break;
            }
        }
        s = s.substring(0, end);
        if (s.length() > max) {
            int cut = s.lastIndexOf(' ', max - 3);
            s = s.substring(0, cut > 0 ? cut : max - 3) + "...";
        }
        return s;
    }

    private static boolean endsWithAbbreviation(String s, int end) {
        String head = s.substring(0, end);
        for (String a : ABBREVIATIONS) {
            if (head.endsWith(" " + a) || head.endsWith("(" + a) || head.equals(a)) {
                return true;
            }
        }
        return false;
    }

    /*
     * Kafka's ConfigDef.ConfigKey has no deprecation flag (4.x): deprecation lives only in the doc
     * text. A key counts as deprecated when its plain-text doc matches one of the patterns below,
     * all of which speak about the key itself ("This config is deprecated", "Deprecated: ...",
     * "... has been deprecated ..." right after the key's own name, "use X instead" phrased as a
     * deprecation notice, ...). A doc that only says some *value* is deprecated (e.g. "The value
     * 'x' is deprecated") does not count. The exact list is the result of reading every doc that
     * contains "deprecat" in the sets generated; see catalogue/README.md.
     */
    private static final Pattern[] DEPRECATED = {
        Pattern.compile("^\\s*\\[?deprecated\\b"),
        Pattern.compile("\\bthis (config|configuration|property|setting|parameter|option|field)( option| property| setting)? (is|has been|was) (now )?deprecated\\b"),
        Pattern.compile("\\b(config|configuration|property|setting|parameter) (is|has been) deprecated\\b"),
        Pattern.compile("\\bdeprecated (since|as of|in) (kafka |apache kafka |version )?\\d"),
        Pattern.compile("^\\s*\\(deprecated\\)"),
        Pattern.compile("\\bthis (config|configuration|property|setting) will be removed in\\b"),
        Pattern.compile("\\bdeprecated[.,;:]? (please )?use\\b"),
    };

    static boolean isDeprecated(String name, String doc) {
        String s = plain(doc).toLowerCase(Locale.ROOT);
        if (!s.contains("deprecat") && !s.contains("will be removed")) {
            return false;
        }
        for (Pattern p : DEPRECATED) {
            if (p.matcher(s).find()) {
                return true;
            }
        }
        // "<name> is deprecated" / "<name> has been deprecated": the key's own name
        Matcher own = Pattern.compile("\\b" + Pattern.quote(name.toLowerCase(Locale.ROOT))
            + "['\"`]?\\s+(config |configuration |property )?(is|has been|was) deprecated").matcher(s);
        return own.find();
    }
}
