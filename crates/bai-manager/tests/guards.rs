//! Issue 18's holes and operations, through the HTTP API: per-keypair rate limits with
//! Backend.AI's `X-RateLimit-*` headers and 429, revoked keypairs, web login throttling,
//! retry-safe creates (`Idempotency-Key`), the audit log, `/health` and `/metrics`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

mod common;

use common::{ADMIN, Api, USER};
use serde_json::{Value, json};

async fn modify_keypair(api: &Api, ak: &str, props: Value) -> Value {
    api.gql(ADMIN,
        "mutation($ak: String!, $p: ModifyKeyPairInput!) { modify_keypair(access_key: $ak, props: $p) { ok msg } }",
        json!({"ak": ak, "p": props}),
    )
    .await
}

fn header<'a>(r: &'a common::Reply, name: &str) -> &'a str {
    r.headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

#[tokio::test]
async fn a_keypair_over_its_rate_limit_gets_429_with_the_ratelimit_headers() {
    let api = Api::start().await;
    let v = modify_keypair(&api, USER.access_key, json!({"rate_limit": 3})).await;
    assert_eq!(v["data"]["modify_keypair"]["ok"], true, "{v}");
    for left in [2, 1, 0] {
        let r = api.call("GET", "/resource/presets", USER, &json!({})).await;
        assert_eq!(r.status, 200, "{:?}", r.body);
        assert_eq!(header(&r, "x-ratelimit-limit"), "3");
        assert_eq!(header(&r, "x-ratelimit-remaining"), left.to_string());
        assert_eq!(header(&r, "x-ratelimit-window"), "900");
    }
    let r = api.call("GET", "/resource/presets", USER, &json!({})).await;
    assert_eq!(r.status, 429);
    assert_eq!(
        r.json()["type"],
        "https://api.backend.ai/probs/too-many-requests"
    );
    assert!(
        r.json()["msg"]
            .as_str()
            .unwrap_or("")
            .contains("3 requests per 15 minutes")
    );
    assert!(header(&r, "retry-after").parse::<u64>().unwrap_or(0) > 0);
    assert_eq!(header(&r, "x-ratelimit-remaining"), "0");
    // Another keypair is not held back, and the limit is readable.
    let r = api
        .call("GET", "/resource/presets", ADMIN, &json!({}))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(header(&r, "x-ratelimit-limit"), "10000");
    let v = api
        .gql(
            ADMIN,
            "query($ak: String) { keypair(access_key: $ak) { access_key rate_limit is_active } }",
            json!({"ak": USER.access_key}),
        )
        .await;
    assert_eq!(v["data"]["keypair"]["rate_limit"], 3, "{v}");
    // Bad values are refused and change nothing.
    let v = modify_keypair(&api, USER.access_key, json!({"rate_limit": -1})).await;
    assert!(
        v["errors"][0]["message"]
            .as_str()
            .unwrap_or("")
            .contains("rate_limit"),
        "{v}"
    );
}

#[tokio::test]
async fn a_deactivated_keypair_is_refused_at_once_and_only_admins_may_deactivate() {
    let api = Api::start().await;
    let v = api.gql(USER,
        "mutation($ak: String!, $p: ModifyKeyPairInput!) { modify_keypair(access_key: $ak, props: $p) { ok msg } }",
        json!({"ak": ADMIN.access_key, "p": {"is_active": false}}),
    )
    .await;
    assert!(
        v["errors"][0]["message"]
            .as_str()
            .unwrap_or("")
            .contains("only administrators"),
        "{v}"
    );
    assert_eq!(
        api.call("GET", "/resource/presets", ADMIN, &json!({}))
            .await
            .status,
        200
    );

    let v = modify_keypair(&api, USER.access_key, json!({"is_active": false})).await;
    assert_eq!(v["data"]["modify_keypair"]["ok"], true, "{v}");
    let r = api.call("GET", "/resource/presets", USER, &json!({})).await;
    assert_eq!(r.status, 401, "{:?}", r.body);
    modify_keypair(&api, USER.access_key, json!({"is_active": true})).await;
    assert_eq!(
        api.call("GET", "/resource/presets", USER, &json!({}))
            .await
            .status,
        200
    );
}

