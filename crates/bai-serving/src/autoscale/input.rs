//! Rules as clients send and read them: bai's REST body (`mode`, `target`, delays, `enabled`,
//! `priority` besides Backend.AI's fields) and Backend.AI's GraphQL `props` (enum values in
//! either case, `threshold` as text), and the JSON of a rule and of a decision.

use super::rule::{Mode, Rule, Source};
use bai_api::services::RuleFields;
use bai_core::Problem;
use bai_store::RuleRow;
use serde_json::{Value, json};
use uuid::Uuid;

fn bad(msg: impl Into<String>) -> Problem {
    Problem::invalid(msg).with_code("api_parsing_invalid-parameters")
}

/// Reads a rule's fields (a REST body or GraphQL `props`): enum values in either case,
/// numbers as text; a field that does not read, or is not a rule's, is named.
pub fn read(props: Value) -> Result<RuleFields, Problem> {
    RuleFields::read(props).map_err(|e| bad(e.to_string()))
}

/// Applies `fields` to `rule` (a new rule starts from [`blank`]). The result is checked as a
/// whole.
pub fn apply(rule: &mut Rule, fields: &RuleFields) -> Result<(), Problem> {
    let f = fields.clone();
    if let Some(mode) = f.mode {
        rule.mode = mode;
    }
    if let Some(source) = f.metric_source {
        rule.metric_source = source;
    }
    if let Some(name) = f.metric_name {
        rule.metric_name = name.trim().to_string();
    }
    if let Some(t) = f.threshold {
        rule.threshold = t.map(|t| t.to_string().trim().to_string());
    }
    if let Some(c) = f.comparator {
        rule.comparator = c;
    }
    if let Some(n) = f.step_size {
        rule.step_size = n;
    }
    if let Some(t) = f.target {
        rule.target = t;
    }
    if let Some(d) = f.scale_up_delay_seconds {
        rule.scale_up_delay_seconds = d.unwrap_or(0.0);
    }
    if let Some(d) = f.scale_down_delay_seconds {
        rule.scale_down_delay_seconds = d.unwrap_or(0.0);
    }
    if let Some(c) = f.cooldown_seconds {
        rule.cooldown_seconds = c.unwrap_or(0);
    }
    if let Some(n) = f.min_replicas {
        rule.min_replicas = n;
    }
    if let Some(n) = f.max_replicas {
        rule.max_replicas = n;
    }
    if let Some(p) = f.priority {
        rule.priority = p.unwrap_or(0);
    }
    if let Some(e) = f.enabled {
        rule.enabled = e;
    }
    rule.check().map_err(bad)
}

/// A rule with the defaults of a new one (threshold mode, cooldown 300 s, enabled).
pub fn blank() -> Rule {
    Rule {
        id: Uuid::new_v4(),
        mode: Mode::Threshold,
        metric_source: Source::InferenceFramework,
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

/// A rule as bai's REST API shows it.
pub fn wire(r: &Rule) -> bai_api::services::Rule {
    bai_api::services::Rule {
        id: r.id.to_string(),
        mode: r.mode,
        metric_source: r.metric_source,
        metric_name: r.metric_name.clone(),
        threshold: r.threshold.clone(),
        comparator: r.comparator,
        step_size: r.step_size,
        target: r.target,
        scale_up_delay_seconds: r.scale_up_delay_seconds,
        scale_down_delay_seconds: r.scale_down_delay_seconds,
        cooldown_seconds: r.cooldown_seconds,
        min_replicas: r.min_replicas,
        max_replicas: r.max_replicas,
        priority: r.priority,
        enabled: r.enabled,
        created_at: r.created_at.clone(),
        last_triggered_at: r.last_triggered_at.clone(),
    }
}

/// A rule as JSON, as both APIs start from it.
pub fn rule_json(r: &Rule) -> Value {
    serde_json::to_value(wire(r)).unwrap_or(Value::Null)
}

/// A rule as Backend.AI's GraphQL `EndpointAutoScalingRuleNode` (plus bai's fields).
pub fn rule_node(r: &Rule, endpoint: Uuid) -> Value {
    let mut v = rule_json(r);
    v["row_id"] = json!(r.id.to_string());
    v["endpoint"] = json!(endpoint.to_string());
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::rule::Comparator;

    fn props(v: Value) -> RuleFields {
        read(v).unwrap()
    }

    #[test]
    fn backend_ai_props_in_any_case_make_a_rule() {
        let mut r = blank();
        let p = props(
            json!({"metric_source": "inference_framework", "metric_name": " inflight",
            "threshold": 2.5, "comparator": "greater_than", "step_size": 1,
            "cooldown_seconds": 5, "min_replicas": 1, "max_replicas": 3}),
        );
        apply(&mut r, &p).unwrap();
        assert_eq!(r.comparator, Some(Comparator::GreaterThan));
        assert_eq!(r.metric_source, Source::InferenceFramework);
        assert_eq!(r.metric_name, "inflight");
        assert_eq!(r.threshold.as_deref(), Some("2.5"));
        let e = read(json!({"comparator": "bigger"})).unwrap_err();
        assert!(e.msg.starts_with("comparator"), "{e:?}");
        let e = read(json!({"colour": 1})).unwrap_err();
        assert!(e.msg.contains("colour"), "{e:?}");
        let node = rule_node(&r, Uuid::nil());
        assert_eq!(node["comparator"], "GREATER_THAN");
        assert_eq!(node["metric_source"], "INFERENCE_FRAMEWORK");
    }

    #[test]
    fn null_clears_a_bound_and_leaving_a_field_out_keeps_it() {
        let mut r = blank();
        let p = props(
            json!({"metric_name": "inflight", "threshold": "2", "comparator": "LESS_THAN",
            "step_size": -1, "min_replicas": 1, "max_replicas": 3, "priority": 4}),
        );
        apply(&mut r, &p).unwrap();
        apply(
            &mut r,
            &props(json!({"min_replicas": null, "priority": null})),
        )
        .unwrap();
        assert_eq!(r.min_replicas, None);
        assert_eq!(r.max_replicas, Some(3));
        assert_eq!(r.priority, 0);
        // A change that breaks the rule as a whole is refused, naming the field.
        let e = apply(&mut r, &props(json!({"min_replicas": 5}))).unwrap_err();
        assert!(e.msg.starts_with("min_replicas"), "{e:?}");
    }
}
