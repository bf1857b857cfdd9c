//! Kubernetes resource quantities (`500m`, `2`, `1.5`, `512Mi`, `1G`, `1e3`) read as bai's
//! units: CPU in milli-cores, everything else in whole units (bytes, devices). Pure.

/// A quantity the agent cannot read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a Kubernetes quantity")]
pub struct BadQuantity(pub String);

/// The value times `scale` (1000 for CPU in milli-cores, 1 for bytes), rounded up, as
/// Kubernetes rounds requests up; negative values are refused.
fn scaled(q: &str, scale: f64) -> Result<u64, BadQuantity> {
    let bad = || BadQuantity(q.to_string());
    let s = q.trim();
    // Binary suffixes first (two letters), then decimal ones, then exponents.
    const BINARY: [(&str, f64); 6] = [
        ("Ki", 1024.0),
        ("Mi", 1048576.0),
        ("Gi", 1073741824.0),
        ("Ti", 1099511627776.0),
        ("Pi", 1125899906842624.0),
        ("Ei", 1152921504606846976.0),
    ];
    const DECIMAL: [(&str, f64); 8] = [
        ("n", 1e-9),
        ("u", 1e-6),
        ("m", 1e-3),
        ("k", 1e3),
        ("M", 1e6),
        ("G", 1e9),
        ("T", 1e12),
        ("P", 1e15),
    ];
    let (number, factor) = BINARY
        .iter()
        .chain(DECIMAL.iter())
        .find_map(|(suffix, f)| s.strip_suffix(suffix).map(|n| (n, *f)))
        .or_else(|| s.strip_suffix('E').map(|n| (n, 1e18)))
        .unwrap_or((s, 1.0));
    if number.is_empty() || number.starts_with(['+', '-']) && number.len() == 1 {
        return Err(bad());
    }
    let v: f64 = number.parse().map_err(|_| bad())?;
    if !v.is_finite() || v < 0.0 {
        return Err(bad());
    }
    let total = (v * factor * scale).ceil();
    if total > u64::MAX as f64 {
        return Err(bad());
    }
    Ok(total as u64)
}

/// CPU in milli-cores: `500m` → 500, `2` → 2000, `1.5` → 1500.
pub fn cpu_milli(q: &str) -> Result<u64, BadQuantity> {
    scaled(q, 1000.0)
}

/// Bytes (memory, storage) or a count (devices): `512Mi` → 536870912, `1G` → 10⁹, `2` → 2.
pub fn units(q: &str) -> Result<u64, BadQuantity> {
    scaled(q, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_reads_cores_and_millicores() {
        assert_eq!(cpu_milli("500m"), Ok(500));
        assert_eq!(cpu_milli("2"), Ok(2000));
        assert_eq!(cpu_milli("1.5"), Ok(1500));
        assert_eq!(cpu_milli("250000u"), Ok(250));
        assert_eq!(cpu_milli("0"), Ok(0));
    }

    #[test]
    fn memory_reads_binary_and_decimal_suffixes() {
        assert_eq!(units("512Mi"), Ok(536_870_912));
        assert_eq!(units("24606444Ki"), Ok(24_606_444 * 1024));
        assert_eq!(units("1G"), Ok(1_000_000_000));
        assert_eq!(units("129e6"), Ok(129_000_000));
        assert_eq!(units("1e3"), Ok(1000));
        assert_eq!(units("2"), Ok(2));
        assert_eq!(units("1Ti"), Ok(1 << 40));
    }

    #[test]
    fn nonsense_is_refused() {
        for q in ["", "Mi", "-1", "abc", "1.2.3", "NaN", "-"] {
            assert!(units(q).is_err(), "{q:?}");
        }
    }
}
