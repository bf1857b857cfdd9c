//! Value parsers of the arguments: `KEY=VALUE` pairs, session types, times and delays.

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

/// Parses a delay: `90`, `90s`, `5m`, `2h`, `1d`, `1w`, or combinations like `1h30m`.
pub fn parse_delay_secs(s: &str) -> Option<u64> {
    let s = s.trim().to_ascii_lowercase();
    if s.is_empty() {
        return None;
    }
    if let Ok(n) = s.parse::<f64>() {
        return (n.is_finite() && n >= 0.0).then(|| n.round() as u64);
    }
    let mut total = 0f64;
    let mut num = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() || c == '.' {
            num.push(c);
            continue;
        }
        let unit = match c {
            's' => 1.0,
            'm' => 60.0,
            'h' => 3600.0,
            'd' => 86400.0,
            'w' => 604800.0,
            _ => return None,
        };
        let n: f64 = num.parse().ok()?;
        total += n * unit;
        num.clear();
    }
    if !num.is_empty() || !total.is_finite() {
        return None;
    }
    Some(total.round() as u64)
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
    match parse_delay_secs(t) {
        Some(secs) => Ok(format!("{secs}s")),
        None => Err(format!(
            "{s:?} is neither an ISO-8601 time (2026-11-22T10:00:00+00:00) nor a delay (30s, 5m, 2h)"
        )),
    }
}

/// `--batch-timeout`: seconds or a delay; sent as a number of seconds.
pub fn parse_batch_timeout(s: &str) -> Result<String, String> {
    match parse_delay_secs(s) {
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
    }
}
