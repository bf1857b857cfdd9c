//! A resource group's fair-share settings and the input of one scheduling pass.

use super::decay::SlotWeights;
use super::tree::ShareTree;
use serde::{Deserialize, Serialize};

/// A resource group's fair-share settings (kept as JSON with the group; missing fields take
/// their defaults).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Policy {
    /// Usage counts half after this long (0: it never decays). Default 7 days.
    pub half_life_secs: u64,
    pub weights: SlotWeights,
    pub priority: PriorityWeights,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            half_life_secs: 7 * 86_400,
            weights: SlotWeights::default(),
            priority: PriorityWeights::default(),
        }
    }
}

impl Policy {
    /// Reads the JSON kept with a group (anything unreadable: the defaults).
    pub fn from_json(text: &str) -> Policy {
        serde_json::from_str(text).unwrap_or_default()
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".into())
    }
}

/// The fair-share input of one pass over a group: the tree (usage decayed to now) and the
/// group's policy.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Input {
    pub tree: std::sync::Arc<ShareTree>,
    pub policy: Policy,
}

/// How the factors (each in 0..=1) weigh in the priority number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PriorityWeights {
    pub fairshare: f64,
    pub age: f64,
    pub size: f64,
    /// The session's own priority (0..=100, as given at creation).
    pub priority: f64,
    /// The age at which the age factor reaches 1.
    pub max_age_secs: u64,
    /// How long each earlier pending session of an account is assumed to run (burst penalty;
    /// 0: off).
    pub burst_window_secs: u64,
}

impl Default for PriorityWeights {
    fn default() -> PriorityWeights {
        PriorityWeights {
            fairshare: 10_000.0,
            age: 1_000.0,
            size: 1_000.0,
            priority: 1_000.0,
            max_age_secs: 7 * 86_400,
            burst_window_secs: 3_600,
        }
    }
}

impl PriorityWeights {
    /// `fairshare=10000,age=1000,size=1000,priority=1000,max-age=7d,burst-window=1h`: the
    /// weights of the factors (numbers >= 0) and the two durations (seconds or `30s`, `5m`,
    /// `7d`; `burst-window=0` turns the burst penalty off). Those left out keep their value.
    pub fn parse_into(&mut self, text: &str) -> Result<(), super::decay::WeightsError> {
        let bad = |m: String| super::decay::WeightsError::new(m);
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| bad(format!("{part:?} is not NAME=VALUE")))?;
            let (k, v) = (k.trim(), v.trim());
            let weight = || {
                v.parse::<f64>()
                    .ok()
                    .filter(|w| w.is_finite() && *w >= 0.0)
                    .ok_or_else(|| bad(format!("{part:?}: the weight is not a number >= 0")))
            };
            let secs = || {
                if v == "0" {
                    return Ok(0);
                }
                bai_core::parse_duration(v)
                    .map(|d| d.as_secs())
                    .map_err(|e| bad(format!("{part:?}: {e}")))
            };
            match k {
                "fairshare" => self.fairshare = weight()?,
                "age" => self.age = weight()?,
                "size" => self.size = weight()?,
                "priority" => self.priority = weight()?,
                "max-age" => self.max_age_secs = secs()?.max(1),
                "burst-window" => self.burst_window_secs = secs()?,
                _ => {
                    return Err(bad(format!(
                        "{part:?}: use fairshare, age, size, priority, max-age or burst-window"
                    )));
                }
            }
        }
        Ok(())
    }
}

impl std::fmt::Display for PriorityWeights {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "fairshare={},age={},size={},priority={},max-age={}s,burst-window={}s",
            self.fairshare,
            self.age,
            self.size,
            self.priority,
            self.max_age_secs,
            self.burst_window_secs
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priority_weights_read_back_and_refuse_what_they_do_not_know() {
        let mut w = PriorityWeights::default();
        w.parse_into("age=0, size=250,max-age=2d,burst-window=0")
            .unwrap();
        assert_eq!((w.age, w.size), (0.0, 250.0));
        assert_eq!((w.max_age_secs, w.burst_window_secs), (2 * 86_400, 0));
        assert_eq!(
            w.fairshare,
            PriorityWeights::default().fairshare,
            "left out: kept"
        );
        let mut again = PriorityWeights::default();
        again.parse_into(&w.to_string()).unwrap();
        assert_eq!(again, w);
        assert!(
            w.parse_into("speed=3")
                .unwrap_err()
                .to_string()
                .contains("use fairshare")
        );
        assert!(w.parse_into("age=-1").is_err());
        assert!(w.parse_into("max-age=soon").is_err());
        assert!(w.parse_into("age").is_err());
    }
}
