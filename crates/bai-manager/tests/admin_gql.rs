//! Backend.AI's admin GraphQL through the real router: the rules the official admin suite
//! does not reach. Only administrators manage; a user's status and their domain's activity
//! decide whether their keypairs work; deletions refuse while something still runs or is
//! owned; inactive resource groups and session types a group does not take are refused at
//! create; the default domain, group and scaling group stay.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

mod common;

use common::{ADMIN, Api, IMAGE, Keypair, USER};
use serde_json::{Value, json};

const CREATE_USER: &str = "mutation($email: String!, $input: UserInput!) { \
    create_user(email: $email, props: $input) { ok msg user { uuid username email role status main_access_key } } }";
const MODIFY_USER: &str = "mutation($email: String!, $input: ModifyUserInput!) { \
    modify_user(email: $email, props: $input) { ok msg } }";
const PURGE_USER: &str = "mutation($email: String!, $input: PurgeUserInput!) { \
    purge_user(email: $email, props: $input) { ok msg } }";
const KEYPAIRS: &str = "query($email: String) { keypairs(email: $email) { access_key secret_key is_active is_admin } }";
const DELETE_KEYPAIR: &str =
    "mutation($access_key: String!) { delete_keypair(access_key: $access_key) { ok msg } }";

/// The (leaked, test-lived) keypair of a user created here.
async fn keypair_of(api: &Api, email: &str) -> Keypair {
    let r = api.gql(ADMIN, KEYPAIRS, json!({"email": email})).await;
    let kp = &r["data"]["keypairs"][0];
    let leak = |v: &Value| -> &'static str {
        Box::leak(v.as_str().expect("key").to_string().into_boxed_str())
    };
    Keypair {
        access_key: leak(&kp["access_key"]),
        secret_key: leak(&kp["secret_key"]),
    }
}

async fn status_of(api: &Api, who: Keypair) -> u16 {
    api.call("GET", "/folders", who, &json!({})).await.status
}

fn session(name: &str, group: &str) -> Value {
    json!({
        "image": IMAGE, "clientSessionToken": name, "enqueueOnly": true,
        "config": {"scalingGroup": group},
    })
}

