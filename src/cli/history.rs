//! `history -n NS NAME` (`kubectl kafkaconfig history` as a kubectl plugin): the revisions a live
//! KafkaToolConfig or GlobalClientDefaults keeps in `status.history`, as a table. Older ones are
//! in the config's `Rendered` Events while the API server keeps them.

use std::io::Write as _;

use kube::Client;
use kube::api::Api;

use super::{CliError, Invalid, TextFormat, to_json_pretty};
use crate::engine::safe_text::printable;
use crate::operator::OperatorError;
use crate::operator::crd::{GlobalClientDefaults, KafkaToolConfig};
use crate::status::HistoryEntry;

/// Hash characters shown (after the `hmac-sha256:` prefix), as `kubectl rollout history` shows
/// short revisions.
const HASH_SHOWN: usize = 12;

/// The table `history` prints: one line per revision, oldest first.
pub fn history_table(entries: &[HistoryEntry]) -> String {
    let header = [
        "REVISION",
        "TIME",
        "HASH",
        "AUTHOR",
        "CAUSE",
        "CHANGED KEYS",
    ];
    let rows: Vec<[String; 6]> = entries
        .iter()
        .map(|e| {
            let hash = e.hash.rsplit(':').next().unwrap_or(&e.hash);
            let author = e.by.as_ref().map_or_else(
                || "-".to_string(),
                |b| format!("{} ({} {})", b.manager, b.kind, b.name),
            );
            let keys = if e.changed_keys.is_empty() {
                "-".to_string()
            } else {
                e.changed_keys.join(",")
            };
            [
                e.revision.to_string(),
                e.time.clone(),
                hash.chars().take(HASH_SHOWN).collect(),
                author,
                e.cause.clone(),
                keys,
            ]
            // Status text is anyone's: a cause is the change-cause annotation, an author a
            // manager name.
            .map(|cell| printable(&cell).into_owned())
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let header = header.map(str::to_string);
    for row in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        out.push_str(cells.join("   ").trim_end());
        out.push('\n');
    }
    out
}

/// `history -n NS NAME`, or `history --global NAME` for a GlobalClientDefaults.
pub async fn history_live(
    namespace: Option<String>,
    name: String,
    global: bool,
    format: TextFormat,
) -> Result<Result<(), Invalid>, CliError> {
    let client = Client::try_default().await.map_err(OperatorError::Client)?;
    let not_found = |namespace: &str| OperatorError::NotFound {
        namespace: namespace.to_string(),
        name: name.clone(),
    };
    let history = if global {
        Api::<GlobalClientDefaults>::all(client)
            .get_opt(&name)
            .await
            .map_err(OperatorError::Kube)?
            .ok_or_else(|| not_found(""))?
            .status
            .map(|s| s.history)
    } else {
        let namespace = namespace.ok_or_else(|| {
            CliError::Usage("history needs -n NAMESPACE NAME, or --global NAME".into())
        })?;
        Api::<KafkaToolConfig>::namespaced(client, &namespace)
            .get_opt(&name)
            .await
            .map_err(OperatorError::Kube)?
            .ok_or_else(|| not_found(&namespace))?
            .status
            .map(|s| s.history)
    }
    .unwrap_or_default();
    let mut stdout = std::io::stdout().lock();
    match format {
        TextFormat::Json => writeln!(stdout, "{}", to_json_pretty(&history))?,
        TextFormat::Table if history.is_empty() => {
            writeln!(stdout, "no revisions recorded yet")?;
        }
        TextFormat::Table => write!(stdout, "{}", history_table(&history))?,
    }
    Ok(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::Author;

    #[test]
    fn a_revision_is_one_aligned_line_with_its_author_and_no_control_characters() {
        let entries = [
            HistoryEntry {
                revision: 1,
                hash: "hmac-sha256:0123456789abcdef0123".into(),
                time: "2026-12-06T07:00:00Z".into(),
                changed_keys: vec!["acks".into(), "linger.ms".into()],
                cause: "first render".into(),
                by: Some(Author {
                    kind: "KafkaToolConfig".into(),
                    name: "orders".into(),
                    manager: "kubectl-client-side-apply".into(),
                    operation: Some("Update".into()),
                    time: None,
                }),
            },
            HistoryEntry {
                revision: 2,
                hash: "hmac-sha256:fedcba9876543210fedc".into(),
                time: "2026-12-06T07:05:00Z".into(),
                changed_keys: Vec::new(),
                cause: "ticket\u{1b}[2J 42".into(),
                by: None,
            },
        ];
        let table = history_table(&entries);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3, "{table}");
        assert!(lines[0].starts_with("REVISION"));
        assert!(lines[1].contains("0123456789ab ") && !lines[1].contains("0123456789abc"));
        assert!(lines[1].contains("kubectl-client-side-apply (KafkaToolConfig orders)"));
        assert!(lines[1].ends_with("acks,linger.ms"));
        assert!(!table.contains('\u{1b}') && lines[2].contains("ticket\\u{1b}[2J 42"));
        // Columns line up: the cause column starts at the same place on every line.
        let at = |line: &str, what: &str| line.find(what).expect("present");
        assert_eq!(at(lines[0], "CAUSE"), at(lines[1], "first render"));
    }
}
