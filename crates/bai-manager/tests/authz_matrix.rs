//! The authorization matrix, generated from the route table (`docs/openapi.json`, which
//! the router is checked against), so a new route cannot be left out: every signed route
//! refuses anonymous callers, bad signatures, a clock more than 15 minutes off and a
//! revoked keypair (401); another user's session or folder, and another project member's,
//! answers exactly as one that does not exist; and nothing the refused requests asked for
//! happened.
//! (Plain users on administrators' routes: `admin_routes.rs`.)
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

mod common;

use common::{ADMIN, Api, Keypair, USER};
use serde_json::{Value, json};
use std::sync::atomic::Ordering;

const SPEC: &str = include_str!("../../../docs/openapi.json");

const BAD_SECRET: Keypair = Keypair {
    access_key: USER.access_key,
    secret_key: "not-the-secret",
};

const REVOKED: Keypair = Keypair {
    access_key: "AKREVOKEDTEST",
    secret_key: "revoked-secret",
};

/// `(METHOD, path template)` of every operation signed requests reach.
fn signed_routes() -> Vec<(String, String)> {
    let spec: Value = serde_json::from_str(SPEC).expect("docs/openapi.json is JSON");
    let mut out = Vec::new();
    for (path, ops) in spec["paths"].as_object().expect("paths") {
        for (method, op) in ops.as_object().expect("operations") {
            let signed = op["security"]
                .as_array()
                .is_some_and(|s| s.iter().any(|x| x.get("signed").is_some()));
            if signed {
                out.push((method.to_uppercase(), path.clone()));
            }
        }
    }
    out
}

/// What the owner has that the other caller names: a session, a folder, a service and a
/// session template (by name where routes take one, else by id).
struct Owned<'a> {
    session: &'a str,
    folder: &'a str,
    service: &'a str,
    template: &'a str,
}

/// The template with its parameters filled: `o` names the owner's things.
fn fill(path: &str, o: &Owned<'_>) -> String {
    let id = if path.starts_with("/folders") {
        o.folder
    } else if path.starts_with("/template/session") {
        o.template
    } else {
        o.service
    };
    path.replace("{reference}", o.session)
        .replace("{id}", id)
        .replace("{name}", "no-such-thing")
        .replace("{email}", "nobody@nowhere")
        .replace("{access_key}", "AKNOSUCHKEY")
        .replace("{route}", "no-such-route")
        .replace("{rule}", "no-such-rule")
        .replace("{inv_id}", "no-such-invitation")
}

fn problem(r: &common::Reply) -> bool {
    let v = r.json();
    v["type"].is_string() && v["title"].is_string()
}

#[tokio::test]
async fn every_signed_route_refuses_who_may_not_call_it() {
    let api = Api::start_with_agent().await;
    api.m
        .store
        .create_user_with_keypair(
            &bai_store::UserRow {
                id: "u-revoked".into(),
                email: "revoked@test".into(),
                role: "user".into(),
            },
            REVOKED.access_key,
            REVOKED.secret_key,
            false,
        )
        .expect("user");
    // It worked before it was revoked.
    assert_eq!(
        api.call("GET", "/resource/presets", REVOKED, &json!({}))
            .await
            .status,
        200
    );
    api.m
        .store
        .modify_keypair(
            REVOKED.access_key,
            &bai_store::KeypairChange {
                is_active: Some(false),
                ..Default::default()
            },
        )
        .expect("revoke");

    let routes = signed_routes();
    assert!(routes.len() >= 80, "{}", routes.len());
    let mut tried = 0;
    for (method, template) in &routes {
        let path = fill(
            template,
            &Owned {
                session: "no-such-session",
                folder: "no-such-folder",
                service: "no-such-service",
                template: "no-such-template",
            },
        );
        let who: [(&str, Option<Keypair>, i64); 4] = [
            ("anonymous", None, 0),
            ("a bad signature", Some(BAD_SECRET), 0),
            ("a clock 20 minutes off", Some(USER), 20 * 60),
            ("a revoked keypair", Some(REVOKED), 0),
        ];
        for (what, kp, offset) in who {
            api.clock_offset_secs.store(offset, Ordering::Relaxed);
            let r = api
                .send(method, &path, kp, "application/json", &[], b"{}".to_vec())
                .await;
            api.clock_offset_secs.store(0, Ordering::Relaxed);
            assert_eq!(
                r.status, 401,
                "{method} {template} with {what}: {:?}",
                r.body
            );
            assert!(problem(&r), "{method} {template} with {what}: {:?}", r.body);
            tried += 1;
        }
    }
    assert_eq!(tried, routes.len() * 4);
}

/// A third user, a member of the same project as [`USER`] (every user here is a member of
/// `default`).
const MEMBER: Keypair = Keypair {
    access_key: "AKMEMBERTEST",
    secret_key: "member-secret",
};

#[tokio::test]
async fn another_users_session_or_folder_answers_as_if_it_did_not_exist() {
    let api = Api::start_with_agent().await;
    api.m
        .store
        .create_user_with_keypair(
            &bai_store::UserRow {
                id: "u-member".into(),
                email: "member@test".into(),
                role: "user".into(),
            },
            MEMBER.access_key,
            MEMBER.secret_key,
            false,
        )
        .expect("create the member");
    // An administrator's things as seen by a user, and a user's as seen by another member
    // of the same project: neither sees anything.
    let a = compare(&api, ADMIN, USER, "admins").await;
    let b = compare(&api, USER, MEMBER, "users").await;
    assert!(a >= 40 && b >= 40, "{a} {b}");
    println!("{a} comparisons as another user, {b} as another member of the same project");
}

