//! A rule's fields as clients send them (bai's REST body, Backend.AI's GraphQL `props`: enum
//! values in either case, `threshold` as text) applied to a domain rule at the edge; the rule
//! then checks itself as a whole.

use bai_api::services::RuleFields;
use bai_core::Problem;
use bai_core::serving::autoscale::Rule;
use serde_json::Value;

fn bad(msg: impl Into<String>) -> Problem {
    Problem::invalid(msg).with_code("api_parsing_invalid-parameters")
}

/// Reads a rule's fields (a REST body or GraphQL `props`): enum values in either case,
/// numbers as text; a field that does not read, or is not a rule's, is named.
pub fn read(props: Value) -> Result<RuleFields, Problem> {
    RuleFields::read(props).map_err(|e| bad(e.to_string()))
}

/// Applies `fields` to `rule` (a new rule starts from `bai_serving::autoscale::input::blank`). The result is checked as a
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

#[cfg(test)]
mod tests {
    use super::*;

    use bai_core::serving::autoscale::{Comparator, MetricSource};
    use bai_serving::autoscale::input::{blank, rule_node};
    use serde_json::json;
    use uuid::Uuid;

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
        assert_eq!(r.metric_source, MetricSource::InferenceFramework);
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
