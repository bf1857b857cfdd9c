//! A scheduling pass of many placements (issue 38): on PostgreSQL they are written in batches
//! (`place_many_tx`), on SQLite one by one; either way every placed session is SCHEDULED on its
//! agent with its own history record and event, and a session that left PENDING meanwhile is
//! recorded STALE and left where it is. Runs on the engine the test run asks for.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect
mod common;

use bai_core::event::EventKind;
use bai_core::history::{HistoryResult, SubStep};
use bai_core::status::{SessionStatus, SessionType};
use bai_store::{PassEntry, PassWrite};
use common::{moved, session, store_with};

#[test]
fn a_pass_of_many_placements_writes_each_once() {
    // 600 = 512 + 64 + 16 + 8: every batch size but the smallest, and one session stale.
    let s = store_with(&["A"]);
    let mut entries = Vec::new();
    for i in 0..601 {
        let n = session(i, "A", SessionType::Interactive);
        s.insert_session(&n).unwrap();
        entries.push(PassEntry {
            id: n.id,
            write: PassWrite::Placed {
                agent: format!("agent-{}", i % 7),
                subs: Vec::new(),
            },
            sub_steps: serde_json::to_string(&[SubStep::at(
                "2026-01-01T00:00:00Z",
                "allocation",
                Ok(format!("placed {i}")),
            )])
            .unwrap(),
        });
    }
    let stale = entries[300].id;
    moved(&s, stale, SessionStatus::Pending, SessionStatus::Cancelled);
    let out = s.apply_pass(&entries).unwrap();
    assert_eq!(out.placed.len(), 600);
    let order: Vec<_> = entries
        .iter()
        .map(|e| e.id)
        .filter(|id| *id != stale)
        .collect();
    let placed: Vec<_> = out.placed.iter().map(|(id, _)| *id).collect();
    assert_eq!(placed, order, "placed in the pass's order");
    let mut seqs: Vec<i64> = out.placed.iter().map(|(_, ev)| ev.seq).collect();
    seqs.sort_unstable();
    seqs.dedup();
    assert_eq!(seqs.len(), 600, "one event each, each its own");
    for (i, e) in entries.iter().enumerate() {
        let row = s.session(e.id).unwrap().unwrap();
        let history = s.history(e.id).unwrap();
        let last = history.last().unwrap();
        if e.id == stale {
            assert_eq!(row.state.status, SessionStatus::Cancelled);
            assert_eq!(last.result, HistoryResult::Stale);
            continue;
        }
        let agent = format!("agent-{}", i % 7);
        assert_eq!(row.state.status, SessionStatus::Scheduled);
        assert_eq!(row.state.agent_id.as_deref(), Some(agent.as_str()));
        assert!(
            row.state
                .status_history
                .contains_key(&SessionStatus::Scheduled)
        );
        assert_eq!(last.result, HistoryResult::Success);
        assert_eq!(last.to_status, Some(SessionStatus::Scheduled));
        assert_eq!(last.sub_steps.len(), 1);
        assert_eq!(last.sub_steps[0].message, format!("placed {i}"));
        // The row, its record and its event say the same placement (each of its own session,
        // none mixed up with another of the batch).
        let info = row.state.status_info.clone().unwrap_or_default();
        assert!(info.contains(&agent), "{info}");
        assert_eq!(last.message, info);
        let (_, ev) = out.placed.iter().find(|(id, _)| *id == e.id).unwrap();
        assert_eq!(ev.kind, EventKind::SessionScheduled);
        assert_eq!(ev.session_id, e.id);
        assert_eq!(ev.reason, info);
        assert_eq!(ev.session_name, row.name);
        assert_eq!(ev.access_key, row.spec.access_key);
        assert_eq!(ev.kernel_id, None);
        let stored = s.events_of(e.id).unwrap();
        assert!(stored.iter().any(|x| x == ev), "{stored:?} lacks {ev:?}");
    }
}
