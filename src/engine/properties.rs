//! The `.properties` codec, exactly as `java.util.Properties` reads and writes it.
//!
//! Kafka loads configuration files with `Properties.load(InputStream)`, which decodes bytes as
//! ISO-8859-1, so [`load`] takes bytes and maps each byte to the char of the same value. [`store`]
//! escapes as `Properties.store` does with Unicode escaping on, so the output is pure ASCII and
//! `load(store(m)) == m` for every map.

use std::borrow::Cow;
use std::collections::BTreeMap;

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
    // Straight to owned entries: no vector of borrowed ones to convert afterwards.
    let mut entries = Vec::new();
    load_bytes(bytes, ascii_text(bytes), |key, value, line| {
        entries.push(Entry {
            key: key.into_owned(),
            value: value.into_owned(),
            line,
        });
    })?;
    Ok(entries)
}

/// The input as a `str` when it is ASCII: then ISO-8859-1 and UTF-8 read the same text.
fn ascii_text(bytes: &[u8]) -> Option<&str> {
    if bytes.is_ascii() {
        std::str::from_utf8(bytes).ok()
    } else {
        None
    }
}

/// [`load`] with the text of keys and values borrowed from `bytes` where it needs no decoding
/// (ASCII input, no escapes): what the engine reads files with, one allocation per key fewer.
pub fn load_borrowed(bytes: &[u8]) -> Result<Vec<CowEntry<'_>>, ParseError> {
    let mut entries = Vec::new();
    load_bytes(bytes, ascii_text(bytes), |key, value, line| {
        entries.push(CowEntry { key, value, line });
    })?;
    Ok(entries)
}

/// One `key=value` pair as [`load_borrowed`] reads it.
#[derive(Clone, PartialEq, Eq)]
pub struct CowEntry<'a> {
    pub key: Cow<'a, str>,
    pub value: Cow<'a, str>,
    pub line: u32,
}

fn owned(entries: Vec<CowEntry<'_>>) -> Result<Vec<Entry>, ParseError> {
    Ok(entries
        .into_iter()
        .map(|e| Entry {
            key: e.key.into_owned(),
            value: e.value.into_owned(),
            line: e.line,
        })
        .collect())
}

/// Reads text that is already decoded (for example a `.properties` value typed in YAML).
pub fn load_str(text: &str) -> Result<Vec<Entry>, ParseError> {
    if text.is_ascii() {
        // ASCII bytes are the same chars in ISO-8859-1: no need to decode.
        return load(text.as_bytes());
    }
    let chars: Vec<char> = text.chars().collect();
    owned(load_units(&chars, None)?)
}

/// [`load`] into a map, later keys winning, as `Properties` does.
pub fn load_map(bytes: &[u8]) -> Result<BTreeMap<String, String>, ParseError> {
    Ok(load(bytes)?.into_iter().map(|e| (e.key, e.value)).collect())
}

/// One input unit: a byte read as ISO-8859-1, or an already decoded char. The reader works on
/// slices of units so that lines, keys and values are sub-slices of the input, never copies.
trait Unit: Copy + Eq {
    fn ch(self) -> char;
    /// The text of a slice with no escapes in it.
    fn text(units: &[Self]) -> String {
        let mut out = String::with_capacity(units.len());
        Self::push_text(&mut out, units);
        out
    }
    /// Appends the text of a slice with no escapes in it.
    fn push_text(out: &mut String, units: &[Self]);
    /// Where the first `\n` or `\r` is (the slice's length when there is none).
    fn line_end(units: &[Self]) -> usize {
        units
            .iter()
            .position(|u| matches!(u.ch(), '\n' | '\r'))
            .unwrap_or(units.len())
    }
    /// Where the first backslash is, if any.
    fn backslash(units: &[Self]) -> Option<usize> {
        units.iter().position(|u| u.ch() == '\\')
    }
}

/// Eight bytes of `byte`.
const fn splat(byte: u8) -> u64 {
    u64::from_le_bytes([byte; 8])
}

