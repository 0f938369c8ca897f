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

struct Parser<'a, S> {
    argv: &'a [S],
    next: usize,
    separator_seen: bool,
    parsed: ParsedArgs,
}

impl<'a, S: AsRef<str>> Parser<'a, S> {
    fn word(&self, at: usize) -> Option<&'a str> {
        self.argv.get(at).map(AsRef::as_ref)
    }

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
                if is_number_type(value_type) && !matches!(value_type, Some("Double" | "Float")) {
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
                None => match self.word(self.next) {
                    Some(next) if !self.flag_found(next) => {
                        self.next += 1;
                        Some(next.to_string())
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
                    let Some(next) = self.word(self.next) else {
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
        while let Some(term) = self.word(self.next).map(str::to_string) {
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
                let (min, max) = arity(match scope.positionals[positional_index].nargs.as_str() {
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
                    let Some(next) = self.word(self.next) else {
                        break;
                    };
                    if self.flag_found(next) {
                        break;
                    }
                    positionals.push(next.to_string());
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

pub(super) fn parse<S: AsRef<str>>(
    table: &OptionTable,
    argv: &[S],
) -> Result<ParsedArgs, ArgError> {
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
