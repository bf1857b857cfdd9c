//! The reservation of the head of the queue (EASY backfilling).
//!
//! The first session of a pass that finds no agent with room (the head) is given a
//! reservation: the earliest time `T` at which enough agents will have room for it, if the
//! sessions that occupy them end by their known ends (batch timeout, maximum lifetime) and
//! nothing that runs past `T` starts on them first, and the agents it will then go on. Each
//! reserved agent keeps a *spare*: what it will have free at `T` beyond what the head needs
//! there. A later session may start before the head only if it does not delay that:
//! - it surely ends by `T` (its maximum run time is known), or
//! - it goes on agents the reservation does not need, or takes on a reserved agent no more
//!   than that agent's spare (which it then uses up).
//!
//! A session without a known end runs past every `T`. When no time can be computed (the
//! occupants' ends are unknown) there is no reservation; the pipeline then falls back on its
//! starvation rule.

use crate::gang;
use crate::types::{AgentState, RunningSession, Workload};
use bai_core::resources::ResourceSlots;
use chrono::{DateTime, SecondsFormat, Utc};
use uuid::Uuid;

/// Where and from when the head of the queue will fit.
#[derive(Debug, Clone, PartialEq)]
pub struct Reservation {
    pub head: Uuid,
    /// The earliest time the head fits (never before the pass's `now`).
    pub at: DateTime<Utc>,
    /// The agents it is to go on, each with what it needs there at `at` and what else will be
    /// free there then (the spare).
    pub agents: Vec<Reserved>,
}

/// One reserved agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Reserved {
    pub agent: String,
    /// Its index in the agents the reservation was made over (the pass's).
    pub index: usize,
    pub need: ResourceSlots,
    pub spare: ResourceSlots,
}

/// How a backfilled session leaves the reservation intact (the allocation step says it).
#[derive(Debug, Clone, PartialEq)]
pub enum Backfill {
    /// It ends by this time, no later than the reservation.
    EndsBefore(DateTime<Utc>),
    /// It runs past the reservation, on agents the reservation does not need.
    Elsewhere,
    /// It runs past the reservation on a reserved agent, within what that agent has free at
    /// the reservation time beyond the head's need.
    WithinSpare,
}

/// How many times `want` fits in `free`, up to `cap`.
pub(crate) fn fits_times(want: &ResourceSlots, free: &ResourceSlots, cap: u32) -> u32 {
    let mut n = 0;
    let mut left = free.clone();
    while n < cap && want.fits_in(&left) {
        n += 1;
        left = left.checked_sub(want);
    }
    n
}

