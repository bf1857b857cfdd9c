//! Agent selectors: which of the agents that can take a session gets it.
//!
//! Candidates are the schedulable agents of the group with enough free slots (only the
//! designated agent, when the user picked one). The strategy then orders them by their free
//! slots: CPU, then memory, then accelerators. An [`AgentIndex`] keeps the agents sorted by
//! that key, so a pick costs O(log n) for the usual case instead of a scan of every agent.

pub use crate::policy::Strategy;
use crate::types::AgentState;
use bai_core::resources::ResourceSlots;
use std::cmp::Reverse;
use std::collections::{BTreeSet, HashSet};

/// Free CPU, memory and accelerators (summed), the order strategies compare agents by.
pub type Key = (u64, u64, u64);

pub fn key_of(a: &AgentState) -> Key {
    let f = a.free();
    (f.cpu_milli, f.mem, f.accel.values().sum())
}

/// The schedulable agents of a group ordered by [`Key`] (ties: lower index first).
#[derive(Debug, Clone, Default)]
pub struct AgentIndex {
    set: BTreeSet<(Key, Reverse<usize>)>,
}

impl AgentIndex {
    pub fn new(agents: &[AgentState]) -> AgentIndex {
        AgentIndex {
            set: agents
                .iter()
                .enumerate()
                .filter(|(_, a)| a.schedulable)
                .map(|(i, a)| (key_of(a), Reverse(i)))
                .collect(),
        }
    }

    /// Call around a change of agent `i`'s free slots.
    pub fn reindex(&mut self, i: usize, old: Key, new: Key) {
        if self.set.remove(&(old, Reverse(i))) {
            self.set.insert((new, Reverse(i)));
        }
    }

    /// The agent with the most free slots that fits `want` (and `ok`).
    fn most_free(
        &self,
        agents: &[AgentState],
        want: &ResourceSlots,
        ok: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        self.set
            .iter()
            .rev()
            .take_while(|(k, _)| k.0 >= want.cpu_milli)
            .map(|(_, Reverse(i))| *i)
            .find(|&i| ok(i) && want.fits_in(&agents[i].free()))
    }

    /// The agent with the fewest free slots that still fits `want`.
    fn least_free(
        &self,
        agents: &[AgentState],
        want: &ResourceSlots,
        ok: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        self.set
            .range(((want.cpu_milli, 0, 0), Reverse(usize::MAX))..)
            .map(|(_, Reverse(i))| *i)
            .find(|&i| ok(i) && want.fits_in(&agents[i].free()))
    }
}

/// Why no agent was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoAgent {
    /// The designated agent is not in the group or not schedulable.
    DesignatedUnavailable(String),
    /// No candidate has enough free slots.
    NoFit,
    /// No schedulable agent of the group is eligible (lacks the image or a storage host).
    Ineligible,
}

/// Chooses an agent index for `want`. `rr` is the group's round-robin counter; `index`
/// must reflect `agents`' current free slots.
pub fn choose(
    strategy: Strategy,
    agents: &[AgentState],
    index: &AgentIndex,
    want: &ResourceSlots,
    designated: Option<&str>,
    rr: &mut u64,
) -> Result<usize, NoAgent> {
    choose_among(strategy, agents, index, want, designated, None, rr)
}

