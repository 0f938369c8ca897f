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
    // Without a separator in it the value is one piece (the split below would say so too, at
    // a look-up in `separator` per char of the value): most values, on every evaluation.
    let one_piece = match separator.as_bytes() {
        [byte] => !value.as_bytes().contains(byte),
        _ => !value.contains(|c| separator.contains(c)),
    };
    if one_piece {
        return vec![value.to_string()];
    }
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

struct State<'a, S> {
    argv: &'a [S],
    next: usize,
    more_options: bool,
    posixly_correct: bool,
    parsed: ParsedArgs,
}

impl<'a, S: AsRef<str>> State<'a, S> {
    fn word(&self, at: usize) -> Option<&'a str> {
        self.argv.get(at).map(AsRef::as_ref)
    }

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
                let Some(value) = self.word(self.next) else {
                    return Err(ArgError::MissingValue {
                        option: option.name().to_string(),
                    });
                };
                self.next += 1;
                occurrence.values = values(option, value);
            }
            (Argument::Optional, None) => {
                if let Some(next) = self.word(self.next) {
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

pub(super) fn parse<S: AsRef<str>>(
    table: &OptionTable,
    argv: &[S],
) -> Result<ParsedArgs, ArgError> {
    let scope = &table.scope;
    let abbreviations = table.abbreviations;
    let mut state = State {
        argv,
        next: 0,
        more_options: true,
        posixly_correct: table.posixly_correct,
        parsed: ParsedArgs::default(),
    };
    while let Some(arg) = argv.get(state.next).map(AsRef::as_ref) {
        state.next += 1;
        if !state.more_options {
            state.parsed.positionals.push(arg.to_string());
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
            state.parsed.positionals.push(arg.to_string());
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
        // Only an option with availability rules has anything to check (most have none).
        let rules = !option.available_if.is_empty() || !option.available_unless.is_empty();
        if !rules || !has(name) {
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
