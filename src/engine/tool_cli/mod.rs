//! Parses a Kafka tool's argument list exactly as the tool's own parser would, from its option
//! table (`catalogue::options`). The operator builds `tool.args` from user input, so it must know
//! what the tool will make of it: which option a spelling resolves to (abbreviations,
//! `--opt=value`, short clusters), which argument becomes a value, where options end.
//!
//! Two grammars, each transcribed from the library's source at the version Kafka ships
//! (the generator checks the version): jopt-simple 5.0.4 (`OptionParser`, `OptionParserState`,
//! `ParserRules`, `AbbreviationMap`) and argparse4j 0.7.0 (`ArgumentParserImpl.parseArgs`).
//! `tests/tool_cli_oracle.rs` runs the real parsers on the same inputs and compares.
//!
//! [`parse`] is the syntax: it fails where the library throws while reading arguments.
//! [`check_complete`] adds what the library checks once all arguments are read (required
//! options, jopt-simple's requiredIf/availableIf, argparse4j's mutually exclusive groups), which
//! only makes sense for a whole command line.

use thiserror::Error;

use crate::engine::catalogue::options::{Argument, OptionTable, ParserKind, Scope, ToolOption};

/// Why the tool's parser would refuse the argument list.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ArgError {
    #[error("unknown option {given}")]
    Unknown { given: String },
    #[error("ambiguous option {given}: could be {}", candidates.join(", "))]
    Ambiguous {
        given: String,
        candidates: Vec<String>,
    },
    #[error("option --{option} needs a value")]
    MissingValue { option: String },
    #[error("option --{option} takes no value")]
    UnexpectedValue { option: String },
    #[error("option --{option}: invalid value {value:?} ({reason})")]
    InvalidValue {
        option: String,
        value: String,
        reason: String,
    },
    #[error("option --{option} is required")]
    MissingRequired { option: String },
    #[error("option --{option} is not allowed with --{other}")]
    NotAllowedWith { option: String, other: String },
    #[error("option --{option} is allowed only with --{}", needs.join(" or --"))]
    NotAvailable { option: String, needs: Vec<String> },
    #[error("unknown subcommand {given:?}")]
    UnknownSubcommand { given: String },
    #[error("a subcommand is required")]
    MissingSubcommand,
    #[error("unexpected argument {given:?}")]
    UnexpectedPositional { given: String },
    #[error("too few positional arguments")]
    TooFewPositionals,
    #[error("option --{option} makes the tool print and exit")]
    Exits { option: String },
}

/// One option as given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occurrence {
    /// The canonical name (the table's first name: `bootstrap-server`, or `-x`).
    pub option: String,
    /// The spelling that was written (`--bootstrap-serv`, `-b`, `--group=g`).
    pub given: String,
    /// The values it took (none for a flag or an optional value not given).
    pub values: Vec<String>,
    /// jopt-simple drops a value attached to a flag (`--from-beginning=false` is the flag):
    /// kept here so a caller can refuse it.
    pub ignored_value: Option<String>,
}

/// What the parser read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedArgs {
    /// argparse4j subcommands, outermost first (canonical names).
    pub subcommands: Vec<String>,
    pub occurrences: Vec<Occurrence>,
    pub positionals: Vec<String>,
}

impl ParsedArgs {
    /// The occurrences of one option (canonical name).
    pub fn of<'a>(&'a self, option: &'a str) -> impl Iterator<Item = &'a Occurrence> + 'a {
        self.occurrences.iter().filter(move |o| o.option == option)
    }
}

/// Parses `argv` (without the program name) with the tool's grammar. Words are any text
/// (`String`s of the spec, or the lines of the built `tool.args` as they lie in it).
pub fn parse<S: AsRef<str>>(table: &OptionTable, argv: &[S]) -> Result<ParsedArgs, ArgError> {
    match table.parser {
        ParserKind::JoptSimple => jopt::parse(table, argv),
        ParserKind::Argparse4j => argparse::parse(table, argv),
        ParserKind::None => positional_only(&table.scope, argv),
    }
}

/// The checks the parser makes after the last argument; only for a whole command line.
pub fn check_complete(table: &OptionTable, parsed: &ParsedArgs) -> Result<(), ArgError> {
    match table.parser {
        ParserKind::JoptSimple => jopt::check_complete(&table.scope, parsed),
        ParserKind::Argparse4j => {
            // The top level's requirements are checked before entering a subcommand, each
            // subcommand's after its own arguments.
            let mut scope = &table.scope;
            argparse::check_required(scope, parsed)?;
            for name in &parsed.subcommands {
                if let Some(sub) = scope.subcommands.iter().find(|s| &s.name == name) {
                    scope = &sub.scope;
                    argparse::check_required(scope, parsed)?;
                }
            }
            Ok(())
        }
        ParserKind::None => Ok(()),
    }
}

/// A tool without a parser: every argument is positional; the count must fit.
fn positional_only<S: AsRef<str>>(scope: &Scope, argv: &[S]) -> Result<ParsedArgs, ArgError> {
    let min = scope.positionals.iter().filter(|p| p.nargs == "1").count();
    let max = scope.positionals.len();
    if argv.len() < min {
        return Err(ArgError::TooFewPositionals);
    }
    if argv.len() > max {
        return Err(ArgError::UnexpectedPositional {
            given: argv[max].as_ref().to_string(),
        });
    }
    Ok(ParsedArgs {
        positionals: argv.iter().map(|w| w.as_ref().to_string()).collect(),
        ..ParsedArgs::default()
    })
}

/// Java's `Integer.valueOf`/`Long.valueOf` etc. for the number types the tables name: an
/// optional sign, then ASCII digits, in range. (Java also takes other Unicode digits; the
/// operator never writes those, and `engine` refuses them before this.)
fn java_integer(value: &str, bits: u32) -> bool {
    let digits = value.strip_prefix(['+', '-']).unwrap_or(value);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    match value.parse::<i128>() {
        Ok(n) => {
            let max = (1i128 << (bits - 1)) - 1;
            n >= -max - 1 && n <= max
        }
        Err(_) => false,
    }
}

/// Java's `Double.valueOf` for plain decimal spellings: leading/trailing whitespace (<= ' ') is
/// trimmed, an optional `d`/`f` suffix, `NaN`, `Infinity`. Hex floats are not modelled.
fn java_double(value: &str) -> bool {
    let trimmed = value.trim_matches(|c: char| c <= ' ');
    let body = trimmed
        .strip_suffix(['d', 'D', 'f', 'F'])
        .unwrap_or(trimmed);
    let unsigned = body.strip_prefix(['+', '-']).unwrap_or(body);
    if unsigned == "NaN" || unsigned == "Infinity" {
        return true;
    }
    !unsigned.is_empty()
        && unsigned
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        && unsigned.parse::<f64>().is_ok()
}

/// Whether a value converts to the option's Java type (None: String, always).
fn converts(value_type: Option<&str>, value: &str) -> bool {
    match value_type {
        Some("Integer") => java_integer(value, 32),
        Some("Long") => java_integer(value, 64),
        Some("Short") => java_integer(value, 16),
        Some("Byte") => java_integer(value, 8),
        Some("Double") | Some("Float") => java_double(value),
        _ => true,
    }
}

fn is_number_type(value_type: Option<&str>) -> bool {
    matches!(
        value_type,
        Some("Integer" | "Long" | "Short" | "Byte" | "Double" | "Float")
    )
}

mod argparse;
mod jopt;
#[cfg(test)]
mod tests;