async fn login(api: &Api, email: &str, password: &str) -> common::Reply {
    api.send(
        "POST",
        "/server/login",
        None,
        "application/json",
        &[],
        serde_json::to_vec(&json!({"username": email, "password": password})).expect("json"),
    )
    .await
}

#[tokio::test]
async fn repeated_wrong_passwords_throttle_that_email_and_are_audited() {
    let api = Api::start().await;
    for email in ["user@test", "admin@test"] {
        let hash = bai_manager::web::sessions::hash_password("right-password").expect("hash");
        assert!(api.m.store.set_password_hash(email, &hash).expect("set"));
    }
    for _ in 0..bai_ground::guard::logins::MAX_FAILURES {
        assert_eq!(login(&api, "user@test", "hunter2-typo").await.status, 401);
    }
    // Now even the right password waits.
    let r = login(&api, "user@test", "right-password").await;
    assert_eq!(r.status, 429, "{:?}", r.body);
    assert_eq!(r.json()["authenticated"], false);
    assert!(header(&r, "retry-after").parse::<u64>().unwrap_or(0) > 0);
    // Another account is not locked by it.
    let r = login(&api, "admin@test", "right-password").await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert!(header(&r, "set-cookie").contains("HttpOnly"));
    assert!(header(&r, "set-cookie").contains("SameSite=Strict"));

    let r = api
        .call(
            "GET",
            "/admin/audit?action=login&actor=user%40test",
            ADMIN,
            &json!({}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let entries = r.json()["entries"].as_array().cloned().unwrap_or_default();
    assert_eq!(entries.len(), bai_ground::guard::logins::MAX_FAILURES + 1);
    assert_eq!(entries[0]["detail"], "throttled");
    assert_eq!(entries[1]["outcome"], "refused");
    // The audit log never holds a password.
    assert!(!String::from_utf8_lossy(&r.body).contains("hunter2"));
}

fn create_body(name: &str) -> Value {
    json!({"name": name, "image": common::IMAGE, "enqueueOnly": true,
           "config": {"resources": {"cpu": 1, "mem": "1g"}}})
}

async fn create_keyed(api: &Api, key: &str, body: &Value) -> common::Reply {
    api.send(
        "POST",
        "/session",
        Some(USER),
        "application/json",
        &[("Idempotency-Key", key.to_string())],
        serde_json::to_vec(body).expect("json"),
    )
    .await
}

#[tokio::test]
async fn an_idempotency_key_creates_one_session_however_often_it_is_sent() {
    let api = Api::start_with_agent().await;
    let first = create_keyed(&api, "key-1", &create_body("once")).await;
    assert_eq!(first.status, 201, "{:?}", first.body);
    let id = first.json()["sessionId"].clone();
    for _ in 0..3 {
        let again = create_keyed(&api, "key-1", &create_body("once")).await;
        assert_eq!(again.status, 201, "{:?}", again.body);
        assert_eq!(again.json()["sessionId"], id);
    }
    // The same key with another request is refused; another key is another session.
    let other = create_keyed(&api, "key-1", &create_body("twice")).await;
    assert_eq!(other.status, 422, "{:?}", other.body);
    assert_eq!(other.json()["data"]["existingSessionId"], id);
    let second = create_keyed(&api, "key-2", &create_body("twice")).await;
    assert_eq!(second.status, 201);
    assert_ne!(second.json()["sessionId"], id);
    let bad = create_keyed(&api, "", &create_body("thrice")).await;
    assert_eq!(bad.status, 400);
    let total: i64 = api
        .m
        .store
        .session_counts()
        .expect("counts")
        .iter()
        .map(|c| c.count)
        .sum();
    assert_eq!(total, 2, "one session per key");
    // A key is the keypair's own: the administrator's key-1 is another session.
    let admin = api
        .send(
            "POST",
            "/session",
            Some(ADMIN),
            "application/json",
            &[("Idempotency-Key", "key-1".to_string())],
            serde_json::to_vec(&create_body("once")).expect("json"),
        )
        .await;
    assert_eq!(admin.status, 201);
    assert_ne!(admin.json()["sessionId"], id);
}

#[tokio::test]
async fn changes_are_audited_with_who_what_and_outcome_and_only_admins_read_them() {
    let api = Api::start_with_agent().await;
    let r = api
        .call("POST", "/session", USER, &create_body("audited"))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let id = r.json()["sessionId"].as_str().unwrap_or("").to_string();
    let r = api
        .call(
            "POST",
            "/session/audited/rename?name=renamed",
            USER,
            &json!({}),
        )
        .await;
    let rename_status = r.status;
    // A refused change is recorded too.
    assert_eq!(
        api.call(
            "POST",
            "/admin/resource-presets",
            USER,
            &json!({"name": "x"})
        )
        .await
        .status,
        403
    );
    modify_keypair(&api, USER.access_key, json!({"rate_limit": 100})).await;
    // Reading changes nothing and is not recorded.
    api.call("GET", "/session/renamed", USER, &json!({})).await;

    let r = api.call("GET", "/admin/audit", USER, &json!({})).await;
    assert_eq!(r.status, 403);
    let r = api.call("GET", "/admin/audit", ADMIN, &json!({})).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let entries = r.json()["entries"].as_array().cloned().unwrap_or_default();
    let actions: Vec<&str> = entries
        .iter()
        .filter_map(|e| e["action"].as_str())
        .collect();
    assert_eq!(
        actions,
        [
            "graphql modify_keypair",
            "POST /admin/resource-presets",
            "POST /session/{reference}/rename",
            "POST /session",
        ],
        "{entries:?}"
    );
    assert_eq!(entries[0]["actor"], "admin@test");
    assert_eq!(entries[0]["target"], USER.access_key);
    assert_eq!(entries[1]["outcome"], "refused");
    assert_eq!(entries[1]["detail"], "403");
    assert_eq!(
        entries[2]["outcome"],
        if rename_status < 400 { "ok" } else { "refused" }
    );
    assert_eq!(entries[3]["actor"], "user@test");
    assert_eq!(entries[3]["target"], id);
    assert_eq!(entries[3]["outcome"], "ok");
    // Filters.
    let r = api
        .call(
            "GET",
            "/admin/audit?action=POST%20/session*&limit=1",
            ADMIN,
            &json!({}),
        )
        .await;
    let only = r.json()["entries"].as_array().cloned().unwrap_or_default();
    assert_eq!(only.len(), 1);
    assert_eq!(only[0]["action"], "POST /session/{reference}/rename");
    let r = api
        .call("GET", "/admin/audit?since=yesterday", ADMIN, &json!({}))
        .await;
    assert_eq!(r.status, 400);

    // Retention: a pruning keeps what is younger than the retention and drops the rest.
    let count = |m: &bai_manager::state::Manager| {
        m.store
            .audit(&bai_store::AuditFilter {
                limit: 1000,
                ..Default::default()
            })
            .map(|e| e.len())
            .unwrap_or(0)
    };
    let before = count(&api.m);
    assert!(before >= 4);
    bai_ground::audit::prune(&api.m.store, std::time::Duration::from_secs(3600));
    assert_eq!(count(&api.m), before);
    bai_ground::audit::prune(&api.m.store, std::time::Duration::ZERO);
    assert_eq!(count(&api.m), 0);
}

#[tokio::test]
async fn health_is_open_and_metrics_need_a_token_or_an_admin() {
    let api = Api::start_with_agent().await;
    let r = api.send("GET", "/health", None, "", &[], Vec::new()).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["status"], "ok");
    assert_eq!(r.json()["database"], "ok");
    assert_eq!(r.json()["agents_alive"], 1);

    let r = api.send("GET", "/metrics", None, "", &[], Vec::new()).await;
    assert_eq!(r.status, 401);
    let r = api
        .send("GET", "/metrics", Some(USER), "", &[], Vec::new())
        .await;
    assert_eq!(r.status, 401);
    let r = api
        .send(
            "GET",
            "/metrics",
            None,
            "",
            &[("authorization", "Bearer guess".into())],
            Vec::new(),
        )
        .await;
    assert_eq!(r.status, 401, "no token is configured, so none is accepted");

    let r = api
        .call("POST", "/session", USER, &create_body("counted"))
        .await;
    assert_eq!(r.status, 201);
    let r = api
        .send("GET", "/metrics", Some(ADMIN), "", &[], Vec::new())
        .await;
    assert_eq!(r.status, 200);
    assert!(r.content_type().starts_with("text/plain"));
    let text = String::from_utf8_lossy(&r.body).to_string();
    for line in [
        "bai_session_events_total{kind=\"session_enqueued\"} 1",
        "bai_api_requests_total{method=\"POST\",route=\"/session\",status=\"201\"} 1",
        "bai_api_requests_total{method=\"GET\",route=\"/metrics\",status=\"401\"} 3",
        "bai_api_request_seconds_count{method=\"POST\",route=\"/session\"} 1",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "{line} missing from\n{text}"
        );
    }
    // The session is counted in whatever status it has reached by now.
    assert!(
        text.lines()
            .any(|l| l.starts_with("bai_sessions{") && l.contains("type=\"interactive\"} 1")),
        "{text}"
    );
    assert!(
        text.contains("bai_agent_up{agent=\"dummy-test\",state=\"ALIVE\""),
        "{text}"
    );
    // Every query is timed by the connection it used: the create wrote, the answers read.
    for kind in ["write", "read"] {
        let count = text
            .lines()
            .find_map(|l| {
                l.strip_prefix(&format!(
                    "bai_store_query_seconds_count{{kind=\"{kind}\"}} "
                ))
            })
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0);
        assert!(count > 0, "no {kind} queries timed in\n{text}");
    }
    // No session name or id becomes a label.
    assert!(!text.contains("counted"));
}

