//! Resource use of kernels: the raw counters an agent reads ([`KernelStats`]) and the rates
//! and percentages derived from two readings ([`StatSample`]), which the detail panel charts
//! and the utilization idle checker judge.

use crate::resources::ResourceSlots;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Unix milliseconds now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// One reading of a kernel's counters, as the container runtime reports them. CPU time,
/// network and block I/O are cumulative since the kernel started; memory is the current use.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(rename = "Counters")
)]
pub struct KernelStats {
    pub kernel_id: Uuid,
    /// Unix milliseconds of the reading.
    pub at_ms: i64,
    /// CPU time used, nanoseconds (all cores together).
    pub cpu_used_ns: u64,
    /// Memory in use, bytes (without reclaimable page cache).
    pub mem_bytes: u64,
    pub net_rx_bytes: u64,
    pub net_tx_bytes: u64,
    pub io_read_bytes: u64,
    pub io_write_bytes: u64,
    /// The kernel's accelerator devices now (busy time and memory of the kernel's own
    /// processes where the plugin can tell them apart, against the kernel's share);
    /// empty for a kernel without accelerators.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<crate::accel::DeviceReading>,
}

/// What a kernel used between two readings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StatSample {
    /// Unix milliseconds at the end of the interval.
    pub at_ms: i64,
    /// CPU used, in percent of the CPU allocated to the session (100 = all of it busy).
    pub cpu_util: f64,
    /// Memory in use at the end of the interval, bytes.
    pub mem_bytes: u64,
    /// Memory in use, in percent of the memory allocated to the session.
    pub mem: f64,
    /// Bytes per second received and sent by the container.
    pub net_rx_bps: f64,
    pub net_tx_bps: f64,
    /// Bytes per second read from and written to block devices.
    pub io_read_bps: f64,
    pub io_write_bps: f64,
    /// Accelerator utilization, percent, averaged over the kernel's devices (absent without
    /// accelerators).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_util: Option<f64>,
    /// Accelerator memory in use, percent of what the kernel may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_mem: Option<f64>,
    /// Per-device readings at the end of the interval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<crate::accel::DeviceReading>,
}

impl StatSample {
    /// The use between `prev` and `cur` of a session allocated `alloc`. None when the readings
    /// are not in order (a restarted counter, a clock step).
    pub fn between(prev: &KernelStats, cur: &KernelStats, alloc: &ResourceSlots) -> Option<Self> {
        let dt_ms = cur.at_ms.checked_sub(prev.at_ms).filter(|d| *d > 0)?;
        if cur.cpu_used_ns < prev.cpu_used_ns {
            return None;
        }
        let secs = dt_ms as f64 / 1000.0;
        let rate = |a: u64, b: u64| b.saturating_sub(a) as f64 / secs;
        let cores = alloc.cpu_milli as f64 / 1000.0;
        let cpu_secs = (cur.cpu_used_ns - prev.cpu_used_ns) as f64 / 1e9;
        let cpu_util = if cores > 0.0 {
            (100.0 * cpu_secs / (secs * cores)).min(100.0)
        } else {
            0.0
        };
        let mem = if alloc.mem > 0 {
            (100.0 * cur.mem_bytes as f64 / alloc.mem as f64).min(100.0)
        } else {
            0.0
        };
        Some(StatSample {
            at_ms: cur.at_ms,
            cpu_util,
            mem_bytes: cur.mem_bytes,
            mem,
            net_rx_bps: rate(prev.net_rx_bytes, cur.net_rx_bytes),
            net_tx_bps: rate(prev.net_tx_bytes, cur.net_tx_bytes),
            io_read_bps: rate(prev.io_read_bytes, cur.io_read_bytes),
            io_write_bps: rate(prev.io_write_bytes, cur.io_write_bytes),
            cuda_util: device_util(&cur.devices),
            cuda_mem: device_mem(&cur.devices),
            devices: cur.devices.clone(),
        })
    }

    /// The value of a utilization metric by its Backend.AI name (`cpu_util`, `mem`), if this
    /// sample has it.
    pub fn metric(&self, name: &str) -> Option<f64> {
        match name {
            "cpu_util" => Some(self.cpu_util),
            "mem" => Some(self.mem),
            "cuda_util" => self.cuda_util,
            "cuda_mem" => self.cuda_mem,
            _ => None,
        }
    }
}

fn device_util(d: &[crate::accel::DeviceReading]) -> Option<f64> {
    (!d.is_empty()).then(|| d.iter().map(|r| r.util).sum::<f64>() / d.len() as f64)
}

fn device_mem(d: &[crate::accel::DeviceReading]) -> Option<f64> {
    let total: u64 = d.iter().map(|r| r.mem_total).sum();
    let used: u64 = d.iter().map(|r| r.mem_used).sum();
    (total > 0).then(|| (100.0 * used as f64 / total as f64).min(100.0))
}

/// Bytes between the user and the session, through its proxies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Network {
    /// Bytes from the user to the session.
    pub rx_bytes: u64,
    /// Bytes from the session to the user.
    pub tx_bytes: u64,
    /// When a byte last moved (RFC 3339); null when none did.
    pub last_activity: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(at_ms: i64, cpu_s: f64, mem: u64, rx: u64) -> KernelStats {
        KernelStats {
            at_ms,
            cpu_used_ns: (cpu_s * 1e9) as u64,
            mem_bytes: mem,
            net_rx_bytes: rx,
            ..Default::default()
        }
    }

    #[test]
    fn utilization_is_relative_to_the_allocation() {
        let alloc = ResourceSlots {
            cpu_milli: 2000,
            mem: 1 << 30,
            ..Default::default()
        };
        // 5 s of wall time, 5 s of CPU on a 2-core allocation: half of it busy.
        let s = StatSample::between(
            &reading(10_000, 1.0, 0, 1000),
            &reading(15_000, 6.0, 1 << 28, 6000),
            &alloc,
        )
        .unwrap();
        assert!((s.cpu_util - 50.0).abs() < 1e-9, "{s:?}");
        assert!((s.mem - 25.0).abs() < 1e-9);
        assert!((s.net_rx_bps - 1000.0).abs() < 1e-9);
        assert_eq!(s.metric("cpu_util"), Some(s.cpu_util));
        assert_eq!(s.metric("cuda_util"), None);
        let mut gpu = reading(15_000, 6.0, 1 << 28, 6000);
        gpu.devices = vec![
            crate::accel::DeviceReading {
                device: "0".into(),
                util: 30.0,
                mem_used: 1 << 30,
                mem_total: 4 << 30,
            },
            crate::accel::DeviceReading {
                device: "1".into(),
                util: 10.0,
                mem_used: 0,
                mem_total: 4 << 30,
            },
        ];
        let s = StatSample::between(&reading(10_000, 1.0, 0, 1000), &gpu, &alloc).unwrap();
        assert_eq!(s.metric("cuda_util"), Some(20.0));
        assert_eq!(s.metric("cuda_mem"), Some(12.5));
    }

    #[test]
    fn readings_out_of_order_give_no_sample() {
        let alloc = ResourceSlots {
            cpu_milli: 1000,
            mem: 1 << 30,
            ..Default::default()
        };
        assert!(
            StatSample::between(&reading(5, 1.0, 0, 0), &reading(5, 2.0, 0, 0), &alloc).is_none()
        );
        assert!(
            StatSample::between(&reading(5, 3.0, 0, 0), &reading(9, 2.0, 0, 0), &alloc).is_none()
        );
    }
}
