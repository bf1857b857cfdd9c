//! What a store failure answers over the API: the one conversion from [`StoreError`] to a
//! [`Problem`], so no caller writes its own.

use crate::StoreError;
use bai_core::Problem;

/// 507 when the disk holding the database is full (the change was rolled back, nothing is
/// lost, and it works again once space is freed), 503 when the database server cannot be
/// reached (PostgreSQL down or cut off: nothing was written), else 500. The failure is
/// logged here, once, with its detail.
impl From<StoreError> for Problem {
    fn from(e: StoreError) -> Problem {
        tracing::error!(error = %e, "database error");
        if e.is_disk_full() {
            return Problem::disk_full();
        }
        if e.is_unavailable() {
            return Problem::database_unavailable();
        }
        if e.is_fenced() {
            return Problem::not_leader();
        }
        Problem::internal(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_is_507_and_other_failures_500() {
        let full = StoreError::from(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL),
            None,
        ));
        assert_eq!(Problem::from(full).status, 507);
        let corrupt = StoreError::Corrupt {
            column: "status",
            detail: "not a status".into(),
        };
        let gone = StoreError::Sql(crate::db::Error::Closed("connection refused".into()));
        assert_eq!(Problem::from(gone).status, 503);
        let p = Problem::from(corrupt);
        assert_eq!(p.status, 500);
        assert!(p.msg.contains("not a status"), "{}", p.msg);
    }
}
