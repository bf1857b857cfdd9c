//! Listing sessions at any depth (issue 38, history at scale): every page, read from either
//! end, is the slice of the whole listing it names, and the totals kept by triggers are the
//! rows there are, through inserts and status changes. Runs on the engine the test run asks
//! for (`BAI_TEST_STORE`), so on both in `make test`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect
mod common;

use bai_core::status::{SessionStatus, SessionType};
use bai_store::{SessionCursor, SessionFilter, Store};
use common::{moved, session, store_with};
use uuid::Uuid;

/// Two owners' sessions, some ended, one a system session: (store, every id).
fn history() -> (Store, Vec<Uuid>) {
    use SessionStatus::*;
    let s = store_with(&["A", "B"]);
    let mut ids = Vec::new();
    for i in 0..41 {
        let owner = if i % 3 == 0 { "B" } else { "A" };
        let kind = if i == 7 {
            SessionType::System
        } else {
            SessionType::Interactive
        };
        let n = session(i, owner, kind);
        s.insert_session(&n).unwrap();
        match i % 4 {
            0 => moved(&s, n.id, Pending, Cancelled),
            1 | 2 => {
                moved(&s, n.id, Pending, Scheduled);
                moved(&s, n.id, Scheduled, Terminating);
                moved(&s, n.id, Terminating, Terminated);
            }
            _ => {}
        }
        ids.push(n.id);
    }
    (s, ids)
}

fn filter(
    statuses: &[SessionStatus],
    owner: Option<&str>,
    limit: i64,
    offset: i64,
) -> SessionFilter {
    SessionFilter {
        statuses: statuses.to_vec(),
        access_key: owner.map(str::to_string),
        system: false,
        limit,
        offset,
        after: None,
    }
}

#[test]
fn every_page_is_its_slice_of_the_whole_listing_from_either_end() {
    let (s, _) = history();
    let live = [SessionStatus::Pending];
    for statuses in [
        &SessionStatus::LIST_DEAD[..],
        &live[..],
        &SessionStatus::ALL[..],
    ] {
        for owner in [Some("A"), Some("B"), None] {
            let (all, total) = s.list_sessions(&filter(statuses, owner, 1000, 0)).unwrap();
            assert_eq!(all.len() as i64, total, "{statuses:?} {owner:?}");
            assert!(
                all.iter().all(|r| statuses.contains(&r.state.status)
                    && owner.is_none_or(|o| r.spec.access_key == o)
                    && r.spec.session_type != SessionType::System),
                "{statuses:?} {owner:?}"
            );
            // Newest change first, the id breaking ties: a total order, the same both ways.
            assert!(
                all.windows(2)
                    .all(|w| (&w[0].state.status_changed, &w[0].created_at)
                        >= (&w[1].state.status_changed, &w[1].created_at))
            );
            for limit in [1, 4, 7] {
                for offset in 0..=total + 1 {
                    let (page, t) = s
                        .list_sessions(&filter(statuses, owner, limit, offset))
                        .unwrap();
                    let from = (offset as usize).min(all.len());
                    let to = (from + limit as usize).min(all.len());
                    let want: Vec<Uuid> = all[from..to].iter().map(|r| r.id).collect();
                    let got: Vec<Uuid> = page.iter().map(|r| r.id).collect();
                    assert_eq!(t, total);
                    assert_eq!(
                        got, want,
                        "{statuses:?} {owner:?} limit {limit} offset {offset}"
                    );
                }
                // A walk by cursors, each page after the last one's key: the whole listing
                // once, in order, whatever ties the change times have.
                let mut walked: Vec<Uuid> = Vec::new();
                let mut after = None;
                loop {
                    let mut f = filter(statuses, owner, limit, 0);
                    f.after = after;
                    let (page, t) = s.list_sessions(&f).unwrap();
                    assert_eq!(t, total);
                    walked.extend(page.iter().map(|r| r.id));
                    match page.last() {
                        Some(last) if page.len() as i64 == limit => {
                            after = Some(SessionCursor::after(last));
                        }
                        _ => break,
                    }
                    assert!(walked.len() <= all.len(), "the walk goes round");
                }
                let want: Vec<Uuid> = all.iter().map(|r| r.id).collect();
                assert_eq!(
                    walked, want,
                    "{statuses:?} {owner:?} limit {limit} by cursor"
                );
            }
        }
    }
    // The system session is listed only when asked for.
    let mut sys = filter(&SessionStatus::ALL, None, 10, 0);
    sys.system = true;
    let (rows, total) = s.list_sessions(&sys).unwrap();
    assert_eq!((rows.len(), total), (1, 1));
    assert_eq!(rows[0].spec.session_type, SessionType::System);
}

