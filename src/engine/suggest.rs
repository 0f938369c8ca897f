//! "Did you mean …?" for tools, keys and options.

/// The candidate closest to `input` by edit distance, if close enough to be a likely typo.
pub fn closest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let index = Candidates::new(candidates);
    index.closest(input)
}

/// Candidates prepared once (lengths and character histograms), for a catalogue that is asked
/// many times: each query then skips most candidates without touching their text.
#[derive(Debug, Default)]
pub struct Candidates<'a> {
    entries: Vec<Candidate<'a>>,
}

#[derive(Debug)]
struct Candidate<'a> {
    text: &'a str,
    chars: usize,
    histogram: Histogram,
}

type Histogram = [u8; 64];

impl<'a> Candidates<'a> {
    pub fn new(candidates: impl IntoIterator<Item = &'a str>) -> Self {
        let mut entries: Vec<Candidate<'a>> = candidates
            .into_iter()
            .map(|text| {
                let histogram = histogram(text.chars());
                Candidate {
                    text,
                    chars: text.chars().count(),
                    histogram,
                }
            })
            .collect();
        // By length, so a query only visits the candidates whose length is within its bound.
        entries.sort_by_key(|c| c.chars);
        Self { entries }
    }

    /// The closest candidate within a typo's distance; ties go to the smaller text.
    pub fn closest(&self, input: &str) -> Option<&'a str> {
        // Keys are short: their chars and the distance row live on the stack, so a query (one
        // per unknown key) allocates nothing unless a text is longer than the stack buffers.
        let mut stack = ['\0'; STACK_CHARS];
        let heap: Vec<char>;
        let input: &[char] = if input.len() <= STACK_CHARS {
            let mut len = 0;
            for (slot, c) in stack.iter_mut().zip(input.chars()) {
                *slot = c;
                len += 1;
            }
            &stack[..len]
        } else {
            heap = input.chars().collect();
            &heap
        };
        let limit = (input.len() / 4).clamp(2, 6);
        let wanted = histogram(input.iter().copied());
        let mut best: Option<(usize, &'a str)> = None;
        let mut row = Row::default();
        // The result is the least (distance, text) within the limit whatever the order the
        // candidates are visited in; only those of a length within the limit can be it.
        let from = self
            .entries
            .partition_point(|c| c.chars + limit < input.len());
        for candidate in &self.entries[from..] {
            if candidate.chars > input.len() + limit {
                break;
            }
            let bound = best.map_or(limit, |(d, _)| d);
            if input.len().abs_diff(candidate.chars) > bound {
                continue;
            }
            // Each edit changes the character counts by at most 2: a lower bound, a few vector
            // instructions, that skips most of a catalogue before any dynamic programming.
            // (Comparing which buckets are empty was a weaker bound and, without a popcount
            // instruction in the baseline x86-64 target, not cheaper.)
            if count_difference(&wanted, &candidate.histogram).div_ceil(2) > bound {
                continue;
            }
            if let Some(d) = bounded_distance(input, candidate.text, bound, &mut row)
                && best.is_none_or(|(bd, bc)| (d, candidate.text) < (bd, bc))
            {
                best = Some((d, candidate.text));
            }
        }
        best.map(|(_, c)| c)
    }
}

/// Character counts folded into 64 buckets (saturating): a lower bound on the edit distance, so
/// folding and saturation only make it weaker, never wrong.
fn histogram(chars: impl Iterator<Item = char>) -> Histogram {
    let mut counts = [0u8; 64];
    for c in chars {
        let bucket = &mut counts[(c as usize) % 64];
        *bucket = bucket.saturating_add(1);
    }
    counts
}

/// The sum of the buckets' absolute differences, written as the loop compilers turn into
/// sum-of-absolute-differences vector instructions (`psadbw` on x86-64: 16 bytes at a time).
fn count_difference(a: &Histogram, b: &Histogram) -> usize {
    a.iter()
        .zip(b)
        .map(|(x, y)| u32::from(x.abs_diff(*y)))
        .sum::<u32>() as usize
}

/// Levenshtein distance over chars.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    // No distance is longer than the longer text.
    let bound = a.len().max(b.chars().count());
    bounded_distance(&a, b, bound, &mut Row::default()).unwrap_or(usize::MAX)
}

/// Texts up to this many chars (bytes, for the input) are handled without allocating.
const STACK_CHARS: usize = 64;

/// One row of the distance table and the chars of the text compared with: on the stack for
/// texts of up to [`STACK_CHARS`] chars.
struct Row {
    stack: [usize; STACK_CHARS + 1],
    heap: Vec<usize>,
    chars: [char; STACK_CHARS],
    heap_chars: Vec<char>,
}

