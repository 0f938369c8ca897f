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

/// Parses `argv` (without the program name) with the tool's grammar.
pub fn parse(table: &OptionTable, argv: &[String]) -> Result<ParsedArgs, ArgError> {
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
fn positional_only(scope: &Scope, argv: &[String]) -> Result<ParsedArgs, ArgError> {
    let min = scope.positionals.iter().filter(|p| p.nargs == "1").count();
    let max = scope.positionals.len();
    if argv.len() < min {
        return Err(ArgError::TooFewPositionals);
    }
    if argv.len() > max {
        return Err(ArgError::UnexpectedPositional {
            given: argv[max].clone(),
        });
    }
    Ok(ParsedArgs {
        positionals: argv.to_vec(),
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

mod jopt {
    //! jopt-simple 5.0.4.
    use super::*;

    /// The parser's keys: every name, short ones without their dash.
    fn key(name: &str) -> &str {
        if name.len() == 2 && name.starts_with('-') {
            &name[1..]
        } else {
            name
        }
    }

    /// `OptionParser.isRecognized` + `specFor`: an exact name, else (with abbreviations) the
    /// only name starting with `given` (`AbbreviationMap`: two names of one option are two keys).
    pub(super) fn resolve<'a>(
        scope: &'a Scope,
        abbreviations: bool,
        given: &str,
    ) -> Result<&'a ToolOption, Vec<String>> {
        let mut candidates: Vec<(&str, &ToolOption)> = Vec::new();
        for option in &scope.options {
            for name in &option.names {
                let k = key(name);
                if k == given {
                    return Ok(option);
                }
                if abbreviations && k.starts_with(given) {
                    candidates.push((k, option));
                }
            }
        }
        match candidates.as_slice() {
            [(_, option)] => Ok(option),
            _ => Err(candidates.iter().map(|(k, _)| k.to_string()).collect()),
        }
    }

    fn unknown(given: &str, candidates: Vec<String>) -> ArgError {
        if candidates.len() > 1 {
            ArgError::Ambiguous {
                given: given.to_string(),
                candidates,
            }
        } else {
            ArgError::Unknown {
                given: given.to_string(),
            }
        }
    }

    fn is_long_token(arg: &str) -> bool {
        arg.starts_with("--") && arg != "--"
    }

    fn is_short_token(arg: &str) -> bool {
        arg.starts_with('-') && arg != "-" && !is_long_token(arg)
    }

    /// `ArgumentAcceptingOptionSpec.addArguments`: split on the value separator
    /// (`StringTokenizer`: empty pieces dropped; nothing left → the value as it is).
    fn values(option: &ToolOption, value: &str) -> Vec<String> {
        let separator = option.value_separator.as_deref().unwrap_or("\0");
        let pieces: Vec<String> = value
            .split(|c| separator.contains(c))
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect();
        if pieces.is_empty() {
            vec![value.to_string()]
        } else {
            pieces
        }
    }

    struct State<'a> {
        argv: &'a [String],
        next: usize,
        more_options: bool,
        posixly_correct: bool,
        parsed: ParsedArgs,
    }

    impl State<'_> {
        /// `AbstractOptionSpec.handleOption` for every kind of option.
        fn handle(
            &mut self,
            option: &ToolOption,
            given: &str,
            attached: Option<&str>,
        ) -> Result<(), ArgError> {
            let mut occurrence = Occurrence {
                option: option.name().to_string(),
                given: given.to_string(),
                values: Vec::new(),
                ignored_value: None,
            };
            match (option.argument, attached) {
                (Argument::None, attached) => {
                    occurrence.ignored_value = attached.map(str::to_string);
                }
                (_, Some(value)) => occurrence.values = values(option, value),
                (Argument::Required, None) => {
                    let Some(value) = self.argv.get(self.next) else {
                        return Err(ArgError::MissingValue {
                            option: option.name().to_string(),
                        });
                    };
                    self.next += 1;
                    occurrence.values = values(option, value);
                }
                (Argument::Optional, None) => {
                    if let Some(next) = self.argv.get(self.next) {
                        let looks_like_option = is_short_token(next) || is_long_token(next);
                        let convertible = converts(option.value_type.as_deref(), next);
                        if !looks_like_option && convertible {
                            if self.posixly_correct {
                                self.more_options = false;
                            } else {
                                self.next += 1;
                                occurrence.values = values(option, next);
                            }
                        } else if is_number_type(option.value_type.as_deref()) && convertible {
                            self.next += 1;
                            occurrence.values = values(option, next);
                        }
                    }
                }
            }
            self.parsed.occurrences.push(occurrence);
            Ok(())
        }
    }

    pub(super) fn parse(table: &OptionTable, argv: &[String]) -> Result<ParsedArgs, ArgError> {
        let scope = &table.scope;
        let abbreviations = table.abbreviations;
        let mut state = State {
            argv,
            next: 0,
            more_options: true,
            posixly_correct: table.posixly_correct,
            parsed: ParsedArgs::default(),
        };
        while let Some(arg) = argv.get(state.next) {
            state.next += 1;
            if !state.more_options {
                state.parsed.positionals.push(arg.clone());
                continue;
            }
            if arg == "--" {
                state.more_options = false;
            } else if is_long_token(arg) {
                let body = &arg[2..];
                let (name, value) = match body.split_once('=') {
                    Some((n, v)) => (n, Some(v)),
                    None => (body, None),
                };
                let option = resolve(scope, abbreviations, name).map_err(|c| unknown(name, c))?;
                state.handle(option, arg, value)?;
            } else if is_short_token(arg) {
                let body = &arg[1..];
                let (name, value) = match body.split_once('=') {
                    Some((n, v)) => (n, Some(v)),
                    None => (body, None),
                };
                if let Ok(option) = resolve(scope, abbreviations, name) {
                    state.handle(option, arg, value)?;
                    continue;
                }
                // A cluster of short options (`-abc`, `-b9092`): every character up to the
                // first that takes a value must be an option; that one takes the rest.
                let chars: Vec<char> = body.chars().collect();
                for c in &chars {
                    let s = c.to_string();
                    let option =
                        resolve(scope, abbreviations, &s).map_err(|cands| unknown(&s, cands))?;
                    if option.argument != Argument::None {
                        break;
                    }
                }
                for (i, c) in chars.iter().enumerate() {
                    let s = c.to_string();
                    let option =
                        resolve(scope, abbreviations, &s).map_err(|cands| unknown(&s, cands))?;
                    if option.argument != Argument::None && i + 1 < chars.len() {
                        let rest: String = chars[i + 1..].iter().collect();
                        state.handle(option, arg, Some(&rest))?;
                        break;
                    }
                    state.handle(option, arg, None)?;
                }
            } else {
                if state.posixly_correct {
                    state.more_options = false;
                }
                state.parsed.positionals.push(arg.clone());
            }
        }
        Ok(state.parsed)
    }

    /// `OptionParser.ensureRequiredOptions` / `ensureAllowedOptions`, skipped when a `forHelp`
    /// option is present.
    pub(super) fn check_complete(scope: &Scope, parsed: &ParsedArgs) -> Result<(), ArgError> {
        let has = |name: &str| parsed.occurrences.iter().any(|o| o.option == name);
        let any = |names: &[String]| names.iter().any(|n| has(n));
        if scope.options.iter().any(|o| o.help && has(o.name())) {
            return Ok(());
        }
        for option in &scope.options {
            let name = option.name();
            let required = option.required
                || (!option.required_if.is_empty() && any(&option.required_if))
                || (!option.required_unless.is_empty() && !any(&option.required_unless));
            if required && !has(name) {
                return Err(ArgError::MissingRequired {
                    option: name.to_string(),
                });
            }
        }
        for option in &scope.options {
            let name = option.name();
            if !has(name) {
                continue;
            }
            if !option.available_if.is_empty() && !any(&option.available_if) {
                return Err(ArgError::NotAvailable {
                    option: name.to_string(),
                    needs: option.available_if.clone(),
                });
            }
            if let Some(other) = option.available_unless.iter().find(|o| has(o)) {
                return Err(ArgError::NotAllowedWith {
                    option: name.to_string(),
                    other: other.clone(),
                });
            }
        }
        Ok(())
    }
}