/// The totals are kept, not counted: they follow every insert and status change.
#[test]
fn totals_follow_inserts_and_changes() {
    use SessionStatus::*;
    let (s, ids) = history();
    let count = |statuses: &[SessionStatus], owner: Option<&str>| {
        s.list_sessions(&filter(statuses, owner, 0, 0)).unwrap().1
    };
    let count_rows = |statuses: &[SessionStatus], owner: Option<&str>| {
        s.list_sessions(&filter(statuses, owner, 1000, 0))
            .unwrap()
            .0
            .len() as i64
    };
    let before_dead = count(&SessionStatus::LIST_DEAD, Some("A"));
    let before_pending = count(&[Pending], Some("A"));
    // A pending session of A's (i % 4 == 3, i % 3 != 0: the 4th, i = 11 → ids[11]) ends.
    moved(&s, ids[11], Pending, Cancelled);
    assert_eq!(count(&SessionStatus::LIST_DEAD, Some("A")), before_dead + 1);
    assert_eq!(count(&[Pending], Some("A")), before_pending - 1);
    for statuses in [
        &SessionStatus::LIST_DEAD[..],
        &[Pending][..],
        &SessionStatus::ALL[..],
    ] {
        for owner in [Some("A"), Some("B"), None] {
            assert_eq!(count(statuses, owner), count_rows(statuses, owner));
        }
    }
    assert_eq!(
        count(&SessionStatus::ALL, None),
        40,
        "41 sessions, one a system session"
    );
}

/// Past the retention an ended session loses its history records, events and logs and keeps
/// its row; a live session keeps everything; a second sweep to the same time reads nothing.
#[test]
fn retention_drops_ended_details_and_keeps_the_rows() {
    let (s, ids) = history();
    // ids[0] was cancelled, ids[1] terminated, ids[3] is still pending (see `history`).
    for id in [ids[0], ids[1], ids[3]] {
        assert!(!s.history(id).unwrap().is_empty());
        assert!(!s.events_of(id).unwrap().is_empty());
    }
    let (_, ended) = s
        .list_sessions(&filter(&SessionStatus::LIST_DEAD, None, 0, 0))
        .unwrap();
    let later = (chrono::Utc::now() + chrono::Duration::seconds(1))
        .to_rfc3339_opts(chrono::SecondsFormat::Micros, false);
    assert_eq!(s.prune_ended_details(&later).unwrap() as i64, ended);
    for id in [ids[0], ids[1]] {
        assert!(s.history(id).unwrap().is_empty());
        assert!(s.events_of(id).unwrap().is_empty());
        assert!(s.session(id).unwrap().is_some(), "the row stays");
    }
    assert!(!s.history(ids[3]).unwrap().is_empty());
    assert!(!s.events_of(ids[3]).unwrap().is_empty());
    let (rows, total) = s
        .list_sessions(&filter(&SessionStatus::LIST_DEAD, None, 1000, 0))
        .unwrap();
    assert_eq!((rows.len() as i64, total), (ended, ended));
    assert_eq!(s.prune_ended_details(&later).unwrap(), 0);
}

/// `/metrics`' counts (kept for the ended, counted for the live) are the listing's totals.
#[test]
fn metrics_counts_are_the_listing_totals() {
    let (s, _) = history();
    let counts = s.session_counts().unwrap();
    for status in SessionStatus::ALL {
        let listed = s.list_sessions(&filter(&[status], None, 0, 0)).unwrap().1;
        let mut sys = filter(&[status], None, 0, 0);
        sys.system = true;
        let listed = listed + s.list_sessions(&sys).unwrap().1;
        let counted: i64 = counts
            .iter()
            .filter(|c| c.status == status.as_str())
            .map(|c| c.count)
            .sum();
        assert_eq!(counted, listed, "{status:?}");
    }
    assert!(counts.iter().all(|c| c.count > 0));
    assert_eq!(counts.iter().map(|c| c.count).sum::<i64>(), 41);
}
