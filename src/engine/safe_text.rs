//! Text from a manifest that is echoed (cut to a bounded length), and text that ends up in
//! `tool.args` or in a path: the launcher passes `tool.args` one argument per
//! line, and Kafka's `${file:path:key}` references cut paths at `:` and `}`. A control character in
//! an argument, or a stray character in a path, would change what the tool runs with behind
//! `explain`'s back, so such text is refused, never escaped. (Property *files* are different: the
//! writer escapes every character exactly as `Properties.store` does.)

use std::borrow::Cow;
use std::fmt::Write as _;

/// How much of one user-supplied string a message may quote.
pub const QUOTE_BYTES: usize = 256;

/// `text` cut to at most `max` bytes (on a character boundary) with `…(N bytes)` appended when
/// cut: echoed text must not grow a status or a log line with the size of the input.
pub fn cut(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    Cow::Owned(format!("{}…({} bytes)", head(text, max), text.len()))
}

/// The longest start of `text` of at most `max` bytes that ends on a character boundary
/// (`String::truncate` in the middle of a character panics).
pub fn head(text: &str, max: usize) -> &str {
    let end = (0..=max.min(text.len()))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    &text[..end]
}

/// A C0/C1 control character (CR, LF, NUL, TAB, ESC, DEL, NEL, …) or a Unicode line/paragraph
/// separator: what must not reach an argument list.
fn breaks_text(c: char) -> bool {
    c.is_control() || c == '\u{2028}' || c == '\u{2029}'
}

/// Whether `c` can drive a terminal or reorder what it shows: [`breaks_text`]'s characters, and
/// the bidirectional marks, overrides and isolates.
pub fn drives_terminal(c: char) -> bool {
    breaks_text(c)
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` for a terminal: every character that [`drives_terminal`] is written as its escape
/// (`\u{1b}`, `\n`, `\u{202e}`). A manifest's keys, values and
/// names are anyone's, and `explain` or `validate` printing them raw would let a pull request
/// clear the reviewer's screen or repaint a warning away.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.contains(drives_terminal) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if drives_terminal(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The first character that must not reach an argument list ([`breaks_text`]).
pub fn forbidden_char(text: &str) -> Option<(usize, char)> {
    text.char_indices().find(|&(_, c)| breaks_text(c))
}

/// `"contains U+000A (a control character) at byte 4"`, for a message; never quotes the text.
pub fn describe_forbidden(text: &str) -> Option<String> {
    let (at, c) = forbidden_char(text)?;
    Some(describe_char(at, c))
}

/// [`describe_forbidden`] of what [`forbidden_char`] found (for Secret data, which is checked
/// without being copied out).
pub fn describe_char(at: usize, c: char) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "contains U+{:04X} (a control character or line separator) at byte {at}",
        u32::from(c)
    );
    out
}

/// Why `path` cannot be the directory the files are mounted at, if it cannot.
///
/// Absolute, already normalised (no empty, `.` or `..` segments, no trailing `/`), and made only of
/// `A-Z a-z 0-9 . _ -` between the slashes: the path is written into `${file:…:…}` references and
/// into `tool.args`, where `:`, `}`, `,`, spaces and control characters would each change meaning.
pub fn mount_path_problem(path: &str) -> Option<String> {
    if let Some(why) = describe_forbidden(path) {
        return Some(why);
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Some("must be an absolute path (start with /)".into());
    };
    if rest.is_empty() {
        return Some("cannot be the root directory".into());
    }
    for segment in rest.split('/') {
        match segment {
            "" => return Some("must be normalised: no empty segment (// or a trailing /)".into()),
            "." | ".." => {
                return Some(format!("must be normalised: no {segment:?} segment"));
            }
            _ => {}
        }
        if let Some(c) = segment
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        {
            return Some(format!(
                "may only hold A-Z a-z 0-9 . _ - between slashes, not U+{:04X}",
                u32::from(c)
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_text_escapes_what_drives_a_terminal_and_keeps_the_rest() {
        assert!(matches!(printable("linger.ms = 5 ‰ é"), Cow::Borrowed(_)));
        assert_eq!(
            printable("x\u{1b}[2J\u{9b}31m\u{7}"),
            "x\\u{1b}[2J\\u{9b}31m\\u{7}"
        );
        assert_eq!(printable("a\nb\r\tc"), "a\\nb\\r\\tc");
        assert_eq!(
            printable("acks\u{202e}lla\u{2066}\u{2028}"),
            "acks\\u{202e}lla\\u{2066}\\u{2028}"
        );
    }

    #[test]
    fn control_characters_and_line_separators_are_found() {
        for (text, at) in [
            ("a\nb", 1),
            ("\r", 0),
            ("x\0", 1),
            ("tab\there", 3),
            ("del\u{7f}", 3),
            ("nel\u{85}", 3),
            ("ls\u{2028}", 2),
            ("ps\u{2029}", 2),
        ] {
            assert_eq!(forbidden_char(text).map(|(i, _)| i), Some(at), "{text:?}");
        }
        assert_eq!(forbidden_char("plain é ü = : -- ${env.X}"), None);
    }

    #[test]
    fn description_names_the_code_point_not_the_text() {
        let why = describe_forbidden("secret\nrest").expect("found");
        assert!(why.contains("U+000A") && why.contains("byte 6"), "{why}");
        assert!(!why.contains("secret"));
    }

    #[test]
    fn cut_keeps_short_text_and_says_how_long_long_text_was() {
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(cut("abcdef", 3), "abc…(6 bytes)");
        // Never inside a character.
        assert_eq!(cut("ééé", 3), "é…(6 bytes)");
    }

    #[test]
    fn mount_paths() {
        for ok in ["/etc/kafka-config", "/a", "/opt/x_y/z-1.2"] {
            assert_eq!(mount_path_problem(ok), None, "{ok}");
        }
        for bad in [
            "etc/kafka",
            "/",
            "/etc//kafka",
            "/etc/kafka/",
            "/etc/../root",
            "/etc/./kafka",
            "/etc/kafka\n--producer.config",
            "/etc/ka:fka",
            "/etc/ka}fka",
            "/etc/ka fka",
            "/etc/kafka,x",
            "/etc/kafé",
        ] {
            assert!(mount_path_problem(bad).is_some(), "{bad:?} accepted");
        }
    }
}
