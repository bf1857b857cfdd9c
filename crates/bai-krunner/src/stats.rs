//! `{"op":"stats"}`: the kernel's resource counters as its own cgroup and network namespace
//! show them, for backends whose engine has no stats call the agent can use (Kubernetes).
//! The reply is one `stdout` event holding
//! `{"cpu_used_ns","mem_bytes","net_rx_bytes","net_tx_bytes","io_read_bytes","io_write_bytes"}`
//! (the fields of `bai_core::stats::KernelStats` without the kernel id and time), then
//! `finished`.
//!
//! Inside a container `/sys/fs/cgroup` is the container's own cgroup: cgroup v2's single
//! hierarchy (`cpu.stat`, `memory.current`, `io.stat`) or v1's controllers, each mounted at
//! the container's directory (`cpuacct/cpuacct.usage`, `memory/memory.usage_in_bytes`,
//! `blkio/blkio.throttle.io_service_bytes`). Memory leaves out the page cache the kernel
//! can reclaim (`inactive_file`), as `docker stats` does. Network is every interface of the
//! kernel's namespace but loopback (`/proc/net/dev`). The parsers are pure text → numbers.

use serde::Serialize;
use std::path::Path;

#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct Counters {
    pub cpu_used_ns: u64,
    pub mem_bytes: u64,
    pub net_rx_bytes: u64,
    pub net_tx_bytes: u64,
    pub io_read_bytes: u64,
    pub io_write_bytes: u64,
}

/// The counters now, read under `cgroup` (normally `/sys/fs/cgroup`) and from `net_dev`
/// (normally `/proc/net/dev`). An error when no CPU counter can be read at all.
pub fn read(cgroup: &Path, net_dev: &Path) -> Result<Counters, String> {
    let text = |p: &str| std::fs::read_to_string(cgroup.join(p)).ok();
    let mut c = Counters::default();
    if let Some(stat) = text("cpu.stat") {
        // cgroup v2.
        c.cpu_used_ns = field(&stat, "usage_usec")
            .ok_or("cpu.stat has no usage_usec")?
            .saturating_mul(1000);
        let current = text("memory.current").and_then(|s| s.trim().parse::<u64>().ok());
        let cache = text("memory.stat")
            .and_then(|s| field(&s, "inactive_file"))
            .unwrap_or(0);
        c.mem_bytes = current.unwrap_or(0).saturating_sub(cache);
        (c.io_read_bytes, c.io_write_bytes) = text("io.stat").map(|s| io_v2(&s)).unwrap_or((0, 0));
    } else {
        let usage = ["cpuacct/cpuacct.usage", "cpu,cpuacct/cpuacct.usage"]
            .iter()
            .find_map(|p| text(p))
            .ok_or_else(|| format!("no CPU counter under {}", cgroup.display()))?;
        c.cpu_used_ns = usage
            .trim()
            .parse()
            .map_err(|e| format!("cpuacct.usage: {e}"))?;
        let usage = text("memory/memory.usage_in_bytes").and_then(|s| s.trim().parse::<u64>().ok());
        let cache = text("memory/memory.stat")
            .and_then(|s| field(&s, "total_inactive_file").or_else(|| field(&s, "inactive_file")))
            .unwrap_or(0);
        c.mem_bytes = usage.unwrap_or(0).saturating_sub(cache);
        (c.io_read_bytes, c.io_write_bytes) = text("blkio/blkio.throttle.io_service_bytes")
            .map(|s| io_v1(&s))
            .unwrap_or((0, 0));
    }
    if let Ok(dev) = std::fs::read_to_string(net_dev) {
        (c.net_rx_bytes, c.net_tx_bytes) = net(&dev);
    }
    Ok(c)
}

/// The value of `key` in a flat-keyed file (`key value` lines).
fn field(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let mut it = l.split_whitespace();
        (it.next() == Some(key))
            .then(|| it.next()?.parse().ok())
            .flatten()
    })
}

