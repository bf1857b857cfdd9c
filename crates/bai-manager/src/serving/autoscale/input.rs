//! Rules as clients send and read them: bai's REST body (`mode`, `target`, delays, `enabled`,
//! `priority` besides Backend.AI's fields) and Backend.AI's GraphQL `props` (enum values in
//! either case, `threshold` as text), and the JSON of a rule and of a decision.

use super::rule::{Comparator, Mode, Rule, Source};
use bai_core::Problem;
use bai_store::RuleRow;
use serde_json::{Map, Value, json};
use uuid::Uuid;

fn bad(msg: impl Into<String>) -> Problem {
    Problem::invalid(msg).with_code("api_parsing_invalid-parameters")
}

fn enum_text(v: &Value) -> Option<String> {
    v.as_str().map(|s| s.trim().to_ascii_uppercase())
}

fn parse_source(v: &Value) -> Result<Source, Problem> {
    match enum_text(v).as_deref() {
        Some("KERNEL") => Ok(Source::Kernel),
        Some("INFERENCE_FRAMEWORK") => Ok(Source::InferenceFramework),
        Some("PROMETHEUS") => Err(bad(
            "metric_source PROMETHEUS is not available here: use KERNEL or INFERENCE_FRAMEWORK",
        )),
        _ => Err(bad(format!(
            "metric_source {v} is not KERNEL or INFERENCE_FRAMEWORK"
        ))),
    }
}

fn parse_comparator(v: &Value) -> Result<Comparator, Problem> {
    match enum_text(v).as_deref() {
        Some("LESS_THAN") => Ok(Comparator::LessThan),
        Some("LESS_THAN_OR_EQUAL") => Ok(Comparator::LessThanOrEqual),
        Some("GREATER_THAN") => Ok(Comparator::GreaterThan),
        Some("GREATER_THAN_OR_EQUAL") => Ok(Comparator::GreaterThanOrEqual),
        _ => Err(bad(format!(
            "comparator {v} is not LESS_THAN, LESS_THAN_OR_EQUAL, GREATER_THAN or GREATER_THAN_OR_EQUAL"
        ))),
    }
}

/// A number field, sent as a JSON number or as text; null is none.
fn number<T: std::str::FromStr>(
    v: &Value,
    field: &str,
    what: &str,
    json: impl Fn(&Value) -> Option<T>,
) -> Result<Option<T>, Problem> {
    let parsed = match v {
        Value::Null => return Ok(None),
        Value::String(s) => s.trim().parse().ok(),
        _ => json(v),
    };
    parsed
        .map(Some)
        .ok_or_else(|| bad(format!("{field} {v} is not {what}")))
}

fn int(v: &Value, field: &str) -> Result<Option<i64>, Problem> {
    number(v, field, "a whole number", Value::as_i64)
}

fn float(v: &Value, field: &str) -> Result<Option<f64>, Problem> {
    number(v, field, "a number", Value::as_f64)
}

fn count(v: &Value, field: &str) -> Result<Option<u32>, Problem> {
    int(v, field)?
        .map(|n| u32::try_from(n).map_err(|_| bad(format!("{field} {n} must be 0 or more"))))
        .transpose()
}

/// Applies the fields of `props` to `rule` (a new rule starts from [`blank`]); unknown fields
/// are refused by name. The result is checked as a whole.
pub fn apply(rule: &mut Rule, props: &Map<String, Value>) -> Result<(), Problem> {
    for (k, v) in props {
        match k.as_str() {
            "mode" => {
                rule.mode = match v.as_str().map(str::to_ascii_lowercase).as_deref() {
                    Some("threshold") => Mode::Threshold,
                    Some("target") => Mode::Target,
                    _ => return Err(bad(format!("mode {v} is not threshold or target"))),
                }
            }
            "metric_source" => rule.metric_source = parse_source(v)?,
            "metric_name" => {
                rule.metric_name = v
                    .as_str()
                    .ok_or_else(|| bad("metric_name must be a string"))?
                    .trim()
                    .to_string()
            }
            "threshold" => {
                rule.threshold = match v {
                    Value::Null => None,
                    Value::String(s) => Some(s.trim().to_string()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => return Err(bad(format!("threshold {v} must be a number"))),
                }
            }
            "comparator" => {
                rule.comparator = if v.is_null() {
                    None
                } else {
                    Some(parse_comparator(v)?)
                }
            }
            "step_size" => {
                rule.step_size = int(v, k)?
                    .map(|n| i32::try_from(n).map_err(|_| bad("step_size is too large")))
                    .transpose()?
            }
            "target" => rule.target = float(v, k)?,
            "scale_up_delay_seconds" => rule.scale_up_delay_seconds = float(v, k)?.unwrap_or(0.0),
            "scale_down_delay_seconds" => {
                rule.scale_down_delay_seconds = float(v, k)?.unwrap_or(0.0)
            }
            "cooldown_seconds" => rule.cooldown_seconds = count(v, k)?.unwrap_or(0),
            "min_replicas" => rule.min_replicas = count(v, k)?,
            "max_replicas" => rule.max_replicas = count(v, k)?,
            "priority" => {
                rule.priority = int(v, k)?
                    .unwrap_or(0)
                    .clamp(i64::from(i32::MIN), i64::from(i32::MAX))
                    as i32
            }
            "enabled" => {
                rule.enabled = v
                    .as_bool()
                    .ok_or_else(|| bad(format!("enabled {v} must be true or false")))?
            }
            other => {
                return Err(bad(format!(
                    "{other:?} is not a field of an auto-scaling rule"
                )));
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_ai_props_in_any_case_make_a_rule() {
        let mut r = blank();
        let props = json!({"metric_source": "inference_framework", "metric_name": "inflight",
            "threshold": "2.5", "comparator": "greater_than", "step_size": 1,
            "cooldown_seconds": 5, "min_replicas": 1, "max_replicas": 3});
        apply(&mut r, props.as_object().unwrap()).unwrap();
        assert_eq!(r.comparator, Some(Comparator::GreaterThan));
        assert_eq!(r.metric_source, Source::InferenceFramework);
        assert_eq!(r.threshold.as_deref(), Some("2.5"));
        let e = apply(&mut r, json!({"comparator": "bigger"}).as_object().unwrap()).unwrap_err();
        assert!(e.msg.contains("comparator"), "{e:?}");
        let e = apply(&mut r, json!({"colour": 1}).as_object().unwrap()).unwrap_err();
        assert!(e.msg.contains("colour"), "{e:?}");
        let node = rule_node(&r, Uuid::nil());
        assert_eq!(node["comparator"], "GREATER_THAN");
        assert_eq!(node["metric_source"], "INFERENCE_FRAMEWORK");
    }
}
