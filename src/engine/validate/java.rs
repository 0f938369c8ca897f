//! Java's own parsing rules where Kafka relies on them, so that a value is read here exactly as
//! the JVM reads it.

/// `String.trim()`: removes every char up to U+0020 at both ends (not Unicode spaces).
pub fn trim(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ')
}

/// `\s` of `java.util.regex` without UNICODE_CHARACTER_CLASS: `[ \t\n\x0B\f\r]`.
pub fn is_regex_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r')
}

/// `Character.isWhitespace`: Unicode space, line and paragraph separators except the
/// no-break ones, plus the ASCII controls U+0009-U+000D and U+001C-U+001F.
pub fn is_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n'
            | '\u{0B}'
            | '\u{0C}'
            | '\r'
            | '\u{1C}'..='\u{1F}'
            | ' '
            | '\u{1680}'
            | '\u{2000}'..='\u{2006}'
            | '\u{2008}'..='\u{200A}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{205F}'
            | '\u{3000}'
    )
}

/// `Character.toUpperCase(char)` / `toLowerCase(char)`: one char to one char (a char whose
/// full mapping is several chars keeps its simple mapping, itself for those).
fn single(c: char, mut mapped: impl Iterator<Item = char>) -> char {
    match (mapped.next(), mapped.next()) {
        (Some(m), None) => m,
        _ => c,
    }
}

fn upper(c: char) -> char {
    single(c, c.to_uppercase())
}

fn lower(c: char) -> char {
    single(c, c.to_lowercase())
}

/// `String.equalsIgnoreCase`: same length in UTF-16 units, and char by char equal after
/// `toUpperCase`, or after `toUpperCase` then `toLowerCase`.
pub fn equals_ignore_case(a: &str, b: &str) -> bool {
    a.encode_utf16().count() == b.encode_utf16().count()
        && a.chars().zip(b.chars()).all(|(x, y)| {
            if x == y {
                return true;
            }
            let (ux, uy) = (upper(x), upper(y));
            ux == uy || lower(ux) == lower(uy)
        })
}

/// The chars `Character.digit(c, 10)` reads as 0 (JDK 17, BMP only: `Integer.parseInt`
/// reads UTF-16 units); each starts a run of ten digits.
const DIGIT_ZEROS: [u32; 37] = [
    0x0030, 0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6,
    0x0D66, 0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80,
    0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0,
    0xFF10,
];

fn decimal_digit(c: char) -> Option<i64> {
    let c = u32::from(c);
    DIGIT_ZEROS
        .iter()
        .find(|zero| (**zero..**zero + 10).contains(&c))
        .map(|zero| i64::from(c - zero))
}