/// The first byte of `bytes` equal to `a` or `b`, eight bytes per step.
fn find_either(bytes: &[u8], a: u8, b: u8) -> Option<usize> {
    let mut chunks = bytes.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        let found = hits(word, [a, b], 0);
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&c| c == a || c == b)
        .map(|i| at + i)
}

impl Unit for u8 {
    fn ch(self) -> char {
        char::from(self)
    }

    fn line_end(units: &[u8]) -> usize {
        find_either(units, b'\n', b'\r').unwrap_or(units.len())
    }

    fn backslash(units: &[u8]) -> Option<usize> {
        find_either(units, b'\\', b'\\')
    }

    fn push_text(out: &mut String, units: &[u8]) {
        match std::str::from_utf8(units) {
            Ok(ascii) if units.is_ascii() => out.push_str(ascii),
            _ => out.extend(units.iter().map(|&b| char::from(b))),
        }
    }
}

impl Unit for char {
    fn ch(self) -> char {
        self
    }

    fn push_text(out: &mut String, units: &[char]) {
        out.extend(units.iter());
    }
}

/// Reads `input`; `text` is the same input as a `str` when each unit is the char of its byte (ASCII
/// bytes), so that parts without escapes can be borrowed from it.
fn load_units<'a, T: Unit>(
    input: &'a [T],
    text: Option<&'a str>,
) -> Result<Vec<CowEntry<'a>>, ParseError> {
    let mut reader = LineReader::new(input);
    let mut entries = Vec::new();
    while let Some((line, offset, start_line)) = reader.read_logical_line() {
        let (key, value) = key_value(&line, offset, text, start_line)?;
        entries.push(CowEntry {
            key,
            value,
            line: start_line,
        });
    }
    Ok(entries)
}

/// The key and value of a logical line that starts at `offset` in the input when borrowed.
fn key_value<'a, T: Unit>(
    line: &Cow<'a, [T]>,
    offset: usize,
    text: Option<&'a str>,
    start_line: u32,
) -> Result<(Cow<'a, str>, Cow<'a, str>), ParseError>
where
    [T]: ToOwned<Owned = Vec<T>>,
{
    let (key_end, value_start) = split_key_value(line);
    // The line's own text when it is one piece of the input (not joined from continuations).
    let line_text = match (line, text) {
        (Cow::Borrowed(units), Some(text)) => text.get(offset..offset + units.len()),
        _ => None,
    };
    let key = unescape_cow(
        &line[..key_end],
        line_text.and_then(|t| t.get(..key_end)),
        start_line,
    )?;
    let value = unescape_cow(
        &line[value_start..],
        line_text.and_then(|t| t.get(value_start..)),
        start_line,
    )?;
    Ok((key, value))
}

