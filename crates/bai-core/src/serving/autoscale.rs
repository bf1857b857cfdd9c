//! Auto-scaling rules and their decisions, without I/O.
//!
//! * **threshold** (Backend.AI's rules): when `value <comparator> threshold`, the service
//!   wants `replicas + step_size` (the step may be negative); nothing happens when that is
//!   outside `[min_replicas, max_replicas]` or within `cooldown_seconds` of the rule's (or the
//!   service's) last change.
//! * **target** (target tracking, as Ray Serve and Knative do): `target` is the value each
//!   replica should see (e.g. 4 requests in flight); the service wants
//!   `ceil(value × replicas / target)` within `[min, max]`, once that has held for
//!   `scale_up_delay_seconds` (more) or `scale_down_delay_seconds` (fewer).
//!
//! Rules are looked at by priority (highest first, then oldest); the first that changes the
//! count wins the round. A rule can be disabled. Every firing is a [`Decision`] with its
//! inputs, applied or not, and why.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// How a rule decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum RuleMode {
    /// Backend.AI's: when `metric <comparator> threshold`, step the replicas by `step_size`.
    Threshold,
    /// Target tracking: replicas = ceil(metric × replicas / target), after the delays.
    Target,
}

/// Where a rule's metric comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum MetricSource {
    /// The replicas' kernels: `cpu_util`, `mem` (percent of what they were given).
    Kernel,
    /// The endpoint's requests per replica: `inflight`, `requests_per_second`, `latency_ms`.
    InferenceFramework,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Comparator {
    LessThan,
    LessThanOrEqual,
    GreaterThan,
    GreaterThanOrEqual,
}

/// A rule's enum value from its word in either case (`greater_than`, ` KERNEL`), as
/// a rule's fields are read; the error names the values it takes.
fn word<T: serde::de::DeserializeOwned>(s: &str, case: fn(&str) -> String) -> Result<T, String> {
    serde_json::from_value(serde_json::Value::String(case(s.trim()))).map_err(|e| e.to_string())
}

impl std::str::FromStr for RuleMode {
    type Err = String;
    fn from_str(s: &str) -> Result<RuleMode, String> {
        word(s, str::to_ascii_lowercase)
    }
}

impl std::str::FromStr for MetricSource {
    type Err = String;
    fn from_str(s: &str) -> Result<MetricSource, String> {
        word(s, str::to_ascii_uppercase)
    }
}

impl std::str::FromStr for Comparator {
    type Err = String;
    fn from_str(s: &str) -> Result<Comparator, String> {
        word(s, str::to_ascii_uppercase)
    }
}

impl Comparator {
    /// `<`, `<=`, `>`, `>=`.
    pub fn symbol(self) -> &'static str {
        match self {
            Comparator::LessThan => "<",
            Comparator::LessThanOrEqual => "<=",
            Comparator::GreaterThan => ">",
            Comparator::GreaterThanOrEqual => ">=",
        }
    }
}

/// Whether `value <comparator> threshold` holds.
pub fn holds(c: Comparator, value: f64, threshold: f64) -> bool {
    match c {
        Comparator::LessThan => value < threshold,
        Comparator::LessThanOrEqual => value <= threshold,
        Comparator::GreaterThan => value > threshold,
        Comparator::GreaterThanOrEqual => value >= threshold,
    }
}

/// Metric names each source offers.
pub fn metrics_of(source: MetricSource) -> &'static [&'static str] {
    match source {
        MetricSource::Kernel => &["cpu_util", "mem"],
        MetricSource::InferenceFramework => &["inflight", "requests_per_second", "latency_ms"],
    }
}

// One spelling: as stored (the rule's JSON text, its times from the row) and as both APIs
// show it.
/// An auto-scaling rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Rule {
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub id: Uuid,
    pub mode: RuleMode,
    pub metric_source: MetricSource,
    pub metric_name: String,
    /// Threshold mode: the value compared (a decimal, as text).
    pub threshold: Option<String>,
    pub comparator: Option<Comparator>,
    /// Threshold mode: replicas added (negative: removed) when it fires.
    pub step_size: Option<i32>,
    /// Target mode: the metric's value each replica should see.
    pub target: Option<f64>,
    /// Target mode: how long more replicas must be wanted before they start.
    pub scale_up_delay_seconds: f64,
    /// Target mode: how long fewer replicas must be wanted before some end.
    pub scale_down_delay_seconds: f64,
    /// No change within this long of the rule's, or the service's, last change.
    pub cooldown_seconds: u32,
    pub min_replicas: Option<u32>,
    pub max_replicas: Option<u32>,
    /// Higher first; the first rule that changes the count wins the round.
    pub priority: i32,
    pub enabled: bool,
    pub created_at: String,
    pub last_triggered_at: Option<String>,
}

