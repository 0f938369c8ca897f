//! "Did you mean …?" for tools, keys and options.

/// The candidate closest to `input` by Levenshtein distance, if close enough to be a likely
/// typo: at most a quarter of the input's length (2 to 6 edits). Ties go to the smaller text.
pub fn closest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let len = input.chars().count();
    let limit = (len / 4).clamp(2, 6);
    let counts = char_counts(input);
    candidates
        .into_iter()
        // Two lower bounds of the distance rule out most of a catalogue before the full table
        // (the validation of a config with many custom keys asks for up to 20 suggestions): the
        // difference in length, and half the difference in character counts, since an edit
        // changes at most two counts by one.
        .filter(|c| c.chars().count().abs_diff(len) <= limit)
        .filter(|c| count_difference(&counts, &char_counts(c)).div_ceil(2) <= limit)
        .map(|c| (strsim::levenshtein(input, c), c))
        .filter(|(distance, _)| *distance <= limit)
        .min()
        .map(|(_, c)| c)
}

/// How often each char occurs, folded into 64 buckets (folding only weakens the bound).
fn char_counts(text: &str) -> [u16; 64] {
    let mut counts = [0u16; 64];
    for c in text.chars() {
        let bucket = &mut counts[c as usize % 64];
        *bucket = bucket.saturating_add(1);
    }
    counts
}

fn count_difference(a: &[u16; 64], b: &[u16; 64]) -> usize {
    a.iter()
        .zip(b)
        .map(|(x, y)| usize::from(x.abs_diff(*y)))
        .sum()
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

    proptest::proptest! {
        /// The bounds only skip candidates that are too far: the answer is the brute force one.
        #[test]
        fn answers_as_a_brute_force_search(
            input in "[a-e\u{e9}.]{0,12}|[a-c.]{22,30}",
            candidates in proptest::collection::vec("[a-e\u{e9}.]{0,12}|[a-c.]{22,30}", 0..24),
        ) {
            let limit = (input.chars().count() / 4).clamp(2, 6);
            let brute = candidates
                .iter()
                .map(|c| (strsim::levenshtein(&input, c), c.as_str()))
                .filter(|(d, _)| *d <= limit)
                .min()
                .map(|(_, c)| c);
            proptest::prop_assert_eq!(closest(&input, candidates.iter().map(String::as_str)), brute);
        }
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