#[tokio::test]
async fn users_and_keypairs_are_managed_by_admins_and_refusals_keep_what_runs() {
    let api = Api::start_with_agent().await;
    let by_user = api
        .gql(
            USER,
            CREATE_USER,
            json!({"email": "x@test", "input": {"password": "pw-123456"}}),
        )
        .await;
    assert!(
        by_user["errors"]
            .to_string()
            .contains("only administrators"),
        "{by_user}"
    );
    let made = api
        .gql(
            ADMIN,
            CREATE_USER,
            json!({"email": "new@test", "input": {"password": "pw-123456", "username": "newbie", "role": "user"}}),
        )
        .await;
    let user = &made["data"]["create_user"];
    assert_eq!(user["ok"], true, "{made}");
    assert_eq!(user["user"]["username"], "newbie");
    assert_eq!(user["user"]["status"], "active");
    let again = api
        .gql(
            ADMIN,
            CREATE_USER,
            json!({"email": "new@test", "input": {"password": "pw", "username": "other"}}),
        )
        .await;
    assert_eq!(again["data"]["create_user"]["ok"], false, "{again}");
    let bad_role = api
        .gql(
            ADMIN,
            CREATE_USER,
            json!({"email": "r@test", "input": {"password": "pw", "role": "king"}}),
        )
        .await;
    assert!(
        bad_role["errors"].to_string().contains("role"),
        "{bad_role}"
    );

    // The new user's keypair works until the user is made inactive, and again after.
    let kp = keypair_of(&api, "new@test").await;
    assert_eq!(status_of(&api, kp).await, 200);
    let off = api
        .gql(
            ADMIN,
            MODIFY_USER,
            json!({"email": "new@test", "input": {"status": "inactive"}}),
        )
        .await;
    assert_eq!(off["data"]["modify_user"]["ok"], true, "{off}");
    assert_eq!(status_of(&api, kp).await, 401);
    api.gql(
        ADMIN,
        MODIFY_USER,
        json!({"email": "new@test", "input": {"status": "active"}}),
    )
    .await;
    assert_eq!(status_of(&api, kp).await, 200);

    // An admin cannot lock themselves out.
    let demote = api
        .gql(
            ADMIN,
            MODIFY_USER,
            json!({"email": "admin@test", "input": {"role": "user"}}),
        )
        .await;
    assert_eq!(demote["data"]["modify_user"]["ok"], false, "{demote}");

    // A keypair with a queued or running session is not deleted; the session is untouched.
    let r = api
        .call("POST", "/session", kp, &session("held", "default"))
        .await;
    assert!(
        r.status == 201 || r.status == 200,
        "{}",
        String::from_utf8_lossy(&r.body)
    );
    let del = api
        .gql(ADMIN, DELETE_KEYPAIR, json!({"access_key": kp.access_key}))
        .await;
    assert_eq!(del["data"]["delete_keypair"]["ok"], false, "{del}");
    assert!(
        del["data"]["delete_keypair"]["msg"]
            .to_string()
            .contains("session")
    );
    assert_eq!(status_of(&api, kp).await, 200);
    let purge = api
        .gql(
            ADMIN,
            PURGE_USER,
            json!({"email": "new@test", "input": {"purge_shared_vfolders": false}}),
        )
        .await;
    assert_eq!(purge["data"]["purge_user"]["ok"], false, "{purge}");

    // A folder of their own also keeps the user: nothing is deleted with them.
    let rm = api.call("DELETE", "/session/held", kp, &json!({})).await;
    assert!(rm.status < 300, "{}", String::from_utf8_lossy(&rm.body));
    let folder = api
        .call("POST", "/folders", kp, &json!({"name": "keep"}))
        .await;
    assert_eq!(
        folder.status,
        201,
        "{}",
        String::from_utf8_lossy(&folder.body)
    );
    let purge = api
        .gql(ADMIN, PURGE_USER, json!({"email": "new@test", "input": {}}))
        .await;
    assert!(
        purge["data"]["purge_user"]["msg"]
            .to_string()
            .contains("folder"),
        "{purge}"
    );
}