/// [`load_units`] for bytes, one logical line at a time with word-at-a-time searches: blanks,
/// comments and lines with no continuation are read here, each line's key and value found in
/// one pass over it; a continued line or a key with an escape goes through [`LineReader`] and
/// [`key_value`] (which [`load_units`] uses for every line), from the line's first byte on.
fn load_bytes<'a>(
    input: &'a [u8],
    text: Option<&'a str>,
    mut emit: impl FnMut(Cow<'a, str>, Cow<'a, str>, u32),
) -> Result<(), ParseError> {
    let borrow = |from: usize, to: usize| match text.and_then(|t| t.get(from..to)) {
        Some(t) => Cow::Borrowed(t),
        None => Cow::Owned(u8::text(&input[from..to])),
    };
    let mut pos = 0;
    let mut line: u32 = 1;
    while let Some(&byte) = input.get(pos) {
        match byte {
            b' ' | b'\t' | 0x0C => {
                pos += 1;
                continue;
            }
            b'\n' | b'\r' => {
                line += ends_line(input, pos);
                pos += 1;
                continue;
            }
            b'#' | b'!' => {
                let end = pos + 1 + <u8 as Unit>::line_end(&input[pos + 1..]);
                if end == input.len() {
                    break;
                }
                line += ends_line(input, end);
                pos = end + 1;
                continue;
            }
            _ => {}
        }
        let first = pos;
        let key_end = key_end(input, first);
        let (value_start, end, backslash) = match input.get(key_end) {
            Some(b'\\') => (0, 0, None),
            Some(b'\n' | b'\r') | None => (key_end, key_end, None),
            Some(&sep) => {
                let value_start = value_start(input, key_end + 1, matches!(sep, b'=' | b':'));
                let stop = value_start + line_end_or_backslash(&input[value_start..]);
                if input.get(stop) == Some(&b'\\') {
                    let end = stop + 1 + <u8 as Unit>::line_end(&input[stop + 1..]);
                    (value_start, end, Some(stop))
                } else {
                    (value_start, stop, None)
                }
            }
        };
        let continued = backslash.is_some()
            && input[first..end]
                .iter()
                .rev()
                .take_while(|&&b| b == b'\\')
                .count()
                % 2
                == 1;
        if input.get(key_end) == Some(&b'\\') || continued {
            let mut reader = LineReader {
                input,
                pos: first,
                line,
            };
            if let Some((logical, offset, start_line)) = reader.read_logical_line() {
                let (key, value) = key_value(&logical, offset, text, start_line)?;
                emit(key, value, start_line);
            }
            (pos, line) = (reader.pos, reader.line);
            continue;
        }
        let value = match backslash {
            Some(at) => Cow::Owned(unescape_bytes(
                &input[value_start..end],
                text.and_then(|t| t.get(value_start..end)),
                at - value_start,
                line,
            )?),
            None => borrow(value_start, end),
        };
        emit(borrow(first, key_end), value, line);
        if end < input.len() {
            line += ends_line(input, end);
            pos = end + 1;
        } else {
            pos = end;
        }
    }
    Ok(())
}

/// 1 for the line terminator at `at`, 0 for the `\r` of a `\r\n` (counted at its `\n`).
fn ends_line(input: &[u8], at: usize) -> u32 {
    u32::from(!(input[at] == b'\r' && input.get(at + 1) == Some(&b'\n')))
}

/// The high bit of the first byte of `word` equal to one of `targets` or, with `below` over 0,
/// less than `below` (and of some later bytes: only the lowest is exact). All of them are ASCII,
/// so the `!v & 0x80` of every test `(v - 0x01..) & !v & 0x80` for a zero byte in
/// `v = word ^ target` is `!word & 0x80`, computed once.
#[inline(always)]
fn hits<const N: usize>(word: u64, targets: [u8; N], below: u8) -> u64 {
    let mut borrows = if below == 0 {
        0
    } else {
        word.wrapping_sub(splat(below))
    };
    for target in targets {
        borrows |= (word ^ splat(target)).wrapping_sub(splat(0x01));
    }
    borrows & !word & splat(0x80)
}

