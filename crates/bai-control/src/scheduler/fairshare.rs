//! Fair share's side of the scheduler driver: charging running kernels' usage to their
//! accounts as they run, and reading a group's share tree (usage decayed to now) for a pass
//! or for `GET /admin/fairshare`.
//!
//! Charging runs at most every [`charge_interval`] from the scheduler loop. For each group,
//! each session that holds resources adds, for the time since the group's last charge (or
//! since it started, if later), its slots' weighted rate to its account's row — the row's
//! old value decayed to now first ([`bai_sched::fairshare::accrue`]). Only the rows of
//! accounts with running sessions are written; the others decay when read. The last
//! interval of a session that ended between two charges is not counted (at most one
//! interval).

use bai_core::status::SessionStatus as S;
use bai_sched::fairshare::{self, Account, Level, Policy, ShareTree, Shares};
use bai_store::{ResourceGroupRow, SessionRow, Store, UsageRow};
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// How often usage is charged: `BAI_FAIRSHARE_CHARGE_MS` (tests make it short), else 10 s.
pub fn charge_interval() -> Duration {
    let ms = std::env::var("BAI_FAIRSHARE_CHARGE_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(10_000)
        .max(100);
    Duration::from_millis(ms)
}

/// The policy a group's row holds.
pub fn policy_of(g: &ResourceGroupRow) -> Policy {
    Policy::from_json(&g.fairshare)
}

/// A running session as charging sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Charge {
    pub account: Account,
    /// Weighted units per second.
    pub rate: f64,
    /// When it started holding resources (ms since the epoch).
    pub since_ms: i64,
}

fn key(a: &Account) -> (String, String, String) {
    (a.domain.clone(), a.project.clone(), a.user.clone())
}

