//! The `.properties` codec, exactly as `java.util.Properties` reads and writes it.
//!
//! Kafka loads configuration files with `Properties.load(InputStream)`, which decodes bytes as
//! ISO-8859-1, so [`load`] takes bytes and maps each byte to the char of the same value. [`store`]
//! escapes as `Properties.store` does with Unicode escaping on, so the output is pure ASCII and
//! `load(store(m)) == m` for every map.

use std::collections::BTreeMap;
use std::ops::Range;

/// One `key=value` pair read from a file, with the (1-based) line its logical line starts on.
/// `Debug` (value redacted): `engine::secret`.
#[derive(Clone, PartialEq, Eq)]
pub struct Entry {
    pub key: String,
    pub value: String,
    pub line: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("line {line}: malformed \\uxxxx escape (Java rejects the whole file)")]
    MalformedUnicodeEscape { line: u32 },
    #[error(
        "line {line}: \\u{unit:04X} is half of a UTF-16 surrogate pair without its other half; \
         write the whole pair"
    )]
    LoneSurrogate { line: u32, unit: u16 },
}

impl ParseError {
    pub fn line(&self) -> u32 {
        match self {
            Self::MalformedUnicodeEscape { line } | Self::LoneSurrogate { line, .. } => *line,
        }
    }
}

/// Reads a file as `Properties.load(InputStream)` does; entries come in file order, a later
/// duplicate key replacing an earlier one is left to the caller (see [`load_map`]).
pub fn load(bytes: &[u8]) -> Result<Vec<Entry>, ParseError> {
    read(bytes, Encoding::Latin1)
}

/// Reads text that is already decoded (for example a `.properties` value typed in YAML).
pub fn load_str(text: &str) -> Result<Vec<Entry>, ParseError> {
    read(text.as_bytes(), Encoding::Utf8)
}

/// [`load`] into a map, later keys winning, as `Properties` does.
pub fn load_map(bytes: &[u8]) -> Result<BTreeMap<String, String>, ParseError> {
    Ok(load(bytes)?.into_iter().map(|e| (e.key, e.value)).collect())
}

/// How the input's bytes map to chars. Every char the reader acts on (line ends, blanks, `#`,
/// `!`, `=`, `:`, `\`, hex digits) is ASCII, and in UTF-8 no byte of a longer char is ASCII, so
/// the reader works on bytes either way; only copying text out depends on the encoding.
#[derive(Clone, Copy)]
enum Encoding {
    /// ISO-8859-1: each byte is the char of the same value.
    Latin1,
    /// The bytes of a `&str`.
    Utf8,
}

impl Encoding {
    /// Appends `run` decoded. Runs start and end next to ASCII bytes, so a UTF-8 run is whole chars.
    fn push_run(self, out: &mut String, run: &[u8]) {
        match (self, std::str::from_utf8(run)) {
            (Encoding::Utf8, Ok(text)) => out.push_str(text),
            (Encoding::Utf8, Err(_)) => out.push_str(&String::from_utf8_lossy(run)),
            (Encoding::Latin1, Ok(text)) if run.is_ascii() => out.push_str(text),
            (Encoding::Latin1, _) => out.extend(run.iter().map(|&b| char::from(b))),
        }
    }
}

/// `Properties.load0`: each logical line split into key and value, both unescaped.
fn read(input: &[u8], encoding: Encoding) -> Result<Vec<Entry>, ParseError> {
    let mut reader = LineReader {
        input,
        pos: 0,
        line: 1,
    };
    // Grown as lines are read, from 16 entries (doubling from 4 was a fifth of reading 20 keys).
    let mut entries = Vec::with_capacity(16);
    // Continued lines are joined here; a line without continuation is used where it lies.
    let mut joined = Vec::new();
    // The input decoded once when that is only a check (UTF-8, or ASCII read as ISO-8859-1): runs
    // are then slices of it (from_utf8 on each short run was 3 % of evaluate_and_render/200).
    let whole = matches!(encoding, Encoding::Utf8) || input.is_ascii();
    let checked = whole.then(|| std::str::from_utf8(input).ok()).flatten();
    while let Some((start_line, span)) = reader.read_logical_line(&mut joined) {
        let (line, text) = match span {
            Span::Input(at) => (&input[at.clone()], checked.and_then(|t| t.get(at))),
            Span::Joined => (&joined[..], None),
        };
        let (key_end, value_start) = split_key_value(line);
        let part = |at: Range<usize>| (&line[at.clone()], text.and_then(|t| t.get(at)));
        entries.push(Entry {
            key: unescape(part(0..key_end), start_line, encoding)?,
            value: unescape(part(value_start..line.len()), start_line, encoding)?,
            line: start_line,
        });
    }
    Ok(entries)
}