/// The first byte for which `hits` (a word-wide test, exact for its lowest byte) is set, eight
/// bytes per step; `bytes.len()` when there is none.
fn find_word(bytes: &[u8], hits: impl Fn(u64) -> u64) -> usize {
    let mut chunks = bytes.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let found = hits(u64::from_le_bytes(word));
        if found != 0 {
            return at + (found.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    // The last few bytes, padded with a letter no search looks for.
    let rest = chunks.remainder();
    let mut word = [b'A'; 8];
    word[..rest.len()].copy_from_slice(rest);
    let found = hits(u64::from_le_bytes(word));
    at + ((found.trailing_zeros() / 8) as usize).min(rest.len())
}

/// Where a key that starts at `from` stops: its first separator, blank, backslash or line end,
/// (`input.len()` at the end of the input).
fn key_end(input: &[u8], mut from: usize) -> usize {
    loop {
        // Every byte below `!` is a candidate: blanks and line ends, and control bytes that
        // are none of them and are skipped.
        let at = from + find_word(&input[from..], |w| hits(w, [b'=', b':', b'\\'], b'!'));
        match input.get(at) {
            Some(b' ' | b'\t' | 0x0C | b'\n' | b'\r' | b'=' | b':' | b'\\') | None => return at,
            Some(_) => from = at + 1,
        }
    }
}

/// Where the first line terminator or backslash is.
fn line_end_or_backslash(bytes: &[u8]) -> usize {
    find_word(bytes, |w| hits(w, [b'\n', b'\r', b'\\'], 0))
}

/// The value of each hex digit byte, and 0xFF for every other byte.
const HEX_VALUES: [u8; 256] = {
    let mut table = [0xFF; 256];
    let mut digit = 0;
    while digit < 16 {
        table[b"0123456789abcdef"[digit] as usize] = digit as u8;
        table[b"0123456789ABCDEF"[digit] as usize] = digit as u8;
        digit += 1;
    }
    table
};

/// [`unescape_from`] for bytes (the same results and errors): the runs between escapes copied
/// whole, `\uXXXX` read through a table.
fn unescape_bytes(
    segment: &[u8],
    text: Option<&str>,
    first: usize,
    line: u32,
) -> Result<String, ParseError> {
    let push_run =
        |out: &mut String, from: usize, to: usize| match text.and_then(|t| t.get(from..to)) {
            Some(run) => out.push_str(run),
            None => u8::push_text(out, &segment[from..to]),
        };
    let mut high: Option<u16> = None;
    let mut lone: Option<u16> = None;
    let mut out = String::with_capacity(segment.len());
    push_run(&mut out, 0, first);
    // At the top of the loop, `segment[i]` is a backslash.
    let mut i = first;
    while i < segment.len() {
        i += 1;
        let Some(&escaped) = segment.get(i) else {
            // A backslash at the very end stands for itself.
            if let Some(unit) = lone.or(high) {
                return Err(ParseError::LoneSurrogate { line, unit });
            }
            out.push('\\');
            break;
        };
        i += 1;
        if escaped == b'u' {
            let Some(&[a, b, c, d]) = segment.get(i..i + 4) else {
                return Err(ParseError::MalformedUnicodeEscape { line });
            };
            let [a, b, c, d] = [a, b, c, d].map(|h| u16::from(HEX_VALUES[usize::from(h)]));
            if (a | b | c | d) > 0xF {
                return Err(ParseError::MalformedUnicodeEscape { line });
            }
            i += 4;
            let unit = (a << 12) | (b << 8) | (c << 4) | d;
            if high.is_none()
                && lone.is_none()
                && let Some(ch) = char::from_u32(u32::from(unit))
            {
                // Not a surrogate: the char itself, as `push_unit` would add it.
                out.push(ch);
            } else if lone.is_none() {
                match push_unit(&mut out, high, unit) {
                    Ok(pending) => high = pending,
                    Err(unit) => {
                        lone = Some(unit);
                        high = None;
                    }
                }
            }
        } else {
            if let Some(unit) = lone.or(high) {
                return Err(ParseError::LoneSurrogate { line, unit });
            }
            out.push(match escaped {
                b't' => '\t',
                b'r' => '\r',
                b'n' => '\n',
                b'f' => '\u{c}',
                other => char::from(other),
            });
        }
        let run = <u8 as Unit>::backslash(&segment[i..]).unwrap_or(segment.len() - i);
        if run > 0 {
            if let Some(unit) = lone.or(high) {
                return Err(ParseError::LoneSurrogate { line, unit });
            }
            push_run(&mut out, i, i + run);
            i += run;
        }
    }
    if let Some(unit) = lone.or(high) {
        return Err(ParseError::LoneSurrogate { line, unit });
    }
    Ok(out)
}

fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\u{c}')
}

/// `Properties.LineReader`: joins continuation lines, drops comments and blank lines, and
/// skips leading whitespace of every natural line it reads.
struct LineReader<'a, T> {
    input: &'a [T],
    pos: usize,
    line: u32,
}

/// The logical line being read: the earlier natural lines of a continued line (copied), then the
/// current natural line's part as a range of the input (borrowed until a continuation).
struct LogicalLine<T> {
    joined: Vec<T>,
    start: usize,
    end: usize,
}

impl<T: Unit> LogicalLine<T> {
    fn is_empty(&self) -> bool {
        self.joined.is_empty() && self.start == self.end
    }

