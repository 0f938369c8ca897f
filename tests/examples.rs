//! Golden outputs: every folder of `examples/` renders valid, and exactly to the committed
//! `tests/golden/<example>.yaml` (`UPDATE_GOLDEN=1 cargo test --test examples` rewrites them after
//! a deliberate change; review the diff).

use std::path::{Path, PathBuf};

use kafka_config_operator::cli::{RenderFormat, render_text};
use kafka_config_operator::manifest::Workspace;

fn example_dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("examples/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn every_example_renders_valid_and_matches_its_golden_file() {
    let dirs = example_dirs();
    assert!(
        dirs.len() >= 8,
        "the examples of the engine issue: {dirs:?}"
    );
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    for dir in dirs {
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .expect("utf-8 name")
            .to_string();
        let workspace =
            Workspace::load(std::slice::from_ref(&dir)).expect("example manifests load");
        let (yaml, valid) = render_text(&workspace, RenderFormat::Yaml, false);
        assert!(valid, "example {name} is not valid");
        let (properties, _) = render_text(&workspace, RenderFormat::Properties, false);
        let golden_text = format!("{yaml}\n# --- files ---\n{properties}");
        let golden =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/{name}.yaml"));
        if update {
            std::fs::write(&golden, &golden_text).expect("write golden");
            continue;
        }
        let expected = std::fs::read_to_string(&golden).unwrap_or_else(|_| {
            panic!(
                "missing {}: run UPDATE_GOLDEN=1 cargo test --test examples",
                golden.display()
            )
        });
        assert_eq!(
            expected,
            golden_text,
            "example {name} renders differently from {}",
            golden.display()
        );
    }
}

#[test]
fn no_example_output_contains_a_secret_value_outside_a_secret() {
    for dir in example_dirs() {
        let workspace =
            Workspace::load(std::slice::from_ref(&dir)).expect("example manifests load");
        let (properties, _) = render_text(&workspace, RenderFormat::Properties, false);
        assert!(
            !properties.contains("not-a-real-password"),
            "{}: {properties}",
            dir.display()
        );
    }
}
