//! Why a session does not fit, in words, and when it might.

use crate::types::{AgentState, RunningSession};
use bai_core::resources::ResourceSlots;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Which resources ran out on how many of the group's agents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shortage {
    pub agents: usize,
    /// `(slot, agents short of it)`, in the order cpu, memory, accelerators.
    pub short: Vec<(String, usize)>,
}

impl Shortage {
    pub fn of(agents: &[AgentState], want: &ResourceSlots) -> Shortage {
        let usable: Vec<&AgentState> = agents.iter().filter(|a| a.schedulable).collect();
        let mut short: Vec<(String, usize)> = Vec::new();
        for a in &usable {
            for slot in want.short_of(&a.free()) {
                match short.iter_mut().find(|(s, _)| *s == slot) {
                    Some((_, n)) => *n += 1,
                    None => short.push((slot, 1)),
                }
            }
        }
        let rank = |s: &str| match s {
            "mem" => 1,
            "cpu" => 0,
            _ => 2,
        };
        short.sort_by(|a, b| rank(&a.0).cmp(&rank(&b.0)).then(b.1.cmp(&a.1)));
        Shortage {
            agents: usable.len(),
            short,
        }
    }

    /// "memory short on 3 of 4 agents, cpu on 1".
    pub fn describe(&self) -> String {
        if self.agents == 0 {
            return "no agent of the resource group is available".into();
        }
        if self.short.is_empty() {
            return "no single agent has all the requested resources free at once".into();
        }
        let word = |s: &str| match s {
            "mem" => "memory".to_string(),
            other => other.to_string(),
        };
        // Most-short resource first.
        let mut parts = self.short.clone();
        parts.sort_by_key(|p| std::cmp::Reverse(p.1));
        let mut out = format!(
            "{} short on {} of {} agents",
            word(&parts[0].0),
            parts[0].1,
            self.agents
        );
        for (s, n) in &parts[1..] {
            out.push_str(&format!(", {} on {n}", word(s)));
        }
        out
    }
}

/// The earliest time some agent would have room for `want` if the running sessions with a
/// known end (batch timeout, maximum lifetime) end then and nothing else starts first.
pub fn estimate_start(
    agents: &[AgentState],
    running: &[RunningSession],
    want: &ResourceSlots,
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    let mut best: Option<DateTime<Utc>> = None;
    for a in agents.iter().filter(|a| a.schedulable) {
        if !want.fits_in(&a.capacity) {
            continue;
        }
        let mut ends: Vec<(&DateTime<Utc>, &ResourceSlots)> = running
            .iter()
            .filter(|r| r.agent == a.id)
            .filter_map(|r| r.ends_by.as_ref().map(|t| (t, &r.slots)))
            .collect();
        ends.sort_by_key(|(t, _)| **t);
        let mut free = a.free();
        for (t, s) in ends {
            free = free.add(s);
            if want.fits_in(&free) {
                let t = (*t).max(now);
                if best.is_none_or(|b| t < b) {
                    best = Some(t);
                }
                break;
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    fn agent(id: &str, cpu: u64, mem_gib: u64, used_cpu: u64, used_mem: u64) -> AgentState {
        AgentState {
            id: id.into(),
            capacity: ResourceSlots {
                cpu_milli: cpu * 1000,
                mem: mem_gib << 30,
                accel: Default::default(),
            },
            used: ResourceSlots {
                cpu_milli: used_cpu * 1000,
                mem: used_mem << 30,
                accel: Default::default(),
            },
            schedulable: true,
        }
    }

    fn want(cpu: u64, mem: u64) -> ResourceSlots {
        ResourceSlots {
            cpu_milli: cpu * 1000,
            mem: mem << 30,
            accel: Default::default(),
        }
    }

    #[test]
    fn shortage_counts_agents_per_resource() {
        let agents = vec![
            agent("a", 4, 8, 0, 7),
            agent("b", 4, 8, 0, 7),
            agent("c", 4, 8, 4, 7),
            agent("d", 4, 8, 0, 0),
        ];
        // wants 2 cores, 4 GiB: a, b, c short of memory, c also of cpu; d fits but say it is
        // not schedulable.
        let mut agents = agents;
        agents[3].schedulable = false;
        let s = Shortage::of(&agents, &want(2, 4));
        assert_eq!(s.describe(), "memory short on 3 of 3 agents, cpu on 1");
        assert_eq!(
            Shortage::of(&[], &want(1, 1)).describe(),
            "no agent of the resource group is available"
        );
    }

    #[test]
    fn estimate_uses_known_ends() {
        let now = Utc::now();
        let agents = vec![agent("a", 4, 8, 4, 4), agent("b", 4, 8, 4, 4)];
        let running = vec![
            RunningSession {
                owner: "ak".into(),
                agent: "a".into(),
                slots: want(2, 2),
                ends_by: Some(now + Duration::seconds(600)),
            },
            RunningSession {
                owner: "ak".into(),
                agent: "b".into(),
                slots: want(2, 2),
                ends_by: Some(now + Duration::seconds(60)),
            },
            RunningSession {
                owner: "ak".into(),
                agent: "b".into(),
                slots: want(2, 2),
                ends_by: None,
            },
        ];
        assert_eq!(
            estimate_start(&agents, &running, &want(2, 1), now),
            Some(now + Duration::seconds(60))
        );
        assert_eq!(estimate_start(&agents, &running, &want(4, 1), now), None);
    }
}