    /// Appends the unit at `at`, which always follows the current part in the input.
    fn push(&mut self, at: usize) {
        if self.start == self.end {
            self.start = at;
        }
        debug_assert_eq!(self.end.max(self.start), at);
        self.end = at + 1;
    }

    /// Extends the current part (just pushed to) up to `end`, exclusive.
    fn extend_to(&mut self, end: usize) {
        self.end = end;
    }

    /// Drops the last unit: only ever the backslash just pushed.
    fn pop(&mut self) {
        if self.end > self.start {
            self.end -= 1;
        } else {
            self.joined.pop();
        }
    }

    fn continue_on_next_line(&mut self, input: &[T]) {
        self.joined.extend_from_slice(&input[self.start..self.end]);
        self.start = 0;
        self.end = 0;
    }

    /// The line, and where in the input it starts when it is borrowed.
    fn finish(mut self, input: &[T]) -> (Cow<'_, [T]>, usize)
    where
        [T]: ToOwned<Owned = Vec<T>>,
    {
        if self.joined.is_empty() {
            (Cow::Borrowed(&input[self.start..self.end]), self.start)
        } else {
            self.joined.extend_from_slice(&input[self.start..self.end]);
            (Cow::Owned(self.joined), 0)
        }
    }
}

impl<'a, T: Unit> LineReader<'a, T> {
    fn new(input: &'a [T]) -> Self {
        Self {
            input,
            pos: 0,
            line: 1,
        }
    }

    /// JDK 17's `LineReader.readLine`: a `#` or `!` starts a comment whenever the logical line is
    /// still empty, even after a continuation that added nothing.
    fn read_logical_line(&mut self) -> Option<(Cow<'a, [T]>, usize, u32)> {
        let input = self.input;
        let mut buf = LogicalLine {
            joined: Vec::new(),
            start: 0,
            end: 0,
        };
        let mut skip_white_space = true;
        let mut appended_line_begin = false;
        let mut preceding_backslash = false;
        let mut skip_lf = false;
        let mut start_line = self.line;
        loop {
            let Some(&unit) = input.get(self.pos) else {
                if buf.is_empty() {
                    return None;
                }
                if preceding_backslash {
                    buf.pop();
                }
                let (line, offset) = buf.finish(input);
                return Some((line, offset, start_line));
            };
            let c = unit.ch();
            self.pos += 1;
            if skip_lf {
                skip_lf = false;
                if c == '\n' {
                    // The `\r` before it left the count of this `\r\n` to it.
                    self.line += 1;
                    continue;
                }
            }
            if skip_white_space {
                if is_blank(c) {
                    continue;
                }
                if !appended_line_begin && (c == '\r' || c == '\n') {
                    self.count_line_end(c);
                    continue;
                }
                skip_white_space = false;
                appended_line_begin = false;
            }
            if buf.is_empty() {
                start_line = self.line;
                if c == '#' || c == '!' {
                    // Consume the rest of the comment line, including its terminator.
                    loop {
                        let d = input.get(self.pos)?.ch();
                        self.pos += 1;
                        if d == '\r' || d == '\n' {
                            self.count_line_end(d);
                            break;
                        }
                    }
                    skip_white_space = true;
                    continue;
                }
            }
            if c != '\n' && c != '\r' {
                let first = self.pos - 1;
                buf.push(first);
                // The rest of the natural line up to its terminator joins the line as it is:
                // a word-at-a-time search instead of the full state machine per character.
                // Whether the line ends in an escaping backslash is the parity of its trailing
                // backslashes (a natural line starts with no backslash pending).
                let end = self.pos + input.get(self.pos..).map_or(0, T::line_end);
                let trailing = input[first..end]
                    .iter()
                    .rev()
                    .take_while(|u| u.ch() == '\\')
                    .count();
                preceding_backslash = trailing % 2 == 1;
                self.pos = end;
                buf.extend_to(end);
                continue;
            }
            self.count_line_end(c);
            if buf.is_empty() {
                skip_white_space = true;
                continue;
            }
            if self.pos >= input.len() {
                if preceding_backslash {
                    buf.pop();
                }
                let (line, offset) = buf.finish(input);
                return Some((line, offset, start_line));
            }
            if preceding_backslash {
                buf.pop();
                buf.continue_on_next_line(input);
                skip_white_space = true;
                appended_line_begin = true;
                preceding_backslash = false;
                if c == '\r' {
                    skip_lf = true;
                }
            } else {
                let (line, offset) = buf.finish(input);
                return Some((line, offset, start_line));
            }
        }
    }

