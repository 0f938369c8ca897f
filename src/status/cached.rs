//! The operator's cache copy of a status: what proves a config unchanged, plus what the next
//! status is built from, with the bulky parts (messages, warnings, shadowed keys) dropped.

use super::*;
use crate::engine::render::{KEYED_PREFIX, UNKEYED_PREFIX, hash_label};

/// What the operator's cache keeps of a status besides its projection: enough to build the next
/// status exactly (history, the conditions' transition times) and to tell whether it differs
/// from the stored one (a digest of the whole status) without reading the config again. About a
/// hundred bytes plus the history, against about 1.7 KB for the whole status.
// Custom for `rss_10k_mib` (≤ 64 MiB): measured 97.6 MiB caching whole statuses, 61.3 with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// [`digest`] of the whole status as stored.
    digest: Digest,
    /// (type, status, lastTransitionTime) of every condition, in order.
    transitions: Box<[Transition]>,
    /// The Ready condition's reason and observed generation (its status is in `transitions`).
    ready: Option<(Word, Option<i64>)>,
    history: Box<[KeptEntry]>,
    /// The output's file names: the status of an invalid config keeps the last output's.
    output_keys: Box<[Word]>,
}

/// 128 bits of the SHA-256 of a status's JSON: equal digests mean equal statuses.
pub type Digest = [u8; 16];

/// The digest of a status as the operator serializes it (the same bytes for equal statuses).
pub fn digest(status: &KafkaToolConfigStatus) -> Digest {
    use sha2::Digest as _;
    let bytes = serde_json::to_vec(status).unwrap_or_default();
    let full = sha2::Sha256::digest(&bytes);
    let mut out = [0u8; 16];
    out.copy_from_slice(&full[..16]);
    out
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Transition {
    type_: Word,
    status: Word,
    time: Time,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct KeptEntry {
    revision: i64,
    hash: ContentHash,
    time: Time,
    changed_keys: Box<[Word]>,
    cause: Box<str>,
    /// Boxed: 8 bytes for the entries without one.
    by: Option<Box<KeptAuthor>>,
}

/// An [`Author`]: kinds, managers and operations are few and recur, so they are words; object
/// names are not (one per config), so they stay text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct KeptAuthor {
    kind: Word,
    name: Box<str>,
    manager: Word,
    operation: Option<Word>,
    time: Option<Time>,
}

impl KeptAuthor {
    fn of(author: &Author, words: &mut Words) -> Option<Self> {
        Some(KeptAuthor {
            kind: words.word(&author.kind)?,
            name: author.name.as_str().into(),
            manager: words.word(&author.manager)?,
            operation: match &author.operation {
                Some(operation) => Some(words.word(operation)?),
                None => None,
            },
            time: author.time.as_deref().map(Time::new),
        })
    }

    fn author(&self, words: &Words) -> Author {
        Author {
            kind: words.text(self.kind).to_string(),
            name: self.name.to_string(),
            manager: words.text(self.manager).to_string(),
            operation: self.operation.map(|o| words.text(o).to_string()),
            time: self.time.as_ref().map(Time::text),
        }
    }
}

/// A short word that recurs across statuses (a condition type or status, a key name), stored
/// once per process in [`WORDS`]. The first render of a config lists every key it wrote as
/// changed: as strings, 20 key names were about 900 bytes per config in the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Word(u32);

/// Every distinct [`Word`] seen, up to a limit. Words are never dropped (a cached status refers
/// to them by id): key names come from the Kafka catalogue and the configs' own keys, so they
/// number in the hundreds to thousands, but the configs' keys are anyone's to choose, and a
/// stream of new ones (generated names, a churn of configs) would grow the table for the life of
/// the process. Beyond [`WORDS_LIMIT`] no word is added: a status that needs a new one is cached
/// whole instead of projected ([`KafkaToolConfigStatus::cached`]), which costs memory per such
/// config, not for ever.
struct Words {
    ids: std::collections::HashMap<std::sync::Arc<str>, u32>,
    texts: Vec<std::sync::Arc<str>>,
    limit: usize,
}

/// Words the process-wide table holds at most: about 1 MB of short names.
const WORDS_LIMIT: usize = 16_384;

/// The first words, at fixed ids: checks of the Ready condition need no lock.
const FIXED_WORDS: [&str; 6] = [READY, SOURCES_RESOLVED, VALID, "True", "False", "Unknown"];
const WORD_READY: Word = Word(0);

static WORDS: std::sync::LazyLock<std::sync::Mutex<Words>> =
    std::sync::LazyLock::new(|| std::sync::Mutex::new(Words::new(WORDS_LIMIT)));

fn words() -> std::sync::MutexGuard<'static, Words> {
    WORDS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Words {
    /// A table of at most `limit` words (at least the fixed ones, at their ids).
    fn new(limit: usize) -> Self {
        let mut words = Words {
            ids: std::collections::HashMap::new(),
            texts: Vec::new(),
            limit: limit.max(FIXED_WORDS.len()),
        };
        for text in FIXED_WORDS {
            words.word(text);
        }
        words
    }

    /// The word for `text`; `None` when it is new and the table is full.
    fn word(&mut self, text: &str) -> Option<Word> {
        if let Some(id) = self.ids.get(text) {
            return Some(Word(*id));
        }
        if self.texts.len() >= self.limit {
            return None;
        }
        let id = u32::try_from(self.texts.len()).ok()?;
        let shared: std::sync::Arc<str> = text.into();
        self.texts.push(shared.clone());
        self.ids.insert(shared, id);
        Some(Word(id))
    }

    fn text(&self, word: Word) -> &str {
        self.texts.get(word.0 as usize).map_or("", |t| t)
    }
}

/// An RFC 3339 time as the operator writes it (whole seconds, `Z`) in 8 bytes; anything else
/// as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Time {
    Seconds(i64),
    Text(Box<str>),
}