/// `Integer.parseInt` / `Short.parseShort` / `Long.parseLong`: an optional ASCII sign, then
/// one or more decimal digits of any script, no spaces, within `min..=max`.
pub fn parse_integer(s: &str, min: i64, max: i64) -> Option<i64> {
    let (negative, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if digits.is_empty() {
        return None;
    }
    let mut value: i128 = 0;
    for c in digits.chars() {
        value = value * 10 + i128::from(decimal_digit(c)?);
        if value > i128::from(u64::MAX) {
            return None;
        }
    }
    let value = if negative { -value } else { value };
    i64::try_from(value)
        .ok()
        .filter(|v| (min..=max).contains(v))
}

/// `Double.parseDouble` (`FloatingDecimal.readJavaFormatString`): optional sign, then `NaN`,
/// `Infinity`, a hexadecimal `0x…p…` or a decimal with optional exponent, each number with
/// an optional `f`/`F`/`d`/`D` suffix. Rust's `inf`/`nan` spellings are not Java's.
pub fn parse_double(s: &str) -> Option<f64> {
    let (negative, body) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let magnitude = match body {
        "NaN" => f64::NAN,
        "Infinity" => f64::INFINITY,
        _ => {
            let number = body.strip_suffix(['f', 'F', 'd', 'D']).unwrap_or(body);
            if let Some(hex) = number
                .strip_prefix("0x")
                .or_else(|| number.strip_prefix("0X"))
            {
                parse_hex_double(hex)?
            } else {
                parse_decimal(number)?
            }
        }
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// digits [. digits] or . digits, then an optional exponent e[+-]digits (ASCII).
fn parse_decimal(s: &str) -> Option<f64> {
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(at) => (&s[..at], Some(&s[at + 1..])),
        None => (s, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits_ok = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if !digits_ok(int) || !digits_ok(frac) || int.len() + frac.len() == 0 {
        return None;
    }
    if let Some(exponent) = exponent {
        let e = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
        if e.is_empty() || !digits_ok(e) {
            return None;
        }
    }
    // the syntax is now one Rust reads the same way (an exponent too large for i32 reads as
    // infinity or zero in both)
    s.parse::<f64>().ok()
}

/// hexdigits[.hexdigits] p[+-]digits, at least one hex digit, the binary exponent required.
fn parse_hex_double(s: &str) -> Option<f64> {
    let at = s.find(['p', 'P'])?;
    let (mantissa, exponent) = (&s[..at], &s[at + 1..]);
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let hex_ok = |d: &str| d.chars().all(|c| c.is_ascii_hexdigit());
    if !hex_ok(int) || !hex_ok(frac) || int.len() + frac.len() == 0 {
        return None;
    }
    let (exp_negative, exp_digits) = match exponent.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, exponent.strip_prefix('+').unwrap_or(exponent)),
    };
    if exp_digits.is_empty() || !exp_digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // the value only matters for range checks: read it to f64 precision
    let mut value = 0f64;
    for c in int.chars().chain(frac.chars()) {
        value = value * 16.0 + f64::from(c.to_digit(16)?);
    }
    let exp: i64 = exp_digits.parse::<i64>().unwrap_or(i64::MAX / 2);
    let exp = if exp_negative { -exp } else { exp } - 4 * frac.len() as i64;
    let exp = i32::try_from(exp.clamp(-2000, 2000)).unwrap_or(0);
    Some(value * 2f64.powi(exp))
}

/// A LIST value as `ConfigDef.parseType` splits it: empty text is the empty list, otherwise
/// `trimmed.split("\\s*,\\s*", -1)` (empty items kept).
pub fn list_items(trimmed: &str) -> Vec<&str> {
    if trimmed.is_empty() {
        Vec::new()
    } else {
        trimmed
            .split(',')
            .map(|item| item.trim_matches(is_regex_space))
            .collect()
    }
}

/// `s.split("\\s*,\\s*")`: like [`list_items`], but trailing empty items are dropped and a
/// text without a comma is one item (even when empty).
pub fn split_comma_dropping_trailing_empty(s: &str) -> Vec<&str> {
    let mut items: Vec<&str> = s
        .split(',')
        .map(|i| i.trim_matches(is_regex_space))
        .collect();
    if s.contains(',') {
        while items.last().is_some_and(|i| i.is_empty()) {
            items.pop();
        }
    }
    items
}

/// `s.split(String.valueOf(sep))` (limit 0): trailing empty pieces dropped, a text without
/// the separator is one piece.
pub fn split_dropping_trailing_empty(s: &str, sep: char) -> Vec<&str> {
    let mut pieces: Vec<&str> = s.split(sep).collect();
    if s.contains(sep) {
        while pieces.last().is_some_and(|p| p.is_empty()) {
            pieces.pop();
        }
    }
    pieces
}

/// `s.matches(".*\\s+.*")`: `.` matches anything but a line terminator (`\n`, `\r`,
/// U+0085, U+2028, U+2029), so every terminator must sit inside the run of spaces.
pub fn matches_dot_star_space_dot_star(s: &str) -> bool {
    if s.contains(['\u{85}', '\u{2028}', '\u{2029}']) {
        return false;
    }
    match (s.find(['\n', '\r']), s.rfind(['\n', '\r'])) {
        (Some(first), Some(last)) => s[first..=last].chars().all(is_regex_space),
        _ => s.chars().any(is_regex_space),
    }
}

/// Jetty's `StringUtil.csvSplit` (12.0): items separated by commas, unquoted items trimmed
/// (`Character.isWhitespace`), `"quoted"` items with `\` escapes, a trailing comma ignored,
/// two commas give an empty item.
pub fn jetty_csv_split(s: &str) -> Vec<String> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        PreData,
        Quote,
        Slosh,
        Data,
        White,
        PostData,
    }
    let mut list = Vec::new();
    let mut state = State::PreData;
    let mut out = String::new();
    let mut last = 0usize;
    for ch in s.chars() {
        match state {
            State::PreData => {
                if ch == '"' {
                    state = State::Quote;
                } else if ch == ',' {
                    list.push(String::new());
                } else if !is_whitespace(ch) {
                    state = State::Data;
                    out.push(ch);
                }
            }
            State::Data => {
                if is_whitespace(ch) {
                    last = out.len();
                    out.push(ch);
                    state = State::White;
                } else if ch == ',' {
                    list.push(std::mem::take(&mut out));
                    state = State::PreData;
                } else {
                    out.push(ch);
                }
            }
            State::White => {
                if is_whitespace(ch) {
                    out.push(ch);
                } else if ch == ',' {
                    #[expect(
                        clippy::disallowed_methods,
                        reason = "`last` is a length before a push"
                    )]
                    out.truncate(last);
                    list.push(std::mem::take(&mut out));
                    state = State::PreData;
                } else {
                    state = State::Data;
                    out.push(ch);
                }
            }
            State::Quote => {
                if ch == '\\' {
                    state = State::Slosh;
                } else if ch == '"' {
                    list.push(std::mem::take(&mut out));
                    state = State::PostData;
                } else {
                    out.push(ch);
                }
            }
            State::Slosh => {
                out.push(ch);
                state = State::Quote;
            }
            State::PostData => {
                if ch == ',' {
                    state = State::PreData;
                }
            }
        }
    }
    match state {
        State::PreData | State::PostData => {}
        State::Data | State::Quote | State::Slosh => list.push(out),
        State::White => {
            #[expect(
                clippy::disallowed_methods,
                reason = "`last` is a length before a push"
            )]
            out.truncate(last);
            list.push(out);
        }
    }
    list
}

