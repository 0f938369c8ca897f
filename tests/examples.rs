//! Golden outputs of `examples/`.
//!
//! Each folder of `examples/` is one scenario, and `tests/golden/<folder>.yaml` records what its
//! KafkaToolConfigs render to (`render -o yaml`, then `-o properties`), what `validate`
//! reports for them (conditions and warnings), and the workload fragments `render --workload`
//! prints. The README's command renders the whole of
//! `examples/` as ONE set, as if every example were applied to one cluster, so the examples must
//! not interfere: the goldens are checked both ways, and must be the same bytes whether a folder
//! is rendered alone or its configs are rendered within the whole set (with every other folder's
//! GlobalClientDefaults, Namespaces, ConfigMaps and Secrets present). A folder whose output
//! changes when the others are present fails here.
//!
//! `UPDATE_GOLDEN=1 cargo test --test examples` rewrites the goldens (from each folder alone)
//! after a deliberate change; the combined-set check then still has to pass. Review the diff.

use std::path::{Path, PathBuf};
use std::process::Command;

use kafka_config_operator::cli::{
    RenderFormat, TextFormat, UNKEYED_NOTE, render_text, validate_text, workload_text,
};
use kafka_config_operator::manifest::Workspace;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn example_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .expect("examples/ exists")
        .map(|e| e.expect("a readable entry of examples/").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn folder_name(dir: &Path) -> String {
    dir.file_name()
        .and_then(|n| n.to_str())
        .expect("utf-8 name")
        .to_string()
}

fn golden_path(name: &str) -> PathBuf {
    root().join(format!("tests/golden/{name}.yaml"))
}

/// The golden text of a workspace: the objects, the files, and what `validate` says.
fn golden_text(workspace: &Workspace) -> (String, bool) {
    let (yaml, valid) = render_text(workspace, RenderFormat::Yaml, false);
    let (properties, _) = render_text(workspace, RenderFormat::Properties, false);
    // The table output carries no times; the time is fixed anyway.
    let (validate, _) = validate_text(workspace, TextFormat::Table, "1970-01-01T00:00:00Z");
    // `render --workload`: what the folder's workload.yaml must hold (tests/example_workloads.rs).
    let (workload, _) = workload_text(workspace, RenderFormat::Yaml);
    (
        format!(
            "{yaml}\n# --- files ---\n{properties}\n# --- validate ---\n{validate}\n# --- workload ---\n{workload}"
        ),
        valid,
    )
}

fn read_golden(name: &str) -> String {
    let golden = golden_path(name);
    std::fs::read_to_string(&golden).unwrap_or_else(|_| {
        panic!(
            "missing {}: run UPDATE_GOLDEN=1 cargo test --test examples",
            golden.display()
        )
    })
}

#[test]
fn every_example_folder_renders_valid_and_matches_its_golden_file() {
    let dirs = example_dirs();
    assert!(
        dirs.len() >= 8,
        "the examples of the engine issue: {dirs:?}"
    );
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    for dir in dirs {
        let name = folder_name(&dir);
        let workspace =
            Workspace::load(std::slice::from_ref(&dir)).expect("example manifests load");
        assert!(
            !workspace.configs.is_empty(),
            "example {name} has no KafkaToolConfig, so its golden file would show nothing"
        );
        let (text, valid) = golden_text(&workspace);
        assert!(valid, "example {name} is not valid");
        if update {
            std::fs::write(golden_path(&name), &text).expect("write golden");
            continue;
        }
        assert_eq!(
            read_golden(&name),
            text,
            "example {name} renders differently from {}",
            golden_path(&name).display()
        );
    }
}

#[test]
fn examples_rendered_as_one_set_give_every_folder_exactly_its_golden_output() {
    let all = [root().join("examples")];
    let combined = Workspace::load(&all).expect("examples/ loads as one set");
    let (_, valid) = render_text(&combined, RenderFormat::Yaml, false);
    assert!(valid, "examples/ as one set is not valid");
    let mut configs = 0;
    for dir in example_dirs() {
        let name = folder_name(&dir);
        // The whole set, with only this folder's configs rendered.
        let mut workspace = Workspace::load(&all).expect("examples/ loads as one set");
        workspace
            .configs
            .retain(|c| Path::new(&c.origin).starts_with(&dir));
        configs += workspace.configs.len();
        // Every GlobalClientDefaults of the set applies; `validate` lists only the folder's own.
        let own: Vec<String> = Workspace::load(std::slice::from_ref(&dir))
            .expect("example manifests load")
            .globals
            .into_iter()
            .map(|g| g.name)
            .collect();
        let (text, _) = golden_text(&workspace);
        let text = without_foreign_globals(&text, &own);
        assert_eq!(
            read_golden(&name),
            text,
            "example {name} renders differently within examples/ than alone: another example interferes"
        );
    }
    assert_eq!(configs, combined.configs.len(), "every config is checked");
}

/// `validate`'s table without the entries of GlobalClientDefaults not named in `own` (each entry
/// is its header line and the indented lines below it).
fn without_foreign_globals(text: &str, own: &[String]) -> String {
    let mut out = String::new();
    let mut skipping = false;
    for line in text.split_inclusive('\n') {
        if let Some(name) = line.strip_prefix("GlobalClientDefaults ") {
            skipping = !own.iter().any(|o| o == name.trim_end());
        } else if !line.starts_with("  ") {
            skipping = false;
        }
        if !skipping {
            out.push_str(line);
        }
    }
    out
}

#[test]
fn the_readme_render_command_exits_0_on_all_examples() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    assert!(
        readme.contains("cargo run -- render -f examples/"),
        "the README's render command changed: update this test"
    );
    for subcommand in ["render", "validate"] {
        let output = Command::new(env!("CARGO_BIN_EXE_kafka-config-operator"))
            .args([subcommand, "-f", "examples/"])
            .current_dir(root())
            .output()
            .expect("the binary runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "{subcommand} -f examples/ exited {:?}: {stderr}",
            output.status.code()
        );
        // Nothing on stderr but, where hashes are printed (render's objects; validate's table
        // has none), the note that they are unkeyed (no --hash-key-file).
        let expected = if subcommand == "render" {
            UNKEYED_NOTE
        } else {
            ""
        };
        assert_eq!(stderr.trim_end(), expected, "{subcommand}: {stderr}");
        assert!(!output.stdout.is_empty(), "{subcommand} printed nothing");
    }
}