impl Rule {
    /// Checks the rule's fields together; the error names the field.
    pub fn check(&self) -> Result<(), String> {
        if !metrics_of(self.metric_source).contains(&self.metric_name.as_str()) {
            return Err(format!(
                "metric_name {:?} is not a metric of {:?}: use one of {}",
                self.metric_name,
                self.metric_source,
                metrics_of(self.metric_source).join(", ")
            ));
        }
        if let (Some(lo), Some(hi)) = (self.min_replicas, self.max_replicas)
            && lo > hi
        {
            return Err(format!("min_replicas {lo} is more than max_replicas {hi}"));
        }
        if self.max_replicas.is_some_and(|m| m > super::MAX_REPLICAS) {
            return Err(format!(
                "max_replicas is more than a service may run ({})",
                super::MAX_REPLICAS
            ));
        }
        for (name, v) in [
            ("scale_up_delay_seconds", self.scale_up_delay_seconds),
            ("scale_down_delay_seconds", self.scale_down_delay_seconds),
        ] {
            if !v.is_finite() || v < 0.0 {
                return Err(format!("{name} must be 0 or more seconds"));
            }
        }
        match self.mode {
            RuleMode::Threshold => {
                let t = self
                    .threshold
                    .as_deref()
                    .ok_or("threshold is required for a threshold rule")?;
                t.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| format!("threshold {t:?} is not a number"))?;
                if self.comparator.is_none() {
                    return Err("comparator is required for a threshold rule".into());
                }
                match self.step_size {
                    None | Some(0) => {
                        return Err("step_size is required and must not be 0".into());
                    }
                    Some(_) => {}
                }
            }
            RuleMode::Target => {
                match self.target {
                    Some(t) if t.is_finite() && t > 0.0 => {}
                    _ => return Err("target must be a number above 0 for a target rule".into()),
                }
                if self.min_replicas.is_none() || self.max_replicas.is_none() {
                    return Err(
                        "min_replicas and max_replicas are required for a target rule".into(),
                    );
                }
            }
        }
        Ok(())
    }

    fn threshold_value(&self) -> f64 {
        self.threshold
            .as_deref()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0.0)
    }
}

/// What a rule sees in one round.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Inputs {
    /// Replicas the service wants now.
    pub replicas: u32,
    /// The metric, or None when it cannot be read (no replica, no samples yet).
    pub value: Option<f64>,
    /// Seconds since the rule, or the service (whichever is later), last changed the count.
    pub since_last_change: Option<f64>,
}

/// A rule's memory between rounds (target mode: since when the wish has held).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Memory {
    /// Since when (seconds on the autoscaler's clock) the rule wanted more, or fewer.
    pub wanting: Option<(bool, f64)>,
}

/// One firing of a rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    pub rule_id: Uuid,
    pub metric_source: MetricSource,
    pub metric_name: String,
    pub value: Option<f64>,
    pub from_replicas: u32,
    pub to_replicas: u32,
    pub applied: bool,
    pub note: String,
}

