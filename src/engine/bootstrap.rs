//! `bootstrap.servers` / `bootstrap.controllers` as Kafka's clients read them
//! (`ClientUtils.parseAndValidateAddresses`): a comma-separated list of `host:port`, each matched by
//! `Utils.HOST_PORT_PARSE_EXP` (`[scheme://][\[]host[\]]:port`). A client given an empty list or a
//! malformed entry refuses to start, so the gate refuses it first.

/// The keys whose values are address lists.
pub const ADDRESS_KEYS: &[&str] = &["bootstrap.servers", "bootstrap.controllers"];

/// Why an address list is not usable: the entry by position and a fixed reason, never any text of
/// the value (it may be Secret data, checked through `SecretText::inspect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressProblem {
    Empty,
    Entry { position: usize, why: &'static str },
}

impl std::fmt::Display for AddressProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AddressProblem::Empty => {
                f.write_str("is empty: the client needs at least one host:port")
            }
            AddressProblem::Entry { position, why } => {
                write!(f, "entry {position} is not host:port ({why})")
            }
        }
    }
}

/// Why `value` is not a usable address list, if it is not.
pub fn address_list_problem(value: &str) -> Option<AddressProblem> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Some(AddressProblem::Empty);
    }
    for (index, entry) in trimmed.split(',').map(str::trim).enumerate() {
        if let Err(why) = check_entry(entry) {
            return Some(AddressProblem::Entry {
                position: index + 1,
                why,
            });
        }
    }
    None
}

fn check_entry(entry: &str) -> Result<(), &'static str> {
    if entry.is_empty() {
        return Err("empty entry");
    }
    let rest = match entry.find("://") {
        Some(at) => {
            let scheme = &entry[..at];
            let mut chars = scheme.chars();
            let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
                && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
            if !valid {
                return Err("bad scheme");
            }
            &entry[at + 3..]
        }
        None => entry,
    };
    // The port is the digits after the last ':' (IPv6 hosts hold ':' themselves).
    let Some((host, port)) = rest.rsplit_once(':') else {
        return Err("no port");
    };
    if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
        return Err("port is not a number");
    }
    if port.parse::<u32>().map_or(true, |p| p > 65_535) {
        return Err("port is above 65535");
    }
    let host = host
        .strip_prefix('[')
        .map_or(host, |h| h.strip_suffix(']').unwrap_or(h));
    if host.is_empty() {
        return Err("no host");
    }
    if !host
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '%' | '.' | '_' | ':'))
    {
        return Err("host holds a character Kafka does not accept");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_as_kafka_accepts() {
        for ok in [
            "kafka:9092",
            "a:1, b:2",
            "PLAINTEXT://broker-0.kafka.svc:9093",
            "[::1]:9092",
            "fe80::1%eth0:9092",
            "my_host.example.com:65535",
        ] {
            assert_eq!(address_list_problem(ok), None, "{ok}");
        }
    }

    #[test]
    fn refused_as_the_client_refuses() {
        for bad in [
            "",
            "   ",
            "kafka",
            "kafka:",
            "kafka:port",
            ":9092",
            "a:1,,b:2",
            "kafka:99999",
            "ka fka:9092",
            "1x://kafka:9092",
            // Kafka's scheme pattern has no '_'.
            "SASL_SSL://kafka:9093",
            "kafka:9092\n--producer.config",
        ] {
            assert!(address_list_problem(bad).is_some(), "{bad:?} accepted");
        }
    }

    #[test]
    fn messages_do_not_quote_the_value() {
        let why = address_list_problem("hunter2")
            .expect("refused")
            .to_string();
        assert!(!why.contains("hunter2"), "{why}");
    }
}