fn is_blank(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\x0c')
}

/// Where a logical line's text is: in the input, or (when continued) in the joining buffer.
enum Span {
    Input(std::ops::Range<usize>),
    Joined,
}

/// `Properties.LineReader`: joins continuation lines, drops comments and blank lines, and
/// skips leading whitespace of every natural line it reads. Also counts lines for messages.
struct LineReader<'a> {
    input: &'a [u8],
    pos: usize,
    line: u32,
}

impl LineReader<'_> {
    /// JDK 17's `LineReader.readLine`, with the line the logical line starts on: a `#` or `!`
    /// starts a comment whenever the logical line is still empty, even after a continuation that
    /// added nothing. The JDK's loop appends char by char; here, once the leading blanks are
    /// skipped, the rest of the natural line is taken up to its end in one step (nothing in it
    /// changes the state but the backslashes at its end).
    fn read_logical_line(&mut self, joined: &mut Vec<u8>) -> Option<(u32, Span)> {
        joined.clear();
        let input = self.input;
        let mut appended_line_begin = false;
        let mut skip_lf = false;
        let mut start_line = self.line;
        loop {
            let Some(&c) = input.get(self.pos) else {
                // Only a continued line can be pending here, its backslash already dropped.
                return (!joined.is_empty()).then_some((start_line, Span::Joined));
            };
            self.pos += 1;
            if skip_lf {
                skip_lf = false;
                if c == b'\n' {
                    // The `\r` before it left the count of this `\r\n` to it.
                    self.line += 1;
                    continue;
                }
            }
            // Every pass of this loop starts at leading whitespace: the rest of a natural line is
            // taken in one step below.
            if is_blank(c) {
                continue;
            }
            if !appended_line_begin && matches!(c, b'\r' | b'\n') {
                self.count_line_end(c);
                continue;
            }
            appended_line_begin = false;
            let start = self.pos - 1;
            if joined.is_empty() {
                start_line = self.line;
                if c == b'#' || c == b'!' {
                    // Consume the rest of the comment line, including its terminator.
                    let end = start + memchr::memchr2(b'\n', b'\r', &input[start..])?;
                    self.pos = end + 1;
                    self.count_line_end(input[end]);
                    continue;
                }
            }
            let end = memchr::memchr2(b'\n', b'\r', &input[start..])
                .map_or(input.len(), |offset| start + offset);
            let segment = &input[start..end];
            let trailing_backslashes = segment.iter().rev().take_while(|&&b| b == b'\\').count();
            let preceding_backslash = trailing_backslashes % 2 == 1;
            // The line without the backslash that continues it (or ends the input).
            let kept = if preceding_backslash { end - 1 } else { end };
            let finish = |joined: &mut Vec<u8>, upto: usize| {
                if joined.is_empty() {
                    Span::Input(start..upto)
                } else {
                    joined.extend_from_slice(&input[start..upto]);
                    Span::Joined
                }
            };
            if end == input.len() {
                self.pos = end;
                // The segment holds at least `c`, so the line is not empty.
                return Some((start_line, finish(joined, kept)));
            }
            self.pos = end + 1;
            let line_end = input[end];
            self.count_line_end(line_end);
            if joined.is_empty() && segment.is_empty() {
                continue;
            }
            if self.pos >= input.len() {
                return Some((start_line, finish(joined, kept)));
            }
            if !preceding_backslash {
                return Some((start_line, finish(joined, end)));
            }
            joined.extend_from_slice(&input[start..kept]);
            appended_line_begin = true;
            if line_end == b'\r' {
                skip_lf = true;
            }
        }
    }

    /// Line numbers for messages: `\r\n` counts once, as an editor shows it.
    fn count_line_end(&mut self, c: u8) {
        if c == b'\r' && self.input.get(self.pos) == Some(&b'\n') {
            return;
        }
        self.line += 1;
    }
}