/// Judges one rule; `now` is the autoscaler's clock in seconds. None: the rule does not fire.
pub fn decide(rule: &Rule, inputs: Inputs, memory: &mut Memory, now: f64) -> Option<Decision> {
    if !rule.enabled {
        memory.wanting = None;
        return None;
    }
    let value = inputs.value?;
    let lo = rule.min_replicas.unwrap_or(0);
    let hi = rule.max_replicas.unwrap_or(super::MAX_REPLICAS);
    let (want, why) = match rule.mode {
        RuleMode::Threshold => {
            let cmp = rule.comparator?;
            let threshold = rule.threshold_value();
            if !holds(cmp, value, threshold) {
                return None;
            }
            let want = (i64::from(inputs.replicas) + i64::from(rule.step_size.unwrap_or(0)))
                .clamp(0, i64::from(u32::MAX)) as u32;
            (
                want,
                format!(
                    "{} {value:.2} {} {threshold}",
                    rule.metric_name,
                    cmp.symbol()
                ),
            )
        }
        RuleMode::Target => {
            let target = rule.target.unwrap_or(1.0);
            let total = value * f64::from(inputs.replicas.max(1));
            let want = ((total / target).ceil() as i64).clamp(i64::from(lo), i64::from(hi)) as u32;
            if want == inputs.replicas {
                memory.wanting = None;
                return None;
            }
            let up = want > inputs.replicas;
            let since = match memory.wanting {
                Some((dir, t)) if dir == up => t,
                _ => {
                    memory.wanting = Some((up, now));
                    now
                }
            };
            let delay = if up {
                rule.scale_up_delay_seconds
            } else {
                rule.scale_down_delay_seconds
            };
            if now - since < delay {
                return None;
            }
            (
                want,
                format!(
                    "{} {value:.2} per replica against a target of {target} for {:.0} s",
                    rule.metric_name,
                    now - since
                ),
            )
        }
    };
    let mut d = Decision {
        rule_id: rule.id,
        metric_source: rule.metric_source,
        metric_name: rule.metric_name.clone(),
        value: Some(value),
        from_replicas: inputs.replicas,
        to_replicas: want,
        applied: false,
        note: why,
    };
    if want == inputs.replicas {
        d.note.push_str("; already there");
        return Some(d);
    }
    if want < lo || want > hi {
        d.note
            .push_str(&format!("; {want} is outside {lo}..={hi}, not applied"));
        return Some(d);
    }
    if let Some(s) = inputs.since_last_change
        && s < f64::from(rule.cooldown_seconds)
    {
        d.note.push_str(&format!(
            "; in cooldown ({s:.0} of {} s), not applied",
            rule.cooldown_seconds
        ));
        return Some(d);
    }
    memory.wanting = None;
    d.applied = true;
    Some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn threshold(cmp: Comparator, t: &str, step: i32) -> Rule {
        Rule {
            id: Uuid::new_v4(),
            mode: RuleMode::Threshold,
            metric_source: MetricSource::InferenceFramework,
            metric_name: "inflight".into(),
            threshold: Some(t.into()),
            comparator: Some(cmp),
            step_size: Some(step),
            target: None,
            scale_up_delay_seconds: 0.0,
            scale_down_delay_seconds: 0.0,
            cooldown_seconds: 60,
            min_replicas: Some(1),
            max_replicas: Some(3),
            priority: 0,
            enabled: true,
            created_at: String::new(),
            last_triggered_at: None,
        }
    }

    fn inputs(replicas: u32, value: f64, since: Option<f64>) -> Inputs {
        Inputs {
            replicas,
            value: Some(value),
            since_last_change: since,
        }
    }

    #[test]
    fn a_threshold_rule_steps_within_bounds_and_cooldown() {
        let r = threshold(Comparator::GreaterThan, "2", 1);
        let mut m = Memory::default();
        assert_eq!(
            decide(&r, inputs(1, 2.0, None), &mut m, 0.0),
            None,
            "2 is not > 2"
        );
        let d = decide(&r, inputs(1, 5.0, None), &mut m, 0.0).unwrap();
        assert!(d.applied && d.to_replicas == 2, "{d:?}");
        let d = decide(&r, inputs(2, 5.0, Some(10.0)), &mut m, 0.0).unwrap();
        assert!(!d.applied && d.note.contains("cooldown"), "{d:?}");
        let d = decide(&r, inputs(3, 5.0, Some(100.0)), &mut m, 0.0).unwrap();
        assert!(!d.applied && d.note.contains("outside"), "{d:?}");
        let down = threshold(Comparator::LessThan, "1", -1);
        let d = decide(&down, inputs(2, 0.0, Some(100.0)), &mut m, 0.0).unwrap();
        assert!(d.applied && d.to_replicas == 1, "{d:?}");
        let d = decide(&down, inputs(1, 0.0, Some(100.0)), &mut m, 0.0).unwrap();
        assert!(!d.applied, "below min_replicas: {d:?}");
    }

    #[test]
    fn disabled_rules_and_missing_metrics_never_fire() {
        let mut r = threshold(Comparator::GreaterThan, "2", 1);
        r.enabled = false;
        assert_eq!(
            decide(&r, inputs(1, 9.0, None), &mut Memory::default(), 0.0),
            None
        );
        r.enabled = true;
        let none = Inputs {
            replicas: 1,
            value: None,
            since_last_change: None,
        };
        assert_eq!(decide(&r, none, &mut Memory::default(), 0.0), None);
    }

    #[test]
    fn a_target_rule_tracks_its_target_after_its_delays() {
        let mut r = threshold(Comparator::GreaterThan, "0", 1);
        r.mode = RuleMode::Target;
        r.target = Some(4.0);
        r.scale_up_delay_seconds = 10.0;
        r.scale_down_delay_seconds = 30.0;
        r.cooldown_seconds = 0;
        r.check().unwrap();
        let mut m = Memory::default();
        // 2 replicas with 7 in flight each: 14 / 4 → 4, capped at max 3, after 10 s.
        assert_eq!(decide(&r, inputs(2, 7.0, None), &mut m, 0.0), None);
        assert_eq!(decide(&r, inputs(2, 7.0, None), &mut m, 9.0), None);
        let d = decide(&r, inputs(2, 7.0, None), &mut m, 10.0).unwrap();
        assert!(d.applied && d.to_replicas == 3, "{d:?}");
        // Load gone: down to min 1, only after 30 s of wanting fewer.
        assert_eq!(decide(&r, inputs(3, 0.0, None), &mut m, 11.0), None);
        assert_eq!(
            decide(&r, inputs(3, 4.0, None), &mut m, 20.0),
            None,
            "back at target resets"
        );
        assert_eq!(decide(&r, inputs(3, 0.0, None), &mut m, 21.0), None);
        let d = decide(&r, inputs(3, 0.0, None), &mut m, 51.0).unwrap();
        assert!(d.applied && d.to_replicas == 1, "{d:?}");
    }

    #[test]
    fn rules_are_checked_naming_the_field() {
        let mut r = threshold(Comparator::GreaterThan, "x", 1);
        assert!(r.check().unwrap_err().contains("threshold"));
        r.threshold = Some("2".into());
        r.step_size = Some(0);
        assert!(r.check().unwrap_err().contains("step_size"));
        r.step_size = Some(1);
        r.metric_name = "gpu".into();
        assert!(r.check().unwrap_err().contains("metric_name"));
        r.metric_name = "inflight".into();
        r.min_replicas = Some(4);
        assert!(r.check().unwrap_err().contains("min_replicas"));
    }
}