/// v2 `io.stat`: `MAJ:MIN rbytes=N wbytes=N rios=N …` per device, summed.
fn io_v2(text: &str) -> (u64, u64) {
    let (mut r, mut w) = (0u64, 0u64);
    for kv in text.split_whitespace() {
        let num = |p: &str| kv.strip_prefix(p).and_then(|v| v.parse::<u64>().ok());
        if let Some(n) = num("rbytes=") {
            r = r.saturating_add(n);
        } else if let Some(n) = num("wbytes=") {
            w = w.saturating_add(n);
        }
    }
    (r, w)
}

/// v1 `blkio.throttle.io_service_bytes`: `MAJ:MIN Read N` / `MAJ:MIN Write N` per device
/// (and a `Total` line), summed.
fn io_v1(text: &str) -> (u64, u64) {
    let (mut r, mut w) = (0u64, 0u64);
    for l in text.lines() {
        let parts: Vec<&str> = l.split_whitespace().collect();
        if let [_, op, n] = parts.as_slice() {
            let n: u64 = n.parse().unwrap_or(0);
            match *op {
                "Read" => r = r.saturating_add(n),
                "Write" => w = w.saturating_add(n),
                _ => {}
            }
        }
    }
    (r, w)
}

/// `/proc/net/dev`: received and sent bytes of every interface but loopback.
fn net(text: &str) -> (u64, u64) {
    let (mut rx, mut tx) = (0u64, 0u64);
    for l in text.lines().skip(2) {
        let Some((name, rest)) = l.split_once(':') else {
            continue;
        };
        if name.trim() == "lo" {
            continue;
        }
        let cols: Vec<u64> = rest
            .split_whitespace()
            .map(|v| v.parse().unwrap_or(0))
            .collect();
        if cols.len() >= 9 {
            rx = rx.saturating_add(cols[0]);
            tx = tx.saturating_add(cols[8]);
        }
    }
    (rx, tx)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NET_DEV: &str = "Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:     500       5    0    0    0     0          0         0      500       5    0    0    0     0       0          0
  eth0:     200       2    0    0    0     0          0         0       70       1    0    0    0     0       0          0
  net1:      10       1    0    0    0     0          0         0        5       1    0    0    0     0       0          0
";

    fn write(dir: &Path, rel: &str, text: &str) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn cgroup_v2_counters() {
        let d = tempfile::tempdir().unwrap();
        write(
            d.path(),
            "cpu.stat",
            "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n",
        );
        write(d.path(), "memory.current", "10000\n");
        write(
            d.path(),
            "memory.stat",
            "anon 8000\nfile 2000\ninactive_file 1500\n",
        );
        write(
            d.path(),
            "io.stat",
            "8:0 rbytes=100 wbytes=40 rios=1 wios=1 dbytes=0 dios=0\n8:16 rbytes=5 wbytes=1 rios=1 wios=1\n",
        );
        write(d.path(), "net_dev", NET_DEV);
        let c = read(d.path(), &d.path().join("net_dev")).unwrap();
        assert_eq!(
            c,
            Counters {
                cpu_used_ns: 1_500_000,
                mem_bytes: 8500,
                net_rx_bytes: 210,
                net_tx_bytes: 75,
                io_read_bytes: 105,
                io_write_bytes: 41,
            }
        );
    }

    #[test]
    fn cgroup_v1_counters() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "cpuacct/cpuacct.usage", "31248576\n");
        write(d.path(), "memory/memory.usage_in_bytes", "2199552\n");
        write(
            d.path(),
            "memory/memory.stat",
            "cache 4096\ninactive_file 188416\ntotal_inactive_file 188416\n",
        );
        write(
            d.path(),
            "blkio/blkio.throttle.io_service_bytes",
            "8:0 Read 4096\n8:0 Write 512\n8:0 Sync 0\n8:0 Total 4608\nTotal 4608\n",
        );
        let c = read(d.path(), &d.path().join("missing")).unwrap();
        assert_eq!(c.cpu_used_ns, 31_248_576);
        assert_eq!(c.mem_bytes, 2_199_552 - 188_416);
        assert_eq!((c.io_read_bytes, c.io_write_bytes), (4096, 512));
        assert_eq!((c.net_rx_bytes, c.net_tx_bytes), (0, 0));
    }

    #[test]
    fn no_cpu_counter_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        let e = read(d.path(), &d.path().join("net_dev")).unwrap_err();
        assert!(e.contains("no CPU counter"), "{e}");
    }
}
