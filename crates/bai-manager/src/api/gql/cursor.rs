//! `compute_session_list`'s keyset cursors (a bai extension of the wire): `next_cursor` of a
//! page, sent back as `after`, starts the next page right after it. The text is opaque to
//! clients: URL-safe base64 of the last session's key in the listing's order.

use bai_gql::FieldError;
use bai_store::SessionCursor;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// The text of a cursor, as `next_cursor` carries it.
pub fn encode(c: &SessionCursor) -> String {
    URL_SAFE_NO_PAD.encode(format!("{}\n{}\n{}", c.status_changed, c.created_at, c.id))
}

/// A cursor from its text (`after`); anything a listing did not give is refused.
pub fn decode(text: &str) -> Result<SessionCursor, FieldError> {
    let refused = || {
        FieldError::new(format!(
            "after {text:?} is not a cursor: pass the next_cursor of the page before"
        ))
    };
    let raw = URL_SAFE_NO_PAD.decode(text.trim()).map_err(|_| refused())?;
    let raw = String::from_utf8(raw).map_err(|_| refused())?;
    let mut parts = raw.split('\n');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(changed), Some(created), Some(id), None)
            if !changed.is_empty() && uuid::Uuid::parse_str(id).is_ok() =>
        {
            Ok(SessionCursor {
                status_changed: changed.to_string(),
                created_at: created.to_string(),
                id: id.to_string(),
            })
        }
        _ => Err(refused()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_cursor_reads_back_and_anything_else_is_refused() {
        let c = SessionCursor {
            status_changed: "2026-11-28T09:00:00.123+00:00".into(),
            created_at: "2026-11-28T08:59:59.001+00:00".into(),
            id: uuid::Uuid::new_v4().to_string(),
        };
        assert_eq!(decode(&encode(&c)).unwrap(), c);
        for bad in ["", "!!", "eA", &URL_SAFE_NO_PAD.encode("a\nb\nnot-a-uuid")] {
            assert!(decode(bad).is_err(), "{bad:?}");
        }
    }
}
