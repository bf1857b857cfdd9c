//! Value parsers of the arguments: `KEY=VALUE` pairs, session types, times and delays.

use bai_core::units::round_secs;

pub(super) fn parse_type(s: &str) -> Result<bai_core::SessionType, String> {
    s.parse()
}

/// Splits `K=V`; the value may contain `=` and may be empty.
pub fn parse_kv(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(format!("{s:?} must look like KEY=VALUE")),
    }
}

/// A delay in whole seconds: seconds, or a duration like `90s`, `5m`, `1h30m`.
fn delay_secs(s: &str) -> Option<u64> {
    bai_core::parse_duration(s).ok().map(round_secs)
}

/// `--max-wait` and the other `SECS` options: seconds, or a duration like 30s, 5m, 2h,
/// rounded to whole seconds.
pub fn parse_secs(s: &str) -> Result<u64, String> {
    bai_core::parse_duration(s)
        .map(round_secs)
        .map_err(|e| e.to_string())
}

/// [`parse_secs`] for the options that are signed numbers on the wire (`--idle-timeout`, …).
pub fn parse_secs_i64(s: &str) -> Result<i64, String> {
    i64::try_from(parse_secs(s)?).map_err(|_| format!("{s:?} is too long a duration"))
}

/// `--starts-at`: an ISO-8601 time (sent as given) or a delay (sent as `<secs>s`, so the
/// server adds it to its own clock).
pub fn parse_starts_at(s: &str) -> Result<String, String> {
    let t = s.trim();
    if chrono::DateTime::parse_from_rfc3339(t).is_ok() {
        return Ok(t.to_string());
    }
    for fmt in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"] {
        if chrono::NaiveDateTime::parse_from_str(t, fmt).is_ok() {
            return Ok(t.to_string());
        }
    }
    match delay_secs(t) {
        Some(secs) => Ok(format!("{secs}s")),
        None => Err(format!(
            "{s:?} is neither an ISO-8601 time (2026-11-22T10:00:00+00:00) nor a delay (30s, 5m, 2h)"
        )),
    }
}

/// `--batch-timeout`: seconds or a delay; sent as a number of seconds.
pub fn parse_batch_timeout(s: &str) -> Result<String, String> {
    match delay_secs(s) {
        Some(secs) if secs > 0 => Ok(secs.to_string()),
        _ => Err(format!(
            "{s:?} is not a positive duration: use seconds, or 30s, 5m, 2h"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_at_accepts_times_and_delays() {
        assert_eq!(parse_starts_at("10s").unwrap(), "10s");
        assert_eq!(parse_starts_at("5m").unwrap(), "300s");
        assert_eq!(parse_starts_at("1h30m").unwrap(), "5400s");
        assert_eq!(parse_starts_at("2d").unwrap(), "172800s");
        assert_eq!(parse_starts_at("45").unwrap(), "45s");
        assert_eq!(
            parse_starts_at("2026-11-22T10:00:00+00:00").unwrap(),
            "2026-11-22T10:00:00+00:00"
        );
        assert_eq!(
            parse_starts_at("2026-11-22T10:00:00").unwrap(),
            "2026-11-22T10:00:00"
        );
        for bad in ["", "soon", "5x", "m5", "-3s", "1h30"] {
            assert!(parse_starts_at(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_batch_timeout("2").unwrap(), "2");
        assert_eq!(parse_batch_timeout("5m").unwrap(), "300");
        assert!(parse_batch_timeout("0").is_err());
        assert!(parse_batch_timeout("0.4").is_err(), "rounds to 0");
        assert_eq!(parse_batch_timeout("0.6").unwrap(), "1");
    }

    #[test]
    fn seconds_options_take_durations() {
        assert_eq!(parse_secs("7"), Ok(7));
        assert_eq!(parse_secs("0"), Ok(0));
        assert_eq!(parse_secs("5m"), Ok(300));
        assert_eq!(parse_secs("1h30m"), Ok(5400));
        assert_eq!(parse_secs("2.5"), Ok(3));
        for bad in ["", "soon", "-1", "5x", "1h30"] {
            assert!(parse_secs(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_secs_i64("30m"), Ok(1800));
        assert_eq!(parse_secs_i64("9223372036854775807"), Ok(i64::MAX));
        assert!(parse_secs_i64("1e19").is_err(), "fits a u64, not an i64");
    }
}
