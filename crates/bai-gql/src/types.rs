//! The input types a variable may be declared with (legacy Graphene schema), and the input
//! coercion of a variable's JSON value to its declared type.

use graphql_parser::query::Type;
use serde_json::{Map, Value};

/// Named scalar types a variable may be declared with.
const SCALARS: &[&str] = &[
    "Int",
    "Float",
    "String",
    "Boolean",
    "ID",
    "UUID",
    "GlobalIDField",
    "JSONString",
    "DateTime",
    "BigInt",
];

/// One field of an input object type: name, named type, required.
type InputField = (&'static str, &'static str, bool);

/// Enum types a variable may be declared with, and their values. A value is accepted in any
/// case (the official client sends `kernel` and `greater_than` where the schema says
/// `KERNEL` and `GREATER_THAN`) and passed on as the schema writes it.
const ENUMS: &[(&str, &[&str])] = &[
    (
        "AutoScalingMetricSource",
        &["KERNEL", "INFERENCE_FRAMEWORK", "PROMETHEUS"],
    ),
    (
        "AutoScalingMetricComparator",
        &[
            "LESS_THAN",
            "LESS_THAN_OR_EQUAL",
            "GREATER_THAN",
            "GREATER_THAN_OR_EQUAL",
        ],
    ),
];

/// Input object types a variable may be declared with, and the fields we know of.
/// Fields not listed here are passed through unchanged.
const INPUTS: &[(&str, &[InputField])] = &[
    (
        "ModifyComputeSessionInput",
        &[
            ("id", "GlobalIDField", true),
            ("name", "String", false),
            ("priority", "Int", false),
            ("clientMutationId", "String", false),
        ],
    ),
    (
        "ModifyEndpointAutoScalingRuleInput",
        &[
            ("metric_source", "AutoScalingMetricSource", false),
            ("metric_name", "String", false),
            ("threshold", "String", false),
            ("comparator", "AutoScalingMetricComparator", false),
            ("step_size", "Int", false),
            ("cooldown_seconds", "Int", false),
            ("min_replicas", "Int", false),
            ("max_replicas", "Int", false),
        ],
    ),
    (
        "PurgeImageOptions",
        &[("remove_from_registry", "Boolean", false)],
    ),
    ("CreateUserResourcePolicyInput", USER_POLICY_FIELDS),
    ("ModifyUserResourcePolicyInput", USER_POLICY_FIELDS),
    ("ModifyUserInput", USER_FIELDS),
    ("UserInput", USER_FIELDS),
    (
        "PurgeUserInput",
        &[
            ("purge_shared_vfolders", "Boolean", false),
            ("delegate_endpoint_ownership", "Boolean", false),
        ],
    ),
    ("DomainInput", DOMAIN_FIELDS),
    ("ModifyDomainInput", DOMAIN_FIELDS),
    ("GroupInput", GROUP_FIELDS),
    ("ModifyGroupInput", GROUP_FIELDS),
    (
        "KeyPairInput",
        &[
            ("is_active", "Boolean", false),
            ("is_admin", "Boolean", false),
            ("resource_policy", "String", false),
            ("concurrency_limit", "Int", false),
            ("rate_limit", "Int", false),
        ],
    ),
    ("CreateKeyPairResourcePolicyInput", KEYPAIR_POLICY_FIELDS),
    ("ModifyKeyPairResourcePolicyInput", KEYPAIR_POLICY_FIELDS),
    ("CreateScalingGroupInput", SCALING_GROUP_FIELDS),
    ("ModifyScalingGroupInput", SCALING_GROUP_FIELDS),
    (
        "ModifyKeyPairInput",
        &[
            ("is_active", "Boolean", false),
            ("is_admin", "Boolean", false),
            ("resource_policy", "String", false),
            ("concurrency_limit", "Int", false),
            ("rate_limit", "Int", false),
        ],
    ),
];

/// The limits of a user resource policy, as the official client sends them.
const USER_FIELDS: &[InputField] = &[
    ("username", "String", false),
    ("password", "String", false),
    ("need_password_change", "Boolean", false),
    ("full_name", "String", false),
    ("description", "String", false),
    ("is_active", "Boolean", false),
    ("status", "String", false),
    ("domain_name", "String", false),
    ("role", "String", false),
    ("group_ids", "[String]", false),
    ("allowed_client_ip", "[String]", false),
    ("totp_activated", "Boolean", false),
    ("resource_policy", "String", false),
    ("sudo_session_enabled", "Boolean", false),
    ("main_access_key", "String", false),
];

const DOMAIN_FIELDS: &[InputField] = &[
    ("name", "String", false),
    ("description", "String", false),
    ("is_active", "Boolean", false),
    ("total_resource_slots", "JSONString", false),
    ("allowed_vfolder_hosts", "JSONString", false),
    ("allowed_docker_registries", "[String]", false),
    ("integration_id", "String", false),
];

