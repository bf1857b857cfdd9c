//! Times as the store keeps them (RFC 3339 text), read for a pass and for fair share.

use chrono::{DateTime, Utc};

/// An RFC 3339 time from the store, in UTC (None: not a time).
pub fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}
