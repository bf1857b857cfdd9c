//! The verbatim queries of the official client (wire contract §5.1, §7).

use bai_gql::{FieldError, OperationKind, Request, Resolver, execute};
use serde_json::{Map, Value, json};
use std::cell::RefCell;

/// What the resolver was asked: kind, field and arguments.
type Seen = Vec<(OperationKind, String, Map<String, Value>)>;

struct Fake {
    seen: RefCell<Seen>,
}

fn session() -> Value {
    // More fields than any query selects, in a different order.
    json!({
        "status_info": null, "result": "UNDEFINED", "extra": 1, "type": "interactive",
        "status_changed": "2026-01-01T00:00:00+00:00", "image": "python", "id": "s-1",
        "group_name": "default", "status": "RUNNING", "priority": 10, "name": "mysess",
        "access_key": "AK", "main_kernel_id": "k-1", "tag": null, "created_at": "t0",
        "terminated_at": null, "status_data": "{}", "occupying_slots": "{\"cpu\": \"1\"}",
        "idle_checks": "{}", "dependencies": [],
        "containers": [{"id": "k-1", "agent": "a1", "status": "RUNNING", "junk": true}],
        "kernel_nodes": {"edges": [{"node": {"row_id": "k-1", "agent_id": "a1", "status": "RUNNING",
            "image_reference": "python", "created_at": "t0", "other": 2}}]},
        "vfolder_mounts": ["vf"],
    })
}

impl Resolver for Fake {
    fn resolve(
        &self,
        kind: OperationKind,
        field: &str,
        args: &Map<String, Value>,
    ) -> Result<Value, FieldError> {
        self.seen
            .borrow_mut()
            .push((kind, field.to_string(), args.clone()));
        match field {
            "compute_session_list" => Ok(json!({"total_count": 1, "items": [session()]})),
            "keypair" => Ok(
                json!({"is_admin": false, "secret_key": "SK", "access_key": "AK", "user_id": "u@x", "is_active": true, "x": 0}),
            ),
            "compute_session" | "compute_session_node" => Ok(session()),
            "modify_compute_session" => Ok(json!({"clientMutationId": "m1", "item": session()})),
            "vfolder_list" => Ok(json!({"items": [], "total_count": 0})),
            "broken" => Err(FieldError {
                message: "nope".into(),
            }),
            _ => Ok(Value::Null),
        }
    }
}