mod argparse {
    //! argparse4j 0.7.0, prefix characters `-` (the generator refuses other settings).
    use super::*;

    /// `-x` → `-x`, a long name → `--name`: the flags as argparse4j indexes them.
    fn flag(name: &str) -> String {
        if name.len() == 2 && name.starts_with('-') {
            name.to_string()
        } else {
            format!("--{name}")
        }
    }

    fn is_negative_number(term: &str) -> bool {
        term.len() > 1 && term.starts_with('-') && term[1..].bytes().all(|b| b.is_ascii_digit())
    }

    /// `PrefixPattern.match`: starts with `-` and is not only dashes.
    fn prefixed(term: &str) -> bool {
        term.starts_with('-') && !term.bytes().all(|b| b == b'-')
    }

    fn exits(option: &ToolOption) -> bool {
        matches!(option.action.as_deref(), Some("help" | "version"))
            || option
                .action
                .as_deref()
                .is_some_and(|a| a.ends_with("AndExitAction"))
    }

    fn consumes(option: &ToolOption) -> bool {
        option.argument != Argument::None
    }

    /// (min, max) values; `None` nargs = exactly one, written as (-1, 1) like argparse4j.
    fn arity(nargs: Option<&str>) -> (i64, i64) {
        match nargs {
            None | Some("1") => (-1, 1),
            Some("?") => (0, 1),
            Some("*") => (0, i64::MAX),
            Some("+") => (1, i64::MAX),
            Some(n) => n.parse().map(|n| (n, n)).unwrap_or((-1, 1)),
        }
    }