/// RFC 3339 to the second, as steps show times.
pub fn when(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The reservation of `head` over `agents` (with this pass's allocations applied), from the
/// occupants with a known end: the group's running sessions and those placed earlier in the
/// pass (`placed`). None when no time is known (or the head is pinned to an agent).
pub fn reserve(
    head: &Workload,
    agents: &[AgentState],
    running: &[RunningSession],
    placed: &[RunningSession],
    now: DateTime<Utc>,
) -> Option<Reservation> {
    if head.designated_agent.is_some() {
        return None;
    }
    let kernels = head.kernels.max(1);
    let want = gang::per_kernel(head);
    let eligible = |a: &AgentState| {
        a.schedulable
            && want.fits_in(&a.capacity)
            && head
                .eligible
                .as_ref()
                .is_none_or(|e| e.agents.contains(&a.id))
    };
    let pool: Vec<usize> = (0..agents.len())
        .filter(|&i| eligible(&agents[i]))
        .collect();
    // Per agent of the pool: its known ends in time order, and how many kernels fit.
    let mut ends: Vec<Vec<(DateTime<Utc>, &ResourceSlots)>> = vec![Vec::new(); pool.len()];
    let slot_of: std::collections::HashMap<&str, usize> = pool
        .iter()
        .enumerate()
        .map(|(k, &i)| (agents[i].id.as_str(), k))
        .collect();
    for r in running.iter().chain(placed) {
        if let (Some(t), Some(&k)) = (r.ends_by, slot_of.get(r.agent.as_str())) {
            ends[k].push((t.max(now), &r.slots));
        }
    }
    let mut events: Vec<(DateTime<Utc>, usize, u32)> = Vec::new();
    let mut count: Vec<u32> = Vec::with_capacity(pool.len());
    for (k, &i) in pool.iter().enumerate() {
        ends[k].sort_by_key(|(t, _)| *t);
        let mut free = agents[i].free();
        count.push(fits_times(&want, &free, kernels));
        for (t, s) in &ends[k] {
            free = free.add(s);
            events.push((*t, k, fits_times(&want, &free, kernels)));
        }
    }
    events.sort_by_key(|(t, k, _)| (*t, *k));
    let mut total: u32 = count.iter().sum();
    let mut at = (total >= kernels).then_some(now);
    for (t, k, n) in events {
        if at.is_some_and(|a| t > a) {
            break;
        }
        total = total - count[k] + n;
        count[k] = n;
        if total >= kernels {
            at = Some(t);
        }
    }
    let at = at?;
    // The agents with the most room at `at` take the kernels.
    let mut order: Vec<usize> = (0..pool.len()).filter(|&k| count[k] > 0).collect();
    order.sort_by(|&x, &y| {
        count[y]
            .cmp(&count[x])
            .then_with(|| agents[pool[x]].id.cmp(&agents[pool[y]].id))
    });
    let mut left = kernels;
    let mut reserved = Vec::new();
    for k in order {
        if left == 0 {
            break;
        }
        let n = count[k].min(left);
        left -= n;
        let a = &agents[pool[k]];
        let free_then = ends[k]
            .iter()
            .take_while(|(t, _)| *t <= at)
            .fold(a.free(), |f, (_, s)| f.add(s));
        let need = want.times(u64::from(n));
        reserved.push(Reserved {
            agent: a.id.clone(),
            index: pool[k],
            spare: free_then.checked_sub(&need),
            need,
        });
    }
    Some(Reservation {
        head: head.id,
        at,
        agents: reserved,
    })
}

impl Reservation {
    /// `a, b` (the reserved agents).
    pub fn agent_list(&self) -> String {
        let ids: Vec<&str> = self.agents.iter().map(|r| r.agent.as_str()).collect();
        ids.join(", ")
    }

    /// `reserved agents a, b from 2026-11-29T18:00:00Z`.
    pub fn describe(&self) -> String {
        let word = if self.agents.len() == 1 {
            "agent"
        } else {
            "agents"
        };
        format!(
            "reserved {word} {} from {}",
            self.agent_list(),
            when(self.at)
        )
    }

    /// Whether a session ending by `ends` (None: not known) would still hold resources at
    /// the reservation time.
    pub fn outlasted_by(&self, ends: Option<DateTime<Utc>>) -> bool {
        ends.is_none_or(|e| e > self.at)
    }

    /// What a session that outlasts the reservation may take on `agent` (None: all its free
    /// slots, the agent is not reserved).
    pub fn room_on(&self, agent: &str) -> Option<&ResourceSlots> {
        self.agents
            .iter()
            .find(|r| r.agent == agent)
            .map(|r| &r.spare)
    }

    /// Records that a session outlasting the reservation took `slots` on `agent`.
    pub fn take(&mut self, agent: &str, slots: &ResourceSlots) {
        if let Some(r) = self.agents.iter_mut().find(|r| r.agent == agent) {
            r.spare = r.spare.checked_sub(slots);
        }
    }

    /// The words of the allocation step of a session backfilled ahead of the head.
    pub fn explain(&self, how: &Backfill) -> String {
        let why = match how {
            Backfill::EndsBefore(e) => format!("it ends by {}, before then", when(*e)),
            Backfill::Elsewhere => "it goes on agents the reservation does not need".to_string(),
            Backfill::WithinSpare => {
                "the reserved agents keep enough free then for the head".to_string()
            }
        };
        format!(
            "backfilled ahead of session {} ({}): {why}",
            self.head,
            self.describe()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    fn gpus(n: u64) -> ResourceSlots {
        ResourceSlots {
            cpu_milli: n * 1000,
            mem: n << 30,
            accel: [("cuda.device".to_string(), n * 1000)].into(),
        }
    }

    fn agent(id: &str, used: u64) -> AgentState {
        AgentState {
            id: id.into(),
            capacity: gpus(8),
            used: gpus(used),
            schedulable: true,
        }
    }

    fn run(agent: &str, n: u64, ends: Option<DateTime<Utc>>) -> RunningSession {
        RunningSession {
            owner: "x".into(),
            agent: agent.into(),
            slots: gpus(n),
            ends_by: ends,
        }
    }

    fn head(n: u64, kernels: u32) -> Workload {
        Workload {
            id: Uuid::new_v4(),
            owner: "h".into(),
            priority: 10,
            enqueued_at: Utc::now(),
            slots: gpus(n),
            kernels,
            starts_at: None,
            designated_agent: None,
            eligible: None,
            dependencies: vec![],
            account: None,
            max_runtime: None,
        }
    }

    #[test]
    fn the_earliest_agent_with_room_is_reserved() {
        let now = Utc::now();
        let h = |m| Some(now + Duration::minutes(m));
        // a: 6 of 8 used, 4 end in 60 min; b: 8 used, all end in 30 min; c: unknown end.
        let agents = vec![agent("a", 6), agent("b", 8), agent("c", 8)];
        let running = vec![
            run("a", 4, h(60)),
            run("a", 2, None),
            run("b", 8, h(30)),
            run("c", 8, None),
        ];
        let r = reserve(&head(8, 1), &agents, &running, &[], now).expect("a time");
        assert_eq!(r.at, now + Duration::minutes(30));
        assert_eq!(r.agent_list(), "b");
        assert_eq!(r.agents[0].need, gpus(8));
        assert_eq!(r.agents[0].spare.accel["cuda.device"], 0);
        assert!(r.describe().starts_with("reserved agent b from "));
        // 6 GPUs: a has room once its 4 end (2 free + 4), b at 30 min: b is earlier.
        let r = reserve(&head(6, 1), &agents, &running, &[], now).expect("a time");
        assert_eq!(r.at, now + Duration::minutes(30));
        // A session placed earlier in the pass counts with its own end.
        let placed = vec![run("b", 8, h(90))];
        let mut agents2 = agents.clone();
        agents2[1].used = gpus(8);
        let r = reserve(&head(8, 1), &agents2, &running[..2], &placed, now).expect("time");
        assert_eq!(r.at, now + Duration::minutes(90));
    }

    #[test]
    fn no_known_end_means_no_reservation() {
        let now = Utc::now();
        let agents = vec![agent("a", 8)];
        assert_eq!(
            reserve(&head(1, 1), &agents, &[run("a", 8, None)], &[], now),
            None
        );
        // Larger than any agent: never.
        let agents = vec![agent("a", 0)];
        assert_eq!(reserve(&head(9, 1), &agents, &[], &[], now), None);
        let mut pinned = head(1, 1);
        pinned.designated_agent = Some("a".into());
        assert_eq!(reserve(&pinned, &agents, &[], &[], now), None);
    }

    #[test]
    fn a_multi_node_head_reserves_several_agents() {
        let now = Utc::now();
        let h = |m| Some(now + Duration::minutes(m));
        // 2 kernels of 8: a frees at 10, b at 20, c at 30.
        let agents = vec![agent("a", 8), agent("b", 8), agent("c", 8)];
        let running = vec![run("a", 8, h(10)), run("b", 8, h(20)), run("c", 8, h(30))];
        let r = reserve(&head(16, 2), &agents, &running, &[], now).expect("time");
        assert_eq!(r.at, now + Duration::minutes(20));
        let mut ids: Vec<&str> = r.agents.iter().map(|x| x.agent.as_str()).collect();
        ids.sort();
        assert_eq!(ids, vec!["a", "b"]);
    }

    #[test]
    fn spare_shrinks_with_what_outlasts_the_reservation() {
        let now = Utc::now();
        let agents = vec![agent("a", 6)];
        let running = vec![run("a", 6, Some(now + Duration::hours(1)))];
        let mut r = reserve(&head(4, 1), &agents, &running, &[], now).expect("time");
        // At T all 8 are free; the head needs 4: 4 spare.
        assert_eq!(r.room_on("a").map(|s| s.accel["cuda.device"]), Some(4000));
        assert_eq!(r.room_on("b"), None);
        assert!(r.outlasted_by(None));
        assert!(r.outlasted_by(Some(now + Duration::hours(2))));
        assert!(!r.outlasted_by(Some(now + Duration::minutes(59))));
        r.take("a", &gpus(3));
        assert_eq!(r.room_on("a").map(|s| s.accel["cuda.device"]), Some(1000));
        let text = r.explain(&Backfill::Elsewhere);
        assert!(text.contains("backfilled ahead of session"), "{text}");
    }
}