#[tokio::test]
async fn metrics_accept_the_configured_bearer_token() {
    let api = Api::start_configured(|c| c.metrics_token = Some("scrape-secret".into())).await;
    let r = api
        .send(
            "GET",
            "/metrics",
            None,
            "",
            &[("authorization", "Bearer scrape-secret".into())],
            Vec::new(),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert!(String::from_utf8_lossy(&r.body).contains("bai_up 1"));
    let r = api
        .send(
            "GET",
            "/metrics",
            None,
            "",
            &[("authorization", "Bearer scrape-secreT".into())],
            Vec::new(),
        )
        .await;
    assert_eq!(r.status, 401);
}

#[tokio::test]
async fn the_launcher_history_is_each_users_own_and_checked_on_the_server() {
    let api = Api::start().await;
    let r = api
        .call("GET", "/user/launcher-history", USER, &json!({}))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json(), json!({"entries": []}));
    let mine = json!({"entries": [{"id": "1", "label": "my favourite", "pinned": true,
                                   "at": "2026-11-24T09:00:00Z", "settings": {"name": "s1"}}]});
    let r = api.call("PUT", "/user/launcher-history", USER, &mine).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(
        api.call("GET", "/user/launcher-history", USER, &json!({}))
            .await
            .json(),
        mine
    );
    // Another user of the same browser (or anyone else) sees only their own.
    assert_eq!(
        api.call("GET", "/user/launcher-history", ADMIN, &json!({}))
            .await
            .json(),
        json!({"entries": []})
    );
    // A malformed history is refused and the stored one stays.
    let r = api
        .call(
            "PUT",
            "/user/launcher-history",
            USER,
            &json!({"entries": [{"label": 1}]}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.json()["msg"].as_str().unwrap_or("").contains("entry 0"));
    assert_eq!(
        api.call("GET", "/user/launcher-history", USER, &json!({}))
            .await
            .json(),
        mine
    );
}
