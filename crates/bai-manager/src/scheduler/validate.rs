//! Validators: may this PENDING session be placed now at all?

use bai_store::SessionRow;

/// Why a session must wait, with the code recorded in its scheduling history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wait {
    pub code: &'static str,
    pub info: String,
}

pub fn check(row: &SessionRow, now: chrono::DateTime<chrono::Utc>) -> Result<(), Wait> {
    if let Some(starts_at) = row.starts_at.as_deref()
        && let Ok(t) = chrono::DateTime::parse_from_rfc3339(starts_at)
        && t.with_timezone(&chrono::Utc) > now
    {
        return Err(Wait {
            code: "starts-at-not-reached",
            info: format!("waiting for its start time {starts_at}"),
        });
    }
    Ok(())
}
