//! Human durations and sizes: one parser for each, for every place that reads them from a
//! person (command line flags, environment variables, request fields).
//!
//! A **duration** is a number of seconds (`90`, `2.5`, `1e3`) or numbers with units, alone or
//! combined: `500ms`, `90s`, `5m`, `2h`, `1d`, `1w`, `1h30m`, `1h 30m`, `5 m`.
//!
//! A **size** is a number of bytes (`1048576`) or a number with a binary unit: `b`,
//! `k`/`kb`/`kib`, `m`/`mb`/`mib`, `g`/`gb`/`gib`, `t`/`tb`/`tib` (all powers of 1024), with
//! decimals (`1.5g`) and an optional space (`10 GiB`).
//!
//! Both ignore case and surrounding whitespace. Zero is a valid duration and a valid size;
//! callers that need more say so themselves.

use std::fmt;
use std::time::Duration;

/// What was being parsed, for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    Duration,
    Size,
}

impl Quantity {
    fn hint(self) -> &'static str {
        match self {
            Quantity::Duration => {
                "use seconds, or 500ms, 30s, 5m, 2h, 1d, 1w (combined like 1h30m)"
            }
            Quantity::Size => "use bytes, or 512m, 1g, 2GiB",
        }
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Quantity::Duration => "duration",
            Quantity::Size => "size",
        })
    }
}

/// Why a duration or a size could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("no {0} given: {hint}", hint = .0.hint())]
    Empty(Quantity),
    #[error("{input:?} is negative; a {quantity} cannot be")]
    Negative { quantity: Quantity, input: String },
    #[error("{input:?} is too large a {quantity}")]
    Overflow { quantity: Quantity, input: String },
    #[error("{input:?}: unknown unit {unit:?}; {hint}", hint = .quantity.hint())]
    UnknownUnit {
        quantity: Quantity,
        input: String,
        unit: String,
    },
    #[error("{input:?}: {number:?} has no unit; {hint}", hint = Quantity::Duration.hint())]
    MissingUnit { input: String, number: String },
    #[error("{input:?} is not a {quantity}: {hint}", hint = .quantity.hint())]
    Invalid { quantity: Quantity, input: String },
}

impl UnitError {
    fn invalid(quantity: Quantity, input: &str) -> UnitError {
        UnitError::Invalid {
            quantity,
            input: input.to_string(),
        }
    }

    fn negative(quantity: Quantity, input: &str) -> UnitError {
        UnitError::Negative {
            quantity,
            input: input.to_string(),
        }
    }

    fn overflow(quantity: Quantity, input: &str) -> UnitError {
        UnitError::Overflow {
            quantity,
            input: input.to_string(),
        }
    }
}

/// Parses a human duration (see the module docs): `90`, `2.5`, `90s`, `5m`, `1h30m`, `1w`.
pub fn parse_duration(input: &str) -> Result<Duration, UnitError> {
    const Q: Quantity = Quantity::Duration;
    let text = input.trim().to_ascii_lowercase();
    if text.is_empty() {
        return Err(UnitError::Empty(Q));
    }
    // Whole seconds exactly; everything else through f64.
    if let Ok(n) = text.parse::<u64>() {
        return Ok(Duration::from_secs(n));
    }
    let secs = match text.parse::<f64>() {
        Ok(n) => checked(Q, input, &text, n)?,
        Err(_) => duration_terms(input, &text)?,
    };
    Duration::try_from_secs_f64(secs).map_err(|_| UnitError::overflow(Q, input))
}

/// A duration in whole seconds, rounded half away from zero (`2.5s` → 3).
pub fn round_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() >= 500_000_000)
}

/// Whole seconds of a duration given as text: a number of seconds (`90`, `1.5`) or a human
/// duration (`90s`, `5m`, `1h30m`, `1d`); blank is none. The error is the text itself, for
/// the caller's message.
pub fn duration_secs(text: &str) -> Result<Option<i64>, String> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(None);
    }
    if let Ok(f) = t.parse::<f64>() {
        return (f.is_finite() && f >= 0.0 && f < i64::MAX as f64)
            .then(|| Some(f.round() as i64))
            .ok_or_else(|| t.to_string());
    }
    parse_duration(t)
        .ok()
        .and_then(|d| i64::try_from(round_secs(d)).ok())
        .map(Some)
        .ok_or_else(|| t.to_string())
}

