//! `manifest::Workspace::add_documents` on arbitrary text: never panics; an error names the file.
#![no_main]

use std::path::Path;

use kafka_config_operator::manifest::Workspace;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut workspace = Workspace::default();
    if let Err(e) = workspace.add_documents(Path::new("fuzz.yaml"), text) {
        let message = e.to_string();
        assert!(message.starts_with("fuzz.yaml: "), "error does not name the file: {message}");
    }
});
