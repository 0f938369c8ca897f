//! "Did you mean …?" for tools, keys and options.

/// The candidate closest to `input` by edit distance, if close enough to be a likely typo.
pub fn closest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let input: Vec<char> = input.chars().collect();
    let limit = (input.len() / 4).clamp(2, 6);
    let mut best: Option<(usize, &str)> = None;
    let mut row = Vec::new();
    let histogram = char_histogram(input.iter().copied());
    for candidate in candidates {
        let bound = best.map_or(limit, |(d, _)| d);
        // Each edit changes the character counts by at most 2: a cheap lower bound that skips
        // most of a catalogue before any dynamic programming.
        let counts = char_histogram(candidate.chars());
        let difference: usize = histogram
            .iter()
            .zip(&counts)
            .map(|(a, b)| a.abs_diff(*b) as usize)
            .sum();
        if difference.div_ceil(2) > bound {
            continue;
        }
        if let Some(d) = bounded_distance(&input, candidate, bound, &mut row)
            && best.is_none_or(|(bd, bc)| (d, candidate) < (bd, bc))
        {
            best = Some((d, candidate));
        }
    }
    best.map(|(_, c)| c)
}

fn char_histogram(chars: impl Iterator<Item = char>) -> [u16; 64] {
    let mut counts = [0u16; 64];
    for c in chars {
        counts[(c as usize) % 64] = counts[(c as usize) % 64].saturating_add(1);
    }
    counts
}

/// Levenshtein distance over chars.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    bounded_distance(&a, b, usize::MAX, &mut Vec::new()).unwrap_or(usize::MAX)
}

/// The edit distance when it is at most `bound`, else `None`; stops as soon as a whole row
/// exceeds the bound, so comparing one key with a catalogue of hundreds stays cheap.
fn bounded_distance(a: &[char], b: &str, bound: usize, row: &mut Vec<usize>) -> Option<usize> {
    let b_len = b.chars().count();
    if a.len().abs_diff(b_len) > bound {
        return None;
    }
    row.clear();
    row.extend(0..=b_len);
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        let mut row_min = row[0];
        for (j, cb) in b.chars().enumerate() {
            let above = row[j + 1];
            let value = (diagonal + usize::from(*ca != cb))
                .min(above + 1)
                .min(row[j] + 1);
            diagonal = above;
            row[j + 1] = value;
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

    #[test]
    fn distance_counts_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
