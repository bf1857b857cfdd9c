//! The flags' own value parsers (clap's `value_parser`): each reads one flag's text into its
//! typed value or answers the one line that says what is wrong.

use anyhow::{Context, Result};
use std::net::SocketAddr;

/// An address to listen on, or none (`off`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listen(pub Option<SocketAddr>);

/// `ADDR:PORT`, or `off`.
pub fn parse_listen(s: &str) -> Result<Listen, String> {
    if s.trim() == "off" {
        return Ok(Listen(None));
    }
    s.trim()
        .parse()
        .map(|a| Listen(Some(a)))
        .map_err(|_| format!("{s:?} is not ADDR:PORT (e.g. 0.0.0.0:8091) or off"))
}

/// An interval flag (`40s`, `10m`, `1h`, `500ms`, `1h30m` or plain seconds): bai-core's one
/// duration grammar, and more than zero.
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    match bai_core::parse_duration(s) {
        Ok(d) if d.is_zero() => Err(format!("{:?} must be more than zero", s.trim())),
        Ok(d) => Ok(d),
        Err(e) => Err(e.to_string()),
    }
}

/// `--audit-retention`, `--session-detail-retention`: a duration like `90d` or `12h`, or `0`
/// for good.
pub fn retention(s: &str) -> Result<std::time::Duration, String> {
    if s.trim() == "0" {
        return Ok(std::time::Duration::ZERO);
    }
    bai_core::parse_duration(s).map_err(|e| format!("{e}; 0 keeps them for good"))
}

pub fn parse_utilization(s: &str) -> Result<bai_core::idle::UtilizationConfig, String> {
    bai_core::idle::UtilizationConfig::parse(s)
}

/// `cpu=4,mem=8g` → slots. Any other key is an accelerator slot the dummy agents offer
/// (`cuda.device=2`, `cuda.shares=4`, `cuda.device:1g.18gb-mig=2`): whole devices in whole
/// numbers. A kernel's rules (one kind of GPU) do not apply to what a node has.
pub fn parse_capacity(s: &str) -> Result<bai_core::ResourceSlots> {
    let mut ask = bai_core::resources::ResourceAsk::default();
    let mut accel = std::collections::BTreeMap::new();
    for part in s.split(',').filter(|p| !p.trim().is_empty()) {
        let (k, v) = part
            .split_once('=')
            .with_context(|| format!("capacity {part:?} must look like cpu=4 or mem=8g"))?;
        let (k, v) = (k.trim(), v.trim());
        if matches!(k, "cpu" | "mem" | "shmem") {
            ask.slots.insert(k.to_string(), v.to_string());
            continue;
        }
        let amount = bai_core::resources::parse_cpu(k, v)
            .map_err(|e| anyhow::anyhow!("bad --dummy-capacity: {e}"))?;
        if bai_core::accel::is_whole(k) && amount % 1000 != 0 {
            anyhow::bail!("bad --dummy-capacity: {k}={v} counts whole devices");
        }
        accel.insert(k.to_string(), amount);
    }
    let mut req = bai_core::resources::ResourceRequest::parse(&ask, &[])
        .map_err(|e| anyhow::anyhow!("bad --dummy-capacity: {e}"))?;
    req.slots.accel = accel;
    Ok(req.slots)
}

/// `FIRST-LAST` (inclusive), both 1024–65535.
pub fn parse_port_range(s: &str) -> Result<(u16, u16), String> {
    let (a, b) = s
        .split_once('-')
        .ok_or_else(|| format!("{s:?} is not FIRST-LAST, e.g. 30000-30199"))?;
    let port = |p: &str| -> Result<u16, String> {
        p.trim()
            .parse::<u16>()
            .ok()
            .filter(|p| *p >= 1024)
            .ok_or_else(|| format!("{p:?} is not a port from 1024 to 65535"))
    };
    let (a, b) = (port(a)?, port(b)?);
    if a > b {
        return Err(format!("{s:?}: the first port is after the last"));
    }
    Ok((a, b))
}

/// `on` or `off` (also `true`/`false`, `yes`/`no`, `1`/`0`).
pub fn parse_on_off(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(format!("{s:?}: say on or off")),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_capacity;

    #[test]
    fn dummy_capacity_takes_accelerator_slots_of_every_kind() {
        let c =
            parse_capacity("cpu=2,mem=4g,cuda.device=2,cuda.device:1g.18gb-mig=3,mock.shares=1.5")
                .expect("parse");
        assert_eq!(c.cpu_milli, 2000);
        assert_eq!(c.mem, 4 << 30);
        assert_eq!(c.accel.get("cuda.device"), Some(&2000));
        assert_eq!(c.accel.get("cuda.device:1g.18gb-mig"), Some(&3000));
        assert_eq!(c.accel.get("mock.shares"), Some(&1500));
    }

    #[test]
    fn dummy_capacity_refuses_half_a_device_and_bad_numbers() {
        let e = parse_capacity("cpu=2,cuda.device=0.5").expect_err("half a device");
        assert!(e.to_string().contains("counts whole devices"), "{e}");
        let e = parse_capacity("cuda.shares=lots").expect_err("not a number");
        assert!(e.to_string().starts_with("bad --dummy-capacity"), "{e}");
        assert!(parse_capacity("cpu").is_err());
    }
}
