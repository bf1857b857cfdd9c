//! Rules as the store keeps them and as both APIs start from them (a new rule's defaults,
//! a stored row's rule, the JSON of a rule and Backend.AI's GraphQL node). Reading a rule's
//! fields from a client's body is the HTTP edge's.

use bai_core::Problem;
use bai_core::serving::autoscale::{MetricSource, Rule, RuleMode};
use bai_store::RuleRow;
use serde_json::{Value, json};
use uuid::Uuid;

/// A rule with the defaults of a new one (threshold mode, cooldown 300 s, enabled).
pub fn blank() -> Rule {
    Rule {
        id: Uuid::new_v4(),
        mode: RuleMode::Threshold,
        metric_source: MetricSource::InferenceFramework,
        metric_name: String::new(),
        threshold: None,
        comparator: None,
        step_size: None,
        target: None,
        scale_up_delay_seconds: 0.0,
        scale_down_delay_seconds: 0.0,
        cooldown_seconds: 300,
        min_replicas: None,
        max_replicas: None,
        priority: 0,
        enabled: true,
        created_at: String::new(),
        last_triggered_at: None,
    }
}

/// The rule of a stored row (its times from the row).
pub fn from_row(row: &RuleRow) -> Result<Rule, Problem> {
    let mut r: Rule = serde_json::from_str(&row.rule)
        .map_err(|e| Problem::internal(format!("rule {} is unreadable: {e}", row.id)))?;
    r.id = row.id;
    r.created_at = row.created_at.clone();
    r.last_triggered_at = row.last_triggered_at.clone();
    Ok(r)
}

/// A rule as JSON, as both APIs start from it.
pub fn rule_json(r: &Rule) -> Value {
    serde_json::to_value(r).unwrap_or(Value::Null)
}

/// A rule as Backend.AI's GraphQL `EndpointAutoScalingRuleNode` (plus bai's fields).
pub fn rule_node(r: &Rule, endpoint: Uuid) -> Value {
    let mut v = rule_json(r);
    v["row_id"] = json!(r.id.to_string());
    v["endpoint"] = json!(endpoint.to_string());
    v
}