/// The model definition of the model folder a compared service serves.
const DEFINITION: &str = "models:\n  - name: m\n    model_path: /models\n    service:\n      \
    start_command: [python3, -m, http.server, \"8000\"]\n      port: 8000\n";

/// Compares every route naming a session, folder, service or session template of `owner`,
/// called by `other`, with the same route naming nothing; returns how many comparisons were
/// made.
async fn compare(api: &Api, owner: Keypair, other: Keypair, tag: &str) -> usize {
    let (session_name, folder_name) = (format!("{tag}-session"), format!("{tag}-folder"));
    let (model_name, service_name) = (format!("{tag}-model"), format!("{tag}-service"));
    let r = api
        .call(
            "POST",
            "/session",
            owner,
            &json!({"name": session_name, "image": common::IMAGE, "enqueueOnly": true,
                    "config": {"resources": {"cpu": 1, "mem": "1g"}}}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let session_id = r.json()["sessionId"].as_str().unwrap_or("").to_string();
    let r = api
        .call("POST", "/folders", owner, &json!({"name": folder_name}))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let folder_id = r.json()["id"].as_str().unwrap_or("").to_string();
    assert!(!folder_id.is_empty(), "{:?}", r.body);
    // A service (no replicas) of a model folder with a definition.
    let r = api
        .call(
            "POST",
            "/folders",
            owner,
            &json!({"name": model_name, "usage_mode": "model"}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let model = api
        .m
        .store
        .vfolder(uuid::Uuid::parse_str(r.json()["id"].as_str().unwrap_or("")).expect("id"))
        .expect("store")
        .expect("the model folder");
    let dir = api.m.storage.folder_dir(&model).expect("its directory");
    std::fs::write(dir.join("model-definition.yaml"), DEFINITION).expect("the definition");
    let r = api
        .call(
            "POST",
            "/services",
            owner,
            &json!({"name": service_name, "image": common::IMAGE, "replicas": 0,
                    "config": {"model": model_name, "resources": {"cpu": 1, "mem": "1g"}}}),
        )
        .await;
    assert!(r.status < 300, "{:?}", r.body);
    let service_id = r.json()["endpoint_id"].as_str().unwrap_or("").to_string();
    assert!(!service_id.is_empty(), "{:?}", r.body);
    let payload = json!([{"name": format!("{tag}-template"), "template": {
        "api_version": "6", "kind": "taskTemplate", "metadata": {"name": "t"},
        "spec": {"kernel": {"image": common::IMAGE}}}}]);
    let r = api
        .call(
            "POST",
            "/template/session",
            owner,
            &json!({"payload": payload.to_string()}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let template_id = r.json()[0]["id"].as_str().unwrap_or("").to_string();
    assert!(!template_id.is_empty(), "{:?}", r.body);

    let mut compared = 0;
    for (method, template) in signed_routes() {
        let owned = template.contains("{reference}")
            || template.starts_with("/folders/{id}")
            || template.starts_with("/services/{id}")
            || template.starts_with("/template/session/{id}");
        if !owned {
            continue;
        }
        // By name and by id: both must look like nothing.
        for (theirs_named, missing) in [
            (
                Owned {
                    session: &session_name,
                    folder: &folder_name,
                    service: &service_id,
                    template: &template_id,
                },
                Owned {
                    session: "nosuch-session",
                    folder: "nosuch-folder",
                    service: "00000000-0000-4000-8000-000000000002",
                    template: "00000000000040008000000000000003",
                },
            ),
            (
                Owned {
                    session: &session_id,
                    folder: &folder_id,
                    service: &service_id,
                    template: &template_id,
                },
                Owned {
                    session: "00000000-0000-4000-8000-000000000000",
                    folder: "00000000-0000-4000-8000-000000000001",
                    service: "00000000-0000-4000-8000-000000000002",
                    template: "00000000000040008000000000000003",
                },
            ),
        ] {
            let theirs = api
                .send(
                    &method,
                    &fill(&template, &theirs_named),
                    Some(other),
                    "application/json",
                    &[],
                    b"{}".to_vec(),
                )
                .await;
            let none = api
                .send(
                    &method,
                    &fill(&template, &missing),
                    Some(other),
                    "application/json",
                    &[],
                    b"{}".to_vec(),
                )
                .await;
            let neutral = |r: &common::Reply, o: &Owned<'_>| {
                let mut t = String::from_utf8_lossy(&r.body).to_string();
                for v in [o.session, o.folder, o.service, o.template] {
                    t = t.replace(v, "X");
                }
                t
            };
            assert_eq!(
                (theirs.status, neutral(&theirs, &theirs_named)),
                (none.status, neutral(&none, &missing)),
                "{method} {template}: {tag}' {} answer {} differently from nothing",
                fill(&template, &theirs_named),
                other.access_key
            );
            assert!(
                theirs.status >= 400,
                "{method} {template} let {} into {tag}' things",
                other.access_key
            );
            compared += 1;
        }
    }

    // Nothing they asked for happened: the session is live under its name, the folder, the
    // service and the template are there.
    let r = api
        .call(
            "GET",
            &format!("/session/{session_name}"),
            owner,
            &json!({}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let status = r.json()["status"].as_str().unwrap_or("").to_string();
    assert!(
        !matches!(
            status.as_str(),
            "TERMINATING" | "TERMINATED" | "CANCELLED" | "ERROR"
        ),
        "{status}"
    );
    let r = api
        .call("GET", &format!("/folders/{folder_id}"), owner, &json!({}))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.json()["name"], folder_name.as_str());
    let r = api
        .call("GET", &format!("/services/{service_id}"), owner, &json!({}))
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.json()["name"], service_name.as_str());
    let r = api
        .call(
            "GET",
            &format!("/template/session/{template_id}"),
            owner,
            &json!({}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    compared
}