const GROUP_FIELDS: &[InputField] = &[
    ("name", "String", false),
    ("description", "String", false),
    ("is_active", "Boolean", false),
    ("domain_name", "String", false),
    ("total_resource_slots", "JSONString", false),
    ("allowed_vfolder_hosts", "JSONString", false),
    ("integration_id", "String", false),
    ("resource_policy", "String", false),
    ("user_update_mode", "String", false),
    ("user_uuids", "[String]", false),
];

const KEYPAIR_POLICY_FIELDS: &[InputField] = &[
    ("default_for_unspecified", "String", false),
    ("total_resource_slots", "JSONString", false),
    ("max_session_lifetime", "Int", false),
    ("max_concurrent_sessions", "Int", false),
    ("max_concurrent_sftp_sessions", "Int", false),
    ("max_containers_per_session", "Int", false),
    ("idle_timeout", "BigInt", false),
    ("allowed_vfolder_hosts", "JSONString", false),
    ("max_pending_session_count", "Int", false),
    ("max_pending_session_resource_slots", "JSONString", false),
];

const SCALING_GROUP_FIELDS: &[InputField] = &[
    ("description", "String", false),
    ("is_active", "Boolean", false),
    ("is_public", "Boolean", false),
    ("wsproxy_addr", "String", false),
    ("wsproxy_api_token", "String", false),
    ("driver", "String", false),
    ("driver_opts", "JSONString", false),
    ("scheduler", "String", false),
    ("scheduler_opts", "JSONString", false),
    ("use_host_network", "Boolean", false),
];

const USER_POLICY_FIELDS: &[InputField] = &[
    ("max_vfolder_count", "Int", false),
    ("max_quota_scope_size", "BigInt", false),
    ("max_session_count_per_model_session", "Int", false),
    ("max_customized_image_count", "Int", false),
];

pub type GType<'a> = Type<'a, String>;

/// The named type under any list and non-null wrappers.
pub fn base_name<'b>(t: &'b GType<'_>) -> &'b str {
    match t {
        Type::NamedType(n) => n,
        Type::ListType(inner) | Type::NonNullType(inner) => base_name(inner),
    }
}

/// Whether the named type exists in the schema (as a scalar or an input object).
pub fn is_known(name: &str) -> bool {
    SCALARS.contains(&name)
        || INPUTS.iter().any(|(n, _)| *n == name)
        || ENUMS.iter().any(|(n, _)| *n == name)
}

/// A short rendering of a value for error messages.
fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        let cut: String = s.chars().take(57).collect();
        format!("{cut}...")
    } else {
        s
    }
}

/// Coerces a provided variable value to the declared type `t` (GraphQL input coercion):
/// `null` is refused for non-null types, a single value given for a list type becomes a
/// one-element list, and scalars are checked. The error is a plain description.
pub fn coerce(t: &GType<'_>, v: Value) -> Result<Value, String> {
    match t {
        Type::NonNullType(inner) => {
            if v.is_null() {
                Err(format!("null is not allowed for {t}"))
            } else {
                coerce(inner, v)
            }
        }
        Type::ListType(inner) => match v {
            Value::Null => Ok(Value::Null),
            Value::Array(items) => items
                .into_iter()
                .map(|i| coerce(inner, i))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array),
            single => Ok(Value::Array(vec![coerce(inner, single)?])),
        },
        Type::NamedType(name) => {
            if v.is_null() {
                Ok(Value::Null)
            } else {
                coerce_named(name, v)
            }
        }
    }
}

fn expected(what: &str, v: &Value) -> String {
    format!("expected {what}, got {}", show(v))
}

/// Python's `uuid.UUID(str)` leniency: optional `urn:`/`uuid:` prefix, braces and dashes,
/// then exactly 32 hex digits.
pub fn is_uuid(s: &str) -> bool {
    let s = s.trim();
    let s = s.strip_prefix("urn:").unwrap_or(s);
    let s = s.strip_prefix("uuid:").unwrap_or(s);
    let s = s.trim_matches(|c| c == '{' || c == '}');
    let hex: Vec<char> = s.chars().filter(|c| *c != '-').collect();
    hex.len() == 32 && hex.iter().all(char::is_ascii_hexdigit)
}

fn coerce_int(v: Value, min: i64, max: i64, what: &str) -> Result<Value, String> {
    let n = match &v {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64)),
        _ => None,
    };
    match n {
        Some(n) if (min..=max).contains(&n) => Ok(Value::from(n)),
        _ => Err(expected(what, &v)),
    }
}

