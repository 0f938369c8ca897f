//! Differential test of the `.properties` codec against the real JDK: thousands of generated
//! inputs are loaded by `java.util.Properties.load` (through `tests/jdk/PropertiesOracle.java`)
//! and by our `load`; the maps must be equal. Then Java must load what our `store` wrote back to
//! exactly the map we stored.
//!
//! Needs `javac` and `java` on the PATH (the README's test command installs a JDK when missing);
//! the test fails, never skips, without them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use kafka_config_operator::engine::properties::{self, ParseError};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};

type Units = Vec<u16>;
type JavaMap = Vec<(Units, Units)>;

fn oracle_dir(tag: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("jdk-oracle-{tag}"));
    std::fs::create_dir_all(&dir).expect("create oracle dir");
    dir
}

fn compile_oracle(tag: &str) -> PathBuf {
    let dir = oracle_dir(tag);
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/jdk/PropertiesOracle.java");
    let status = Command::new("javac")
        .arg("-d")
        .arg(&dir)
        .arg(&source)
        .status()
        .expect("javac must be installed for the differential test");
    assert!(status.success(), "javac failed");
    dir
}

/// Runs Java's `Properties.load` over every input in one JVM.
/// `tag` keeps tests that run in parallel in separate folders.
fn java_load_all(tag: &str, inputs: &[Vec<u8>]) -> Vec<Option<JavaMap>> {
    let dir = compile_oracle(tag);
    let input_path = dir.join("cases.bin");
    let output_path = dir.join("cases.out");
    let mut buf = Vec::new();
    buf.extend_from_slice(&(inputs.len() as i32).to_be_bytes());
    for input in inputs {
        buf.extend_from_slice(&(input.len() as i32).to_be_bytes());
        buf.extend_from_slice(input);
    }
    std::fs::write(&input_path, buf).expect("write cases");
    let status = Command::new("java")
        .arg("-cp")
        .arg(&dir)
        .arg("PropertiesOracle")
        .arg(&input_path)
        .arg(&output_path)
        .status()
        .expect("java must be installed for the differential test");
    assert!(status.success(), "the Java oracle failed");
    let text = std::fs::read_to_string(&output_path).expect("read oracle output");
    text.lines().map(parse_oracle_line).collect()
}

fn parse_hex(word: &str) -> Units {
    let hex = &word[1..];
    (0..hex.len() / 4)
        .map(|i| u16::from_str_radix(&hex[i * 4..i * 4 + 4], 16).expect("oracle hex"))
        .collect()
}

fn parse_oracle_line(line: &str) -> Option<JavaMap> {
    let mut words = line.split(' ');
    if words.next() == Some("ERR") {
        return None;
    }
    let count: usize = words.next().expect("count").parse().expect("count");
    let mut map = Vec::with_capacity(count);
    for _ in 0..count {
        let key = parse_hex(words.next().expect("key"));
        let value = parse_hex(words.next().expect("value"));
        map.push((key, value));
    }
    map.sort();
    Some(map)
}

fn units(s: &str) -> Units {
    s.encode_utf16().collect()
}

fn ours(map: &BTreeMap<String, String>) -> JavaMap {
    let mut out: JavaMap = map.iter().map(|(k, v)| (units(k), units(v))).collect();
    out.sort();
    out
}

fn has_lone_surrogate(map: &JavaMap) -> bool {
    map.iter()
        .any(|(k, v)| char::decode_utf16(k.iter().chain(v.iter()).copied()).any(|r| r.is_err()))
}

/// Bytes drawn mostly from the characters that matter to the grammar.
fn grammar_bytes() -> impl Strategy<Value = Vec<u8>> {
    let special = prop::sample::select(vec![
        b'=', b':', b' ', b'\t', 0x0c, b'\\', b'\\', b'\n', b'\r', b'#', b'!', b'u', b'0', b'a',
        b'F', b'4', b'k', b'v', b't', b'n', b'r', b'f', b'$', b'{', b'}', 0xe9, 0xff, 0x80, b'D',
        b'8',
    ]);
    let any = any::<u8>();
    prop::collection::vec(prop_oneof![8 => special, 1 => any], 0..48)
}

fn arbitrary_text() -> impl Strategy<Value = String> {
    let chars = prop_oneof![
        6 => prop::sample::select(vec![' ', '=', ':', '#', '!', '\\', '\t', '\n', '\r', '\u{c}', 'a', 'Z', '0', 'u', '$', '{']),
        2 => any::<char>(),
        1 => prop::sample::select(vec!['é', '€', '😀', '\u{0}', '\u{7f}', '\u{ff}', '\u{100}']),
    ];
    prop::collection::vec(chars, 0..16).prop_map(|v| v.into_iter().collect())
}

fn generate<S: Strategy>(strategy: S, cases: usize) -> Vec<S::Value> {
    let mut runner = TestRunner::new(Config::default());
    (0..cases)
        .map(|_| strategy.new_tree(&mut runner).expect("generate").current())
        .collect()
}

#[test]
fn load_agrees_with_java_properties_load() {
    let mut inputs = generate(grammar_bytes(), 4000);
    // Edge cases worth keeping whatever the generator draws.
    for fixed in [
        &b"\\\n#b=c"[..],
        b"a=b\\",
        b"a\\\n\n=b",
        b"  \\\n  k = v",
        b"k=\\u00e9\\uD83D\\uDE00",
        b"k=\\uD800",
        b"k\\=\\:\\ x=y",
        b"!x\\\ny=z",
        b"a=1\r\nb=2\rc=3\n",
        b"key\\\r\n  more=value",
    ] {
        inputs.push(fixed.to_vec());
    }
    let java = java_load_all("load", &inputs);
    assert_eq!(java.len(), inputs.len(), "one oracle answer per input");
    let mut compared = 0;
    for (input, expected) in inputs.iter().zip(java) {
        let actual = properties::load_map(input);
        match (&expected, &actual) {
            (Some(java_map), Ok(our_map)) => assert_eq!(
                java_map,
                &ours(our_map),
                "input {:?} loads differently",
                String::from_utf8_lossy(input)
            ),
            (None, Err(ParseError::MalformedUnicodeEscape { .. })) => {}
            // A lone surrogate is a valid Java string but not a Rust one: we refuse it, by design.
            (Some(java_map), Err(ParseError::LoneSurrogate { .. }))
                if has_lone_surrogate(java_map) => {}
            _ => panic!(
                "input {:?}: Java {:?}, ours {:?}",
                String::from_utf8_lossy(input),
                expected.is_some(),
                actual
            ),
        }
        compared += 1;
    }
    assert_eq!(compared, inputs.len());
}

#[test]
fn java_loads_what_we_store_back_to_the_same_map() {
    let maps: Vec<BTreeMap<String, String>> = generate(
        prop::collection::btree_map(arbitrary_text(), arbitrary_text(), 0..6),
        2000,
    );
    let stored: Vec<Vec<u8>> = maps
        .iter()
        .map(|m| properties::store(m.iter().map(|(k, v)| (k.as_str(), v.as_str()))).into_bytes())
        .collect();
    for text in &stored {
        assert!(text.is_ascii(), "store writes ASCII only");
    }
    let java = java_load_all("store", &stored);
    for ((map, text), loaded) in maps.iter().zip(&stored).zip(java) {
        assert_eq!(
            loaded.as_ref(),
            Some(&ours(map)),
            "Java loads {:?} differently from the map we stored",
            String::from_utf8_lossy(text)
        );
        // And we read our own output back the same way.
        assert_eq!(
            &properties::load_map(text).expect("our own output loads"),
            map
        );
    }
}
