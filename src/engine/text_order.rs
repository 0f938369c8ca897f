//! The order and equality of keys and texts, compared eight bytes at a time.
//!
//! `str`'s own `cmp` and `==` call the C library's `memcmp`/`bcmp`. The image links musl, whose
//! versions compare one byte per loop iteration, and Kafka keys share long prefixes
//! (`custom.interceptor.setting.`, `ssl.truststore.`): in the image, sorting and grouping a
//! config's keys spent more time in `memcmp` than anywhere else (docs/BENCHMARKS.md,
//! 2026-12-05). Comparing big-endian words gives the same order as comparing the bytes.
//! glibc's versions are vectorised and beat the word loop, so other builds keep `str`'s own.

use std::cmp::Ordering;

const WORD: usize = 8;

/// The order of `str::cmp` (bytewise, shorter first on a common prefix).
#[inline]
pub fn compare(a: &str, b: &str) -> Ordering {
    if cfg!(target_env = "musl") {
        by_words(a, b)
    } else {
        a.cmp(b)
    }
}

/// `a == b`.
#[inline]
pub fn equal(a: &str, b: &str) -> bool {
    if cfg!(target_env = "musl") {
        a.len() == b.len() && by_words(a, b) == Ordering::Equal
    } else {
        a == b
    }
}

fn by_words(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let common = a.len().min(b.len());
    let mut at = 0;
    while at + WORD <= common {
        let (x, y) = (word(a, at), word(b, at));
        if x != y {
            return x.cmp(&y);
        }
        at += WORD;
    }
    for (x, y) in a[at..common].iter().zip(&b[at..common]) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// The eight bytes at `at` as a big-endian number, so that numbers order as the bytes do.
fn word(bytes: &[u8], at: usize) -> u64 {
    let mut eight = [0u8; WORD];
    if let Some(part) = bytes.get(at..at + WORD) {
        eight.copy_from_slice(part);
    }
    u64::from_be_bytes(eight)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn orders_as_str_does_on_shared_prefixes_and_lengths() {
        let keys = [
            "",
            "a",
            "ab",
            "custom.interceptor.setting.10",
            "custom.interceptor.setting.100",
            "custom.interceptor.setting.9",
            "custom.interceptor.setting.",
            "ssl.truststore.location",
            "ssl.truststore.password",
            "\u{e9}t\u{e9}",
            "z",
        ];
        for a in keys {
            for b in keys {
                assert_eq!(by_words(a, b), a.cmp(b), "{a:?} against {b:?}");
                assert_eq!(compare(a, b), a.cmp(b), "{a:?} against {b:?}");
                assert_eq!(equal(a, b), a == b, "{a:?} against {b:?}");
            }
        }
    }

    proptest! {
        #[test]
        fn agrees_with_str_cmp(
            prefix in "[a-z.]{0,20}",
            a in "[a-z.\u{e9}\u{7f}-\u{ff}]{0,20}",
            b in "[a-z.\u{e9}\u{7f}-\u{ff}]{0,20}",
        ) {
            let (a, b) = (format!("{prefix}{a}"), format!("{prefix}{b}"));
            prop_assert_eq!(by_words(&a, &b), a.cmp(&b));
            prop_assert_eq!(compare(&a, &b), a.cmp(&b));
            prop_assert_eq!(equal(&a, &b), a == b);
        }
    }
}