/// [`choose`] among the `eligible` agents only (None: all of them).
pub fn choose_among(
    strategy: Strategy,
    agents: &[AgentState],
    index: &AgentIndex,
    want: &ResourceSlots,
    designated: Option<&str>,
    eligible: Option<&HashSet<String>>,
    rr: &mut u64,
) -> Result<usize, NoAgent> {
    let ok = |i: usize| eligible.is_none_or(|e| e.contains(&agents[i].id));
    if eligible.is_some() && !(0..agents.len()).any(|i| agents[i].schedulable && ok(i)) {
        return Err(NoAgent::Ineligible);
    }
    if let Some(d) = designated {
        return match agents.iter().position(|a| a.id == d && a.schedulable) {
            None => Err(NoAgent::DesignatedUnavailable(d.to_string())),
            Some(i) if !ok(i) => Err(NoAgent::Ineligible),
            Some(i) if want.fits_in(&agents[i].free()) => Ok(i),
            Some(_) => Err(NoAgent::NoFit),
        };
    }
    match strategy {
        Strategy::Dispersed => index.most_free(agents, want, ok).ok_or(NoAgent::NoFit),
        Strategy::Concentrated => index.least_free(agents, want, ok).ok_or(NoAgent::NoFit),
        Strategy::RoundRobin => {
            let fits = |i: usize| agents[i].schedulable && ok(i) && want.fits_in(&agents[i].free());
            let mut cands: Vec<usize> = (0..agents.len()).filter(|&i| fits(i)).collect();
            if cands.is_empty() {
                return Err(NoAgent::NoFit);
            }
            cands.sort_by(|&x, &y| agents[x].id.cmp(&agents[y].id));
            let i = cands[(*rr % cands.len() as u64) as usize];
            *rr = rr.wrapping_add(1);
            Ok(i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(id: &str, cpu: u64, mem_gib: u64) -> AgentState {
        AgentState {
            id: id.into(),
            capacity: ResourceSlots {
                cpu_milli: cpu * 1000,
                mem: mem_gib << 30,
                accel: Default::default(),
            },
            used: ResourceSlots::default(),
            schedulable: true,
        }
    }

    fn want(cpu: u64) -> ResourceSlots {
        ResourceSlots {
            cpu_milli: cpu * 1000,
            mem: 1 << 30,
            accel: Default::default(),
        }
    }

    #[test]
    fn strategies_pick_as_documented() {
        let agents = vec![
            agent("a", 8, 8),
            agent("b", 2, 8),
            agent("c", 4, 8),
            agent("d", 1, 8),
        ];
        let mut rr = 0;
        assert_eq!(
            choose(
                Strategy::Dispersed,
                &agents,
                &AgentIndex::new(&agents),
                &want(2),
                None,
                &mut rr
            ),
            Ok(0)
        );
        assert_eq!(
            choose(
                Strategy::Concentrated,
                &agents,
                &AgentIndex::new(&agents),
                &want(2),
                None,
                &mut rr
            ),
            Ok(1)
        );
        // Round-robin over the fitting agents a, b, c (d is too small), in id order.
        let picks: Vec<usize> = (0..4)
            .map(|_| {
                choose(
                    Strategy::RoundRobin,
                    &agents,
                    &AgentIndex::new(&agents),
                    &want(2),
                    None,
                    &mut rr,
                )
                .unwrap_or(99)
            })
            .collect();
        assert_eq!(picks, vec![0, 1, 2, 0]);
        assert_eq!(
            choose(
                Strategy::Dispersed,
                &agents,
                &AgentIndex::new(&agents),
                &want(9),
                None,
                &mut rr
            ),
            Err(NoAgent::NoFit)
        );
    }

    #[test]
    fn designated_agent_is_strict() {
        let mut agents = vec![agent("a", 8, 8), agent("b", 2, 8)];
        let mut rr = 0;
        assert_eq!(
            choose(
                Strategy::Dispersed,
                &agents,
                &AgentIndex::new(&agents),
                &want(1),
                Some("b"),
                &mut rr
            ),
            Ok(1)
        );
        assert_eq!(
            choose(
                Strategy::Dispersed,
                &agents,
                &AgentIndex::new(&agents),
                &want(4),
                Some("b"),
                &mut rr
            ),
            Err(NoAgent::NoFit)
        );
        agents[1].schedulable = false;
        assert_eq!(
            choose(
                Strategy::Dispersed,
                &agents,
                &AgentIndex::new(&agents),
                &want(1),
                Some("b"),
                &mut rr
            ),
            Err(NoAgent::DesignatedUnavailable("b".into()))
        );
    }

    #[test]
    fn only_eligible_agents_are_chosen() {
        let agents = vec![agent("a", 8, 8), agent("b", 2, 8), agent("c", 4, 8)];
        let index = AgentIndex::new(&agents);
        let mut rr = 0;
        let only_c: HashSet<String> = ["c".to_string()].into();
        for s in [
            Strategy::Dispersed,
            Strategy::Concentrated,
            Strategy::RoundRobin,
        ] {
            assert_eq!(
                choose_among(s, &agents, &index, &want(1), None, Some(&only_c), &mut rr),
                Ok(2),
                "{s:?}"
            );
        }
        // Too big for the eligible one: no fit, although another agent has room.
        assert_eq!(
            choose_among(
                Strategy::Dispersed,
                &agents,
                &index,
                &want(6),
                None,
                Some(&only_c),
                &mut rr
            ),
            Err(NoAgent::NoFit)
        );
        // The chosen agent lacks what the session needs.
        assert_eq!(
            choose_among(
                Strategy::Dispersed,
                &agents,
                &index,
                &want(1),
                Some("a"),
                Some(&only_c),
                &mut rr
            ),
            Err(NoAgent::Ineligible)
        );
        // Nobody has it.
        let none = HashSet::new();
        assert_eq!(
            choose_among(
                Strategy::Dispersed,
                &agents,
                &index,
                &want(1),
                None,
                Some(&none),
                &mut rr
            ),
            Err(NoAgent::Ineligible)
        );
    }
}
