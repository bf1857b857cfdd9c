//! Every administrators' route (`/admin/…` in docs/openapi.json, which the router is checked
//! against) refuses a plain user with the same problem, and lets an administrator through.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

mod common;

use common::{ADMIN, Api, USER};
use serde_json::{Value, json};

const SPEC: &str = include_str!("../../../docs/openapi.json");

/// `/admin/gql` serves every caller (each field checks what the caller may see).
const OPEN_TO_USERS: &[&str] = &["/admin/gql"];

/// `(METHOD, path)` of every administrators' route, with names that do not exist filled in
/// for the path parameters (an administrator gets 404 or 400, and nothing is changed).
fn admin_routes() -> Vec<(String, String)> {
    let spec: Value = serde_json::from_str(SPEC).expect("docs/openapi.json is JSON");
    let mut out = Vec::new();
    for (path, ops) in spec["paths"].as_object().expect("paths") {
        if !path.starts_with("/admin/") || OPEN_TO_USERS.contains(&path.as_str()) {
            continue;
        }
        let concrete = path
            .replace("{name}", "no-such-thing")
            .replace("{email}", "nobody@nowhere")
            .replace("{access_key}", "AKNOSUCHKEY")
            .replace("{id}", "no-such-id");
        assert!(!concrete.contains('{'), "fill in the parameters of {path}");
        for method in ops.as_object().expect("operations").keys() {
            out.push((method.to_uppercase(), concrete.clone()));
        }
    }
    out
}

#[tokio::test]
async fn plain_users_are_refused_on_every_admin_route_and_admins_are_not() {
    let api = Api::start().await;
    let routes = admin_routes();
    assert!(routes.len() >= 14, "{routes:?}");
    for (method, path) in &routes {
        let r = api.call(method, path, USER, &json!({})).await;
        assert_eq!(r.status, 403, "{method} {path}: {:?}", r.body);
        assert!(r.content_type().contains("json"), "{method} {path}");
        assert_eq!(
            r.json(),
            json!({
                "type": "https://api.backend.ai/probs/forbidden",
                "title": "Forbidden operation.",
                "msg": "this needs an administrator's keypair",
            }),
            "{method} {path}"
        );

        let r = api.call(method, path, ADMIN, &json!({})).await;
        assert!(
            r.status != 403 && r.status != 401 && r.status != 405,
            "{method} {path} as an administrator: {} {:?}",
            r.status,
            r.body
        );
    }
}

#[tokio::test]
async fn the_refusal_comes_before_the_body_is_read() {
    let api = Api::start().await;
    let r = api
        .send(
            "POST",
            "/admin/resource-groups",
            Some(USER),
            "application/json",
            &[],
            "not json",
        )
        .await;
    assert_eq!(r.status, 403);
    let r = api
        .send(
            "POST",
            "/admin/resource-groups",
            Some(ADMIN),
            "application/json",
            &[],
            "not json",
        )
        .await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn admins_manage_and_users_use_what_they_made() {
    let api = Api::start().await;
    let r = api
        .call(
            "POST",
            "/admin/resource-groups",
            ADMIN,
            &json!({"name": "gpu", "is_public": false}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let r = api
        .call(
            "POST",
            "/admin/resource-presets",
            ADMIN,
            &json!({"name": "small", "resource_slots": {"cpu": "1", "mem": "1g"}}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let r = api
        .call("GET", "/admin/users/user@test", ADMIN, &Value::Null)
        .await;
    assert_eq!(r.json()["access_key"], USER.access_key);

    // The routes open to users are not behind the administrators' layer.
    let r = api
        .call("GET", "/resource/presets", USER, &Value::Null)
        .await;
    assert_eq!(r.status, 200);
    assert!(r.json()["presets"].to_string().contains("small"));
    let r = api
        .call("GET", "/resource-groups", USER, &Value::Null)
        .await;
    assert_eq!(r.status, 200);
    assert!(!r.json().to_string().contains("\"gpu\""), "private group");
    let r = api.call("GET", "/projects", USER, &Value::Null).await;
    assert_eq!(r.status, 200);
    let r = api.call("GET", "/agents", USER, &Value::Null).await;
    assert_eq!(r.status, 200);
    // `?all=true` is for administrators only, checked by the handler.
    let r = api
        .call("GET", "/resource-groups?all=true", USER, &Value::Null)
        .await;
    assert_eq!(r.status, 403);
    let r = api
        .call("GET", "/resource-groups?all=true", ADMIN, &Value::Null)
        .await;
    assert!(r.json().to_string().contains("\"gpu\""));
}
