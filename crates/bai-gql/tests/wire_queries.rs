//! The verbatim queries of the official client (wire contract §5.1, §7).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

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

const SID: &str = "6e2f5b5e-3f0a-4e8c-9d1b-2a7c4f0e9b11";

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
    assert_eq!(
        *item,
        json!({"name": "mysess", "priority": 10, "id": "s-1", "group_name": "default",
               "type": "interactive", "image": "python", "status": "RUNNING", "status_info": null,
               "status_changed": "2026-01-01T00:00:00+00:00", "result": "UNDEFINED"})
    );
    assert_eq!(
        keys(&out["data"]["compute_session_list"]),
        ["items", "total_count"]
    );
    assert_eq!(seen.len(), 1);
    let (kind, field, args) = &seen[0];
    assert_eq!(*kind, OperationKind::Query);
    assert_eq!(field, "compute_session_list");
    assert_eq!(
        Value::Object(args.clone()),
        json!({"limit": 20, "offset": 0, "status": "RUNNING", "access_key": null, "filter": null, "order": null})
    );
    assert_eq!(
        args.keys().collect::<Vec<_>>(),
        ["limit", "offset", "status", "access_key", "filter", "order"]
    );
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
    assert_eq!(out["data"]["keypair"]["is_admin"], false);
    assert_eq!(out["data"]["keypair"]["user_id"], "u@x");
    assert!(out.get("errors").is_none());
}

const INFO: &str = "query($id: UUID!) {  compute_session(id: $id) {    name priority id main_kernel_id image tag created_at terminated_at status status_info status_data occupying_slots idle_checks containers { id cluster_role cluster_idx cluster_hostname session_id image registry status status_info status_data status_changed agent container_id resource_opts occupied_slots preopen_ports live_stat last_stat id } dependencies { name id }  }}";

const NODE: &str = "query($id: GlobalIDField!) {\n    compute_session_node(id: $id) {\n        row_id tag name type priority cluster_mode domain_name user_id status created_at terminated_at resource_opts scaling_group vfolder_mounts image_references kernel_nodes { edges { node { row_id image_reference status created_at agent_id row_id } node { row_id image_reference status created_at agent_id row_id } } edges { node { row_id image_reference status created_at agent_id row_id } node { row_id image_reference status created_at agent_id row_id } } }\n    }\n}";

const MODIFY: &str = "mutation($input: ModifyComputeSessionInput!) {\n    modify_compute_session(input: $input) {\n        item {\n            name\n            priority\n        }\n        clientMutationId\n    }\n}";

const VFOLDERS: &str = "query($limit:Int!, $offset:Int!, $group_id: UUID, $filter: String, $order: String) {\n  vfolder_list(\n      limit:$limit, offset:$offset, group_id:$group_id, filter:$filter, order:$order) {\n    items { host name status created_at creator group permission ownership_type }\n    total_count\n  }\n}";

#[test]
fn duplicated_fields_are_merged() {
    let (out, seen) = run(INFO, json!({ "id": SID }));
    assert!(out.get("errors").is_none(), "{out}");
    assert_eq!(keys(&out["data"]), ["compute_session"]);
    let s = &out["data"]["compute_session"];
    assert_eq!(
        keys(s),
        [
            "name",
            "priority",
            "id",
            "main_kernel_id",
            "image",
            "tag",
            "created_at",
            "terminated_at",
            "status",
            "status_info",
            "status_data",
            "occupying_slots",
            "idle_checks",
            "containers",
            "dependencies"
        ]
    );
    let c = &s["containers"];
    assert_eq!(c.as_array().unwrap().len(), 1);
    assert_eq!(
        keys(&c[0]),
        [
            "id",
            "cluster_role",
            "cluster_idx",
            "cluster_hostname",
            "session_id",
            "image",
            "registry",
            "status",
            "status_info",
            "status_data",
            "status_changed",
            "agent",
            "container_id",
            "resource_opts",
            "occupied_slots",
            "preopen_ports",
            "live_stat",
            "last_stat"
        ]
    );
    assert_eq!(c[0]["id"], "k-1");
    assert_eq!(c[0]["agent"], "a1");
    assert!(c[0]["registry"].is_null());
    // JSONString values are whatever the resolver gave: here already-encoded strings.
    assert_eq!(s["occupying_slots"], "{\"cpu\": \"1\"}");
    assert_eq!(s["dependencies"], json!([]));
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].1, "compute_session");
    assert_eq!(Value::Object(seen[0].2.clone()), json!({ "id": SID }));
}

