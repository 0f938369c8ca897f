//! "Did you mean …?" for tools, keys and options.

/// The candidate closest to `input` by Levenshtein distance, if close enough to be a likely
/// typo: at most a quarter of the input's length (2 to 6 edits). Ties go to the smaller text.
pub fn closest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (input.chars().count() / 4).clamp(2, 6);
    candidates
        .into_iter()
        .map(|c| (strsim::levenshtein(input, c), c))
        .filter(|(distance, _)| *distance <= limit)
        .min()
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn suggests_the_nearest_key() {
        let keys = ["max.poll.interval.ms", "max.poll.records", "linger.ms"];
        assert_eq!(
            closest("max.poll.interval.msec", keys),
            Some("max.poll.interval.ms")
        );
        assert_eq!(closest("something.else.entirely", keys), None);
    }

    #[test]
    fn ties_go_to_the_smaller_text_and_the_limit_is_a_quarter_of_the_input() {
        assert_eq!(closest("abcd", ["abcx", "abcy", "abce"]), Some("abce"));
        // 12 chars: at most 3 edits.
        assert_eq!(
            closest("abcdefghijkl", ["abcdefghixxx"]),
            Some("abcdefghixxx")
        );
        assert_eq!(closest("abcdefghijkl", ["abcdefghxxxx"]), None);
    }
}
