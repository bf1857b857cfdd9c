//! User resource policies through the real router: users read their own, only admins change
//! them, and each limit is enforced on the server (folders owned, a folder's quota, a
//! service's replicas).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

mod common;

use common::{ADMIN, Api, USER};
use serde_json::json;

const FIELDS: &str = "name max_vfolder_count max_quota_scope_size \
    max_session_count_per_model_session max_customized_image_count";

#[tokio::test]
async fn policies_are_read_by_users_changed_by_admins_and_enforced() {
    let api = Api::start().await;
    let own = api
        .gql(
            USER,
            &format!("query {{ user_resource_policy {{ {FIELDS} }} }}"),
            json!({}),
        )
        .await;
    assert_eq!(
        own["data"]["user_resource_policy"],
        json!({"name": "default", "max_vfolder_count": 0, "max_quota_scope_size": -1,
               "max_session_count_per_model_session": 16, "max_customized_image_count": 3})
    );

    let create = "mutation($name: String!, $props: CreateUserResourcePolicyInput!) { \
        create_user_resource_policy(name: $name, props: $props) { ok msg resource_policy { name max_vfolder_count } } }";
    let props = json!({"max_vfolder_count": 1, "max_session_count_per_model_session": 2});
    let by_user = api
        .gql(USER, create, json!({"name": "small", "props": props}))
        .await;
    assert!(
        by_user["errors"]
            .to_string()
            .contains("only administrators"),
        "{by_user}"
    );
    let bad = api
        .gql(
            ADMIN,
            create,
            json!({"name": "small", "props": {"max_vfolder_count": -3}}),
        )
        .await;
    assert!(bad["errors"].to_string().contains("out of range"), "{bad}");
    let made = api
        .gql(ADMIN, create, json!({"name": "small", "props": props}))
        .await;
    assert_eq!(
        made["data"]["create_user_resource_policy"],
        json!({"ok": true, "msg": "success", "resource_policy": {"name": "small", "max_vfolder_count": 1}})
    );
    let assign = "mutation($email: String!, $props: ModifyUserInput!) { \
        modify_user(email: $email, props: $props) { ok msg } }";
    let r = api
        .gql(
            ADMIN,
            assign,
            json!({"email": "user@test", "props": {"resource_policy": "small"}}),
        )
        .await;
    assert_eq!(r["data"]["modify_user"]["ok"], true, "{r}");

    // One folder of the user's own, then a refusal naming the policy.
    let first = api
        .call("POST", "/folders", USER, &json!({"name": "first"}))
        .await;
    assert_eq!(
        first.status,
        201,
        "{}",
        String::from_utf8_lossy(&first.body)
    );
    let second = api
        .call("POST", "/folders", USER, &json!({"name": "second"}))
        .await;
    assert_eq!(second.status, 400);
    assert!(
        second.json()["msg"]
            .as_str()
            .is_some_and(|m| m.contains("\"small\" allows 1")),
        "{}",
        second.json()
    );

    // A quota over the policy's largest is refused.
    let modify = "mutation($name: String!, $props: ModifyUserResourcePolicyInput!) { \
        modify_user_resource_policy(name: $name, props: $props) { ok msg } }";
    let r = api.gql(ADMIN,
        modify,
        json!({"name": "small", "props": {"max_vfolder_count": 0, "max_quota_scope_size": 1 << 30}}),
    )
    .await;
    assert_eq!(r["data"]["modify_user_resource_policy"]["ok"], true, "{r}");
    let big = api
        .call(
            "POST",
            "/folders",
            USER,
            &json!({"name": "big", "quota": "2g"}),
        )
        .await;
    assert_eq!(big.status, 400);
    assert!(
        big.json()["msg"]
            .as_str()
            .is_some_and(|m| m.contains("more than the user resource policy")),
        "{}",
        big.json()
    );

    // A service of more replicas than the policy allows one service.
    let svc = api
        .call(
            "POST",
            "/services",
            USER,
            &json!({"name": "many-replicas", "replicas": 3, "image": common::IMAGE,
                    "config": {"model": "first"}}),
        )
        .await;
    assert_eq!(svc.status, 400, "{}", String::from_utf8_lossy(&svc.body));
    assert!(
        svc.json()["msg"]
            .as_str()
            .is_some_and(|m| m.contains("3 replicas are more than")),
        "{}",
        svc.json()
    );

    // A policy a user holds stays; the default never goes.
    let delete = "mutation($name: String!) { delete_user_resource_policy(name: $name) { ok msg } }";
    let held = api.gql(ADMIN, delete, json!({"name": "small"})).await;
    assert_eq!(held["data"]["delete_user_resource_policy"]["ok"], false);
    let default = api.gql(ADMIN, delete, json!({"name": "default"})).await;
    assert_eq!(default["data"]["delete_user_resource_policy"]["ok"], false);
    let listed = api
        .gql(
            ADMIN,
            "query { user_resource_policies { name } }",
            json!({}),
        )
        .await;
    assert_eq!(
        listed["data"]["user_resource_policies"],
        json!([{"name": "default"}, {"name": "small"}])
    );
}