/// The rows to write for one group: each charged account's row decayed to `now_ms` plus what
/// its sessions added since `last_tick_ms` (None: the first charge, which only marks the
/// time).
pub fn charged_rows(
    group: &str,
    half_life_secs: f64,
    stored: &[UsageRow],
    running: &[Charge],
    last_tick_ms: Option<i64>,
    now_ms: i64,
) -> Vec<UsageRow> {
    let Some(last) = last_tick_ms else {
        return Vec::new();
    };
    let old: HashMap<(String, String, String), &UsageRow> = stored
        .iter()
        .map(|r| ((r.domain.clone(), r.project.clone(), r.user_id.clone()), r))
        .collect();
    let mut added: HashMap<(String, String, String), f64> = HashMap::new();
    for c in running {
        let from = last.max(c.since_ms);
        let secs = (now_ms - from).max(0) as f64 / 1000.0;
        *added.entry(key(&c.account)).or_default() +=
            fairshare::accrue(0.0, c.rate, secs, half_life_secs);
    }
    let mut out: Vec<UsageRow> = added
        .into_iter()
        .map(|(k, add)| {
            let before = old.get(&k).map_or(0.0, |r| {
                let age = (now_ms - r.updated_ms).max(0) as f64 / 1000.0;
                fairshare::decayed(r.usage, age, half_life_secs)
            });
            UsageRow {
                resource_group: group.to_string(),
                domain: k.0,
                project: k.1,
                user_id: k.2,
                usage: before + add,
                updated_ms: now_ms,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        (&a.domain, &a.project, &a.user_id).cmp(&(&b.domain, &b.project, &b.user_id))
    });
    out
}

fn started_ms(r: &SessionRow) -> Option<i64> {
    let h = &r.state.status_history;
    h.get(&S::Running)
        .or(h.get(&S::Scheduled))
        .and_then(|t| super::time::parse_time(t))
        .map(|t| t.timestamp_millis())
}

/// The account a session's usage goes to.
pub fn account_of(r: &SessionRow) -> Account {
    Account::new(&r.spec.domain_name, &r.spec.group_name, &r.spec.user_id)
}

/// Charges every group's running sessions up to `now`.
pub fn charge(store: &Store, now: DateTime<Utc>) -> Result<usize, bai_store::StoreError> {
    let occupying: Vec<S> = S::ALL
        .into_iter()
        .filter(|s| s.occupies_resources())
        .collect();
    let rows = store.sessions_in(&occupying)?;
    let now_ms = now.timestamp_millis();
    let mut written = 0;
    for g in store.resource_groups()? {
        let policy = policy_of(&g);
        let running: Vec<Charge> = rows
            .iter()
            .filter(|r| r.spec.scaling_group == g.name)
            .map(|r| Charge {
                account: account_of(r),
                rate: policy.weights.rate(&r.spec.requested_slots),
                since_ms: started_ms(r).unwrap_or(now_ms),
            })
            .collect();
        let last = store.fairshare_tick(&g.name)?;
        if last.is_some() && running.is_empty() {
            continue;
        }
        let stored = if running.is_empty() {
            Vec::new()
        } else {
            store.fairshare_usage(Some(&g.name))?
        };
        let out = charged_rows(
            &g.name,
            policy.half_life_secs as f64,
            &stored,
            &running,
            last,
            now_ms,
        );
        written += out.len();
        store.charge_fairshare(&g.name, &out, now_ms)?;
    }
    Ok(written)
}

/// The shares administrators set.
pub fn shares(store: &Store) -> Result<Shares, bai_store::StoreError> {
    Ok(Shares(
        store
            .fairshare_shares()?
            .into_iter()
            .filter_map(|r| Level::parse(&r.level).map(|l| ((l, r.name), r.shares)))
            .collect(),
    ))
}

/// A group's tree: its stored usage decayed to `now`, and `also` (accounts with pending
/// sessions) at no usage if it has none.
pub fn tree(
    store: &Store,
    g: &ResourceGroupRow,
    shares: &Shares,
    also: impl IntoIterator<Item = Account>,
    now: DateTime<Utc>,
) -> Result<ShareTree, bai_store::StoreError> {
    let h = policy_of(g).half_life_secs as f64;
    let now_ms = now.timestamp_millis();
    let mut accounts: Vec<(Account, f64)> = store
        .fairshare_usage(Some(&g.name))?
        .into_iter()
        .map(|r| {
            let age = (now_ms - r.updated_ms).max(0) as f64 / 1000.0;
            let usage = fairshare::decayed(r.usage, age, h);
            let account = Account {
                domain: r.domain,
                project: r.project,
                user: r.user_id,
            };
            (account, usage)
        })
        .collect();
    accounts.extend(also.into_iter().map(|a| (a, 0.0)));
    Ok(ShareTree::build(accounts, shares))
}

/// The fair-share input of a pass over `g`.
pub fn input(
    store: &Store,
    g: &ResourceGroupRow,
    shares: &Shares,
    pending: &[bai_sched::Workload],
    now: DateTime<Utc>,
) -> Result<fairshare::Input, bai_store::StoreError> {
    let also = pending.iter().filter_map(|w| w.account.clone());
    Ok(fairshare::Input {
        tree: Arc::new(tree(store, g, shares, also, now)?),
        policy: policy_of(g),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(user: &str, usage: f64, at: i64) -> UsageRow {
        UsageRow {
            resource_group: "g".into(),
            domain: "d".into(),
            project: "p".into(),
            user_id: user.into(),
            usage,
            updated_ms: at,
        }
    }

    fn running(user: &str, rate: f64, since_ms: i64) -> Charge {
        Charge {
            account: Account::new("d", "p", user),
            rate,
            since_ms,
        }
    }

    #[test]
    fn the_first_charge_only_marks_the_time() {
        assert!(charged_rows("g", 0.0, &[], &[running("a", 1.0, 0)], None, 10_000).is_empty());
    }

    #[test]
    fn running_sessions_add_to_their_account_since_the_last_charge() {
        // No decay: plain sums. a ran the whole 10 s at 2/s plus a session started at 6 s at
        // 1/s; b's old row is untouched (nothing running); c is new.
        let stored = [row("a", 100.0, 0), row("b", 50.0, 0)];
        let out = charged_rows(
            "g",
            0.0,
            &stored,
            &[
                running("a", 2.0, 0),
                running("a", 1.0, 6_000),
                running("c", 3.0, 0),
            ],
            Some(0),
            10_000,
        );
        assert_eq!(out, vec![row("a", 124.0, 10_000), row("c", 30.0, 10_000)]);
    }

    #[test]
    fn the_old_value_decays_before_the_new_usage_is_added() {
        // Half-life 10 s: 100 recorded 10 s ago counts 50; nothing ran since then... but one
        // session ran at rate 0 keeps the row charged.
        let out = charged_rows(
            "g",
            10.0,
            &[row("a", 100.0, 0)],
            &[running("a", 0.0, 0)],
            Some(0),
            10_000,
        );
        assert!((out[0].usage - 50.0).abs() < 1e-9, "{:?}", out);
    }
}
