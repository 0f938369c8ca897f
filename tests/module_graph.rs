//! Dependencies point one way (docs/decisions.md, "One-way dependencies"): `cli` → `operator` →
//! the shared layers (`status`, `output`, `manifest`) → `engine`, and no two files of `src/`
//! import each other, directly or through others. Read from the source, not by eye: every
//! `crate::…` path and every `super::…` path to a sibling is an edge from its file to the file
//! that defines the module it names. A parent's `mod` and `pub use` of its own children are the
//! module tree, not an edge; test modules (`#[cfg(test)] mod …` to the end of a file) are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level module → the top-level modules it may import.
const LAYERS: &[(&str, &[&str])] = &[
    ("engine", &[]),
    ("status", &["engine"]),
    ("output", &["engine"]),
    // The manifest reader reads ConfigMaps and Secrets with the conversion the operator uses
    // (`output::config_map_source`, `output::secret_source`).
    ("manifest", &["engine", "output"]),
    ("operator", &["engine", "status", "output"]),
    (
        "cli",
        &["engine", "status", "output", "manifest", "operator"],
    ),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("src/ is readable")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `src/engine/validate/mod.rs` → `engine::validate`; `src/lib.rs` → `crate`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file
        .strip_prefix(src)
        .expect("under src/")
        .with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    match parts.as_slice() {
        [only] if only == "lib" || only == "main" => "crate".to_string(),
        _ => parts.join("::"),
    }
}

/// The source without its trailing test module.
fn without_tests(text: &str) -> &str {
    let mut offset = 0;
    let mut lines = text.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod "))
        {
            return &text[..offset];
        }
        offset += line.len();
    }
    text
}

/// Every `prefix` path in `text`: the identifiers joined by `::` that follow it.
fn paths_after<'a>(text: &'a str, prefix: &str) -> Vec<Vec<&'a str>> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices(prefix) {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let rest = &text[at + prefix.len()..];
        let mut segments = Vec::new();
        let mut tail = rest;
        loop {
            let end = tail
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(tail.len());
            if end == 0 {
                break;
            }
            segments.push(&tail[..end]);
            match tail[end..].strip_prefix("::") {
                Some(next) => tail = next,
                None => break,
            }
        }
        found.push(segments);
    }
    found
}

/// The longest known module that `segments` (after `base`) names.
fn resolve(modules: &BTreeSet<String>, base: &[&str], segments: &[&str]) -> Option<String> {
    for len in (1..=segments.len()).rev() {
        let candidate: Vec<&str> = base.iter().chain(&segments[..len]).copied().collect();
        let name = candidate.join("::");
        if modules.contains(&name) {
            return Some(name);
        }
    }
    None
}

struct Graph {
    edges: BTreeMap<String, BTreeSet<String>>,
}

fn graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let sources: BTreeMap<String, String> = files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).expect("a readable source file");
            (module_of(&src, f), text)
        })
        .collect();
    let modules: BTreeSet<String> = sources.keys().cloned().collect();
    let mut edges = BTreeMap::new();
    for (module, text) in &sources {
        let text = without_tests(text);
        let mut deps = BTreeSet::new();
        for path in paths_after(text, "crate::") {
            deps.extend(resolve(&modules, &[], &path));
        }
        // `super::` from `a::b::c` names `a::b` and below; a sibling is an edge, the parent
        // itself is the tree.
        let own: Vec<&str> = module.split("::").collect();
        if own.len() > 1 {
            let parent = &own[..own.len() - 1];
            for path in paths_after(text, "super::") {
                if let Some(target) = resolve(&modules, parent, &path)
                    && target != parent.join("::")
                {
                    deps.insert(target);
                }
            }
        }
        deps.remove(module);
        deps.remove("crate");
        edges.insert(module.clone(), deps);
    }
    Graph { edges }
}

fn top(module: &str) -> &str {
    module.split("::").next().unwrap_or(module)
}

/// Strongly connected components of more than one file (Tarjan).
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        next: usize,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        let edges = s.edges;
        for w in edges.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.stack.contains(&w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.found
}

#[test]
fn no_two_files_import_each_other() {
    let found = cycles(&graph().edges);
    assert!(found.is_empty(), "import cycles between files: {found:?}");
}

#[test]
fn top_level_modules_import_only_the_layers_below_them() {
    let allowed: BTreeMap<&str, &[&str]> = LAYERS.iter().copied().collect();
    let mut wrong = Vec::new();
    for (from, deps) in &graph().edges {
        let layer = top(from);
        let Some(may) = allowed.get(layer) else {
            assert_eq!(from, "crate", "module {from} has no layer in LAYERS");
            continue;
        };
        for dep in deps {
            let to = top(dep);
            if to != layer && !may.contains(&to) {
                wrong.push(format!("{from} -> {dep}"));
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the layering: {wrong:?}");
}

#[test]
fn the_check_sees_a_cycle_and_a_layer_violation() {
    // The parser and the cycle search on a made-up graph, so a broken check cannot pass silently.
    let text = "use crate::engine::spec::Spec;\nfn f() { super::b::g(); crate::cli::x(); }\n\
                #[cfg(test)]\nmod tests { use crate::operator::y; }\n";
    let body = without_tests(text);
    assert!(!body.contains("operator"));
    let paths = paths_after(body, "crate::");
    assert_eq!(
        paths,
        vec![vec!["engine", "spec", "Spec"], vec!["cli", "x"]]
    );
    assert_eq!(paths_after(body, "super::"), vec![vec!["b", "g"]]);
    let edges: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(cycles(&edges), vec![vec!["a", "b", "c"]]);
    // And the real graph has the edges it should: the CLI uses the engine.
    let real = graph();
    assert!(real.edges["cli"].iter().any(|d| top(d) == "engine"));
    assert!(real.edges.contains_key("engine"));
}
