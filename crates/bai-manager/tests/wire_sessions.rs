//! The sessions area's wire types (`bai_api::sessions`) are what the real router answers:
//! every JSON answer is read as its type and written back unchanged, and the requests are
//! sent as their types write them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

mod common;
#[path = "wire_sessions/queue.rs"]
mod queue;

use bai_api::Problem;
use bai_api::check::round_trip;
use bai_api::sessions::*;
use bai_core::stats::KernelStats;
use common::{ADMIN, Api, IMAGE, Keypair, Reply, USER};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Reads the body as `T`, or fails with what did not match.
fn typed<T: Serialize + DeserializeOwned>(reply: &Reply) -> T {
    round_trip::<T>(&reply.json()).unwrap_or_else(|e| panic!("{e}"))
}

/// An error answer with `status`, which must be a problem document.
fn problem(reply: &Reply, status: u16) -> Problem {
    assert_eq!(
        reply.status,
        status,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    typed::<Problem>(reply)
}

fn to_json<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).expect("a request body")
}

async fn get(api: &Api, path: &str, who: Keypair) -> Reply {
    api.call("GET", path, who, &Value::Null).await
}

/// What the official client 26.9.6 sends for `run` (wire contract §5.2), with the name
/// given.
fn official_create_body(name: &str) -> Value {
    json!({"tag": null, "name": name,
      "config": {"mounts": [], "mount_ids": [], "environ": {}, "resources": {}, "resource_opts": {},
                 "scalingGroup": null, "attach_network": null, "mount_map": {}, "mount_id_map": {},
                 "mount_options": {}, "preopen_ports": []},
      "dependencies": null, "callback_url": null, "architecture": "x86_64",
      "clusterSize": 1, "clusterMode": "single-node", "starts_at": null, "bootstrap_script": null,
      "owner_access_key": null, "domain": "default", "group": "default", "type": "interactive",
      "enqueueOnly": false, "maxWaitSeconds": 0, "reuseIfExists": true, "startupCommand": null,
      "image": IMAGE})
}

/// A create request as the type writes it.
fn create_request(name: &str, image: &str) -> CreateRequest {
    CreateRequest {
        name: Some(name.into()),
        ..CreateRequest::new(image)
    }
}

/// Polls the session until it has `status`.
async fn wait_for(api: &Api, reference: &str, status: SessionStatus) -> SessionInfo {
    common::poll(async || {
        let info: SessionInfo = typed(&get(api, &format!("/session/{reference}"), USER).await);
        (info.status == status).then_some(info)
    })
    .await
    .unwrap_or_else(|| panic!("session {reference} never got to {status:?}"))
}

/// `(event name, data)` of each server-sent event of a body.
fn sse_events(body: &str) -> Vec<(String, String)> {
    body.split("\n\n")
        .filter_map(|block| {
            let mut name = None;
            let mut data = String::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event:") {
                    name = Some(v.trim().to_string());
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.trim_start());
                }
            }
            name.map(|n| (n, data))
        })
        .collect()
}