/// Seconds of `1h30m`-style text: numbers each followed by a unit.
fn duration_terms(input: &str, text: &str) -> Result<f64, UnitError> {
    const Q: Quantity = Quantity::Duration;
    let mut rest = text;
    let mut total = 0f64;
    let mut first = true;
    while !rest.is_empty() {
        let (number, after) = split_number(rest, first);
        if number.is_empty() {
            return Err(UnitError::invalid(Q, input));
        }
        let after = after.trim_start();
        let unit_end = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_end);
        let mult = match unit {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            "d" => 86400.0,
            "w" => 604800.0,
            "" if after.is_empty() => {
                return Err(UnitError::MissingUnit {
                    input: input.to_string(),
                    number: number.to_string(),
                });
            }
            "" => return Err(UnitError::invalid(Q, input)),
            other => {
                return Err(UnitError::UnknownUnit {
                    quantity: Q,
                    input: input.to_string(),
                    unit: other.to_string(),
                });
            }
        };
        let n = number
            .parse::<f64>()
            .map_err(|_| UnitError::invalid(Q, input))?;
        total += checked(Q, input, number, n)? * mult;
        rest = after.trim_start();
        first = false;
    }
    if total.is_finite() {
        Ok(total)
    } else {
        Err(UnitError::overflow(Q, input))
    }
}

/// Splits a leading number (`12`, `1.5`, `.5`, `2e3`; a sign only when `signed`) off `s`.
fn split_number(s: &str, signed: bool) -> (&str, &str) {
    let b = s.as_bytes();
    let mut i = 0;
    if signed && matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let digits_from = i;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
        i += 1;
    }
    if i == digits_from {
        return ("", s);
    }
    // An exponent only when digits follow it: no unit starts with `e`.
    if b.get(i) == Some(&b'e') {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if b.get(j).is_some_and(u8::is_ascii_digit) {
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            i = j;
        }
    }
    s.split_at(i)
}

/// `n` read from `number`, if finite and not negative.
fn checked(q: Quantity, input: &str, number: &str, n: f64) -> Result<f64, UnitError> {
    if n.is_nan() {
        Err(UnitError::invalid(q, input))
    } else if n.is_infinite() {
        // `inf` and `infinity` are words, not numbers; `1e999` is a number too large.
        let word = number
            .trim_start_matches(['+', '-'])
            .starts_with(|c: char| c.is_ascii_alphabetic());
        Err(if word {
            UnitError::invalid(q, input)
        } else if n < 0.0 {
            UnitError::negative(q, input)
        } else {
            UnitError::overflow(q, input)
        })
    } else if n < 0.0 {
        Err(UnitError::negative(q, input))
    } else {
        // `-0` is zero; `abs` drops its sign.
        Ok(n.abs())
    }
}