/// `render`/`validate` with `args`, from the repository root: (exit code, stdout, stderr).
fn run_cli(args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_kafka-config-operator"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the binary runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn with_the_clusters_hash_key_file_the_cli_prints_the_keyed_hashes_and_no_note() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let key_file = dir.path().join("hash.key");
    std::fs::write(&key_file, [0x42u8; 32]).expect("write the key");
    let key_path = key_file.to_str().expect("a UTF-8 path");
    for subcommand in ["render", "validate"] {
        let args = [
            subcommand,
            "-f",
            "examples/",
            "-o",
            "json",
            "--hash-key-file",
            key_path,
        ];
        let (code, stdout, stderr) = run_cli(&args);
        assert_eq!(code, Some(0), "{subcommand}: {stderr}");
        assert!(stderr.is_empty(), "{subcommand}: {stderr}");
        assert!(
            stdout.contains("\"hmac-sha256:"),
            "{subcommand}: keyed hashes"
        );
        assert!(
            !stdout.contains("\"sha256:"),
            "{subcommand}: no unkeyed hash"
        );
        // The same key gives the same hashes: what a pipeline compares with the cluster.
        // (Only the hashes: `validate` stamps conditions with the wall clock, so two runs that
        // straddle a second differ in `lastTransitionTime`.)
        let hashes = |text: &str| -> Vec<String> {
            text.lines()
                .filter(|l| l.contains("hmac-sha256:"))
                .map(str::to_string)
                .collect()
        };
        let (_, again, _) = run_cli(&args);
        assert_eq!(hashes(&again), hashes(&stdout));
    }
    // The base64 text of a key (what `kubectl get secret -o jsonpath` prints) is refused with
    // the fix, not taken as another key.
    std::fs::write(&key_file, "QkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkI=").expect("write");
    let (code, _, stderr) = run_cli(&["render", "-f", "examples/", "--hash-key-file", key_path]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("exactly 32 raw bytes, this one has 44") && stderr.contains("base64 -d"),
        "{stderr}"
    );
}

#[test]
fn no_example_output_contains_a_secret_value_outside_a_secret() {
    let mut sets: Vec<PathBuf> = example_dirs();
    sets.push(root().join("examples"));
    for dir in sets {
        let workspace =
            Workspace::load(std::slice::from_ref(&dir)).expect("example manifests load");
        let (properties, _) = render_text(&workspace, RenderFormat::Properties, false);
        let (validate, _) = validate_text(&workspace, TextFormat::Json, "1970-01-01T00:00:00Z");
        for text in [&properties, &validate] {
            assert!(
                !text.contains("not-a-real-password"),
                "{}: {text}",
                dir.display()
            );
        }
    }
}