#[test]
fn session_info_refuses_a_non_uuid_id() {
    let (out, seen) = run(INFO, json!({"id": "mysess"}));
    assert!(out["data"].is_null());
    let msg = out["errors"][0]["message"].as_str().unwrap();
    assert!(msg.contains("$id") && msg.contains("UUID"), "{msg}");
    assert!(seen.is_empty());
}

#[test]
fn nested_duplicate_selections_merge_their_sub_selections() {
    let gid = "Y29tcHV0ZV9zZXNzaW9uX25vZGU6czE=";
    let (out, seen) = run(NODE, json!({ "id": gid }));
    assert!(out.get("errors").is_none(), "{out}");
    let node = &out["data"]["compute_session_node"];
    assert_eq!(
        keys(node),
        [
            "row_id",
            "tag",
            "name",
            "type",
            "priority",
            "cluster_mode",
            "domain_name",
            "user_id",
            "status",
            "created_at",
            "terminated_at",
            "resource_opts",
            "scaling_group",
            "vfolder_mounts",
            "image_references",
            "kernel_nodes"
        ]
    );
    let kn = &node["kernel_nodes"];
    assert_eq!(
        *kn,
        json!({"edges": [{"node": {"row_id": "k-1", "image_reference": "python",
            "status": "RUNNING", "created_at": "t0", "agent_id": "a1"}}]})
    );
    assert_eq!(keys(kn), ["edges"]);
    assert_eq!(kn["edges"].as_array().unwrap().len(), 1);
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
    assert_eq!(node["vfolder_mounts"], json!(["vf"]));
    assert_eq!(seen[0].2["id"], gid);
}

#[test]
fn mutation_receives_its_input_object() {
    let (out, seen) = run(
        MODIFY,
        json!({"input": {"id": SID, "clientMutationId": "m1", "priority": 5}}),
    );
    assert!(out.get("errors").is_none(), "{out}");
    assert_eq!(seen[0].0, OperationKind::Mutation);
    assert_eq!(seen[0].1, "modify_compute_session");
    assert_eq!(
        Value::Object(seen[0].2.clone()),
        json!({"input": {"id": SID, "clientMutationId": "m1", "priority": 5}})
    );
    assert!(seen[0].2["input"].is_object());
    assert_eq!(
        out,
        json!({"data": {"modify_compute_session": {"item": {"name": "mysess", "priority": 10}, "clientMutationId": "m1"}}})
    );
    assert_eq!(
        keys(&out["data"]["modify_compute_session"]),
        ["item", "clientMutationId"]
    );
    assert_eq!(
        keys(&out["data"]["modify_compute_session"]["item"]),
        ["name", "priority"]
    );
    // The input object must be given and typed.
    let (out, seen) = run(MODIFY, json!({}));
    assert_eq!(
        out["errors"][0]["message"],
        "variable $input of type ModifyComputeSessionInput! was not provided"
    );
    assert!(seen.is_empty());
    let (out, _) = run(MODIFY, json!({"input": {"id": SID, "priority": "high"}}));
    assert!(out["data"].is_null());
}

#[test]
fn vfolder_list_accepts_uuid_variables() {
    let (out, seen) = run(
        VFOLDERS,
        json!({"group_id": null, "filter": null, "order": null, "limit": 20, "offset": 0}),
    );
    assert!(out.get("errors").is_none(), "{out}");
    assert_eq!(
        out,
        json!({"data": {"vfolder_list": {"items": [], "total_count": 0}}})
    );
    assert_eq!(
        Value::Object(seen[0].2.clone()),
        json!({"limit": 20, "offset": 0, "group_id": null, "filter": null, "order": null})
    );
    assert_eq!(
        seen[0].2.keys().collect::<Vec<_>>(),
        ["limit", "offset", "group_id", "filter", "order"]
    );
    let (out, seen) = run(
        VFOLDERS,
        json!({"group_id": SID, "limit": 20, "offset": 40}),
    );
    assert!(out.get("errors").is_none(), "{out}");
    assert_eq!(seen[0].2["group_id"], SID);
    assert_eq!(seen[0].2["offset"], 40);
    assert!(seen[0].2["filter"].is_null());
}