/// Parses a human size in bytes (see the module docs): `1048576`, `512m`, `1.5g`, `2 GiB`.
pub fn parse_size(input: &str) -> Result<u64, UnitError> {
    const Q: Quantity = Quantity::Size;
    let text = input.trim().to_ascii_lowercase();
    if text.is_empty() {
        return Err(UnitError::Empty(Q));
    }
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    if number.is_empty() {
        return Err(if text.starts_with('-') {
            UnitError::negative(Q, input)
        } else {
            UnitError::invalid(Q, input)
        });
    }
    let shift = match unit.trim() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        other => {
            return Err(UnitError::UnknownUnit {
                quantity: Q,
                input: input.to_string(),
                unit: other.to_string(),
            });
        }
    };
    let mult = 1u64 << shift;
    // Whole numbers exactly; decimals through f64, rounded to the byte.
    if let Ok(n) = number.parse::<u64>() {
        return n
            .checked_mul(mult)
            .ok_or_else(|| UnitError::overflow(Q, input));
    }
    let n: f64 = number.parse().map_err(|_| UnitError::invalid(Q, input))?;
    let bytes = (n * mult as f64).round();
    // 2^64: the first whole number a u64 cannot hold (exact as an f64).
    if !bytes.is_finite() || bytes >= 18_446_744_073_709_551_616.0 {
        return Err(UnitError::overflow(Q, input));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: &str) -> f64 {
        parse_duration(s)
            .unwrap_or_else(|e| panic!("{s:?}: {e}"))
            .as_secs_f64()
    }

    #[test]
    fn durations_in_seconds_and_units() {
        assert_eq!(secs("90"), 90.0);
        assert_eq!(secs("0"), 0.0);
        assert_eq!(secs("2.5"), 2.5);
        assert_eq!(secs(".5"), 0.5);
        assert_eq!(secs("5."), 5.0);
        assert_eq!(secs("+5"), 5.0);
        assert_eq!(secs("1e3"), 1000.0);
        assert_eq!(secs("90s"), 90.0);
        assert_eq!(secs("5m"), 300.0);
        assert_eq!(secs("2h"), 7200.0);
        assert_eq!(secs("1d"), 86400.0);
        assert_eq!(secs("1w"), 604800.0);
        assert_eq!(secs("1.5h"), 5400.0);
        assert_eq!(secs("0.5s"), 0.5);
        assert_eq!(secs("1e3s"), 1000.0);
        assert_eq!(secs("2e-1m"), 12.0);
        assert_eq!(secs("500ms"), 0.5);
        assert_eq!(secs("1s250ms"), 1.25);
        assert_eq!(secs("1m1ms"), 60.001, "ms is its own unit, not minutes");
    }

    #[test]
    fn durations_combine_and_ignore_case_and_spaces() {
        assert_eq!(secs("1h30m"), 5400.0);
        assert_eq!(secs("1w1d1h1m1s"), 694861.0);
        assert_eq!(secs("1H30M"), 5400.0);
        assert_eq!(secs("  45  "), 45.0);
        assert_eq!(secs(" 5 m "), 300.0);
        assert_eq!(secs("1h 30m"), 5400.0);
        assert_eq!(secs("30m1h"), 5400.0, "order does not matter");
        assert_eq!(secs("+5m"), 300.0);
        assert_eq!(secs("-0"), 0.0, "minus zero is zero");
    }

    #[test]
    fn durations_that_are_not() {
        assert_eq!(
            parse_duration(""),
            Err(UnitError::Empty(Quantity::Duration))
        );
        assert_eq!(
            parse_duration("   "),
            Err(UnitError::Empty(Quantity::Duration))
        );
        for bad in [
            "soon", "m5", "h", ".s", "1.2.3s", "5 %", "1h+30m", "nan", "inf", "-inf",
        ] {
            assert!(
                matches!(parse_duration(bad), Err(UnitError::Invalid { .. })),
                "{bad}: {:?}",
                parse_duration(bad)
            );
        }
        for bad in ["5x", "5mss", "2 hours", "1y"] {
            assert!(
                matches!(parse_duration(bad), Err(UnitError::UnknownUnit { .. })),
                "{bad}: {:?}",
                parse_duration(bad)
            );
        }
        assert_eq!(
            parse_duration("1h30"),
            Err(UnitError::MissingUnit {
                input: "1h30".into(),
                number: "30".into()
            })
        );
        for bad in ["-3", "-3s", "-1h30m", "1h-30m", "-1e999"] {
            assert!(
                matches!(
                    parse_duration(bad),
                    Err(UnitError::Negative { .. } | UnitError::Invalid { .. })
                ),
                "{bad}: {:?}",
                parse_duration(bad)
            );
        }
        assert!(matches!(
            parse_duration("-3s"),
            Err(UnitError::Negative { .. })
        ));
        assert!(matches!(
            parse_duration("-1e999"),
            Err(UnitError::Negative { .. })
        ));
    }

    #[test]
    fn durations_too_long_overflow() {
        for big in [
            "1e999",
            "1e30",
            "1e20s",
            "99999999999999999999w",
            "1e308w1e308w",
        ] {
            assert!(
                matches!(parse_duration(big), Err(UnitError::Overflow { .. })),
                "{big}: {:?}",
                parse_duration(big)
            );
        }
        assert_eq!(secs("1e18"), 1e18, "well within a Duration");
        assert_eq!(
            parse_duration("18446744073709551615").map(|d| d.as_secs()),
            Ok(u64::MAX),
            "whole seconds are exact"
        );
        assert!(matches!(
            parse_duration("18446744073709551616"),
            Err(UnitError::Overflow { .. })
        ));
    }

    #[test]
    fn duration_errors_read_well() {
        assert_eq!(
            parse_duration("soon").unwrap_err().to_string(),
            "\"soon\" is not a duration: use seconds, or 500ms, 30s, 5m, 2h, 1d, 1w (combined like 1h30m)"
        );
        assert_eq!(
            parse_duration("5x").unwrap_err().to_string(),
            "\"5x\": unknown unit \"x\"; use seconds, or 500ms, 30s, 5m, 2h, 1d, 1w (combined like 1h30m)"
        );
        assert_eq!(
            parse_duration("-3s").unwrap_err().to_string(),
            "\"-3s\" is negative; a duration cannot be"
        );
        assert!(
            parse_duration("")
                .unwrap_err()
                .to_string()
                .starts_with("no duration given")
        );
    }

    #[test]
    fn rounding_to_whole_seconds() {
        let r = |s: &str| round_secs(parse_duration(s).unwrap_or_default());
        assert_eq!(r("2.4"), 2);
        assert_eq!(r("2.5"), 3);
        assert_eq!(r("0.4"), 0);
        assert_eq!(r("0.6s"), 1);
        assert_eq!(r("1.5h"), 5400);
        assert_eq!(round_secs(Duration::from_millis(1499)), 1);
    }

    fn bytes(s: &str) -> u64 {
        parse_size(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
    }

    #[test]
    fn sizes_in_bytes_and_binary_units() {
        assert_eq!(bytes("0"), 0);
        assert_eq!(bytes("1073741824"), 1 << 30);
        assert_eq!(bytes("100b"), 100);
        for (units, shift) in [
            (["k", "kb", "kib"], 10),
            (["m", "mb", "mib"], 20),
            (["g", "gb", "gib"], 30),
            (["t", "tb", "tib"], 40),
        ] {
            for u in units {
                assert_eq!(bytes(&format!("3{u}")), 3 << shift, "{u}");
                assert_eq!(bytes(&format!("3{}", u.to_uppercase())), 3 << shift, "{u}");
            }
        }
        assert_eq!(bytes("512m"), 512 << 20);
        assert_eq!(bytes("4096m"), 4096 << 20);
        assert_eq!(bytes("1.5GiB"), 3 << 29);
        assert_eq!(bytes("0.5k"), 512);
        assert_eq!(bytes(".5k"), 512);
        assert_eq!(bytes("1.5"), 2, "fractions of a byte round");
        assert_eq!(bytes(" 10 GiB "), 10 << 30);
        assert_eq!(bytes("64M"), 64 << 20);
    }

    #[test]
    fn sizes_that_are_not() {
        assert_eq!(parse_size(""), Err(UnitError::Empty(Quantity::Size)));
        assert_eq!(parse_size("  "), Err(UnitError::Empty(Quantity::Size)));
        for bad in ["lots", "g", ".", "1.2.3g", "+5g", "inf", "nan"] {
            assert!(
                matches!(parse_size(bad), Err(UnitError::Invalid { .. })),
                "{bad}: {:?}",
                parse_size(bad)
            );
        }
        for bad in ["5x", "5p", "1e3", "5 g b", "5gigs"] {
            assert!(
                matches!(parse_size(bad), Err(UnitError::UnknownUnit { .. })),
                "{bad}: {:?}",
                parse_size(bad)
            );
        }
        for bad in ["-1", "-5g", " -0.5m"] {
            assert!(
                matches!(parse_size(bad), Err(UnitError::Negative { .. })),
                "{bad}: {:?}",
                parse_size(bad)
            );
        }
        assert_eq!(
            parse_size("5x").unwrap_err().to_string(),
            "\"5x\": unknown unit \"x\"; use bytes, or 512m, 1g, 2GiB"
        );
    }

    #[test]
    fn sizes_at_the_edge_of_u64() {
        assert_eq!(bytes("18446744073709551615"), u64::MAX, "exact, no float");
        assert_eq!(bytes("16777215t"), 16777215 << 40);
        assert_eq!(bytes("9007199254740993"), 9007199254740993);
        for big in [
            "18446744073709551616",
            "16777216t",
            "99999999999999999999999",
            "16777216.5t",
            "1".repeat(400).as_str(),
        ] {
            assert!(
                matches!(parse_size(big), Err(UnitError::Overflow { .. })),
                "{big}: {:?}",
                parse_size(big)
            );
        }
        assert_eq!(
            parse_size("16777216t").unwrap_err().to_string(),
            "\"16777216t\" is too large a size"
        );
    }
}

#[cfg(test)]
mod duration_secs_tests {
    use super::duration_secs;

    #[test]
    fn seconds_or_human_durations() {
        assert_eq!(duration_secs("90"), Ok(Some(90)));
        assert_eq!(duration_secs("1.5"), Ok(Some(2)));
        assert_eq!(duration_secs("5m"), Ok(Some(300)));
        assert_eq!(duration_secs("1h30m"), Ok(Some(5400)));
        assert_eq!(duration_secs("  "), Ok(None));
        assert_eq!(duration_secs("-5"), Err("-5".to_string()));
        assert_eq!(duration_secs("soon"), Err("soon".to_string()));
    }
}
