//! "Did you mean …?" for tools, keys and options.

/// The candidate closest to `input` by Levenshtein distance, if close enough to be a likely
/// typo: at most a quarter of the input's length (2 to 6 edits). Ties go to the smaller text.
pub fn closest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let target = Profile::new(input);
    let limit = limit_for(target.len);
    candidates
        .into_iter()
        .filter(|c| target.may_be_close(limit, &Profile::new(c)))
        .map(|c| (strsim::levenshtein(input, c), c))
        .filter(|(distance, _)| *distance <= limit)
        .min()
        .map(|(_, c)| c)
}

/// [`closest`] over candidates whose [`Profile`]s were computed once beforehand (a catalogue set
/// is searched for every unknown key of every config), sorted by [`Profile::char_count`]: only the
/// candidates whose length is within the limit are looked at. The input's pair counts are worked
/// out only when a candidate passes the char counts: a custom key (an interceptor's setting)
/// rarely does, and the pairs cost as much as the rest of the search.
pub fn closest_profiled<'a>(input: &str, candidates: &'a [(String, Profile)]) -> Option<&'a str> {
    let (len, counts) = char_counts(input);
    let limit = limit_for(len);
    let start = candidates.partition_point(|(_, p)| p.len + limit < len);
    let end = candidates.partition_point(|(_, p)| p.len <= len + limit);
    let mut pairs = None;
    candidates
        .get(start..end)
        .unwrap_or_default()
        .iter()
        // The window already holds only the lengths within the limit.
        .filter(|(_, profile)| {
            within_counts(limit, &counts, &profile.counts)
                && within_pairs(
                    limit,
                    pairs.get_or_insert_with(|| pair_counts(input)),
                    &profile.pairs,
                )
        })
        .map(|(c, _)| (strsim::levenshtein(input, c), c.as_str()))
        .filter(|(distance, _)| *distance <= limit)
        .min()
        .map(|(_, c)| c)
}

/// What the cheap lower bounds of the distance need to know about a text: its length in chars
/// and how often each char and each pair of adjacent chars occurs, folded into 32 buckets and
/// capped at 255 (folding and capping only weaken the bounds). Byte counts keep the comparison
/// to a few vector instructions. 32 buckets fold Kafka's key alphabet (`a-z0-9._-`) exactly as
/// 64 did (digits share with `p-y`, `.` with `n`, `-` with `m` either way), so the bounds reject
/// the same candidates with half the table to compare.
#[derive(Debug, Clone)]
pub struct Profile {
    len: usize,
    counts: [u8; BUCKETS],
    pairs: [u8; BUCKETS],
}

const BUCKETS: usize = 32;

impl Profile {
    pub fn new(text: &str) -> Self {
        let (len, counts) = char_counts(text);
        Self {
            len,
            counts,
            pairs: pair_counts(text),
        }
    }

    /// The length in chars, by which [`closest_profiled`] wants its candidates sorted.
    pub fn char_count(&self) -> usize {
        self.len
    }

    /// Three lower bounds of the distance rule out most of a catalogue before the full table (the
    /// validation of a config with many custom keys asks for up to 20 suggestions): the difference
    /// in length; half the difference in character counts, since an edit changes at most two
    /// counts by one; a quarter of the difference in pair counts, since an edit removes at most
    /// two pairs and adds at most two (the q-gram lemma for q = 2). The pairs rule out the
    /// unrelated keys of equal length and letters that the counts let through.
    fn may_be_close(&self, limit: usize, candidate: &Profile) -> bool {
        candidate.len.abs_diff(self.len) <= limit
            && within_counts(limit, &self.counts, &candidate.counts)
            && within_pairs(limit, &self.pairs, &candidate.pairs)
    }
}

/// The most edits a suggestion for an input of `len` chars may be away.
fn limit_for(len: usize) -> usize {
    (len / 4).clamp(2, 6)
}

fn within_counts(limit: usize, a: &[u8; BUCKETS], b: &[u8; BUCKETS]) -> bool {
    difference(a, b).div_ceil(2) as usize <= limit
}

fn within_pairs(limit: usize, a: &[u8; BUCKETS], b: &[u8; BUCKETS]) -> bool {
    difference(a, b).div_ceil(4) as usize <= limit
}

/// An ASCII text's chars are its bytes: read without decoding UTF-8 (Kafka's keys are ASCII,
/// and every unknown key's counts are taken on every evaluation).
fn char_counts(text: &str) -> (usize, [u8; BUCKETS]) {
    if text.is_ascii() {
        counts_of(text.bytes().map(usize::from))
    } else {
        counts_of(text.chars().map(|c| c as usize))
    }
}

fn pair_counts(text: &str) -> [u8; BUCKETS] {
    if text.is_ascii() {
        pairs_of(text.bytes().map(usize::from))
    } else {
        pairs_of(text.chars().map(|c| c as usize))
    }
}

#[inline(always)]
fn counts_of(chars: impl Iterator<Item = usize>) -> (usize, [u8; BUCKETS]) {
    let mut len = 0;
    let mut counts = [0u8; BUCKETS];
    for c in chars {
        len += 1;
        let bucket = &mut counts[c % BUCKETS];
        *bucket = bucket.saturating_add(1);
    }
    (len, counts)
}

#[inline(always)]
fn pairs_of(mut chars: impl Iterator<Item = usize>) -> [u8; BUCKETS] {
    let mut pairs = [0u8; BUCKETS];
    let Some(mut previous) = chars.next() else {
        return pairs;
    };
    for c in chars {
        let bucket = &mut pairs[previous.wrapping_mul(31).wrapping_add(c) % BUCKETS];
        *bucket = bucket.saturating_add(1);
        previous = c;
    }
    pairs
}

/// The summed differences of two count tables, as differences of `i32`s: the form the compiler
/// turns into two sum-of-absolute-differences instructions for 32 buckets (12 instructions; the
/// previous 64-bucket `u8::abs_diff` sum took about 120 inside the search, measured with
/// callgrind: the did-you-mean search was a quarter of evaluate_and_render/20).
fn difference(a: &[u8; BUCKETS], b: &[u8; BUCKETS]) -> u32 {
    a.iter()
        .zip(b)
        .map(|(p, q)| (i32::from(*p) - i32::from(*q)).unsigned_abs())
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
        /// The bounds only skip candidates that are too far: the answer is the brute force one
        /// (with chars that share a bucket: digits and `p-y`, `.` and `n`, upper and lower case).
        #[test]
        fn answers_as_a_brute_force_search(
            input in "[a-eA-Emnp-r0-2\u{e9}._-]{0,12}|[a-c.]{22,30}",
            candidates in proptest::collection::vec("[a-eA-Emnp-r0-2\u{e9}._-]{0,12}|[a-c.]{22,30}", 0..24),
        ) {
            let limit = (input.chars().count() / 4).clamp(2, 6);
            let brute = candidates
                .iter()
                .map(|c| (strsim::levenshtein(&input, c), c.as_str()))
                .filter(|(d, _)| *d <= limit)
                .min()
                .map(|(_, c)| c);
            proptest::prop_assert_eq!(closest(&input, candidates.iter().map(String::as_str)), brute);
            let mut profiled: Vec<(String, super::Profile)> =
                candidates.iter().map(|c| (c.clone(), super::Profile::new(c))).collect();
            profiled.sort_by_key(|(_, p)| p.char_count());
            proptest::prop_assert_eq!(super::closest_profiled(&input, &profiled), brute);
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
