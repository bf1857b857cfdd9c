//! Reading a kernel container's resource counters from the engine (one-shot stats).

use super::Inner;
use crate::error::{is_not_found, runtime};
use bai_core::agent::AgentError;
use bai_core::stats::KernelStats;
use bollard::models::ContainerStatsResponse;
use bollard::query_parameters::StatsOptions;
use futures::StreamExt;
use uuid::Uuid;

/// The kernel's counters now.
pub async fn stats(inner: &Inner, kernel_id: Uuid) -> Result<KernelStats, AgentError> {
    let name = Inner::container_name(kernel_id);
    let opts = StatsOptions {
        stream: false,
        one_shot: true,
    };
    let mut stream = inner.docker.stats(&name, Some(opts));
    match stream.next().await {
        Some(Ok(s)) => {
            let mut c = counters(kernel_id, &s, bai_core::stats::now_ms());
            if let (Some(acc), Some(held)) = (inner.accelerator(), inner.held_devices(kernel_id)) {
                c.devices = acc.readings(&held, s.id.as_deref());
            }
            Ok(c)
        }
        Some(Err(e)) if is_not_found(&e) => Err(AgentError::KernelNotFound(kernel_id)),
        Some(Err(e)) => Err(runtime(format_args!("cannot read the stats of {name}"), e)),
        None => Err(AgentError::Runtime(format!(
            "the engine sent no stats for {name}"
        ))),
    }
}

/// The engine's stats reply as our counters. Memory leaves out the page cache the kernel can
/// reclaim (`inactive_file`, cgroup v2; `total_inactive_file`, cgroup v1), as `docker stats`
/// does.
fn counters(kernel_id: Uuid, s: &ContainerStatsResponse, at_ms: i64) -> KernelStats {
    let cpu_used_ns = s
        .cpu_stats
        .as_ref()
        .and_then(|c| c.cpu_usage.as_ref())
        .and_then(|u| u.total_usage)
        .unwrap_or(0);
    let mem_bytes = s
        .memory_stats
        .as_ref()
        .map(|m| {
            let cache = m
                .stats
                .as_ref()
                .and_then(|st| {
                    st.get("inactive_file")
                        .or_else(|| st.get("total_inactive_file"))
                        .copied()
                })
                .unwrap_or(0);
            m.usage.unwrap_or(0).saturating_sub(cache)
        })
        .unwrap_or(0);
    let (mut net_rx_bytes, mut net_tx_bytes) = (0, 0);
    for n in s.networks.iter().flat_map(|n| n.values()) {
        net_rx_bytes += n.rx_bytes.unwrap_or(0);
        net_tx_bytes += n.tx_bytes.unwrap_or(0);
    }
    let (mut io_read_bytes, mut io_write_bytes) = (0, 0);
    for e in s
        .blkio_stats
        .iter()
        .flat_map(|b| b.io_service_bytes_recursive.iter().flatten())
    {
        match e.op.as_deref().map(str::to_ascii_lowercase).as_deref() {
            Some("read") => io_read_bytes += e.value.unwrap_or(0),
            Some("write") => io_write_bytes += e.value.unwrap_or(0),
            _ => {}
        }
    }
    KernelStats {
        kernel_id,
        at_ms,
        cpu_used_ns,
        mem_bytes,
        net_rx_bytes,
        net_tx_bytes,
        io_read_bytes,
        io_write_bytes,
        devices: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_stats_become_counters() {
        let reply: ContainerStatsResponse = serde_json::from_value(serde_json::json!({
            "cpu_stats": {"cpu_usage": {"total_usage": 2_500_000_000u64}},
            "memory_stats": {"usage": 300, "stats": {"total_inactive_file": 100}},
            "networks": {"eth0": {"rx_bytes": 10, "tx_bytes": 20}, "eth1": {"rx_bytes": 1, "tx_bytes": 2}},
            "blkio_stats": {"io_service_bytes_recursive": [
                {"major": 8, "minor": 0, "op": "Read", "value": 4096},
                {"major": 8, "minor": 0, "op": "write", "value": 512},
                {"major": 8, "minor": 0, "op": "Total", "value": 4608}
            ]}
        }))
        .unwrap();
        let k = counters(Uuid::nil(), &reply, 7);
        assert_eq!(
            (
                k.at_ms,
                k.cpu_used_ns,
                k.mem_bytes,
                k.net_rx_bytes,
                k.net_tx_bytes,
                k.io_read_bytes,
                k.io_write_bytes
            ),
            (7, 2_500_000_000, 200, 11, 22, 4096, 512)
        );
    }
}