fn coerce_named(name: &str, v: Value) -> Result<Value, String> {
    match name {
        "Int" => coerce_int(
            v,
            i32::MIN.into(),
            i32::MAX.into(),
            "an Int (32-bit integer)",
        ),
        "BigInt" => match v {
            Value::String(s) => s
                .trim()
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| expected("a BigInt", &Value::String(s))),
            other => coerce_int(other, i64::MIN, i64::MAX, "a BigInt"),
        },
        "Float" if v.is_number() => Ok(v),
        "Float" => Err(expected("a Float", &v)),
        "Boolean" if v.is_boolean() => Ok(v),
        "Boolean" => Err(expected("a Boolean", &v)),
        "String" | "DateTime" | "GlobalIDField" if v.is_string() => Ok(v),
        "String" | "DateTime" | "GlobalIDField" => Err(expected("a String", &v)),
        "ID" => match v {
            Value::String(_) => Ok(v),
            Value::Number(ref n) if n.is_i64() || n.is_u64() => Ok(Value::String(n.to_string())),
            other => Err(expected("an ID (string or integer)", &other)),
        },
        "UUID" => match v.as_str() {
            Some(s) if is_uuid(s) => Ok(v),
            _ => Err(expected("a UUID", &v)),
        },
        // Graphene decodes a JSONString input; the resolver receives the text unchanged.
        "JSONString" => match v.as_str() {
            Some(s) if serde_json::from_str::<Value>(s).is_ok() => Ok(v),
            _ => Err(expected("a string holding JSON", &v)),
        },
        _ => {
            if let Some((_, values)) = ENUMS.iter().find(|(n, _)| *n == name) {
                return match v.as_str() {
                    Some(s) => values
                        .iter()
                        .find(|x| x.eq_ignore_ascii_case(s.trim()))
                        .map(|x| Value::String((*x).to_string()))
                        .ok_or_else(|| {
                            format!("{s:?} is not a {name}: use one of {}", values.join(", "))
                        }),
                    None => Err(expected(&format!("a {name}"), &v)),
                };
            }
            match INPUTS.iter().find(|(n, _)| *n == name) {
                Some((_, fields)) => coerce_input(name, fields, v),
                None => Err(format!("unknown type {name:?}")),
            }
        }
    }
}

fn coerce_input(name: &str, fields: &[InputField], v: Value) -> Result<Value, String> {
    let Value::Object(obj) = v else {
        return Err(expected(&format!("a {name} object"), &v));
    };
    for (field, ty, required) in fields {
        if *required && obj.get(*field).is_none_or(Value::is_null) {
            return Err(format!("{name}.{field} of type {ty}! is required"));
        }
    }
    // Known fields are checked; fields this schema does not list pass through unchanged.
    let mut out = Map::new();
    for (k, fv) in obj {
        let fv = match fields.iter().find(|(f, _, _)| *f == k) {
            Some((_, ty, _)) => {
                coerce_named_or_null(ty, fv).map_err(|e| format!("{name}.{k}: {e}"))?
            }
            None => fv,
        };
        out.insert(k, fv);
    }
    Ok(Value::Object(out))
}

