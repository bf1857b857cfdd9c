//! The fields of an auto-scaling rule as clients send them: bai's REST body
//! (`POST /services/{id}/rules`, `PATCH …/rules/{rule}`) and Backend.AI's GraphQL `props`
//! (`create_endpoint_auto_scaling_rule_node`, `modify_…`). Clients write the enum values in
//! either case and numbers as text; [`canonical_rule_props`] rewrites those first, then the
//! body reads as [`RuleFields`] with the field at fault named.

use super::{Comparator, MetricSource, RuleMode};
use crate::read::{ReadError, from_value};
use crate::sessions::NumberOrText;
use crate::spellings::{float_from_text, number_from_text, reword};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// A field that may be given as `null`: `None` not given (unchanged), `Some(None)` given as
/// `null` (cleared, or back to its default), `Some(Some(v))` given.
pub type Nullable<T> = Option<Option<T>>;

/// Reads a present field, `null` included (an absent one is `None` by `default`).
fn given_or_null<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
    d: D,
) -> Result<Nullable<T>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// `POST /services/{id}/rules` and `PATCH …/rules/{rule}`: the fields to set (any of
/// `Rule`'s but `id` and the times; enum values in any case, numbers also as text). A field
/// left out is unchanged; `null` clears it (a bound, the threshold) or sets it back to its
/// default (the delays, the cooldown and the priority to 0). Another field is refused.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleFields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<RuleMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric_source: Option<MetricSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric_name: Option<String>,
    /// A decimal, as a number or a text.
    #[serde(
        default,
        deserialize_with = "given_or_null",
        skip_serializing_if = "Option::is_none"
    )]
    pub threshold: Nullable<NumberOrText>,
    #[serde(
        default,
        deserialize_with = "given_or_null",
        skip_serializing_if = "Option::is_none"
    )]
    pub comparator: Nullable<Comparator>,
    #[serde(
        default,
        deserialize_with = "given_or_null",
        skip_serializing_if = "Option::is_none"
    )]
    pub step_size: Nullable<i32>,
    #[serde(
        default,
        deserialize_with = "given_or_null",
        skip_serializing_if = "Option::is_none"
    )]
    pub target: Nullable<f64>,
    #[serde(
        default,
        deserialize_with = "given_or_null",
        skip_serializing_if = "Option::is_none"
    )]
    pub scale_up_delay_seconds: Nullable<f64>,
    #[serde(
        default,
        deserialize_with = "given_or_null",
        skip_serializing_if = "Option::is_none"
    )]
    pub scale_down_delay_seconds: Nullable<f64>,
    #[serde(
        default,
        deserialize_with = "given_or_null",
        skip_serializing_if = "Option::is_none"
    )]
    pub cooldown_seconds: Nullable<u32>,
    #[serde(
        default,
        deserialize_with = "given_or_null",
        skip_serializing_if = "Option::is_none"
    )]
    pub min_replicas: Nullable<u32>,
    #[serde(
        default,
        deserialize_with = "given_or_null",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_replicas: Nullable<u32>,
    #[serde(
        default,
        deserialize_with = "given_or_null",
        skip_serializing_if = "Option::is_none"
    )]
    pub priority: Nullable<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// Whole-number fields clients may send as text.
const WHOLE: &[&str] = &[
    "step_size",
    "cooldown_seconds",
    "min_replicas",
    "max_replicas",
    "priority",
];
/// Decimal fields clients may send as text.
const DECIMAL: &[&str] = &[
    "target",
    "scale_up_delay_seconds",
    "scale_down_delay_seconds",
];

/// `props` with its enum values in the case the type reads (`mode` lower case,
/// `metric_source` and `comparator` upper case) and its numbers sent as text read as
/// numbers. Anything else is left for the type to accept or refuse.
pub fn canonical_rule_props(mut props: Value) -> Value {
    let Some(obj) = props.as_object_mut() else {
        return props;
    };
    reword(obj, "mode", |s| s.trim().to_ascii_lowercase());
    reword(obj, "metric_source", |s| s.trim().to_ascii_uppercase());
    reword(obj, "comparator", |s| s.trim().to_ascii_uppercase());
    for k in WHOLE {
        number_from_text(obj, k);
    }
    for k in DECIMAL {
        float_from_text(obj, k);
    }
    props
}

impl RuleFields {
    /// Reads a rule's fields in any of the spellings clients use
    /// ([`canonical_rule_props`]); a field that does not read is named.
    pub fn read(props: Value) -> Result<RuleFields, ReadError> {
        from_value(canonical_rule_props(props))
    }

    /// Reads a REST body of a rule; a field that does not read is named in the 400.
    pub fn read_body(body: &[u8]) -> Result<RuleFields, bai_core::Problem> {
        let body = crate::body::Fields::read(body)?.into_value();
        RuleFields::read(body).map_err(|e| super::invalid_params(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn backend_ai_props_in_any_case_and_numbers_as_text_read() {
        let f = RuleFields::read(json!({"metric_source": "inference_framework",
            "metric_name": "inflight", "threshold": "2.5", "comparator": " greater_than",
            "step_size": "1", "cooldown_seconds": 5, "min_replicas": 1, "max_replicas": "3",
            "target": "0.5", "mode": "THRESHOLD"}))
        .unwrap();
        assert_eq!(f.metric_source, Some(MetricSource::InferenceFramework));
        assert_eq!(f.comparator, Some(Some(Comparator::GreaterThan)));
        assert_eq!(f.threshold, Some(Some(NumberOrText::Text("2.5".into()))));
        assert_eq!(f.step_size, Some(Some(1)));
        assert_eq!(f.max_replicas, Some(Some(3)));
        assert_eq!(f.target, Some(Some(0.5)));
        assert_eq!(f.mode, Some(RuleMode::Threshold));
        assert_eq!(f.enabled, None);
    }

    #[test]
    fn null_is_given_and_absent_is_not() {
        let f = RuleFields::read(json!({"min_replicas": null, "threshold": null})).unwrap();
        assert_eq!(f.min_replicas, Some(None));
        assert_eq!(f.threshold, Some(None));
        assert_eq!(f.max_replicas, None);
        // What a client sends is what the server reads.
        let back = serde_json::to_value(&f).unwrap();
        assert_eq!(back, json!({"min_replicas": null, "threshold": null}));
        assert_eq!(RuleFields::read(back).unwrap(), f);
    }

    #[test]
    fn a_field_that_does_not_read_is_named() {
        let e = RuleFields::read(json!({"comparator": "bigger"})).unwrap_err();
        assert_eq!(e.path.as_deref(), Some("comparator"), "{e}");
        let e = RuleFields::read(json!({"metric_source": "prometheus"})).unwrap_err();
        assert_eq!(e.path.as_deref(), Some("metric_source"), "{e}");
        assert!(e.to_string().contains("PROMETHEUS"), "{e}");
        let e = RuleFields::read(json!({"enabled": "yes"})).unwrap_err();
        assert_eq!(e.path.as_deref(), Some("enabled"), "{e}");
        let e = RuleFields::read(json!({"step_size": "one"})).unwrap_err();
        assert_eq!(e.path.as_deref(), Some("step_size"), "{e}");
        let e = RuleFields::read(json!({"colour": 1})).unwrap_err();
        assert!(e.to_string().contains("colour"), "{e}");
    }
}