#[tokio::test]
async fn a_running_session_from_create_to_its_end() {
    let api = Api::start_with_agent().await;
    // Idle checks need a policy with limits.
    api.m
        .store
        .put_policy(&bai_store::PolicyRow {
            name: "limited".into(),
            max_session_lifetime: 7200,
            idle_timeout: 3600,
            ..Default::default()
        })
        .expect("policy");
    api.m
        .store
        .set_keypair_policy(USER.access_key, "limited")
        .expect("assign policy");

    // The official client's body is a create request; the type's own body is accepted.
    let official: CreateRequest =
        serde_json::from_value(official_create_body("wire-run")).expect("the official body");
    assert_eq!(official.cluster_mode, Some(ClusterMode::SingleNode));
    let mut req = create_request("wire-run", IMAGE);
    req.config = Some(CreateConfig {
        resources: Some(
            [
                ("cpu".to_string(), NumberOrText::Text("1".into())),
                ("mem".to_string(), NumberOrText::Text("1g".into())),
            ]
            .into(),
        ),
        environ: Some([("GREETING".to_string(), "hi".to_string())].into()),
        preopen_ports: Some(ListOrText::List(vec![NumberOrText::Number(8080.into())])),
        ..Default::default()
    });
    let r = api.call("POST", "/session", USER, &to_json(&req)).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let created: CreateReply = typed(&r);
    assert_eq!(created.status, CreateStatus::Running);
    let id = created.session_id.clone();

    // Use to show: two readings make a sample and `live_stat`; traffic makes `network`.
    let info: SessionInfo = typed(&get(&api, &format!("/session/{id}"), USER).await);
    let kernel = uuid::Uuid::parse_str(&info.main_kernel_id).expect("kernel id");
    let session = uuid::Uuid::parse_str(&id).expect("session id");
    let slots = bai_core::ResourceSlots {
        cpu_milli: 1000,
        mem: 1 << 30,
        accel: Default::default(),
    };
    let now = bai_core::stats::now_ms();
    for (at, cpu) in [(now - 5000, 1_000_000_000), (now, 3_500_000_000)] {
        api.m.readings.stats.record(
            session,
            &slots,
            KernelStats {
                kernel_id: kernel,
                at_ms: at,
                cpu_used_ns: cpu,
                mem_bytes: 300 << 20,
                net_rx_bytes: 1000,
                net_tx_bytes: 2000,
                io_read_bytes: 4096,
                io_write_bytes: 8192,
                devices: vec![bai_core::accel::DeviceReading {
                    device: "0".into(),
                    util: 40.0,
                    mem_used: 1 << 30,
                    mem_total: 4 << 30,
                }],
            },
        );
    }
    api.m.traffic.of(session).add(10, 20);

    let info: SessionInfo = typed(&get(&api, &format!("/session/{id}"), USER).await);
    assert_eq!(info.status, SessionStatus::Running);
    assert_eq!(info.preopen_ports, [8080]);
    assert!(info.network.last_activity.is_some());
    let live: Value =
        serde_json::from_str(info.live_stat.as_deref().expect("live_stat")).expect("JSON text");
    assert!(live["cpu_util"]["pct"].is_string());
    let checks: Value = serde_json::from_str(&info.idle_checks).expect("JSON text");
    assert!(checks["network_timeout"].is_object(), "{checks}");

    let logs: Logs = typed(&get(&api, &format!("/session/{id}/logs"), USER).await);
    assert_eq!(logs.result.logs, "");
    let stats: Stats = typed(&get(&api, &format!("/session/{id}/stats"), USER).await);
    assert_eq!(stats.samples.len(), 1);
    // Per-device accelerator readings travel with the sample.
    assert_eq!(stats.samples[0].cuda_util, Some(40.0));
    assert_eq!(stats.samples[0].cuda_mem, Some(25.0));
    assert_eq!(stats.samples[0].devices[0].device, "0");
    assert!(stats.counters.is_some());
    assert!(
        stats
            .idle_checks
            .contains_key(&IdleChecker::SessionLifetime)
    );
    let hist: StatusHistory =
        typed(&get(&api, &format!("/session/{id}/status-history"), USER).await);
    assert!(hist.result.contains_key(&SessionStatus::Running));
    let sched: SchedulingHistory =
        typed(&get(&api, &format!("/session/{id}/scheduling-history"), USER).await);
    assert!(sched.result.iter().any(|h| !h.sub_steps.is_empty()));
    let filtered: SchedulingHistory = typed(
        &get(
            &api,
            &format!("/session/{id}/scheduling-history?phase=launch"),
            USER,
        )
        .await,
    );
    assert!(filtered.result.iter().all(|h| h.phase == "launch"));
    problem(
        &get(
            &api,
            &format!("/session/{id}/scheduling-history?result=nope"),
            USER,
        )
        .await,
        400,
    );

    // GraphQL reads its fixed arguments as their types: the same records, a page at a time;
    // an argument of the wrong kind is named; a refused change changes nothing.
    let q = "query($id: String!, $phase: String, $first: Int) {
        session_scheduling_histories(session_id: $id, phase: $phase, first: $first) {
            count edges { node { phase result from_status to_status sub_steps { step } } } } }";
    let a = api
        .gql(
            USER,
            q,
            json!({"id": id.to_string(), "phase": "launch", "first": 1}),
        )
        .await;
    let conn = &a["data"]["session_scheduling_histories"];
    assert_eq!(
        conn["count"].as_u64(),
        Some(filtered.result.len() as u64),
        "{a}"
    );
    let edges = conn["edges"].as_array().cloned().unwrap_or_default();
    assert_eq!(edges.len(), 1, "{a}");
    assert_eq!(edges[0]["node"]["phase"], "launch", "{a}");
    let literal = format!(
        "{{ session_scheduling_histories(session_id: \"{id}\", first: \"two\") {{ count }} }}"
    );
    let a = api.gql(USER, &literal, json!({})).await;
    let msg = a["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(msg.starts_with("first"), "{a}");
    let m = "mutation($input: ModifyComputeSessionInput!) {
        modify_compute_session(input: $input) { item { name } clientMutationId } }";
    let a = api
        .gql(
            USER,
            m,
            json!({"input": {"id": id.to_string(), "name": "wire-renamed", "priority": 3}}),
        )
        .await;
    assert!(a["errors"][0]["message"].as_str().is_some(), "{a}");
    let still: SessionInfo = typed(&get(&api, &format!("/session/{id}"), USER).await);
    assert_eq!(
        still.session_name, "wire-run",
        "a refused change renamed it"
    );
    let a = api
        .gql(
            USER,
            m,
            json!({"input": {"id": id.to_string(), "name": "wire-run", "clientMutationId": "c1"}}),
        )
        .await;
    let done = &a["data"]["modify_compute_session"];
    assert_eq!(done["clientMutationId"], "c1", "{a}");
    assert_eq!(done["item"]["name"], "wire-run", "{a}");

    let apps: Vec<App> = typed(&get(&api, &format!("/stream/session/{id}/apps"), USER).await);
    assert!(apps.iter().any(|a| a.protocol == AppProtocol::Preopen));
    // The dummy agent runs no apps: start-service is refused with a problem.
    let start = StartServiceRequest {
        app: "ttyd".into(),
        mode: Some(ProxyMode::Path),
        port: None,
        open_to_public: None,
        arguments: None,
        envs: None,
    };
    let r = api
        .call(
            "POST",
            &format!("/session/{id}/start-service"),
            USER,
            &to_json(&start),
        )
        .await;
    problem(&r, 400);
    let r = api
        .call(
            "POST",
            &format!("/session/{id}/start-service"),
            USER,
            &json!({"app": "nope"}),
        )
        .await;
    problem(&r, 404);

    // Upload (204), download of it, and of a file never uploaded (a problem).
    let boundary = "wirebound";
    let body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"src\"; filename=\"a.txt\"\r\nContent-Type: application/octet-stream\r\n\r\nhello\r\n--{boundary}--\r\n"
    );
    let r = api
        .send(
            "POST",
            &format!("/session/{id}/upload"),
            Some(USER),
            &format!("multipart/form-data; boundary={boundary}"),
            &[],
            body,
        )
        .await;
    assert_eq!(r.status, 204, "{}", String::from_utf8_lossy(&r.body));
    let r = api
        .send(
            "POST",
            &format!("/session/{id}/download?files=a.txt"),
            Some(USER),
            "",
            &[],
            "",
        )
        .await;
    assert_eq!(r.status, 200);
    assert!(
        String::from_utf8_lossy(&r.body).contains("hello"),
        "the uploaded file comes back"
    );
    let r = api
        .send(
            "POST",
            &format!("/session/{id}/download?files=b.txt"),
            Some(USER),
            "",
            &[],
            "",
        )
        .await;
    problem(&r, 400);

    // GraphQL: the envelope is typed, `data` is shaped by the query.
    let q = GqlRequest {
        query: "query($limit: Int!, $offset: Int!, $status: String) { compute_session_list(limit: $limit, offset: $offset, status: $status) { items { id name status idle_checks live_stat containers { id status } } total_count } }".into(),
        variables: Some(
            json!({"limit": 10, "offset": 0, "status": "RUNNING"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        ),
        operation_name: None,
    };
    let answer: GqlAnswer = typed(&api.call("POST", "/admin/gql", USER, &to_json(&q)).await);
    assert!(answer.errors.is_none());
    assert_eq!(answer.data["compute_session_list"]["total_count"], 1);
    let bad = GqlRequest {
        query: "query { no_such_field { id } }".into(),
        variables: None,
        operation_name: None,
    };
    let answer: GqlAnswer = typed(&api.call("POST", "/admin/gql", USER, &to_json(&bad)).await);
    assert!(answer.errors.is_some_and(|e| !e.is_empty()));
    let broken: GqlAnswer = typed(
        &api.call("POST", "/admin/gql", USER, &json!({"query": "query {"}))
            .await,
    );
    assert!(broken.data.is_null());
    problem(
        &api.call("POST", "/admin/gql", USER, &json!({"variables": {}}))
            .await,
        400,
    );

    // The end: the answer of DELETE, then a TERMINATED session with what it kept.
    let done: Destroyed = typed(
        &api.call("DELETE", &format!("/session/{id}"), USER, &Value::Null)
            .await,
    );
    assert_eq!(done.session_id, id);
    let ended = wait_for(&api, &id, SessionStatus::Terminated).await;
    assert!(ended.terminated_at.is_some());
    assert!(ended.last_stat.is_some());
    let _: StatusHistory = typed(&get(&api, &format!("/session/{id}/status-history"), USER).await);
    let _: Logs = typed(&get(&api, &format!("/session/{id}/logs"), USER).await);
    let _: Stats = typed(&get(&api, &format!("/session/{id}/stats"), USER).await);
    problem(
        &get(&api, &format!("/stream/session/{id}/apps"), USER).await,
        400,
    );

    // Its events: the stream replays them and ends with `server_close` after the last.
    let r = api
        .send(
            "GET",
            &format!("/events/session?sessionId={id}"),
            Some(USER),
            "",
            &[],
            "",
        )
        .await;
    assert_eq!(r.status, 200);
    let events = sse_events(&String::from_utf8_lossy(&r.body));
    assert!(events.len() > 3, "{events:?}");
    for (name, data) in &events {
        let name: EventName = serde_json::from_value(json!(name)).expect("an event name");
        let data: EventData = round_trip(&serde_json::from_str(data).expect("JSON data"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            matches!(data, EventData::Close(_)),
            name == EventName::ServerClose
        );
    }
    assert!(events.iter().any(|(n, _)| n == "kernel_started"));
    assert_eq!(events.last().map(|(n, _)| n.as_str()), Some("server_close"));
    problem(
        &api.send("GET", "/events/session", Some(USER), "", &[], "")
            .await,
        400,
    );
}

#[tokio::test]
async fn web_login_me_and_logout() {
    let api = Api::start().await;
    let hash = bai_manager::web::hash_password("correct horse").expect("hash");
    assert!(
        api.m
            .store
            .set_password_hash("user@test", &hash)
            .expect("store")
    );

    let login = LoginRequest {
        username: "user@test".into(),
        password: "correct horse".into(),
    };
    let body = serde_json::to_vec(&login).expect("JSON");
    let r = api
        .send("POST", "/server/login", None, "application/json", &[], body)
        .await;
    assert_eq!(r.status, 200);
    let reply: LoginReply = typed(&r);
    assert_eq!(reply.data.role, WebRole::User);
    let cookie = r
        .headers
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .expect("a session cookie")
        .to_string();

    let r = api
        .send(
            "GET",
            "/server/me",
            None,
            "",
            &[("cookie", cookie.clone())],
            "",
        )
        .await;
    let me: Me = typed(&r);
    assert_eq!(me.email, "user@test");

    let r = api
        .send(
            "POST",
            "/server/logout",
            None,
            "",
            &[("cookie", cookie.clone())],
            "",
        )
        .await;
    let out: LogoutReply = typed(&r);
    assert!(!out.authenticated);
    let r = api
        .send("GET", "/server/me", None, "", &[("cookie", cookie)], "")
        .await;
    problem(&r, 401);

    // A refused login is not a problem document (the web UI reads `authenticated`).
    let wrong = LoginRequest {
        username: "user@test".into(),
        password: "wrong".into(),
    };
    let body = serde_json::to_vec(&wrong).expect("JSON");
    let r = api
        .send("POST", "/server/login", None, "application/json", &[], body)
        .await;
    assert_eq!(r.status, 401);
    let refused: LoginRefusal = typed(&r);
    assert!(!refused.authenticated);
}