impl Time {
    fn new(text: &str) -> Self {
        chrono::DateTime::parse_from_rfc3339(text)
            .ok()
            .map(|t| t.timestamp())
            .filter(|secs| Time::format(*secs).as_deref() == Some(text))
            .map_or_else(|| Time::Text(text.into()), Time::Seconds)
    }

    fn format(secs: i64) -> Option<String> {
        chrono::DateTime::from_timestamp(secs, 0)
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
    }

    fn text(&self) -> String {
        match self {
            Time::Seconds(secs) => Time::format(*secs).unwrap_or_default(),
            Time::Text(text) => text.to_string(),
        }
    }
}

/// A content hash in 32 bytes when it has one of the two forms the operator writes
/// (`hmac-sha256:<64 hex>`, keyed, and `sha256:<64 hex>`, what operators before the keyed hash
/// wrote and the offline CLI without a key prints); anything else as it was. The two forms stay
/// distinct: an unkeyed stored hash never equals a keyed new one, so an upgrade writes (and rolls)
/// once, and after that the stored hash is keyed and equal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContentHash {
    HmacSha256([u8; 32]),
    Sha256([u8; 32]),
    Text(Box<str>),
}

impl ContentHash {
    pub fn new(text: &str) -> Self {
        if let Some(bytes) = text.strip_prefix(KEYED_PREFIX).and_then(decode_hex) {
            return ContentHash::HmacSha256(bytes);
        }
        if let Some(bytes) = text.strip_prefix(UNKEYED_PREFIX).and_then(decode_hex) {
            return ContentHash::Sha256(bytes);
        }
        ContentHash::Text(text.into())
    }

    pub fn is(&self, text: &str) -> bool {
        match self {
            ContentHash::Text(t) => &**t == text,
            _ => *self == ContentHash::new(text),
        }
    }

    pub fn text(&self) -> String {
        match self {
            ContentHash::HmacSha256(bytes) => hash_label(KEYED_PREFIX, bytes),
            ContentHash::Sha256(bytes) => hash_label(UNKEYED_PREFIX, bytes),
            ContentHash::Text(text) => text.to_string(),
        }
    }
}

/// 64 lowercase hex digits as 32 bytes (what `hash_label` writes); `None` for anything else, which
/// is then kept as text so that it reads back exactly.
fn decode_hex(hex: &str) -> Option<[u8; 32]> {
    let bytes = hex.as_bytes();
    if bytes.len() != 64 || !bytes.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in bytes.chunks(2).enumerate() {
        let nibble = |b: u8| if b <= b'9' { b - b'0' } else { b - b'a' + 10 };
        out[i] = nibble(pair[0]) << 4 | nibble(pair[1]);
    }
    Some(out)
}

impl Kept {
    /// `None` when a word of the status does not fit in `words` any more.
    fn of(status: &KafkaToolConfigStatus, words: &mut Words) -> Option<Self> {
        let transitions = status
            .conditions
            .iter()
            .map(|c| {
                Some(Transition {
                    type_: words.word(&c.type_)?,
                    status: words.word(&c.status)?,
                    time: Time::new(&c.last_transition_time),
                })
            })
            .collect::<Option<_>>()?;
        let ready = match status.condition(READY) {
            Some(c) => Some((words.word(&c.reason)?, c.observed_generation)),
            None => None,
        };
        let history = status
            .history
            .iter()
            .map(|h| {
                Some(KeptEntry {
                    revision: h.revision,
                    hash: ContentHash::new(&h.hash),
                    time: Time::new(&h.time),
                    changed_keys: h
                        .changed_keys
                        .iter()
                        .map(|k| words.word(k))
                        .collect::<Option<_>>()?,
                    cause: h.cause.as_str().into(),
                    by: match &h.by {
                        Some(by) => Some(Box::new(KeptAuthor::of(by, words)?)),
                        None => None,
                    },
                })
            })
            .collect::<Option<_>>()?;
        let output_keys = status
            .output
            .iter()
            .flat_map(|o| &o.keys)
            .map(|k| words.word(k))
            .collect::<Option<_>>()?;
        Some(Kept {
            digest: digest(status),
            transitions,
            ready,
            history,
            output_keys,
        })
    }
}

