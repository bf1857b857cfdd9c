//! What this node has: cores and memory, detected from the host.

/// Cores this process may use.
pub fn cores() -> u64 {
    std::thread::available_parallelism()
        .map(|n| n.get() as u64)
        .unwrap_or(1)
}

/// Total memory in bytes from `/proc/meminfo`, if readable.
pub fn total_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_meminfo(&text)
}

pub fn parse_meminfo(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// `x86_64` / `aarch64`, as Backend.AI names architectures.
pub fn architecture() -> &'static str {
    std::env::consts::ARCH
}

#[cfg(test)]
mod tests {
    #[test]
    fn meminfo_is_parsed() {
        let t = "MemTotal:       24576000 kB\nMemFree:         1000 kB\n";
        assert_eq!(super::parse_meminfo(t), Some(24_576_000 * 1024));
        assert_eq!(super::parse_meminfo("nothing"), None);
        assert!(super::cores() >= 1);
    }
}