fn run(query: &str, vars: Value) -> (Value, Seen) {
    let f = Fake {
        seen: RefCell::new(Vec::new()),
    };
    let req = Request {
        query: query.into(),
        variables: vars.as_object().cloned().unwrap_or_default(),
        operation_name: None,
    };
    let out = execute(&req, &f);
    (out, f.seen.into_inner())
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

const PS: &str = "query($limit:Int!, $offset:Int!, $status: String, $access_key: String, $filter: String, $order: String) {\n  compute_session_list(\n      limit:$limit, offset:$offset, status:$status, access_key:$access_key, filter:$filter, order:$order) {\n    items { name priority id group_name type image status status_info status_changed result }\n    total_count\n  }\n}";

#[test]
fn session_list_items_have_exactly_the_selected_fields_in_order() {
    let (out, seen) = run(
        PS,
        json!({"status": "RUNNING", "access_key": null, "filter": null, "order": null, "limit": 20, "offset": 0}),
    );
    assert!(out.get("errors").is_none(), "{out}");
    let item = &out["data"]["compute_session_list"]["items"][0];
    assert_eq!(
        keys(item),
        [
            "name",
            "priority",
            "id",
            "group_name",
            "type",
            "image",
            "status",
            "status_info",
            "status_changed",
            "result"
        ]
    );
    assert_eq!(out["data"]["compute_session_list"]["total_count"], 1);
    let (_, field, args) = &seen[0];
    assert_eq!(field, "compute_session_list");
    assert_eq!(args["limit"], 20);
    assert_eq!(args["status"], "RUNNING");
    assert!(args["access_key"].is_null());
}

#[test]
fn keypair_query() {
    let (out, _) = run(
        "query { keypair { user_id access_key secret_key is_active is_admin } }",
        json!({}),
    );
    assert_eq!(
        keys(&out["data"]["keypair"]),
        [
            "user_id",
            "access_key",
            "secret_key",
            "is_active",
            "is_admin"
        ]
    );
}

#[test]
fn duplicated_fields_are_merged() {
    let q = "query($id: UUID!) {  compute_session(id: $id) {    name priority id main_kernel_id image tag created_at terminated_at status status_info status_data occupying_slots idle_checks containers { id cluster_role cluster_idx cluster_hostname session_id image registry status status_info status_data status_changed agent container_id resource_opts occupied_slots preopen_ports live_stat last_stat id } dependencies { name id }  }}";
    let (out, seen) = run(q, json!({"id": "s-1"}));
    assert!(out.get("errors").is_none(), "{out}");
    let c = &out["data"]["compute_session"]["containers"][0];
    let k = keys(c);
    assert_eq!(k.iter().filter(|x| *x == "id").count(), 1);
    assert_eq!(k[0], "id");
    assert_eq!(k.len(), 18);
    assert_eq!(
        out["data"]["compute_session"]["occupying_slots"],
        "{\"cpu\": \"1\"}"
    );
    assert_eq!(seen[0].2["id"], "s-1");
}

#[test]
fn nested_duplicate_selections_merge_their_sub_selections() {
    let q = "query($id: GlobalIDField!) {\n    compute_session_node(id: $id) {\n        row_id tag name type priority cluster_mode domain_name user_id status created_at terminated_at resource_opts scaling_group vfolder_mounts image_references kernel_nodes { edges { node { row_id image_reference status created_at agent_id row_id } node { row_id image_reference status created_at agent_id row_id } } edges { node { row_id image_reference status created_at agent_id row_id } node { row_id image_reference status created_at agent_id row_id } } }\n    }\n}";
    let (out, _) = run(q, json!({"id": "Y29tcHV0ZV9zZXNzaW9uX25vZGU6czE="}));
    let kn = &out["data"]["compute_session_node"]["kernel_nodes"];
    assert_eq!(keys(kn), ["edges"]);
    assert_eq!(keys(&kn["edges"][0]), ["node"]);
    assert_eq!(
        keys(&kn["edges"][0]["node"]),
        [
            "row_id",
            "image_reference",
            "status",
            "created_at",
            "agent_id"
        ]
    );
    assert_eq!(
        out["data"]["compute_session_node"]["vfolder_mounts"],
        json!(["vf"])
    );
}

#[test]
fn mutation_receives_its_input_object() {
    let q = "mutation($input: ModifyComputeSessionInput!) {\n    modify_compute_session(input: $input) {\n        item {\n            name\n            priority\n        }\n        clientMutationId\n    }\n}";
    let (out, seen) = run(
        q,
        json!({"input": {"id": "s-1", "clientMutationId": "m1", "priority": 5}}),
    );
    assert_eq!(seen[0].0, OperationKind::Mutation);
    assert_eq!(seen[0].2["input"]["priority"], 5);
    assert_eq!(
        keys(&out["data"]["modify_compute_session"]),
        ["item", "clientMutationId"]
    );
    assert_eq!(
        keys(&out["data"]["modify_compute_session"]["item"]),
        ["name", "priority"]
    );
}

#[test]
fn vfolder_list_accepts_uuid_variables() {
    let q = "query($limit:Int!, $offset:Int!, $group_id: UUID, $filter: String, $order: String) {\n  vfolder_list(\n      limit:$limit, offset:$offset, group_id:$group_id, filter:$filter, order:$order) {\n    items { host name status created_at creator group permission ownership_type }\n    total_count\n  }\n}";
    let (out, _) = run(
        q,
        json!({"group_id": null, "filter": null, "order": null, "limit": 20, "offset": 0}),
    );
    assert!(out.get("errors").is_none(), "{out}");
    assert_eq!(out["data"]["vfolder_list"]["total_count"], 0);
}

#[test]
fn errors_for_bad_types_missing_variables_syntax_and_failing_fields() {
    let (out, _) = run("query($x: Bogus) { keypair { access_key } }", json!({}));
    assert!(
        out["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("Bogus")
    );
    let (out, _) = run(PS, json!({"offset": 0}));
    assert!(
        out["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("$limit")
    );
    let (out, _) = run("query { keypair { ", json!({}));
    assert!(
        out["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("syntax")
    );
    let (out, _) = run("query { broken { a } keypair { access_key } }", json!({}));
    assert_eq!(out["errors"][0]["path"][0], "broken");
    assert!(out["data"]["broken"].is_null());
    assert_eq!(out["data"]["keypair"]["access_key"], "AK");
}

#[test]
fn aliases_fragments_and_directives() {
    let q = "query($no: Boolean) { kp: keypair { ...K ... on KeyPair { is_admin } secret_key @skip(if: true) user_id @include(if: $no) } } fragment K on KeyPair { access_key }";
    let (out, _) = run(q, json!({"no": false}));
    assert_eq!(keys(&out["data"]["kp"]), ["access_key", "is_admin"]);
}