impl KafkaToolConfigStatus {
    /// The Ready condition's status (`True`, `False`, `Unknown`; `""` for anything else) and
    /// observed generation, of a whole status or of the cache's projection, without allocating
    /// (the ready gauge asks for every config every 2 s).
    pub fn ready_status(&self) -> Option<(&'static str, Option<i64>)> {
        let fixed = |text: &str| {
            FIXED_WORDS[3..]
                .iter()
                .find(|w| **w == text)
                .copied()
                .unwrap_or("")
        };
        if let Some(c) = self.condition(READY) {
            return Some((fixed(&c.status), c.observed_generation));
        }
        let kept = self.kept.as_deref()?;
        let (_, generation) = kept.ready?;
        let status = kept
            .transitions
            .iter()
            .find(|t| t.type_ == WORD_READY)?
            .status;
        let text = FIXED_WORDS
            .get(status.0 as usize)
            .filter(|_| (3..6).contains(&status.0))
            .copied()
            .unwrap_or("");
        Some((text, generation))
    }

    /// Whether the status has any condition (also for the cache's projection).
    pub fn has_conditions(&self) -> bool {
        !self.conditions.is_empty()
            || self
                .kept
                .as_ref()
                .is_some_and(|k| !k.transitions.is_empty())
    }

    /// The part of a status the operator's cache keeps: what proves a config unchanged without
    /// a request (generation, Ready, hash, output, inputs), what the reverse index, the ready
    /// gauge and the own-write check read, and in [`Kept`] what the next status is built from
    /// (history, transition times, output keys) with a digest of the whole. Messages, warnings
    /// and shadowed keys (most of a status: about 1.7 KB per config at N = 10,000) are not
    /// kept: an evaluation builds them anew, and no reconcile reads the config again.
    ///
    /// When the process's word table is full and the status needs a new word, the status is
    /// kept whole (see [`Words`]): it is then compared as it is, like a status built by hand.
    pub fn cached(self) -> Self {
        if self.kept.is_some() {
            return self.project();
        }
        let mut words = words();
        self.cached_in(&mut words)
    }

    fn cached_in(self, words: &mut Words) -> Self {
        if self.kept.is_some() {
            return self.project();
        }
        match Kept::of(&self, words) {
            Some(kept) => Self {
                kept: Some(Box::new(kept)),
                ..self
            }
            .project(),
            None => self,
        }
    }

    /// Drops what [`KafkaToolConfigStatus::cached`] does not keep; `self.kept` is set.
    fn project(self) -> Self {
        Self {
            kept: self.kept,
            observed_generation: self.observed_generation,
            conditions: Vec::new(),
            config_hash: self.config_hash,
            output: self.output.map(|o| {
                Box::new(OutputStatus {
                    keys: Vec::new(),
                    ..*o
                })
            }),
            rollout: self.rollout,
            inputs: self.inputs,
            ..Self::default()
        }
    }

    /// The previous status as far as [`build`] and [`record_history`] read it, rebuilt from a
    /// cached projection: conditions with their transition times (messages empty; Ready keeps
    /// its reason and observed generation), the history, hash, output, rollout, inputs. `None`
    /// for a status that is not a projection.
    pub fn rebuilt(&self) -> Option<Self> {
        let kept = self.kept.as_deref()?;
        let words = words();
        let conditions = kept
            .transitions
            .iter()
            .map(|t| {
                let type_ = words.text(t.type_);
                let ready = kept.ready.filter(|_| type_ == READY);
                Condition {
                    type_: type_.to_string(),
                    status: words.text(t.status).to_string(),
                    reason: ready
                        .map(|(reason, _)| words.text(reason).to_string())
                        .unwrap_or_default(),
                    message: String::new(),
                    observed_generation: ready.and_then(|(_, generation)| generation),
                    last_transition_time: t.time.text(),
                }
            })
            .collect();
        let history = kept
            .history
            .iter()
            .map(|h| HistoryEntry {
                revision: h.revision,
                hash: h.hash.text(),
                time: h.time.text(),
                changed_keys: h
                    .changed_keys
                    .iter()
                    .map(|k| words.text(*k).to_string())
                    .collect(),
                cause: h.cause.to_string(),
                by: h.by.as_ref().map(|by| by.author(&words)),
            })
            .collect();
        let output = self.output.as_ref().map(|o| {
            Box::new(OutputStatus {
                keys: kept
                    .output_keys
                    .iter()
                    .map(|k| words.text(*k).to_string())
                    .collect(),
                ..(**o).clone()
            })
        });
        Some(Self {
            conditions,
            history,
            output,
            kept: None,
            ..self.clone()
        })
    }

    /// Whether `next` differs from the stored status this projection was made from.
    pub fn differs_from_stored(&self, next: &KafkaToolConfigStatus) -> bool {
        self.kept
            .as_deref()
            .is_none_or(|kept| kept.digest != digest(next))
    }
}

#[cfg(test)]
#[path = "cached_tests.rs"]
mod tests;