    /// Line numbers for messages: `\r\n` counts once, as an editor shows it.
    fn count_line_end(&mut self, c: char) {
        if c == '\r' && self.input.get(self.pos).map(|u| u.ch()) == Some('\n') {
            return;
        }
        self.line += 1;
    }
}

/// Where the key ends and the value starts in a logical line (`Properties.load0`).
fn split_key_value<T: Unit>(line: &[T]) -> (usize, usize) {
    let limit = line.len();
    // Usually the key holds no backslash: it ends at the first separator or blank.
    if let Some(end) = line
        .iter()
        .position(|u| matches!(u.ch(), '=' | ':' | ' ' | '\t' | '\u{c}' | '\\'))
        && line[end].ch() != '\\'
    {
        let has_sep = matches!(line[end].ch(), '=' | ':');
        return (end, value_start(line, end + 1, has_sep));
    }
    let mut key_len = 0;
    let mut after_key = limit;
    let mut has_sep = false;
    let mut preceding_backslash = false;
    while key_len < limit {
        let c = line[key_len].ch();
        if (c == '=' || c == ':') && !preceding_backslash {
            after_key = key_len + 1;
            has_sep = true;
            break;
        } else if is_blank(c) && !preceding_backslash {
            after_key = key_len + 1;
            break;
        }
        preceding_backslash = c == '\\' && !preceding_backslash;
        key_len += 1;
    }
    (key_len, value_start(line, after_key, has_sep))
}

/// Where the value starts: after the blanks following the key and at most one `=` or `:`
/// (none more when the key already ended at one).
fn value_start<T: Unit>(line: &[T], mut at: usize, mut has_sep: bool) -> usize {
    while at < line.len() {
        let c = line[at].ch();
        if !is_blank(c) {
            if !has_sep && (c == '=' || c == ':') {
                has_sep = true;
            } else {
                break;
            }
        }
        at += 1;
    }
    at
}

/// [`unescape`], borrowing `text` (the segment's own text, when known) if there is no escape.
fn unescape_cow<'a, T: Unit>(
    segment: &[T],
    text: Option<&'a str>,
    line: u32,
) -> Result<Cow<'a, str>, ParseError> {
    match T::backslash(segment) {
        Some(first) => unescape_from(segment, text, first, line).map(Cow::Owned),
        None => Ok(text.map_or_else(|| Cow::Owned(T::text(segment)), Cow::Borrowed)),
    }
}