/// Where the key ends and the value starts in a logical line (`Properties.load0`).
fn split_key_value(line: &[u8]) -> (usize, usize) {
    let limit = line.len();
    let (mut key_len, mut value_start, mut has_sep) = (0, limit, false);
    // The key ends at the first `=`, `:` or blank no backslash escapes (one skips the next char).
    while key_len < limit {
        let Some(offset) = line[key_len..]
            .iter()
            .position(|&c| matches!(c, b'=' | b':' | b'\\') || is_blank(c))
        else {
            key_len = limit;
            break;
        };
        key_len += offset;
        match line[key_len] {
            b'\\' => key_len = (key_len + 2).min(limit),
            c => {
                (value_start, has_sep) = (key_len + 1, c == b'=' || c == b':');
                break;
            }
        }
    }
    // The blanks after the key and at most one `=` or `:` (none more when the key ended at one).
    while value_start < limit {
        let c = line[value_start];
        if !is_blank(c) {
            if !has_sep && (c == b'=' || c == b':') {
                has_sep = true;
            } else {
                break;
            }
        }
        value_start += 1;
    }
    (key_len, value_start)
}

/// `Properties.loadConvert`: resolves escapes; `\uXXXX` units are joined into UTF-16 pairs.
/// Text between escapes is copied a run at a time: a slice of `text` (the same segment) when the
/// input was decoded whole.
fn unescape(
    (segment, text): (&[u8], Option<&str>),
    line: u32,
    encoding: Encoding,
) -> Result<String, ParseError> {
    let push_run = |out: &mut String, at: Range<usize>| match text.and_then(|t| t.get(at.clone())) {
        Some(run) => out.push_str(run),
        None => encoding.push_run(out, &segment[at]),
    };
    // A high surrogate from `\uXXXX` waiting for its low half (only ever the unit just read), and
    // the first lone surrogate of the current run of escapes: reported when the run ends, as
    // decoding the whole run there would (a malformed escape later in the run wins).
    let mut high: Option<u16> = None;
    let mut lone: Option<u16> = None;
    let pending = |lone: Option<u16>, high: Option<u16>| match lone.or(high) {
        Some(unit) => Err(ParseError::LoneSurrogate { line, unit }),
        None => Ok(()),
    };
    let mut out = String::with_capacity(segment.len());
    // Text not yet copied starts at `run`; the next backslash is looked for from `i`.
    let mut run = 0;
    let mut i = 0;
    while let Some(offset) = memchr::memchr(b'\\', &segment[i..]) {
        let at = i + offset;
        let Some(&c) = segment.get(at + 1) else {
            // A backslash that ends the text is kept as it is.
            break;
        };
        if at > run {
            pending(lone, high)?;
            push_run(&mut out, run..at);
        }
        i = at + 2;
        let plain = match c {
            b'u' => {
                let digits = segment
                    .get(at + 2..at + 6)
                    .ok_or(ParseError::MalformedUnicodeEscape { line })?;
                let mut value: u16 = 0;
                for &h in digits {
                    let digit = char::from(h)
                        .to_digit(16)
                        .ok_or(ParseError::MalformedUnicodeEscape { line })?;
                    value = (value << 4) | digit as u16;
                }
                i = at + 6;
                run = i;
                if lone.is_none() {
                    match push_unit(&mut out, high, value) {
                        Ok(waiting) => high = waiting,
                        Err(unit) => {
                            lone = Some(unit);
                            high = None;
                        }
                    }
                }
                continue;
            }
            b't' => '\t',
            b'r' => '\r',
            b'n' => '\n',
            b'f' => '\u{c}',
            _ => {
                // Any other escaped char stands for itself: it starts the next run.
                run = at + 1;
                continue;
            }
        };
        pending(lone, high)?;
        out.push(plain);
        run = i;
    }
    if run < segment.len() {
        pending(lone, high)?;
        push_run(&mut out, run..segment.len());
    }
    pending(lone, high)?;
    Ok(out)
}