#[test]
fn errors_for_bad_types_missing_variables_syntax_and_failing_fields() {
    let (out, seen) = run("query($x: Bogus) { keypair { access_key } }", json!({}));
    assert!(out["data"].is_null(), "{out}");
    let msg = out["errors"][0]["message"].as_str().unwrap();
    assert!(
        msg.contains("unknown type") && msg.contains("Bogus"),
        "{msg}"
    );
    assert!(seen.is_empty());

    let (out, seen) = run(PS, json!({"offset": 0}));
    assert_eq!(
        out,
        json!({"data": null, "errors": [{"message": "variable $limit of type Int! was not provided"}]})
    );
    assert!(seen.is_empty());

    let (out, seen) = run("query { keypair { ", json!({}));
    assert!(out["data"].is_null(), "{out}");
    assert_eq!(out["errors"].as_array().unwrap().len(), 1);
    assert!(
        out["errors"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("syntax error")
    );
    assert!(seen.is_empty());

    let (out, seen) = run("query { broken { a } keypair { access_key } }", json!({}));
    assert_eq!(
        out,
        json!({"data": {"broken": null, "keypair": {"access_key": "AK"}},
               "errors": [{"message": "nope", "path": ["broken"]}]})
    );
    assert_eq!(keys(&out["data"]), ["broken", "keypair"]);
    assert_eq!(seen.len(), 2);
}

#[test]
fn all_client_variable_types_are_accepted() {
    let q = "query($a: Int!, $b: String, $c: UUID, $d: UUID!, $e: GlobalIDField!, $f: Boolean, $g: Float, $h: ID, $i: JSONString) { keypair(a: $a, b: $b, c: $c, d: $d, e: $e, f: $f, g: $g, h: $h, i: $i) { access_key } }";
    let (out, seen) = run(
        q,
        json!({"a": 1, "b": "x", "c": null, "d": SID, "e": "Z2lk", "f": true, "g": 1.5, "h": 9, "i": "{\"k\": 1}"}),
    );
    assert!(out.get("errors").is_none(), "{out}");
    assert_eq!(
        Value::Object(seen[0].2.clone()),
        json!({"a": 1, "b": "x", "c": null, "d": SID, "e": "Z2lk", "f": true, "g": 1.5, "h": "9", "i": "{\"k\": 1}"})
    );
}

#[test]
fn defaults_literals_and_root_typename() {
    let (out, seen) = run(
        "query Q($limit: Int = 5) { __typename compute_session_list(limit: $limit, offset: 0, status: RUNNING) { total_count } }",
        json!({}),
    );
    assert_eq!(
        out,
        json!({"data": {"__typename": "Query", "compute_session_list": {"total_count": 1}}})
    );
    assert_eq!(
        Value::Object(seen[0].2.clone()),
        json!({"limit": 5, "offset": 0, "status": "RUNNING"})
    );
    assert_eq!(seen.len(), 1);
}

#[test]
fn request_from_an_http_body() {
    let r =
        Request::from_body(&json!({"query": "{ a }", "variables": {"x": 1}, "operationName": "Q"}))
            .unwrap();
    assert_eq!(r.query, "{ a }");
    assert_eq!(r.variables["x"], 1);
    assert_eq!(r.operation_name.as_deref(), Some("Q"));
    let r =
        Request::from_body(&json!({"query": "{ a }", "variables": null, "operationName": null}))
            .unwrap();
    assert!(r.variables.is_empty() && r.operation_name.is_none());
    let r = Request::from_body(&json!({"query": "{ a }", "variables": "{\"x\": 2}"})).unwrap();
    assert_eq!(r.variables["x"], 2);
    assert!(Request::from_body(&json!({"variables": {}})).is_err());
    assert!(Request::from_body(&json!({"query": "{ a }", "variables": [1]})).is_err());
}

#[test]
fn aliases_fragments_and_directives() {
    let q = "query($no: Boolean) { kp: keypair { ...K ... on KeyPair { is_admin } secret_key @skip(if: true) user_id @include(if: $no) ak: access_key } } fragment K on KeyPair { access_key }";
    let (out, _) = run(q, json!({"no": false}));
    assert_eq!(
        out,
        json!({"data": {"kp": {"access_key": "AK", "is_admin": false, "ak": "AK"}}})
    );
    assert_eq!(keys(&out["data"]["kp"]), ["access_key", "is_admin", "ak"]);
}

#[test]
fn differing_duplicates_merge_and_resolve_once() {
    let q = "{ compute_session_list(limit: 1) { items { name } } keypair { access_key } compute_session_list(limit: 1) { total_count items { id name } } }";
    let (out, seen) = run(q, json!({}));
    assert!(out.get("errors").is_none(), "{out}");
    assert_eq!(keys(&out["data"]), ["compute_session_list", "keypair"]);
    let l = &out["data"]["compute_session_list"];
    assert_eq!(keys(l), ["items", "total_count"]);
    assert_eq!(keys(&l["items"][0]), ["name", "id"]);
    assert_eq!(seen.len(), 2);
    // Same key, different arguments: not mergeable.
    let (out, seen) = run(
        "{ keypair(a: 1) { access_key } keypair(a: 2) { user_id } }",
        json!({}),
    );
    assert!(out["data"].is_null());
    assert!(seen.is_empty());
}