impl Default for Row {
    fn default() -> Self {
        Self {
            stack: [0; STACK_CHARS + 1],
            heap: Vec::new(),
            chars: ['\0'; STACK_CHARS],
            heap_chars: Vec::new(),
        }
    }
}

impl Row {
    /// The chars of `text` (`len` of them), and the row `0, 1, …, len` with every cell above
    /// `cap` lowered to `cap`.
    fn start(&mut self, text: &str, len: usize, cap: usize) -> (&[char], &mut [usize]) {
        let chars: &[char] = if len <= STACK_CHARS {
            for (slot, c) in self.chars.iter_mut().zip(text.chars()) {
                *slot = c;
            }
            &self.chars[..len]
        } else {
            self.heap_chars.clear();
            self.heap_chars.extend(text.chars());
            &self.heap_chars
        };
        let row = if len < self.stack.len() {
            &mut self.stack[..=len]
        } else {
            self.heap.resize(len + 1, 0);
            &mut self.heap[..]
        };
        for (i, cell) in row.iter_mut().enumerate() {
            *cell = i.min(cap);
        }
        (chars, row)
    }
}

/// The edit distance when it is at most `bound`, else `None`. Only the band of cells within
/// `bound` of the diagonal is computed (a cell outside it is more than `bound` away from the
/// start), cells are capped at `bound + 1` ("too far"), and the search stops as soon as a whole
/// row is too far: comparing one key with a catalogue of hundreds stays cheap.
fn bounded_distance(a: &[char], b: &str, bound: usize, row: &mut Row) -> Option<usize> {
    let b_len = b.chars().count();
    if a.len().abs_diff(b_len) > bound {
        return None;
    }
    let far = bound.saturating_add(1);
    let (b, row) = row.start(b, b_len, far);
    for (i, ca) in (1usize..).zip(a) {
        let low = i.saturating_sub(bound).max(1);
        let high = i.saturating_add(bound).min(b_len);
        // Column `low - 1` of this row: the first column, or left of the band.
        let mut left = if low == 1 { i.min(far) } else { far };
        let mut diagonal = row[low - 1];
        row[low - 1] = left;
        let mut row_min = left;
        // Cells right of the previous row's band still hold the first row's values, which are
        // `far` there: the same as "too far".
        for (cell, cb) in row[low..=high].iter_mut().zip(&b[low - 1..high]) {
            let above = *cell;
            let value = (diagonal + usize::from(ca != cb))
                .min(above + 1)
                .min(left + 1)
                .min(far);
            diagonal = above;
            *cell = value;
            left = value;
            row_min = row_min.min(value);
        }
        if row_min > bound {
            return None;
        }
    }
    let distance = row[b_len];
    (distance <= bound).then_some(distance)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_nearest_key() {
        let keys = ["max.poll.interval.ms", "max.poll.records", "linger.ms"];
        assert_eq!(
            closest("max.poll.interval.msec", keys),
            Some("max.poll.interval.ms")
        );
        assert_eq!(closest("something.else.entirely", keys), None);
    }

    /// The textbook full table, no bound, no early exit.
    fn levenshtein(a: &str, b: &str) -> usize {
        let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        let mut table = vec![vec![0; b.len() + 1]; a.len() + 1];
        for (i, row) in table.iter_mut().enumerate() {
            row[0] = i;
        }
        for (j, cell) in table[0].iter_mut().enumerate() {
            *cell = j;
        }
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                let substitution = table[i - 1][j - 1] + usize::from(a[i - 1] != b[j - 1]);
                table[i][j] = substitution
                    .min(table[i - 1][j] + 1)
                    .min(table[i][j - 1] + 1);
            }
        }
        table[a.len()][b.len()]
    }

    /// Every candidate, no index, no filters: what `closest` must answer.
    fn closest_by_brute_force<'a>(input: &str, candidates: &[&'a str]) -> Option<&'a str> {
        let limit = (input.chars().count() / 4).clamp(2, 6);
        candidates
            .iter()
            .map(|c| (levenshtein(input, c), *c))
            .filter(|(d, _)| *d <= limit)
            .min()
            .map(|(_, c)| c)
    }

    proptest::proptest! {
        // Short and long texts (either side of the stack buffers), ASCII and not.
        #[test]
        fn the_index_answers_as_a_brute_force_search(
            input in "[a-eé.]{0,12}|[a-c.]{22,30}|[a-c.]{60,70}",
            candidates in proptest::collection::vec(
                "[a-eé.]{0,12}|[a-c.]{22,30}|[a-c.]{60,70}",
                0..24,
            ),
        ) {
            let refs: Vec<&str> = candidates.iter().map(String::as_str).collect();
            proptest::prop_assert_eq!(
                Candidates::new(refs.iter().copied()).closest(&input),
                closest_by_brute_force(&input, &refs)
            );
        }
    }

    #[test]
    fn distance_counts_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