/// Adds one UTF-16 unit of a run of `\uXXXX` escapes, as `char::decode_utf16` over the run
/// would: returns the high surrogate still waiting for its low half, or the lone surrogate.
fn push_unit(out: &mut String, high: Option<u16>, unit: u16) -> Result<Option<u16>, u16> {
    let is_high = (0xD800..0xDC00).contains(&unit);
    let is_low = (0xDC00..0xE000).contains(&unit);
    match high {
        Some(h) if is_low => {
            let code = 0x10000 + ((u32::from(h) - 0xD800) << 10) + (u32::from(unit) - 0xDC00);
            match char::from_u32(code) {
                Some(c) => out.push(c),
                None => return Err(h),
            }
            Ok(None)
        }
        Some(h) => Err(h),
        None if is_high => Ok(Some(unit)),
        None if is_low => Err(unit),
        None => match char::from_u32(u32::from(unit)) {
            Some(c) => {
                out.push(c);
                Ok(None)
            }
            None => Err(unit),
        },
    }
}

/// Writes entries as `Properties.store` does (Unicode escaped), one `key=value` per line, in the
/// map's order (sorted), with no date comment so that equal maps give equal bytes.
pub fn store<'a, I>(entries: I) -> String
where
    I: IntoIterator<Item = (&'a str, &'a str)>,
    I::IntoIter: Clone,
{
    let entries = entries.into_iter();
    // Sized for the common case (nothing escaped) in one pass over the lengths: a buffer grown by
    // doubling copies a large file several times over.
    let size = entries.clone().map(|(k, v)| k.len() + v.len() + 2).sum();
    let mut out = String::with_capacity(size);
    for (key, value) in entries {
        store_entry(&mut out, key, value);
    }
    out
}

/// Appends one `key=value` line as [`store`] writes it, for callers that build the file as they go.
pub fn store_entry(out: &mut String, key: &str, value: &str) {
    escape_into(out, key, true);
    out.push('=');
    escape_into(out, value, false);
    out.push('\n');
}

/// What `Properties.store` writes as it is: printable ASCII but space (below) and `\\ = : # !`.
const STORED_AS_IS: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = b'!';
    while b <= b'~' {
        table[b as usize] = !matches!(b, b'\\' | b'=' | b':' | b'#' | b'!');
        b += 1;
    }
    table
};

/// `Properties.saveConvert` with `escapeUnicode = true`. Runs of chars written as they are go
/// out in one piece.
fn escape_into(out: &mut String, text: &str, is_key: bool) {
    let bytes = text.as_bytes();
    let mut run = 0;
    let mut at = 0;
    while at < bytes.len() {
        let b = bytes[at];
        // A value's leading space is escaped (it would be skipped on reading); later ones are
        // not.
        if STORED_AS_IS[usize::from(b)] || (b == b' ' && at != 0 && !is_key) {
            at += 1;
            continue;
        }
        out.push_str(&text[run..at]);
        let Some(c) = text[at..].chars().next() else {
            break;
        };
        match c {
            ' ' => out.push_str("\\ "),
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\u{c}' => out.push_str("\\f"),
            '=' | ':' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    push_unicode_escape(out, *unit);
                }
            }
        }
        at += c.len_utf8();
        run = at;
    }
    out.push_str(&text[run..]);
}