/// `java.time.Duration.parse` (JDK 17): `[-+]P[nD][T[nH][nM][n[.fraction]S]]`, letters in
/// any case, each number with its own optional sign, a fraction of at most nine digits (`.`
/// or `,`), at least one section, no `T` without a time section, and no overflow of the
/// seconds (a long) along the way. Returns (seconds, nanos) as Duration keeps them.
pub fn parse_duration(text: &str) -> Option<(i64, i64)> {
    let mut rest = text;
    let negate = match rest.chars().next() {
        Some('-') => {
            rest = &rest[1..];
            true
        }
        Some('+') => {
            rest = &rest[1..];
            false
        }
        _ => false,
    };
    rest = rest.strip_prefix(['P', 'p'])?;
    // a signed number (ASCII digits) at the start of `s`, and what follows it
    fn number(s: &str) -> Option<(&str, &str)> {
        let sign = usize::from(s.starts_with(['+', '-']));
        let digits = s[sign..].bytes().take_while(u8::is_ascii_digit).count();
        (digits > 0).then(|| s.split_at(sign + digits))
    }
    fn long(n: &str, multiplier: i64) -> Option<i64> {
        n.parse::<i64>().ok()?.checked_mul(multiplier)
    }
    let (mut days, mut hours, mut minutes, mut seconds) = (None, None, None, None);
    let mut fraction: Option<&str> = None;
    if let Some((n, after)) = number(rest) {
        rest = after.strip_prefix(['D', 'd'])?;
        days = Some(n);
    }
    if let Some(time) = rest.strip_prefix(['T', 't']) {
        rest = time;
        if rest.is_empty() {
            return None; // "T" without a time section
        }
        while !rest.is_empty() {
            let (n, after) = number(rest)?;
            if let Some(after) = after.strip_prefix(['H', 'h']) {
                if hours.is_some() || minutes.is_some() || seconds.is_some() {
                    return None;
                }
                hours = Some(n);
                rest = after;
            } else if let Some(after) = after.strip_prefix(['M', 'm']) {
                if minutes.is_some() || seconds.is_some() {
                    return None;
                }
                minutes = Some(n);
                rest = after;
            } else {
                if seconds.is_some() {
                    return None;
                }
                let after = match after.strip_prefix(['.', ',']) {
                    Some(f) => {
                        let digits = f.bytes().take_while(u8::is_ascii_digit).count();
                        if digits > 9 {
                            return None;
                        }
                        fraction = Some(&f[..digits]);
                        &f[digits..]
                    }
                    None => after,
                };
                rest = after.strip_prefix(['S', 's'])?;
                seconds = Some(n);
            }
        }
    }
    if !rest.is_empty()
        || (days.is_none() && hours.is_none() && minutes.is_none() && seconds.is_none())
    {
        return None;
    }
    let days = days.map_or(Some(0), |n| long(n, 86_400))?;
    let hours = hours.map_or(Some(0), |n| long(n, 3_600))?;
    let minutes = minutes.map_or(Some(0), |n| long(n, 60))?;
    let secs = seconds.map_or(Some(0), |n| long(n, 1))?;
    let negative_secs = seconds.is_some_and(|n| n.starts_with('-'));
    let nanos: i64 = match fraction {
        Some(f) if !f.is_empty() => {
            let mut v: i64 = f.parse().ok()?;
            for _ in f.len()..9 {
                v *= 10;
            }
            if negative_secs { -v } else { v }
        }
        _ => 0,
    };
    // Duration.create: addExact(days, addExact(hours, addExact(minutes, seconds)))
    let total = days.checked_add(hours.checked_add(minutes.checked_add(secs)?)?)?;
    let (s, n) = of_seconds(total, nanos)?;
    if !negate {
        return Some((s, n));
    }
    // negated(): through BigDecimal; fails when the seconds no longer fit a long
    let all = -(i128::from(s) * 1_000_000_000 + i128::from(n));
    let q = i64::try_from(all / 1_000_000_000).ok()?;
    let r = i64::try_from(all % 1_000_000_000).ok()?;
    of_seconds(q, r)
}

/// `Duration.ofSeconds(seconds, nanoAdjustment)`.
fn of_seconds(seconds: i64, nanos: i64) -> Option<(i64, i64)> {
    let s = seconds.checked_add(nanos.div_euclid(1_000_000_000))?;
    Some((s, nanos.rem_euclid(1_000_000_000)))
}