/// An input field's value: `name` is a named type or a list of one (`[String]`); a single
/// value where a list is declared is a list of one, as GraphQL's input coercion says.
fn coerce_named_or_null(name: &str, v: Value) -> Result<Value, String> {
    if v.is_null() {
        return Ok(v);
    }
    match name.strip_prefix('[').and_then(|n| n.strip_suffix(']')) {
        Some(item) => match v {
            Value::Array(items) => items
                .into_iter()
                .map(|i| coerce_named_or_null(item, i))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array),
            one => Ok(Value::Array(vec![coerce_named_or_null(item, one)?])),
        },
        None => coerce_named(name, v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ty(src: &str) -> GType<'static> {
        // Parse a type through a variable declaration.
        let q = format!("query($v: {src}) {{ a }}");
        let doc = graphql_parser::parse_query::<String>(&q)
            .unwrap()
            .into_static();
        match doc.definitions.into_iter().next().unwrap() {
            graphql_parser::query::Definition::Operation(
                graphql_parser::query::OperationDefinition::Query(q),
            ) => q.variable_definitions.into_iter().next().unwrap().var_type,
            _ => unreachable!(),
        }
    }

    #[test]
    fn list_fields_of_inputs_are_checked_item_by_item() {
        let ok = coerce(
            &ty("DomainInput!"),
            json!({"allowed_docker_registries": ["a", "b"], "total_resource_slots": "{}"}),
        )
        .unwrap();
        assert_eq!(ok["allowed_docker_registries"], json!(["a", "b"]));
        let one = coerce(
            &ty("DomainInput"),
            json!({"allowed_docker_registries": "a"}),
        )
        .unwrap();
        assert_eq!(one["allowed_docker_registries"], json!(["a"]));
        let bad = coerce(
            &ty("DomainInput"),
            json!({"allowed_docker_registries": [1]}),
        );
        assert!(bad.unwrap_err().contains("allowed_docker_registries"));
        let json_text = coerce(&ty("DomainInput"), json!({"total_resource_slots": "{"}));
        assert!(json_text.is_err());
    }

    #[test]
    fn auto_scaling_enums_take_any_case_and_refuse_other_values() {
        let t = ty("AutoScalingMetricSource!");
        assert_eq!(coerce(&t, json!("kernel")).unwrap(), json!("KERNEL"));
        assert_eq!(
            coerce(&t, json!("INFERENCE_FRAMEWORK")).unwrap(),
            json!("INFERENCE_FRAMEWORK")
        );
        assert!(coerce(&t, json!("disk")).unwrap_err().contains("KERNEL"));
        let c = ty("AutoScalingMetricComparator!");
        assert_eq!(
            coerce(&c, json!("greater_than")).unwrap(),
            json!("GREATER_THAN")
        );
        let input = ty("ModifyEndpointAutoScalingRuleInput!");
        assert_eq!(
            coerce(&input, json!({"comparator": "less_than", "step_size": -1})).unwrap(),
            json!({"comparator": "LESS_THAN", "step_size": -1})
        );
    }

    #[test]
    fn the_client_types_are_known_and_others_are_not() {
        for n in [
            "Int",
            "String",
            "UUID",
            "GlobalIDField",
            "ModifyComputeSessionInput",
            "Boolean",
            "Float",
            "ID",
            "JSONString",
        ] {
            assert!(is_known(n), "{n}");
        }
        assert!(!is_known("Bogus"));
        assert!(!is_known("int"));
        assert_eq!(base_name(&ty("[UUID!]!")), "UUID");
    }

    #[test]
    fn scalars_are_checked() {
        assert_eq!(coerce(&ty("Int!"), json!(20)).unwrap(), json!(20));
        assert_eq!(coerce(&ty("Int"), json!(20.0)).unwrap(), json!(20));
        assert!(coerce(&ty("Int"), json!("20")).is_err());
        assert!(coerce(&ty("Int"), json!(1.5)).is_err());
        assert!(coerce(&ty("Int"), json!(3_000_000_000_i64)).is_err());
        assert!(coerce(&ty("Int!"), Value::Null).is_err());
        assert_eq!(coerce(&ty("Int"), Value::Null).unwrap(), Value::Null);
        assert_eq!(coerce(&ty("Float"), json!(2)).unwrap(), json!(2));
        assert!(coerce(&ty("Boolean"), json!(1)).is_err());
        assert!(coerce(&ty("String"), json!(1)).is_err());
        assert_eq!(coerce(&ty("ID"), json!(7)).unwrap(), json!("7"));
        assert_eq!(
            coerce(&ty("BigInt"), json!("9000000000")).unwrap(),
            json!(9_000_000_000_i64)
        );
        let u = "6e2f5b5e-3f0a-4e8c-9d1b-2a7c4f0e9b11";
        assert_eq!(coerce(&ty("UUID!"), json!(u)).unwrap(), json!(u));
        assert!(coerce(&ty("UUID!"), json!("mysess")).is_err());
        assert!(is_uuid("{6E2F5B5E3F0A4E8C9D1B2A7C4F0E9B11}"));
        assert!(is_uuid(&format!("urn:uuid:{u}")));
        assert!(coerce(&ty("JSONString"), json!("{\"a\": 1}")).is_ok());
        assert!(coerce(&ty("JSONString"), json!({"a": 1})).is_err());
    }

    #[test]
    fn lists_wrap_single_values_and_check_items() {
        assert_eq!(coerce(&ty("[Int]"), json!(1)).unwrap(), json!([1]));
        assert_eq!(
            coerce(&ty("[Int]"), json!([1, null])).unwrap(),
            json!([1, null])
        );
        assert!(coerce(&ty("[Int!]"), json!([1, null])).is_err());
        assert!(coerce(&ty("[Int]"), json!(["x"])).is_err());
    }

    #[test]
    fn input_objects_check_known_fields_and_keep_others() {
        let t = ty("ModifyComputeSessionInput!");
        let v = coerce(
            &t,
            json!({"id": "s", "clientMutationId": "m", "priority": 5, "extra": true}),
        )
        .unwrap();
        assert_eq!(
            v,
            json!({"id": "s", "clientMutationId": "m", "priority": 5, "extra": true})
        );
        assert!(
            coerce(&t, json!({"priority": 5}))
                .unwrap_err()
                .contains("id")
        );
        assert!(coerce(&t, json!({"id": "s", "priority": "high"})).is_err());
        assert!(coerce(&t, json!("s")).is_err());
    }
}
