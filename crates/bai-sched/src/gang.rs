//! Gang placement: the kernels of a session are placed in one go or not at all.
//!
//! A session of one kernel, or a single-node cluster (all kernels on one agent), is one
//! placement of its whole request. A multi-node cluster places each kernel (one `n`-th of the
//! request) by the group's strategy, each seeing the kernels placed before it; when one finds
//! no room, the kernels placed before it are taken back, so nothing of the session holds
//! resources while it waits.

use crate::select::{self, AgentIndex, NoAgent, Strategy};
use crate::types::{AgentState, Workload};
use bai_core::resources::ResourceSlots;

/// Why a workload could not be placed, and which kernel found no room.
#[derive(Debug, Clone, PartialEq)]
pub struct Unplaced {
    /// 0 for main1, i for sub i.
    pub kernel: u32,
    pub why: NoAgent,
    /// Multi-node only: the agents as they stood when that kernel was tried (with the kernels
    /// before it allocated), for the shortage in words. Empty otherwise.
    pub at: Vec<AgentState>,
}

/// `main1`, `sub1`, … (Backend.AI's names, as the kernels carry them).
pub fn hostname(kernel: u32) -> String {
    if kernel == 0 {
        "main1".into()
    } else {
        format!("sub{kernel}")
    }
}

/// What one kernel of `w` asks for.
pub fn per_kernel(w: &Workload) -> ResourceSlots {
    if w.kernels > 1 {
        w.slots.divided(u64::from(w.kernels))
    } else {
        w.slots.clone()
    }
}

/// The agent kernel `k` of `w` must go to: the selected agent ("Select Agent") holds the
/// whole of a single-node session, and main1 of a multi-node one (its other kernels spread
/// by the group's strategy, as multi-node means).
pub fn designated_for(w: &Workload, k: u32) -> Option<&str> {
    w.designated_agent.as_deref().filter(|_| k == 0)
}

pub(crate) fn allocate(
    agents: &mut [AgentState],
    index: &mut AgentIndex,
    i: usize,
    want: &ResourceSlots,
) {
    let a = &mut agents[i];
    let old = select::key_of(a);
    a.used = a.used.add(want);
    index.reindex(i, old, select::key_of(a));
}

pub(crate) fn release(
    agents: &mut [AgentState],
    index: &mut AgentIndex,
    i: usize,
    want: &ResourceSlots,
) {
    let a = &mut agents[i];
    let old = select::key_of(a);
    a.used = a.used.checked_sub(want);
    index.reindex(i, old, select::key_of(a));
}

