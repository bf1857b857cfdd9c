//! Usage as weighted resource-seconds that decay with a half-life.
//!
//! A running kernel adds `rate` weighted units per second (its slots times the group's
//! per-slot weights, [`SlotWeights::rate`]). Usage recorded `t` seconds ago counts
//! `2^(-t / half_life)` of itself now. Because the decay is linear, an accumulator that is
//! decayed to the time of each update and then increased stays exact: no history is needed.

use bai_core::resources::ResourceSlots;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// What one unit of each slot weighs per second: one core, one GiB of memory, one unit of an
/// accelerator slot (a GPU weighs far more than a core by default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SlotWeights {
    /// Per core.
    pub cpu: f64,
    /// Per GiB of memory.
    pub mem: f64,
    /// Per unit of a named accelerator slot (`cuda.device`, `mock.shares`).
    pub accel: BTreeMap<String, f64>,
    /// Per unit of an accelerator slot not named in `accel`.
    pub accel_default: f64,
}

impl Default for SlotWeights {
    fn default() -> SlotWeights {
        SlotWeights {
            cpu: 1.0,
            mem: 0.1,
            accel: BTreeMap::new(),
            accel_default: 50.0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct WeightsError(String);

impl WeightsError {
    pub fn new(message: String) -> WeightsError {
        WeightsError(message)
    }
}

impl SlotWeights {
    /// Weighted units per second that `slots` add while held.
    pub fn rate(&self, slots: &ResourceSlots) -> f64 {
        let mut r = slots.cpu_milli as f64 / 1000.0 * self.cpu
            + slots.mem as f64 / (1u64 << 30) as f64 * self.mem;
        for (k, v) in &slots.accel {
            let w = self.accel.get(k).copied().unwrap_or(self.accel_default);
            r += *v as f64 / 1000.0 * w;
        }
        r
    }

    /// `cpu=1,mem=0.1,cuda.device=50,accel=50` (`accel`: any other accelerator slot). The
    /// weights left out keep their value.
    pub fn parse_into(&mut self, text: &str) -> Result<(), WeightsError> {
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| WeightsError(format!("{part:?} is not SLOT=WEIGHT")))?;
            let v: f64 = v
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| {
                    WeightsError(format!("{part:?}: the weight is not a number >= 0"))
                })?;
            match k.trim() {
                "cpu" => self.cpu = v,
                "mem" => self.mem = v,
                "accel" => self.accel_default = v,
                "" => return Err(WeightsError(format!("{part:?} names no slot"))),
                slot => {
                    self.accel.insert(slot.to_string(), v);
                }
            }
        }
        Ok(())
    }
}

impl fmt::Display for SlotWeights {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cpu={},mem={}", self.cpu, self.mem)?;
        for (k, v) in &self.accel {
            write!(f, ",{k}={v}")?;
        }
        write!(f, ",accel={}", self.accel_default)
    }
}

/// What one unit of usage counts after `elapsed` seconds (half-life 0: it never decays).
pub fn decay_factor(elapsed_secs: f64, half_life_secs: f64) -> f64 {
    if half_life_secs <= 0.0 || elapsed_secs <= 0.0 {
        return 1.0;
    }
    (-elapsed_secs / half_life_secs).exp2()
}

/// `value`, recorded `elapsed_secs` ago, as it counts now.
pub fn decayed(value: f64, elapsed_secs: f64, half_life_secs: f64) -> f64 {
    value * decay_factor(elapsed_secs, half_life_secs)
}

/// The accumulator `value` after `elapsed_secs` more seconds of usage at `rate` units per
/// second: the old value decays over the interval, and what was added during it decays from
/// the moment it was added (the exact integral, so the result does not depend on how often
/// it is updated).
pub fn accrue(value: f64, rate: f64, elapsed_secs: f64, half_life_secs: f64) -> f64 {
    let e = elapsed_secs.max(0.0);
    let d = decay_factor(e, half_life_secs);
    let added = if half_life_secs <= 0.0 {
        rate * e
    } else {
        rate * half_life_secs / std::f64::consts::LN_2 * (1.0 - d)
    };
    value * d + added
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: f64 = 86_400.0;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-6 * b.abs().max(1.0)
    }

    #[test]
    fn a_half_life_halves() {
        assert!(close(decayed(100.0, 7.0 * DAY, 7.0 * DAY), 50.0));
        assert!(close(decayed(100.0, 14.0 * DAY, 7.0 * DAY), 25.0));
        assert!(close(decayed(100.0, 5.0 * DAY, 0.0), 100.0));
    }

    #[test]
    fn accrual_does_not_depend_on_the_update_interval() {
        // One update over an hour equals 3,600 updates of a second each.
        let h = 7.0 * DAY;
        let once = accrue(1000.0, 8.0, 3600.0, h);
        let mut many = 1000.0;
        for _ in 0..3600 {
            many = accrue(many, 8.0, 1.0, h);
        }
        assert!(close(once, many), "{once} vs {many}");
        // Short intervals add about rate × time.
        assert!(close(accrue(0.0, 8.0, 1.0, h), 8.0));
        // Without decay it is plain addition.
        assert!(close(accrue(10.0, 2.0, 5.0, 0.0), 20.0));
    }

    #[test]
    fn usage_settles_where_decay_balances_it() {
        // Running forever at rate r, usage tends to r × half_life / ln 2.
        let h = DAY;
        let v = accrue(0.0, 1.0, 100.0 * DAY, h);
        assert!(close(v, h / std::f64::consts::LN_2));
    }

    #[test]
    fn a_gpu_weighs_more_than_a_core() {
        let w = SlotWeights::default();
        let core = ResourceSlots {
            cpu_milli: 1000,
            mem: 0,
            accel: Default::default(),
        };
        let gpu = ResourceSlots {
            cpu_milli: 0,
            mem: 0,
            accel: [("cuda.device".to_string(), 1000)].into(),
        };
        assert!(w.rate(&gpu) >= 10.0 * w.rate(&core));
        let mut w2 = SlotWeights::default();
        w2.parse_into("cpu=2, cuda.device=100,accel=7").unwrap();
        assert!(close(w2.rate(&core), 2.0));
        assert!(close(w2.rate(&gpu), 100.0));
        assert_eq!(w2.accel_default, 7.0);
        assert!(w2.parse_into("cpu").is_err());
        assert!(w2.parse_into("cpu=-1").is_err());
        let again = {
            let mut x = SlotWeights::default();
            x.parse_into(&w2.to_string()).unwrap();
            x
        };
        assert_eq!(again, w2);
    }
}