    struct Parser<'a> {
        argv: &'a [String],
        next: usize,
        separator_seen: bool,
        parsed: ParsedArgs,
    }

    impl Parser<'_> {
        fn flag_found(&self, term: &str) -> bool {
            if self.separator_seen {
                return false;
            }
            term == "--" || (prefixed(term) && !is_negative_number(term))
        }

        /// `ArgumentImpl.convert` + the choice check.
        fn value(&self, option: &ToolOption, value: &str) -> Result<String, ArgError> {
            let invalid = |reason: String| ArgError::InvalidValue {
                option: option.name().to_string(),
                value: value.to_string(),
                reason,
            };
            let value_type = option.value_type.as_deref();
            if !converts(value_type, value) {
                return Err(invalid(format!("not a {}", value_type.unwrap_or("value"))));
            }
            if let Some(choices) = &option.choices {
                let matches = |c: &String| {
                    if is_number_type(value_type) && !matches!(value_type, Some("Double" | "Float"))
                    {
                        c.parse::<i128>().ok() == value.parse::<i128>().ok()
                    } else {
                        c == value
                    }
                };
                if !choices.iter().any(matches) {
                    return Err(invalid(format!("choose from {}", choices.join(", "))));
                }
            }
            Ok(value.to_string())
        }

        fn record(
            &mut self,
            option: &ToolOption,
            given: &str,
            values: Vec<String>,
        ) -> Result<(), ArgError> {
            if exits(option) {
                return Err(ArgError::Exits {
                    option: option.name().to_string(),
                });
            }
            self.parsed.occurrences.push(Occurrence {
                option: option.name().to_string(),
                given: given.to_string(),
                values,
                ignored_value: None,
            });
            Ok(())
        }

        /// `ArgumentParserImpl.processArg`.
        fn process(
            &mut self,
            option: &ToolOption,
            given: &str,
            embedded: Option<&str>,
        ) -> Result<(), ArgError> {
            if !consumes(option) {
                if embedded.is_some() {
                    return Err(ArgError::UnexpectedValue {
                        option: option.name().to_string(),
                    });
                }
                return self.record(option, given, Vec::new());
            }
            let (min, max) = arity(option.nargs.as_deref());
            let mut values = Vec::new();
            if min == -1 || (min == 0 && max == 1) {
                let value = match embedded {
                    Some(v) => Some(v.to_string()),
                    None => match self.argv.get(self.next) {
                        Some(next) if !self.flag_found(next) => {
                            self.next += 1;
                            Some(next.clone())
                        }
                        _ => None,
                    },
                };
                match value {
                    Some(v) => values.push(self.value(option, &v)?),
                    None if min == -1 => {
                        return Err(ArgError::MissingValue {
                            option: option.name().to_string(),
                        });
                    }
                    None => {}
                }
                return self.record(option, given, values);
            }
            match embedded {
                Some(v) => values.push(self.value(option, v)?),
                None => {
                    while (values.len() as i64) < max {
                        let Some(next) = self.argv.get(self.next) else {
                            break;
                        };
                        if self.flag_found(next) {
                            break;
                        }
                        values.push(self.value(option, next)?);
                        self.next += 1;
                    }
                }
            }
            if (values.len() as i64) < min {
                return Err(ArgError::MissingValue {
                    option: option.name().to_string(),
                });
            }
            self.record(option, given, values)
        }

        /// `resolveNextFlag`: exact, else a unique prefix; a prefix that is also a cluster of
        /// short options is ambiguous.
        fn resolve<'s>(
            &self,
            scope: &'s Scope,
            given: &str,
        ) -> Result<Option<&'s ToolOption>, ArgError> {
            let mut candidates: Vec<(String, &ToolOption)> = Vec::new();
            for option in &scope.options {
                for name in &option.names {
                    let f = flag(name);
                    if f == given {
                        return Ok(Some(option));
                    }
                    if f.starts_with(given) {
                        candidates.push((f, option));
                    }
                }
            }
            if candidates.is_empty() {
                return Ok(None);
            }
            let mut names: Vec<String> = candidates.iter().map(|(f, _)| f.clone()).collect();
            if concatenated_shorts(scope, given) {
                names.push(given.chars().take(2).collect());
            } else if let [(_, option)] = candidates.as_slice() {
                return Ok(Some(option));
            }
            names.sort();
            Err(ArgError::Ambiguous {
                given: given.to_string(),
                candidates: names,
            })
        }

        fn parse_scope(&mut self, scope: &Scope) -> Result<(), ArgError> {
            let mut positionals: Vec<String> = Vec::new();
            let mut positional_index = 0;
            let mut consumed_by_current = 0i64;
            while let Some(term) = self.argv.get(self.next).cloned() {
                if self.flag_found(&term) && term != "--" {
                    let (flag, embedded) = match term.split_once('=') {
                        Some((f, v)) => (f.to_string(), Some(v.to_string())),
                        None => (term.clone(), None),
                    };
                    let resolved = self.resolve(scope, &flag)?;
                    self.next += 1;
                    match resolved {
                        Some(option) => self.process(option, &term, embedded.as_deref())?,
                        None => self.short_cluster(scope, &term)?,
                    }
                } else if term == "--" && !self.separator_seen {
                    self.separator_seen = true;
                    self.next += 1;
                } else if positional_index < scope.positionals.len() {
                    // accumulatePositionalArg
                    let (min, max) =
                        arity(match scope.positionals[positional_index].nargs.as_str() {
                            "1" => None,
                            n => Some(n),
                        });
                    if min == -1 || (min == 0 && max == 1) {
                        positionals.push(term);
                        self.next += 1;
                        positional_index += 1;
                        continue;
                    }
                    while consumed_by_current < max {
                        let Some(next) = self.argv.get(self.next) else {
                            break;
                        };
                        if self.flag_found(next) {
                            break;
                        }
                        positionals.push(next.clone());
                        consumed_by_current += 1;
                        self.next += 1;
                    }
                    if consumed_by_current == max {
                        positional_index += 1;
                        consumed_by_current = 0;
                    }
                } else if !self.separator_seen && !scope.subcommands.is_empty() {
                    self.check_positionals(scope, &positionals)?;
                    self.parsed.positionals.extend(positionals);
                    let sub = scope
                        .subcommands
                        .iter()
                        .find(|s| s.name == term || s.aliases.contains(&term))
                        .or_else(|| {
                            if term.is_empty() {
                                return None;
                            }
                            let matching: Vec<_> = scope
                                .subcommands
                                .iter()
                                .filter(|s| {
                                    s.name.starts_with(term.as_str())
                                        || s.aliases.iter().any(|a| a.starts_with(term.as_str()))
                                })
                                .collect();
                            match matching.as_slice() {
                                [one] => Some(*one),
                                _ => None,
                            }
                        })
                        .ok_or_else(|| ArgError::UnknownSubcommand {
                            given: term.clone(),
                        })?;
                    self.next += 1;
                    self.parsed.subcommands.push(sub.name.clone());
                    return self.parse_scope(&sub.scope);
                } else {
                    return Err(ArgError::UnexpectedPositional { given: term });
                }
            }
            if !scope.subcommands.is_empty() {
                return Err(ArgError::MissingSubcommand);
            }
            self.check_positionals(scope, &positionals)?;
            self.parsed.positionals.extend(positionals);
            Ok(())
        }

        /// An unknown flag may be a cluster of short options (`-vb host`).
        fn short_cluster(&mut self, scope: &Scope, term: &str) -> Result<(), ArgError> {
            let unknown = || ArgError::Unknown {
                given: term.to_string(),
            };
            // matchShortFlag: exactly one leading dash
            if term.starts_with("--") || term.len() < 2 {
                return Err(unknown());
            }
            let chars: Vec<char> = term[1..].chars().collect();
            for (i, c) in chars.iter().enumerate() {
                let short = format!("-{c}");
                let option = scope
                    .options
                    .iter()
                    .find(|o| o.names.contains(&short))
                    .ok_or_else(unknown)?;
                if consumes(option) {
                    let rest: String = chars[i + 1..].iter().collect();
                    let embedded = (!rest.is_empty()).then_some(rest);
                    return self.process(option, term, embedded.as_deref());
                }
                self.record(option, term, Vec::new())?;
            }
            Ok(())
        }

        /// `processPositionalArgs`: enough values for the positionals that need one.
        fn check_positionals(&self, scope: &Scope, values: &[String]) -> Result<(), ArgError> {
            let needed: i64 = scope
                .positionals
                .iter()
                .map(|p| match p.nargs.as_str() {
                    "1" => 1,
                    "?" | "*" => 0,
                    "+" => 1,
                    n => n.parse().unwrap_or(1),
                })
                .sum();
            if needed > values.len() as i64 {
                return Err(ArgError::TooFewPositionals);
            }
            Ok(())
        }
    }

    /// `checkConcatenatedShortOpts`.
    fn concatenated_shorts(scope: &Scope, term: &str) -> bool {
        if !(term.len() >= 2 && term.starts_with('-') && !term[1..].starts_with('-')) {
            return false;
        }
        for c in term[1..].chars() {
            let short = format!("-{c}");
            match scope.options.iter().find(|o| o.names.contains(&short)) {
                None => return false,
                Some(option) if consumes(option) => return true,
                Some(_) => {}
            }
        }
        true
    }

    pub(super) fn parse(table: &OptionTable, argv: &[String]) -> Result<ParsedArgs, ArgError> {
        let mut parser = Parser {
            argv,
            next: 0,
            separator_seen: false,
            parsed: ParsedArgs::default(),
        };
        parser.parse_scope(&table.scope)?;
        Ok(parser.parsed)
    }

    /// `checkMutex` (at most one option per group) and `checkRequiredArgument` /
    /// `checkRequiredMutex` for one scope.
    pub(super) fn check_required(scope: &Scope, parsed: &ParsedArgs) -> Result<(), ArgError> {
        let has = |name: &str| parsed.occurrences.iter().any(|o| o.option == name);
        for (index, group) in scope.mutex_groups.iter().enumerate() {
            let used: Vec<&ToolOption> = scope
                .options
                .iter()
                .filter(|o| o.mutex_group == Some(index) && has(o.name()))
                .collect();
            if let [first, second, ..] = used.as_slice() {
                return Err(ArgError::NotAllowedWith {
                    option: second.name().to_string(),
                    other: first.name().to_string(),
                });
            }
            if group.required && used.is_empty() {
                return Err(ArgError::MissingRequired {
                    option: group.options.join("|"),
                });
            }
        }
        for option in &scope.options {
            if option.required && !has(option.name()) {
                return Err(ArgError::MissingRequired {
                    option: option.name().to_string(),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::catalogue::options::ToolOptions;

    fn table(tool: &str, version: &str) -> &'static OptionTable {
        ToolOptions::get().table(tool, version).expect("table")
    }

    fn argv(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    fn parse_ok(tool: &str, args: &[&str]) -> ParsedArgs {
        parse(table(tool, "4.3.1"), &argv(args)).expect("parses")
    }

    #[test]
    fn value_after_the_option_or_attached_with_equals() {
        let parsed = parse_ok(
            "kafka-console-consumer",
            &[
                "--bootstrap-server",
                "a:9092",
                "--topic=t=x",
                "--group",
                "--weird",
            ],
        );
        let values: Vec<_> = parsed
            .occurrences
            .iter()
            .map(|o| (o.option.as_str(), o.values.clone()))
            .collect();
        assert_eq!(
            values,
            vec![
                ("bootstrap-server", vec!["a:9092".to_string()]),
                ("topic", vec!["t=x".to_string()]),
                ("group", vec!["--weird".to_string()]),
            ]
        );
    }

    #[test]
    fn jopt_flag_with_an_attached_value_keeps_the_flag_and_reports_the_value() {
        let parsed = parse_ok("kafka-console-consumer", &["--from-beginning=false"]);
        assert_eq!(parsed.occurrences[0].option, "from-beginning");
        assert_eq!(
            parsed.occurrences[0].ignored_value.as_deref(),
            Some("false")
        );
    }

    #[test]
    fn unknown_and_missing_values_are_errors() {
        let t = table("kafka-console-consumer", "4.3.1");
        assert_eq!(
            parse(t, &argv(&["--from-begining"])),
            Err(ArgError::Unknown {
                given: "from-begining".into()
            })
        );
        assert_eq!(
            parse(t, &argv(&["--topic"])),
            Err(ArgError::MissingValue {
                option: "topic".into()
            })
        );
    }

    #[test]
    fn abbreviations_only_where_the_parser_allows_them() {
        let consumer = table("kafka-console-consumer", "4.3.1");
        assert!(!consumer.abbreviations);
        assert!(parse(consumer, &argv(&["--bootstrap-serv", "x"])).is_err());
        let perf = table("kafka-producer-perf-test", "4.3.1");
        assert!(perf.abbreviations);
        let parsed = parse(perf, &argv(&["--bootstrap-serv", "x"])).expect("prefix");
        assert_eq!(parsed.occurrences[0].option, "bootstrap-server");
    }

    #[test]
    fn double_dash_ends_options() {
        let parsed = parse_ok("kafka-console-consumer", &["--", "--topic", "x"]);
        assert!(parsed.occurrences.is_empty());
        assert_eq!(parsed.positionals, argv(&["--topic", "x"]));
    }

    #[test]
    fn argparse4j_subcommand_comes_first_and_owns_the_options_after_it() {
        let t = table("kafka-metadata-quorum", "4.3.1");
        let parsed = parse(
            t,
            &argv(&["--bootstrap-server", "b:9092", "describe", "--status"]),
        )
        .expect("ok");
        assert_eq!(parsed.subcommands, vec!["describe".to_string()]);
        assert!(parse(t, &argv(&["--bootstrap-server", "b:9092"])).is_err());
        assert!(matches!(
            parse(t, &argv(&["nope"])),
            Err(ArgError::UnknownSubcommand { .. })
        ));
    }

    #[test]
    fn argparse4j_flag_given_a_value_and_type_errors_are_refused() {
        let t = table("kafka-producer-perf-test", "4.3.1");
        let flag = t
            .scope
            .options
            .iter()
            .find(|o| o.argument == Argument::None && o.action.as_deref() == Some("storeTrue"))
            .expect("a storeTrue flag");
        let given = format!("--{}=x", flag.name());
        assert!(matches!(
            parse(t, &argv(&[&given])),
            Err(ArgError::UnexpectedValue { .. })
        ));
        assert!(matches!(
            parse(t, &argv(&["--num-records", "many"])),
            Err(ArgError::InvalidValue { .. })
        ));
    }

    #[test]
    fn complete_command_lines_need_the_required_options() {
        let t = table("kafka-producer-perf-test", "4.3.1");
        let parsed = parse(t, &argv(&["--topic", "t"])).expect("syntax ok");
        assert!(matches!(
            check_complete(t, &parsed),
            Err(ArgError::MissingRequired { .. })
        ));
    }

    #[test]
    fn a_tool_without_a_parser_takes_positionals_only() {
        let t = table("kafka-e2e-latency", "4.1.0");
        assert_eq!(t.parser, ParserKind::None);
        assert!(parse(t, &argv(&["b", "t", "1", "1", "10"])).is_ok());
        assert!(parse(t, &argv(&["b", "t", "1", "1", "10", "p", "extra"])).is_err());
        assert!(parse(t, &argv(&["b"])).is_err());
    }

    #[test]
    fn java_number_rules() {
        assert!(java_integer("+5", 32));
        assert!(java_integer("-2147483648", 32));
        assert!(!java_integer("2147483648", 32));
        assert!(!java_integer(" 5", 32));
        assert!(!java_integer("", 32));
        assert!(java_double(" 1.5 "));
        assert!(java_double("1e3d"));
        assert!(!java_double("abc"));
    }
}
