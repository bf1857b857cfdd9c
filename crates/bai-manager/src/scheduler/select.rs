//! Agent selectors: which agent gets the session.

use bai_core::resources::{ResourceSlots, format_bytes, format_cpu};

#[derive(Debug, Clone)]
pub struct AgentView {
    pub id: String,
    pub scaling_group: String,
    pub capacity: ResourceSlots,
    pub free: ResourceSlots,
}

/// Dispersed: the fitting agent with the most free memory, then CPU (spreads load).
pub fn dispersed(agents: &[AgentView], group: &str, want: &ResourceSlots) -> Option<usize> {
    agents
        .iter()
        .enumerate()
        .filter(|(_, a)| a.scaling_group == group && want.fits_in(&a.free))
        .max_by(|(_, a), (_, b)| {
            (a.free.mem, a.free.cpu_milli)
                .cmp(&(b.free.mem, b.free.cpu_milli))
                .then_with(|| b.id.cmp(&a.id))
        })
        .map(|(i, _)| i)
}

/// "cpu short on 1 of 1 agents (wants 4, at most 2 free)" — why nothing fits.
pub fn explain_shortage(agents: &[AgentView], group: &str, want: &ResourceSlots) -> String {
    let in_group: Vec<&AgentView> = agents.iter().filter(|a| a.scaling_group == group).collect();
    if in_group.is_empty() {
        return format!("no agents in resource group {group:?}");
    }
    let n = in_group.len();
    let mut parts = Vec::new();
    let short = |slot: &str| {
        in_group
            .iter()
            .filter(|a| want.short_of(&a.free).iter().any(|s| s == slot))
            .count()
    };
    let cpu = short("cpu");
    if cpu > 0 {
        let best = in_group.iter().map(|a| a.free.cpu_milli).max().unwrap_or(0);
        parts.push(format!(
            "cpu short on {cpu} of {n} agents (wants {}, at most {} free)",
            format_cpu(want.cpu_milli),
            format_cpu(best)
        ));
    }
    let mem = short("mem");
    if mem > 0 {
        let best = in_group.iter().map(|a| a.free.mem).max().unwrap_or(0);
        parts.push(format!(
            "memory short on {mem} of {n} agents (wants {}, at most {} free)",
            format_bytes(want.mem),
            format_bytes(best)
        ));
    }
    for k in want.accel.keys() {
        let c = short(k);
        if c > 0 {
            parts.push(format!("{k} short on {c} of {n} agents"));
        }
    }
    if parts.is_empty() {
        "no single agent has all the requested resources free at once".to_string()
    } else {
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(id: &str, cpu: u64, mem_gib: u64) -> AgentView {
        let s = ResourceSlots {
            cpu_milli: cpu * 1000,
            mem: mem_gib << 30,
            accel: Default::default(),
        };
        AgentView {
            id: id.into(),
            scaling_group: "default".into(),
            capacity: s.clone(),
            free: s,
        }
    }

    #[test]
    fn dispersed_prefers_most_free_memory_and_respects_fit() {
        let agents = vec![agent("a", 8, 4), agent("b", 2, 16), agent("c", 1, 32)];
        let want = ResourceSlots {
            cpu_milli: 2000,
            mem: 2 << 30,
            accel: Default::default(),
        };
        assert_eq!(dispersed(&agents, "default", &want), Some(1));
        assert_eq!(dispersed(&agents, "other", &want), None);
    }

    #[test]
    fn shortage_is_explained_per_slot() {
        let agents = vec![agent("a", 2, 4), agent("b", 8, 1)];
        let want = ResourceSlots {
            cpu_milli: 4000,
            mem: 2 << 30,
            accel: Default::default(),
        };
        let why = explain_shortage(&agents, "default", &want);
        assert!(why.contains("cpu short on 1 of 2 agents"), "{why}");
        assert!(why.contains("memory short on 1 of 2 agents"), "{why}");
    }
}
