//! Backend.AI's GraphQL for auto-scaling rules, as `backend.ai service auto-scaling-rule …`
//! calls it: `endpoint_auto_scaling_rule_nodes` (a relay connection), `…_node`, and the
//! create / modify / delete mutations (enum values in either case).

use super::{err, problem};
use crate::api::service_rules::{create_rule, modify_rule, rule_of};
use crate::api::services::visible_service;
use crate::auth::Caller;
use crate::state::Manager;
use bai_api::services::RuleFields;
use bai_gql::FieldError;
use bai_serving::autoscale::input::{from_row, rule_node};
use serde_json::{Map, Value, json};

fn text<'a>(args: &'a Map<String, Value>, k: &str) -> Result<&'a str, FieldError> {
    args.get(k)
        .and_then(Value::as_str)
        .ok_or_else(|| err(format!("{k} is required")))
}

/// The mutation's `props`, read as a rule's fields (enum values in either case).
fn props(args: &Map<String, Value>) -> Result<RuleFields, FieldError> {
    let props = args
        .get("props")
        .filter(|p| p.is_object())
        .ok_or_else(|| err("props is required"))?;
    crate::api::rule_input::read(props.clone()).map_err(problem)
}

pub fn resolve(
    m: &Manager,
    caller: &Caller,
    field: &str,
    args: &Map<String, Value>,
) -> Result<Value, FieldError> {
    match field {
        "endpoint_auto_scaling_rule_nodes" => {
            let e =
                visible_service(m, caller, text(args, "endpoint")?).map_err(|p| err(p.0.msg))?;
            let rows = m.store.rules_of(e.id).map_err(|x| err(x.to_string()))?;
            let nodes: Vec<Value> = rows
                .iter()
                .filter_map(|r| from_row(r).ok())
                .map(|r| rule_node(&r, e.id))
                .collect();
            let count = nodes.len();
            let offset = args.get("offset").and_then(Value::as_u64).unwrap_or(0) as usize;
            let first = args.get("first").and_then(Value::as_u64).unwrap_or(100) as usize;
            let edges: Vec<Value> = nodes
                .into_iter()
                .skip(offset)
                .take(first)
                .map(|n| {
                    let cursor = n["row_id"].clone();
                    json!({"node": n, "cursor": cursor})
                })
                .collect();
            Ok(json!({"edges": edges, "count": count}))
        }
        "endpoint_auto_scaling_rule_node" => {
            let (row, e) = rule_of(m, caller, text(args, "id")?).map_err(problem)?;
            let rule = from_row(&row).map_err(problem)?;
            Ok(rule_node(&rule, e.id))
        }
        "create_endpoint_auto_scaling_rule_node" => {
            let e =
                visible_service(m, caller, text(args, "endpoint")?).map_err(|p| err(p.0.msg))?;
            let rule = create_rule(m, &e, &props(args)?).map_err(problem)?;
            Ok(json!({"ok": true, "msg": "", "rule": rule_node(&rule, e.id)}))
        }
        "modify_endpoint_auto_scaling_rule_node" => {
            let (rule, e) =
                modify_rule(m, caller, text(args, "id")?, &props(args)?).map_err(problem)?;
            Ok(json!({"ok": true, "msg": "", "rule": rule_node(&rule, e.id)}))
        }
        "delete_endpoint_auto_scaling_rule_node" => {
            let (row, _) = rule_of(m, caller, text(args, "id")?).map_err(problem)?;
            m.store
                .delete_rule(row.id)
                .map_err(|x| err(x.to_string()))?;
            Ok(json!({"ok": true, "msg": ""}))
        }
        other => Err(err(format!(
            "field {other:?} is not available on this server"
        ))),
    }
}
