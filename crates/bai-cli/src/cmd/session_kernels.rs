//! `bai session info` of a cluster session: its kernels, one line each (role, hostname,
//! agent, status, container), as the web UI's Kernels section shows them.

use crate::output::table_text;
use bai_api::sessions::Kernel;

/// Nothing for a session of one kernel; else a heading and a table of its kernels.
pub fn kernel_lines(kernels: &[Kernel]) -> Vec<String> {
    if kernels.len() < 2 {
        return Vec::new();
    }
    let rows: Vec<Vec<String>> = kernels
        .iter()
        .map(|k| {
            vec![
                k.cluster_hostname.clone(),
                k.cluster_role.clone(),
                k.agent.clone().unwrap_or_else(|| "-".into()),
                k.status.to_string(),
                k.container_id
                    .as_deref()
                    .map(|c| c.chars().take(12).collect())
                    .unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    let mut out = vec![format!("kernels ({}):", kernels.len())];
    out.extend(
        table_text(&["Hostname", "Role", "Agent", "Status", "Container"], &rows)
            .lines()
            .map(|l| format!("  {l}")),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(host: &str, role: &str, agent: &str) -> Kernel {
        serde_json::from_value(serde_json::json!({
            "id": "k", "row_id": "k", "session_id": "s", "cluster_role": role, "cluster_idx": 1,
            "local_rank": 0, "cluster_hostname": host, "image": "i", "image_reference": "i",
            "registry": "local", "architecture": "x86_64", "status": "RUNNING",
            "status_info": null, "status_data": "{}", "status_changed": "t", "created_at": "t",
            "terminated_at": null, "agent": agent, "agent_id": agent,
            "container_id": "0123456789abcdef", "exit_code": null, "resource_opts": "{}",
            "occupied_slots": "{}", "preopen_ports": [], "live_stat": null, "last_stat": null
        }))
        .unwrap_or_else(|e| panic!("a kernel: {e}"))
    }

    #[test]
    fn a_cluster_lists_each_kernel_and_a_single_kernel_nothing() {
        let ks = vec![
            kernel("main1", "main", "node-a"),
            kernel("sub1", "sub", "node-b"),
        ];
        let lines = kernel_lines(&ks);
        assert_eq!(lines[0], "kernels (2):");
        assert!(
            lines[1].contains("Hostname") && lines[1].contains("Agent"),
            "{lines:?}"
        );
        assert!(
            lines[3].contains("main1")
                && lines[3].contains("node-a")
                && lines[3].contains("RUNNING")
                && lines[3].contains("0123456789ab"),
            "{lines:?}"
        );
        assert!(
            lines[4].contains("sub1") && lines[4].contains("node-b"),
            "{lines:?}"
        );
        assert!(kernel_lines(&ks[..1]).is_empty());
    }
}
