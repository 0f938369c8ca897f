use super::*;

const CONFIG: &str = "apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {name: orders, namespace: team-a}\nspec: {tool: client, roles: [producer]}\n";
const GLOBAL: &str = "apiVersion: kafkaconfig.dev/v1alpha1\nkind: GlobalClientDefaults\nmetadata: {name: prod}\nspec: {priority: 1}\n";

fn read(files: &[(&str, &str)]) -> Result<Workspace, ManifestError> {
    let mut workspace = Workspace::default();
    for (path, text) in files {
        workspace.add_documents(Path::new(path), text)?;
    }
    Ok(workspace)
}

#[test]
fn the_same_object_in_two_files_is_refused_naming_both_files() {
    let error = read(&[("a/global.yaml", GLOBAL), ("b/global.yaml", GLOBAL)])
        .expect_err("a duplicate is refused");
    let message = error.to_string();
    assert!(
        matches!(error, ManifestError::Duplicate { .. }),
        "{message}"
    );
    assert!(message.contains("GlobalClientDefaults prod"), "{message}");
    assert!(
        message.starts_with("b/global.yaml: document 0"),
        "{message}"
    );
    assert!(
        message.contains("first in a/global.yaml, document 0"),
        "{message}"
    );
}

#[test]
fn a_cluster_scoped_object_is_the_same_whatever_namespace_its_manifest_names() {
    let in_namespace = GLOBAL.replace("{name: prod}", "{name: prod, namespace: x}");
    let error = read(&[("a.yaml", GLOBAL), ("b.yaml", &in_namespace)])
        .expect_err("one cluster-scoped object");
    assert!(matches!(error, ManifestError::Duplicate { .. }), "{error}");
}

#[test]
fn a_file_named_twice_is_read_once() {
    let dir = std::env::temp_dir().join(format!("kco-manifest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("global.yaml");
    std::fs::write(&file, GLOBAL).expect("write");
    let workspace = Workspace::load(&[dir.clone(), file.clone()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(workspace.expect("one definition").globals.len(), 1);
}

#[test]
fn the_same_object_twice_in_one_file_is_refused_with_both_documents() {
    let text = format!("{CONFIG}---\n{CONFIG}");
    let message = read(&[("one.yaml", &text)])
        .expect_err("a duplicate is refused")
        .to_string();
    assert!(
        message.contains("KafkaToolConfig team-a/orders"),
        "{message}"
    );
    assert!(message.starts_with("one.yaml: document 1"), "{message}");
    assert!(
        message.contains("first in one.yaml, document 0"),
        "{message}"
    );
}

#[test]
fn only_group_kind_namespace_and_name_together_identify_an_object() {
    let other_namespace = CONFIG.replace("team-a", "team-b");
    let other_name = CONFIG.replace("orders", "payments");
    let other_version = CONFIG.replace("v1alpha1", "v1");
    // Same name, another kind in the core group: a ConfigMap may share the config's name.
    let config_map =
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: orders, namespace: team-a}\ndata: {}\n";
    let workspace = read(&[
        ("a.yaml", CONFIG),
        ("b.yaml", &other_namespace),
        ("c.yaml", &other_name),
        ("d.yaml", config_map),
    ])
    .expect("distinct objects");
    assert_eq!(workspace.configs.len(), 3);
    let error = read(&[("a.yaml", CONFIG), ("e.yaml", &other_version)])
        .expect_err("another version of the same group is the same object");
    assert!(matches!(error, ManifestError::Duplicate { .. }), "{error}");
}

fn source_of(yaml: &str) -> Result<Workspace, String> {
    read(&[("sources.yaml", yaml)]).map_err(|e| e.to_string())
}

#[test]
fn string_data_wins_over_data_as_the_api_server_stores_it() {
    // data: password=from-data (base64); stringData: password=from-stringData.
    let ws = source_of(
        "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: ns}\ndata: {password: ZnJvbS1kYXRh, user: dXNlcg==}\nstringData: {password: from-stringData}\n",
    )
    .expect("a valid Secret");
    let data = &ws.sources["ns"].secrets["s"].data;
    assert_eq!(data["password"], b"from-stringData");
    assert_eq!(data["user"], b"user");
}

#[test]
fn a_config_map_key_in_data_and_binary_data_is_refused_with_the_api_servers_words() {
    let message = source_of(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: base, namespace: ns}\ndata:\n  client.properties: a=1\nbinaryData:\n  client.properties: YT0y\n",
    )
    .expect_err("refused");
    assert!(
        message
            .starts_with("sources.yaml: document 0 (ConfigMap base): line 5, column 22: ns/base: "),
        "{message}"
    );
    assert!(
        message.ends_with(
            "data[client.properties]: Invalid value: \"client.properties\": duplicate of key present in binaryData"
        ),
        "{message}"
    );
}

#[test]
fn bad_base64_in_a_secret_names_object_key_and_place_but_not_the_value() {
    let message = source_of(
        "apiVersion: v1\nkind: Secret\nmetadata: {name: kafka-sasl, namespace: team-a}\ndata:\n  user: dXNlcg==\n  password: aHVudGVyMg=!x\n",
    )
    .expect_err("refused");
    assert!(message.contains("Secret kafka-sasl"), "{message}");
    assert!(message.contains("line 6, column 13"), "{message}");
    assert!(
        message.contains("data.password: not valid base64"),
        "{message}"
    );
    assert!(
        !message.contains("aHVudGVy") && !message.contains('!'),
        "{message}"
    );
}

#[test]
fn a_secret_value_that_is_not_a_string_is_named_not_shown() {
    let message = source_of(
        "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: ns}\nstringData:\n  pin: 982451653\n",
    )
    .expect_err("refused");
    assert!(
        message.contains("line 5, column 8") && message.contains("stringData.pin: a number"),
        "{message}"
    );
    assert!(!message.contains("982451653"), "{message}");
}

#[test]
fn a_yaml_error_inside_a_secret_names_object_key_line_and_column_and_no_content() {
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: base}\ndata: {a: b}\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: kafka-sasl\n  namespace: team-a\nstringData:\n  user: alice\n  password: \"hunter2\n  other: x\n";
    let message = source_of(text).expect_err("not YAML");
    assert_eq!(
        message,
        "sources.yaml: line 13, column 13: not valid YAML inside Secret \
         team-a/kafka-sasl, stringData key password (the content is not shown: it may be \
         secret)"
    );
    assert!(!message.contains("hunter2") && !message.contains("alice"));
}

#[test]
fn a_yaml_error_outside_secrets_keeps_the_parsers_words_but_no_snippet() {
    let message = source_of("kind: ConfigMap\ndata: [1, 2\nb: 3\n").expect_err("not YAML");
    assert!(message.contains("line 3, column 2"), "{message}");
    assert!(message.contains("illegal placement"), "{message}");
    assert!(!message.contains("| "), "no snippet: {message}");
}