#[tokio::test]
async fn domains_groups_and_scaling_groups_keep_their_rules() {
    let api = Api::start_with_agent().await;
    let purge_default = api
        .gql(
            ADMIN,
            "mutation { purge_domain(name: \"default\") { ok msg } }",
            json!({}),
        )
        .await;
    assert_eq!(purge_default["data"]["purge_domain"]["ok"], false);

    // A user of an inactive domain is refused; a domain with users is not purged.
    let d = api
        .gql(
            ADMIN,
            "mutation($name: String!, $input: DomainInput!) { create_domain(name: $name, props: $input) { ok domain { name allowed_docker_registries } } }",
            json!({"name": "lab", "input": {"allowed_docker_registries": ["cr.example"]}}),
        )
        .await;
    assert_eq!(
        d["data"]["create_domain"]["domain"]["allowed_docker_registries"],
        json!(["cr.example"]),
        "{d}"
    );
    let u = api
        .gql(
            ADMIN,
            CREATE_USER,
            json!({"email": "lab@test", "input": {"password": "pw", "domain_name": "lab"}}),
        )
        .await;
    assert_eq!(u["data"]["create_user"]["ok"], true, "{u}");
    let kp = keypair_of(&api, "lab@test").await;
    assert_eq!(status_of(&api, kp).await, 200);
    let off = api
        .gql(
            ADMIN,
            "mutation($name: String!, $input: ModifyDomainInput!) { modify_domain(name: $name, props: $input) { ok msg } }",
            json!({"name": "lab", "input": {"is_active": false}}),
        )
        .await;
    assert_eq!(off["data"]["modify_domain"]["ok"], true, "{off}");
    assert_eq!(status_of(&api, kp).await, 401);
    let purge = api
        .gql(
            ADMIN,
            "mutation { purge_domain(name: \"lab\") { ok msg } }",
            json!({}),
        )
        .await;
    assert!(
        purge["data"]["purge_domain"]["msg"]
            .to_string()
            .contains("user"),
        "{purge}"
    );

    // Groups: listed with ids; the default one is not purged.
    let groups = api
        .gql(ADMIN, "query { groups { id name } }", json!({}))
        .await;
    let default_id = groups["data"]["groups"]
        .as_array()
        .and_then(|g| g.iter().find(|g| g["name"] == "default"))
        .map(|g| g["id"].clone())
        .expect("the default group");
    let purge = api
        .gql(
            ADMIN,
            "mutation($gid: UUID!) { purge_group(gid: $gid) { ok msg } }",
            json!({"gid": default_id}),
        )
        .await;
    assert_eq!(purge["data"]["purge_group"]["ok"], false, "{purge}");

    // A group with a session that has not ended is not purged (an error, as Backend.AI's);
    // once the session ends it is, and its id is gone from the list.
    let made = api
        .gql(
            ADMIN,
            "mutation($name: String!, $input: GroupInput!) { create_group(name: $name, props: $input) { ok group { id } } }",
            json!({"name": "team-x", "input": {"description": "x"}}),
        )
        .await;
    let gid = made["data"]["create_group"]["group"]["id"].clone();
    let added = api
        .gql(
            ADMIN,
            "mutation($gid: UUID!, $input: ModifyGroupInput!) { modify_group(gid: $gid, props: $input) { ok msg } }",
            json!({"gid": gid, "input": {"user_update_mode": "add", "user_uuids": ["u-user"]}}),
        )
        .await;
    assert_eq!(added["data"]["modify_group"]["ok"], true, "{added}");
    let mut body = session("in-team-x", "default");
    body["group"] = json!("team-x");
    let r = api.call("POST", "/session", USER, &body).await;
    assert!(r.status < 300, "{}", String::from_utf8_lossy(&r.body));
    let purge_group = "mutation($gid: UUID!) { purge_group(gid: $gid) { ok msg } }";
    let refused = api.gql(ADMIN, purge_group, json!({"gid": gid})).await;
    assert!(
        refused["errors"].to_string().contains("session"),
        "{refused}"
    );
    let rm = api
        .call("DELETE", "/session/in-team-x", USER, &json!({}))
        .await;
    assert!(rm.status < 300, "{}", String::from_utf8_lossy(&rm.body));
    // The session ends as the agent reports it; the purge is retried until then.
    let mut purged = Value::Null;
    let done = common::poll(async || {
        purged = api.gql(ADMIN, purge_group, json!({"gid": gid})).await;
        (purged["data"]["purge_group"]["ok"] == true).then_some(())
    })
    .await;
    assert!(done.is_some(), "{purged}");

    // An inactive scaling group takes no session; an active one only its session types.
    let create_sg = "mutation($name: String!, $input: CreateScalingGroupInput!) { \
        create_scaling_group(name: $name, props: $input) { ok msg } }";
    let sg = api
        .gql(
            ADMIN,
            create_sg,
            json!({"name": "night", "input": {"is_active": false, "scheduler": "fifo",
                   "scheduler_opts": "{\"allowed_session_types\": [\"batch\"]}"}}),
        )
        .await;
    assert_eq!(sg["data"]["create_scaling_group"]["ok"], true, "{sg}");
    let refused = api
        .call("POST", "/session", USER, &session("night-1", "night"))
        .await;
    assert_eq!(refused.status, 400);
    assert!(
        String::from_utf8_lossy(&refused.body).contains("night"),
        "{}",
        String::from_utf8_lossy(&refused.body)
    );
    api.gql(
        ADMIN,
        "mutation($name: String!, $input: ModifyScalingGroupInput!) { modify_scaling_group(name: $name, props: $input) { ok } }",
        json!({"name": "night", "input": {"is_active": true}}),
    )
    .await;
    let wrong_type = api
        .call("POST", "/session", USER, &session("night-2", "night"))
        .await;
    assert_eq!(wrong_type.status, 400);
    assert!(
        String::from_utf8_lossy(&wrong_type.body).contains("does not take interactive"),
        "{}",
        String::from_utf8_lossy(&wrong_type.body)
    );
    let bad = api
        .gql(
            ADMIN,
            create_sg,
            json!({"name": "odd", "input": {"scheduler": "random"}}),
        )
        .await;
    assert!(bad["errors"].to_string().contains("scheduler"), "{bad}");
}