/// `validate --strict` fails on a warning (issue 26: an `UnknownKey` is usually a typo), and
/// passes what has none.
#[test]
fn validate_strict_fails_on_warnings_only() {
    let dir = std::env::temp_dir().join(format!("kco-strict-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let config = |name: &str, extra: &str| {
        format!(
            "apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {{name: {name}, namespace: ns}}\nspec:\n  tool: client\n  roles: [producer]\n  properties: {{producer: {{bootstrap.servers: 'k:9092'{extra}}}}}\n"
        )
    };
    let run = |file: &str, text: String, strict: bool| {
        let path = dir.join(file);
        std::fs::write(&path, text).expect("write");
        let mut args = vec!["validate", "-f", path.to_str().expect("utf-8")];
        if strict {
            args.push("--strict");
        }
        Command::new(env!("CARGO_BIN_EXE_kafka-config-operator"))
            .args(&args)
            .output()
            .expect("runs")
            .status
            .code()
    };
    let typo = config("typo", ", lingr.ms: '5'");
    assert_eq!(
        run("typo.yaml", typo.clone(), false),
        Some(0),
        "a warning alone passes"
    );
    assert_eq!(
        run("typo.yaml", typo, true),
        Some(1),
        "--strict fails on the warning"
    );
    assert_eq!(run("clean.yaml", config("clean", ""), true), Some(0));
}

/// A manifest's keys, values, names and even its file name are anyone's (a pull request's): the
/// text outputs must show them escaped, never raw, so nothing in them can clear the terminal,
/// set its title or reorder a line (ESC, CSI, BEL, a line break, a bidirectional override).
#[test]
fn hostile_text_reaches_the_terminal_escaped() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let valid = r#"apiVersion: v1
kind: ConfigMap
metadata: {name: base, namespace: team-a}
data:
  client.properties: |
    bootstrap.servers=k:9092
    x\u001b[2J\u009b31mFAKE=1\u202e
---
apiVersion: kafkaconfig.dev/v1alpha1
kind: KafkaToolConfig
metadata: {name: t, namespace: team-a}
spec:
  tool: kafka-console-producer
  args: {topic: orders}
  properties:
    producer: {"acks\e[31m\u2066": "all\e]0;title\a"}
  configFiles:
    - configMapKeyRef: {name: base, key: client.properties}
"#;
    // Invalid, in a file whose name holds ESC: the problem lines quote the file and the value.
    let invalid = "apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {name: u, namespace: team-a}\nspec:\n  tool: kafka-console-producer\n  properties:\n    producer: {linger.ms: \"5\\e]0;pwned\\a\"}\n";
    // Not YAML: the top-level error, which quotes the file's name.
    let broken = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"a\\e[2J\n";
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write a manifest");
        path.to_str().expect("a UTF-8 path").to_string()
    };
    let valid = write("valid.yaml", valid);
    let invalid = write("invalid\u{1b}[2J.yaml", invalid);
    let broken = write("broken\u{1b}]0;title\u{7}.yaml", broken);
    // (arguments, whether the output quotes the hostile text; `render --workload` prints only
    // the pod-spec parts, which hold none of it)
    let runs: [(&[&str], bool); 9] = [
        (&["render", "-f", &valid], true),
        (&["render", "--workload", "-f", &valid], false),
        (&["explain", "-f", &valid], true),
        (&["validate", "-f", &valid], true),
        (&["explain", "-f", &valid, "-o", "json"], true),
        (&["validate", "-f", &valid, "-o", "json"], true),
        (&["render", "-f", &invalid], true),
        (&["validate", "-f", &invalid], true),
        (&["render", "-f", &broken], true),
    ];
    let drives_terminal = |c: char| {
        (c.is_control() && c != '\n')
            || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    for (args, quotes) in runs {
        let (code, stdout, stderr) = run_cli(args);
        let all = format!("{stdout}{stderr}");
        assert!(
            !all.contains(drives_terminal),
            "{args:?} (exit {code:?}) printed a raw control character: {all:?}"
        );
        // The text is there, escaped (`\u{1b}` in text, `\u001b` in JSON, `\u001B` from the
        // .properties writer), not dropped: the check above is not passed by printing nothing.
        assert!(
            !quotes
                || ["\\u{1b}", "\\u001b", "\\u{9b}", "\\u009b", "\\u202e"]
                    .iter()
                    .any(|escaped| all.to_lowercase().contains(escaped)),
            "{args:?} (exit {code:?}) did not show the hostile text: {all}"
        );
    }
}