/// Places every kernel of `w`: the agent index of each, main1 first, with the allocations
/// applied to `agents` and `index`. On failure nothing stays applied.
pub fn place(
    strategy: Strategy,
    agents: &mut [AgentState],
    index: &mut AgentIndex,
    w: &Workload,
    rr: &mut u64,
) -> Result<Vec<usize>, Unplaced> {
    let kernels = if w.kernels > 1 { w.kernels } else { 1 };
    let want = per_kernel(w);
    let eligible = w.eligible.as_ref().map(|e| e.agents.as_ref());
    let preferred = w.eligible.as_ref().and_then(|e| e.preferred.as_deref());
    let mut placed: Vec<usize> = Vec::with_capacity(kernels as usize);
    for k in 0..kernels {
        let designated = designated_for(w, k);
        // Agents that hold the image first; the others (which would pull it) when none fits.
        let first = preferred
            .filter(|_| designated.is_none())
            .map(|p| select::choose_among(strategy, agents, index, &want, None, Some(p), rr));
        let chosen = match first {
            Some(Ok(i)) => Ok(i),
            _ => select::choose_among(strategy, agents, index, &want, designated, eligible, rr),
        };
        match chosen {
            Ok(i) => {
                allocate(agents, index, i, &want);
                placed.push(i);
            }
            Err(why) => {
                let at = if kernels > 1 {
                    agents.to_vec()
                } else {
                    Vec::new()
                };
                for &i in &placed {
                    release(agents, index, i, &want);
                }
                return Err(Unplaced { kernel: k, why, at });
            }
        }
    }
    Ok(placed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;
    use uuid::Uuid;

    fn slots(cpu: u64) -> ResourceSlots {
        ResourceSlots {
            cpu_milli: cpu * 1000,
            mem: 1 << 30,
            accel: Default::default(),
        }
    }

    fn agent(id: &str, cpu: u64) -> AgentState {
        AgentState {
            id: id.into(),
            capacity: ResourceSlots {
                cpu_milli: cpu * 1000,
                mem: 64 << 30,
                accel: Default::default(),
            },
            used: ResourceSlots::default(),
            schedulable: true,
        }
    }

    fn multi(kernels: u32, cpu_each: u64) -> Workload {
        Workload {
            id: Uuid::new_v4(),
            owner: "x".into(),
            priority: 10,
            enqueued_at: Utc::now(),
            slots: slots(cpu_each).times(u64::from(kernels)),
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
    fn a_multi_node_session_spreads_its_kernels_when_dispersed() {
        let mut agents = vec![agent("a", 2), agent("b", 2), agent("c", 2)];
        let mut index = AgentIndex::new(&agents);
        let got = place(
            Strategy::Dispersed,
            &mut agents,
            &mut index,
            &multi(3, 1),
            &mut 0,
        )
        .map(|v| v.iter().map(|&i| agents[i].id.clone()).collect::<Vec<_>>());
        let mut got = got.unwrap_or_default();
        got.sort();
        assert_eq!(got, vec!["a", "b", "c"]);
        assert!(agents.iter().all(|a| a.used.cpu_milli == 1000));
    }

    #[test]
    fn the_selected_agent_holds_main1_and_the_other_kernels_spread() {
        let mut agents = vec![agent("a", 4), agent("b", 4), agent("c", 4)];
        let mut index = AgentIndex::new(&agents);
        let mut w = multi(3, 1);
        w.designated_agent = Some("c".into());
        let got = place(Strategy::Dispersed, &mut agents, &mut index, &w, &mut 0)
            .map(|v| v.iter().map(|&i| agents[i].id.clone()).collect::<Vec<_>>())
            .unwrap_or_default();
        assert_eq!(got.first().map(String::as_str), Some("c"), "{got:?}");
        let mut subs = got[1..].to_vec();
        subs.sort();
        assert_eq!(subs, vec!["a", "b"], "sub kernels spread: {got:?}");
        assert_eq!(designated_for(&w, 0), Some("c"));
        assert_eq!(designated_for(&w, 1), None);
    }

    #[test]
    fn agents_that_hold_the_image_are_tried_before_those_that_would_pull_it() {
        let set = |ids: &[&str]| {
            std::sync::Arc::new(
                ids.iter()
                    .map(|s| s.to_string())
                    .collect::<std::collections::HashSet<_>>(),
            )
        };
        // Dispersed alone would pick `big`; `small` holds the image and fits.
        let mut agents = vec![agent("big", 8), agent("small", 2)];
        let mut index = AgentIndex::new(&agents);
        let mut w = multi(1, 1);
        w.eligible = Some(crate::types::Eligible {
            agents: set(&["big", "small"]),
            why: String::new(),
            preferred: Some(set(&["small"])),
        });
        let pick = |agents: &mut Vec<AgentState>, index: &mut AgentIndex, w: &Workload| {
            place(Strategy::Dispersed, agents, index, w, &mut 0).map(|v| agents[v[0]].id.clone())
        };
        assert_eq!(pick(&mut agents, &mut index, &w), Ok("small".to_string()));
        assert_eq!(pick(&mut agents, &mut index, &w), Ok("small".to_string()));
        // `small` is full now: the one that would pull takes it.
        assert_eq!(pick(&mut agents, &mut index, &w), Ok("big".to_string()));
    }

    #[test]
    fn kernels_that_fit_nowhere_together_take_nothing() {
        // Room for two 1-core kernels in all; the third finds none.
        let mut agents = vec![agent("a", 1), agent("b", 1)];
        let mut index = AgentIndex::new(&agents);
        let r = place(
            Strategy::Dispersed,
            &mut agents,
            &mut index,
            &multi(3, 1),
            &mut 0,
        );
        let Err(u) = r else {
            panic!("placed a gang that cannot fit: {r:?}");
        };
        assert_eq!((u.kernel, hostname(u.kernel)), (2, "sub2".to_string()));
        assert_eq!(u.why, NoAgent::NoFit);
        assert!(u.at.iter().all(|a| a.used.cpu_milli == 1000));
        // Rolled back: both agents are free again, and the index agrees.
        assert!(agents.iter().all(|a| a.used.cpu_milli == 0));
        let two = place(
            Strategy::Dispersed,
            &mut agents,
            &mut index,
            &multi(2, 1),
            &mut 0,
        );
        assert_eq!(two.map(|v| v.len()), Ok(2));
    }

    #[test]
    fn a_single_node_cluster_is_one_placement_of_the_whole() {
        let mut agents = vec![agent("a", 2), agent("b", 2)];
        let mut index = AgentIndex::new(&agents);
        let mut w = multi(1, 3);
        assert!(place(Strategy::Dispersed, &mut agents, &mut index, &w, &mut 0).is_err());
        w.slots = slots(2);
        assert_eq!(
            place(Strategy::Dispersed, &mut agents, &mut index, &w, &mut 0).map(|v| v.len()),
            Ok(1)
        );
    }
}