/// `\uXXXX` with upper-case hex digits, as `Properties.store` writes it.
fn push_unicode_escape(out: &mut String, unit: u16) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.push_str("\\u");
    for shift in [12, 8, 4, 0] {
        out.push(char::from(HEX[usize::from((unit >> shift) & 0xF)]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(text: &str) -> Vec<(String, String)> {
        load(text.as_bytes())
            .expect("valid input")
            .into_iter()
            .map(|e| (e.key, e.value))
            .collect()
    }

    fn p(k: &str, v: &str) -> (String, String) {
        (k.to_string(), v.to_string())
    }

    #[test]
    fn separators_equals_colon_and_whitespace() {
        assert_eq!(
            pairs("a=1\nb:2\nc 3\nd\t =  4\ne"),
            vec![
                p("a", "1"),
                p("b", "2"),
                p("c", "3"),
                p("d", "4"),
                p("e", "")
            ]
        );
    }

    #[test]
    fn comments_and_blank_lines_are_skipped() {
        assert_eq!(pairs("# c\n! c\n\n   \n  x=y\n"), vec![p("x", "y")]);
    }

    #[test]
    fn odd_trailing_backslashes_continue_the_line() {
        assert_eq!(
            pairs("a=one\\\n    two\nb=x\\\\\nc=y"),
            vec![p("a", "onetwo"), p("b", "x\\"), p("c", "y")]
        );
    }

    #[test]
    fn comment_lines_do_not_continue() {
        assert_eq!(pairs("# a\\\nb=c"), vec![p("b", "c")]);
    }

    #[test]
    fn escapes_are_decoded() {
        assert_eq!(
            pairs("k\\ ey=\\t\\n\\r\\f\\u0041\\q"),
            vec![p("k ey", "\t\n\r\u{c}Aq")]
        );
    }

    #[test]
    fn bytes_are_iso_8859_1() {
        assert_eq!(load_map(b"k=\xe9").expect("valid")["k"], "\u{e9}");
    }

    #[test]
    fn malformed_unicode_escape_names_the_line() {
        assert_eq!(
            load(b"a=1\nb=\\u12"),
            Err(ParseError::MalformedUnicodeEscape { line: 2 })
        );
        assert_eq!(
            load(b"a=\\uZZZZ"),
            Err(ParseError::MalformedUnicodeEscape { line: 1 })
        );
    }

    #[test]
    fn a_crlf_continuation_counts_as_one_line() {
        assert_eq!(
            load(b"a=1\\\r\n  2\r\nb=3\r\nc=\\\r\n\\u00zz\r\n"),
            Err(ParseError::MalformedUnicodeEscape { line: 4 }),
            "the error names the line the logical line starts on"
        );
        let lines: Vec<(String, u32)> = load(b"a=1\\\r\n  2\r\nb=3\r\n")
            .expect("valid")
            .into_iter()
            .map(|e| (e.key, e.line))
            .collect();
        assert_eq!(lines, [("a".to_string(), 1), ("b".to_string(), 3)]);
    }

    #[test]
    fn line_numbers_point_at_the_start_of_the_logical_line() {
        let lines: Vec<u32> = load(b"# c\na=1\\\n 2\n\nb=3\r\nc=4")
            .expect("valid")
            .iter()
            .map(|e| e.line)
            .collect();
        assert_eq!(lines, vec![2, 5, 6]);
    }

    #[test]
    fn store_escapes_as_java_does() {
        let stored = store([(" k=:", " v#!\\"), ("é", "€\n😀")]);
        assert_eq!(
            stored,
            "\\ k\\=\\:=\\ v\\#\\!\\\\\n\\u00E9=\\u20AC\\n\\uD83D\\uDE00\n"
        );
    }

    #[test]
    fn a_value_cannot_inject_a_key() {
        let stored = store([("a", "x\nb=evil\r\nc:d")]);
        assert_eq!(stored.lines().count(), 1);
        assert_eq!(pairs(&stored), vec![p("a", "x\nb=evil\r\nc:d")]);
    }

    #[test]
    fn stored_spaces_inside_values_stay_plain() {
        assert_eq!(store([("k", "a b ")]), "k=a b \n");
    }

    #[test]
    fn surrogates_pair_up_and_a_lone_one_is_reported_when_its_run_of_escapes_ends() {
        assert_eq!(pairs("k=\\uD83D\\uDE00!"), vec![p("k", "\u{1F600}!")]);
        assert_eq!(
            load(b"k=\\uDE00x"),
            Err(ParseError::LoneSurrogate {
                line: 1,
                unit: 0xDE00
            })
        );
        assert_eq!(
            load(b"k=\\uD83D"),
            Err(ParseError::LoneSurrogate {
                line: 1,
                unit: 0xD83D
            })
        );
        // A malformed escape later in the same run is what the file is rejected for.
        assert_eq!(
            load(b"k=\\uDE00\\u12v"),
            Err(ParseError::MalformedUnicodeEscape { line: 1 })
        );
    }
}