/// `Properties.loadConvert`: resolves escapes; `\uXXXX` units are joined into UTF-16 pairs.
/// `first` is where the first backslash is; `text`, when known, is the segment's own text, which
/// runs without escapes are copied from as they are.
fn unescape_from<T: Unit>(
    segment: &[T],
    text: Option<&str>,
    first: usize,
    line: u32,
) -> Result<String, ParseError> {
    let push_run =
        |out: &mut String, from: usize, to: usize| match text.and_then(|t| t.get(from..to)) {
            Some(run) => out.push_str(run),
            None => T::push_text(out, &segment[from..to]),
        };
    // A high surrogate from `\uXXXX` waiting for its low half (only ever the unit just read), and
    // the first lone surrogate of the current run of escapes: reported when the run ends, as
    // decoding the whole run there did (a malformed escape later in the run wins).
    let mut high: Option<u16> = None;
    let mut lone: Option<u16> = None;
    let mut out = String::with_capacity(segment.len());
    push_run(&mut out, 0, first);
    let mut i = first;
    while i < segment.len() {
        let mut c = segment[i].ch();
        i += 1;
        if c == '\\' && i < segment.len() {
            c = segment[i].ch();
            i += 1;
            if c == 'u' {
                if i + 4 > segment.len() {
                    return Err(ParseError::MalformedUnicodeEscape { line });
                }
                let mut value: u16 = 0;
                for h in &segment[i..i + 4] {
                    let digit = h
                        .ch()
                        .to_digit(16)
                        .ok_or(ParseError::MalformedUnicodeEscape { line })?;
                    value = (value << 4) | digit as u16;
                }
                i += 4;
                if lone.is_none() {
                    match push_unit(&mut out, high, value) {
                        Ok(pending) => high = pending,
                        Err(unit) => {
                            lone = Some(unit);
                            high = None;
                        }
                    }
                }
                continue;
            }
            c = match c {
                't' => '\t',
                'r' => '\r',
                'n' => '\n',
                'f' => '\u{c}',
                other => other,
            };
        }
        if let Some(unit) = lone.or(high) {
            return Err(ParseError::LoneSurrogate { line, unit });
        }
        out.push(c);
        // Copy the run up to the next backslash in one go.
        let run = T::backslash(&segment[i..]).unwrap_or(segment.len() - i);
        if run > 0 {
            push_run(&mut out, i, i + run);
            i += run;
        }
    }
    if let Some(unit) = lone.or(high) {
        return Err(ParseError::LoneSurrogate { line, unit });
    }
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
{
    let mut out = String::new();
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

/// Bytes `Properties.saveConvert` writes as they are (`space` says whether a space is one of them:
/// it is in values, except first, and never in keys).
const fn plain_bytes(space: bool) -> [bool; 256] {
    let mut table = [false; 256];
    let mut byte = b'!';
    while byte <= b'~' {
        table[byte as usize] = !matches!(byte, b'=' | b':' | b'#' | b'!' | b'\\');
        byte += 1;
    }
    table[b' ' as usize] = space;
    table
}

const KEY_PLAIN: [bool; 256] = plain_bytes(false);
const VALUE_PLAIN: [bool; 256] = plain_bytes(true);

/// `Properties.saveConvert` with `escapeUnicode = true`.
fn escape_into(out: &mut String, text: &str, is_key: bool) {
    let bytes = text.as_bytes();
    let plain = if is_key { &KEY_PLAIN } else { &VALUE_PLAIN };
    out.reserve(bytes.len());
    let mut at = 0;
    // A value's leading space is escaped (it would be skipped on reading); later ones are not.
    if !is_key && bytes.first() == Some(&b' ') {
        out.push_str("\\ ");
        at = 1;
    }
    loop {
        // Runs of bytes written as they are go out in one copy, found with one table lookup per
        // byte; a run ends at an ASCII byte to escape or at the first byte of a non-ASCII char,
        // both char boundaries.
        let run_start = at;
        // Eight bytes per step without a branch per byte, then byte by byte to the run's end.
        while let Some(chunk) = bytes.get(at..at + 8)
            && chunk
                .iter()
                .fold(true, |all, &b| all & plain[usize::from(b)])
        {
            at += 8;
        }
        while at < bytes.len() && plain[usize::from(bytes[at])] {
            at += 1;
        }
        out.push_str(&text[run_start..at]);
        let Some(&byte) = bytes.get(at) else {
            return;
        };
        if byte.is_ascii() {
            match byte {
                b'\\' => out.push_str("\\\\"),
                b' ' => out.push_str("\\ "),
                b'\t' => out.push_str("\\t"),
                b'\n' => out.push_str("\\n"),
                b'\r' => out.push_str("\\r"),
                0x0C => out.push_str("\\f"),
                b'=' | b':' | b'#' | b'!' => {
                    out.push('\\');
                    out.push(char::from(byte));
                }
                _ => push_unicode_escape(out, u16::from(byte)),
            }
            at += 1;
            continue;
        }
        let Some(c) = text[at..].chars().next() else {
            return;
        };
        let mut units = [0u16; 2];
        for unit in c.encode_utf16(&mut units) {
            push_unicode_escape(out, *unit);
        }
        at += c.len_utf8();
    }
}

/// The escaping of [`escape_into`] as it was first written, byte by byte: the reference the
/// table-driven version is compared with.
#[cfg(test)]
fn escape_reference(out: &mut String, text: &str, is_key: bool) {
    for (at, c) in text.char_indices() {
        match c {
            ' ' if at == 0 || is_key => out.push_str("\\ "),
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\u{c}' => out.push_str("\\f"),
            '=' | ':' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    push_unicode_escape(out, *unit);
                }
            }
        }
    }
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

    proptest::proptest! {
        /// Borrowing text from ASCII input must read exactly what decoding every part reads: the
        /// same file through byte units without the input's text, and through decoded chars.
        #[test]
        fn borrowed_reading_matches_decoding_every_part(
            bytes in proptest::collection::vec(
                proptest::sample::select(b"ab=: \t\x0c\\\r\n#!u0D8E9\xe9".to_vec()),
                0..64,
            )
        ) {
            let decoded = |result: Result<Vec<CowEntry<'_>>, ParseError>| {
                result.map(|entries| {
                    entries
                        .into_iter()
                        .map(|e| (e.key.into_owned(), e.value.into_owned(), e.line))
                        .collect::<Vec<_>>()
                })
            };
            let borrowed = decoded(load_borrowed(&bytes));
            proptest::prop_assert_eq!(&borrowed, &decoded(load_units(&bytes, None)));
            let chars: Vec<char> = bytes.iter().map(|&b| char::from(b)).collect();
            proptest::prop_assert_eq!(&borrowed, &decoded(load_units(&chars, None)));
        }

        /// The byte reader's own searches against [`load_units`], on files built from the pieces
        /// its fast paths and fallbacks turn on.
        #[test]
        fn the_byte_reader_matches_the_reference_reader(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "k", "key.name", "=", ":", " ", "\t", "\x0c", "\n", "\r", "\r\n", "\\",
                    "\\\n", "\\\r\n", "\\\\", "#", "!", "\\u00e9", "\\uD83D", "\\uDE00",
                    "\\u12", "\\uZZZZ", "\\n", "\\ ", "\u{e9}", "\x00", "\x0b", "\x1f", "\x7f",
                    "value with spaces and more", "0123456789abcdef",
                    // Each search target with its high bit set.
                    "\u{8a}", "\u{8d}", "\u{dc}", "\u{bd}", "\u{ba}", "\u{a0}", "\u{a1}", "\u{a3}",
                    "\u{80}", "\u{ff}",
                ]),
                0..40,
            )
        ) {
            let text: String = pieces.concat();
            let bytes: Vec<u8> = text.chars().map(|c| c as u8).collect();
            let read = |result: Result<Vec<CowEntry<'_>>, ParseError>| {
                result.map(|entries| {
                    entries
                        .into_iter()
                        .map(|e| (e.key.into_owned(), e.value.into_owned(), e.line))
                        .collect::<Vec<_>>()
                })
            };
            let reference = read(load_units(&bytes, None));
            proptest::prop_assert_eq!(&read(load_borrowed(&bytes)), &reference);
            let owned = load(&bytes).map(|entries| {
                entries.into_iter().map(|e| (e.key, e.value, e.line)).collect::<Vec<_>>()
            });
            proptest::prop_assert_eq!(&owned, &reference);
            if text.is_ascii() {
                proptest::prop_assert_eq!(&load_str(&text), &load(&bytes));
            }
        }

        #[test]
        fn escaping_matches_the_char_by_char_reference(
            text in "(\\PC|[ \t\r\n\u{c}\u{0}\u{7f}=:#!\\\\\u{e9}\u{1F600}]){0,24}",
            is_key: bool,
        ) {
            let (mut fast, mut reference) = (String::from("x"), String::from("x"));
            escape_into(&mut fast, &text, is_key);
            escape_reference(&mut reference, &text, is_key);
            proptest::prop_assert_eq!(fast, reference);
        }
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