#[tokio::test]
async fn mutation_props_read_as_their_types_and_a_refusal_changes_nothing() {
    let api = Api::start_with_agent().await;
    let create = "mutation($name: String!, $input: DomainInput!) { \
        create_domain(name: $name, props: $input) { ok msg domain { name total_resource_slots allowed_docker_registries } } }";
    let modify = "mutation($name: String!, $input: ModifyDomainInput!) { \
        modify_domain(name: $name, props: $input) { ok msg } }";
    let read = "query($name: String) { domain(name: $name) { description is_active total_resource_slots } }";
    // A JSONString field holds an object; one registry is a list of one.
    let r = api
        .gql(
            ADMIN,
            create,
            json!({"name": "typed", "input": {"total_resource_slots": "{\"cpu\": \"8\"}",
                "allowed_docker_registries": "cr.example", "description": null}}),
        )
        .await;
    let made = &r["data"]["create_domain"];
    assert_eq!(made["ok"], true, "{r}");
    assert_eq!(
        made["domain"]["total_resource_slots"], r#"{"cpu":"8"}"#,
        "{r}"
    );
    assert_eq!(
        made["domain"]["allowed_docker_registries"],
        json!(["cr.example"]),
        "{r}"
    );
    let r = api
        .gql(
            ADMIN,
            modify,
            json!({"name": "typed", "input": {"total_resource_slots": "{\"cpu\": \"4\"}"}}),
        )
        .await;
    assert_eq!(r["data"]["modify_domain"]["ok"], true, "{r}");

    // Refused, naming the field; nothing of the change is written.
    for (input, field) in [
        (
            json!({"description": "changed", "is_active": "no"}),
            "is_active",
        ),
        (
            json!({"description": "changed", "total_resource_slots": "[4]"}),
            "total_resource_slots",
        ),
        (json!({"description": "changed", "colour": "red"}), "colour"),
    ] {
        let r = api
            .gql(ADMIN, modify, json!({"name": "typed", "input": input}))
            .await;
        let msg = r["errors"][0]["message"].as_str().unwrap_or_default();
        assert!(msg.contains(field), "{input}: {r}");
    }
    let r = api.gql(ADMIN, read, json!({"name": "typed"})).await;
    let d = &r["data"]["domain"];
    assert_eq!(d["description"], "", "{r}");
    assert_eq!(d["is_active"], true, "{r}");
    assert_eq!(d["total_resource_slots"], r#"{"cpu":"4"}"#, "{r}");

    // A group's member change is checked before anything of the group is written.
    let made = api
        .gql(
            ADMIN,
            "mutation($name: String!, $input: GroupInput!) { create_group(name: $name, props: $input) { ok group { id } } }",
            json!({"name": "typed-g", "input": {"description": "before"}}),
        )
        .await;
    let gid = made["data"]["create_group"]["group"]["id"].clone();
    let r = api
        .gql(
            ADMIN,
            "mutation($gid: UUID!, $input: ModifyGroupInput!) { modify_group(gid: $gid, props: $input) { ok msg } }",
            json!({"gid": gid, "input": {"description": "after", "user_update_mode": "add",
                "user_uuids": ["no-such-user"]}}),
        )
        .await;
    let msg = r["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(msg.contains("no-such-user"), "{r}");
    let r = api
        .gql(
            ADMIN,
            "query($gid: UUID!) { group(id: $gid) { description } }",
            json!({"gid": gid}),
        )
        .await;
    assert_eq!(r["data"]["group"]["description"], "before", "{r}");

    // A keypair policy's limits as numbers or text, each within its range.
    let policy = "mutation($name: String!, $input: CreateKeyPairResourcePolicyInput!) { \
        create_keypair_resource_policy(name: $name, props: $input) { ok msg } }";
    let r = api
        .gql(
            ADMIN,
            policy,
            json!({"name": "typed-p", "input": {"idle_timeout": "600",
            "max_concurrent_sessions": 2, "default_for_unspecified": "UNLIMITED"}}),
        )
        .await;
    assert_eq!(
        r["data"]["create_keypair_resource_policy"]["ok"], true,
        "{r}"
    );
    let r = api
        .gql(
            ADMIN,
            policy,
            json!({"name": "typed-q", "input": {"max_concurrent_sessions": -1}}),
        )
        .await;
    let msg = r["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(
        msg.contains("max_concurrent_sessions -1 is out of range"),
        "{r}"
    );
}

/// `secret_key` is answered only to signed requests: the official client reading its own
/// keypair, an administrator's signed request reading or listing anyone's (the official test
/// package reads a user it made that way); a web session — the user's own, or an
/// administrator's — gets null, and another user is refused.
#[tokio::test]
async fn a_secret_key_is_answered_only_to_signed_requests() {
    let api = Api::start().await;
    const OWN: &str = "query { keypair { access_key secret_key } }";
    const ONE: &str =
        "query($access_key: String) { keypair(access_key: $access_key) { access_key secret_key } }";
    let secret = |r: &Value| r["data"]["keypair"]["secret_key"].clone();
    // Signed with the keypair itself: its secret.
    let r = api.gql(USER, OWN, json!({})).await;
    assert_eq!(secret(&r), USER.secret_key, "{r}");
    let r = api
        .gql(USER, ONE, json!({"access_key": USER.access_key}))
        .await;
    assert_eq!(secret(&r), USER.secret_key, "{r}");
    // An administrator's signed request: anyone's, read or listed.
    let r = api.gql(ADMIN, OWN, json!({})).await;
    assert_eq!(secret(&r), ADMIN.secret_key, "{r}");
    let r = api
        .gql(ADMIN, ONE, json!({"access_key": USER.access_key}))
        .await;
    assert_eq!(secret(&r), USER.secret_key, "{r}");
    let r = api
        .gql(ADMIN, KEYPAIRS, json!({"email": "user@test"}))
        .await;
    let k = &r["data"]["keypairs"][0];
    assert_eq!(k["access_key"], USER.access_key, "{r}");
    assert_eq!(k["secret_key"], USER.secret_key, "{r}");
    // Another user: refused outright, no secret in the answer.
    let r = api
        .gql(USER, ONE, json!({"access_key": ADMIN.access_key}))
        .await;
    assert!(
        r["errors"].to_string().contains("only administrators"),
        "{r}"
    );
    assert!(!r.to_string().contains(ADMIN.secret_key), "{r}");
    // Web sessions (the cookie stands for the signature): never a secret, not even the
    // caller's own, not even an administrator's.
    let web = |who: Keypair, query: &'static str, variables: Value| {
        let token = api.m.web_sessions.open(who.access_key).unwrap();
        let body = serde_json::to_vec(&json!({"query": query, "variables": variables})).unwrap();
        let api = &api;
        async move {
            let r = api
                .send(
                    "POST",
                    "/admin/gql",
                    None,
                    "application/json",
                    &[
                        ("cookie", format!("bai_web={token}")),
                        ("x-bai-web", "1".to_string()),
                    ],
                    body,
                )
                .await;
            assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
            r.json()
        }
    };
    let r = web(USER, OWN, json!({})).await;
    assert_eq!(r["data"]["keypair"]["access_key"], USER.access_key, "{r}");
    assert_eq!(secret(&r), Value::Null, "{r}");
    let r = web(ADMIN, OWN, json!({})).await;
    assert_eq!(r["data"]["keypair"]["access_key"], ADMIN.access_key, "{r}");
    assert_eq!(secret(&r), Value::Null, "{r}");
    let r = web(ADMIN, KEYPAIRS, json!({"email": null})).await;
    let items = r["data"]["keypairs"].as_array().expect("keypairs");
    assert!(items.len() >= 2, "{r}");
    assert!(items.iter().all(|k| k["secret_key"].is_null()), "{r}");
    for sk in [USER.secret_key, ADMIN.secret_key] {
        assert!(!r.to_string().contains(sk), "{r}");
    }
}
