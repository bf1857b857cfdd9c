//! Request bodies that clients spell in several ways (`POST /session`, `POST /services`, an
//! auto-scaling rule's fields) and the file operations' bodies are read as their `bai_api`
//! types: every spelling reads, the first one given wins, and a field of the wrong kind is
//! a 400 that names it and changes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

mod common;

use bai_api::sessions::{CreateReply, SessionInfo, SessionType};
use common::{Api, IMAGE, Reply, USER};
use serde_json::{Value, json};

fn problem_msg(reply: &Reply, status: u16) -> String {
    assert_eq!(
        reply.status,
        status,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    reply.json()["msg"].as_str().unwrap_or_default().to_string()
}

/// Whether the user has a session of this name.
async fn exists(api: &Api, name: &str) -> bool {
    let r = api
        .call("GET", &format!("/session/{name}"), USER, &Value::Null)
        .await;
    assert!(matches!(r.status, 200 | 404), "{}", r.status);
    r.status == 200
}

#[tokio::test]
async fn every_spelling_of_a_create_body_reads_and_the_first_given_wins() {
    let api = Api::start_with_agent().await;
    let body = json!({
        "lang": IMAGE,
        "image": "",
        "clientSessionToken": "spelled-first",
        "sessionName": "spelled-second",
        "sessionType": "INTERACTIVE",
        "tag": "",
        "enqueueOnly": true,
        "config": {
            "cluster_size": 1,
            "cluster_mode": "SINGLE_NODE",
            "scaling_group": "default",
            "resources": {"cpu": "1", "mem": 268435456},
            "environ": {"THREADS": 4, "EMPTY": null},
        },
    });
    let r = api.call("POST", "/session", USER, &body).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let created: CreateReply = serde_json::from_value(r.json()).expect("a create reply");
    assert_eq!(created.session_name, "spelled-first");
    let info = api
        .call("GET", "/session/spelled-first", USER, &Value::Null)
        .await;
    let info: SessionInfo = serde_json::from_value(info.json()).expect("a session");
    assert_eq!(info.kind, SessionType::Interactive);
    assert_eq!(info.image, IMAGE);
    assert_eq!(info.tag, None);
    assert!(!exists(&api, "spelled-second").await);
}

#[tokio::test]
async fn a_create_field_of_the_wrong_kind_is_named_and_nothing_is_made() {
    let api = Api::start_with_agent().await;
    let cases = [
        (
            json!({"image": IMAGE, "name": "bad-cpu", "config": {"resources": {"cpu": true}}}),
            "config.resources.cpu: invalid type: boolean `true`, expected a number, or a text",
        ),
        (
            json!({"image": IMAGE, "name": "bad-flag", "enqueueOnly": "yes"}),
            "enqueueOnly: invalid type: string \"yes\", expected a boolean",
        ),
        (
            json!({"image": IMAGE, "name": "bad-mode", "clusterMode": "ring"}),
            "clusterMode: unknown variant `ring`",
        ),
        (
            json!({"image": IMAGE, "name": "bad-mount", "config": {"mounts": ["a", 1]}}),
            "config.mounts[1]: invalid type: integer `1`, expected a string",
        ),
        (
            json!({"image": IMAGE, "name": "bad-ports", "config": {"preopen_ports": {"a": 1}}}),
            "config.preopen_ports: invalid type: map, expected a list, or one text",
        ),
        (json!({"name": "no-image", "lang": ""}), "no image given"),
    ];
    for (body, want) in cases {
        let r = api.call("POST", "/session", USER, &body).await;
        let msg = problem_msg(&r, 400);
        assert!(msg.starts_with(want), "{body}: {msg}");
        assert!(!exists(&api, body["name"].as_str().unwrap_or("-")).await);
    }
}

#[tokio::test]
async fn a_service_body_of_the_wrong_kind_is_named_with_the_parsing_code() {
    let api = Api::start_with_agent().await;
    let cases = [
        (
            json!({"service_name": "svc-a", "replicas": 1, "image": IMAGE,
                   "open_to_public": "yes", "config": {"model": "m"}}),
            "open_to_public: invalid type: string \"yes\", expected a boolean",
        ),
        (
            json!({"name": "svc-b", "desiredSessionCount": "x", "image": IMAGE,
                   "config": {"model_id": "m"}}),
            "replicas \"x\" is not a whole number",
        ),
        (
            json!({"name": "svc-c", "replicas": 1, "image": IMAGE,
                   "config": {"model": "m", "resources": {"mem": [1]}}}),
            "config.resources.mem: invalid type: sequence",
        ),
        (
            json!({"name": "svc-d", "replicas": 1, "lang": IMAGE, "config": {}}),
            "config.model is required",
        ),
    ];
    for (body, want) in cases {
        let r = api.call("POST", "/services", USER, &body).await;
        let msg = problem_msg(&r, 400);
        assert!(msg.starts_with(want), "{body}: {msg}");
        assert_eq!(
            r.json()["error_code"],
            "api_parsing_invalid-parameters",
            "{body}"
        );
    }
    let list = api.call("GET", "/services", USER, &Value::Null).await;
    assert_eq!(list.json(), json!([]));
}

#[tokio::test]
async fn file_operation_bodies_name_the_field_at_fault() {
    let api = Api::start_with_agent().await;
    let r = api
        .call("POST", "/folders", USER, &json!({"name": "spelling-data"}))
        .await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let id = r.json()["id"].as_str().expect("an id").to_string();
    let mkdir = format!("/folders/{id}/mkdir");
    let r = api
        .call(
            "POST",
            &mkdir,
            USER,
            &json!({"path": "kept", "parents": true}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));

    let msg = problem_msg(
        &api.call("POST", &mkdir, USER, &json!({"path": ["a", 1]}))
            .await,
        400,
    );
    assert!(msg.starts_with("path: a path, or a list of paths"), "{msg}");
    let msg = problem_msg(
        &api.call(
            "POST",
            &mkdir,
            USER,
            &json!({"path": "b", "exist_ok": "no"}),
        )
        .await,
        400,
    );
    assert!(msg.starts_with("exist_ok: invalid type"), "{msg}");
    let msg = problem_msg(&api.call("POST", &mkdir, USER, &json!({})).await, 400);
    assert!(msg.starts_with("path is required"), "{msg}");

    let delete = format!("/folders/{id}/delete-files");
    let msg = problem_msg(
        &api.call("DELETE", &delete, USER, &json!({"files": ["kept", 2]}))
            .await,
        400,
    );
    assert!(
        msg.starts_with("files[1]: invalid type: integer `2`, expected a string"),
        "{msg}"
    );
    let msg = problem_msg(
        &api.call("DELETE", &delete, USER, &json!({"files": []}))
            .await,
        400,
    );
    assert!(msg.starts_with("files is required"), "{msg}");

    // Nothing was deleted, and nothing made but the first directory.
    let listing = api
        .call("GET", &format!("/folders/{id}/files"), USER, &Value::Null)
        .await;
    let names: Vec<String> = listing.json()["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|f| f["name"].as_str().map(str::to_string))
        .collect();
    assert_eq!(names, ["kept"]);
}

const DEFINITION: &str = "models:\n  - name: m\n    model_path: /models\n    service:\n      \
    start_command: [python3, -m, http.server, \"8000\"]\n      port: 8000\n";

/// A service of the user's (no replicas), on a model folder with a definition; its id.
async fn service(api: &Api, name: &str) -> String {
    let model = format!("{name}-model");
    let r = api
        .call(
            "POST",
            "/folders",
            USER,
            &json!({"name": model, "usage_mode": "model"}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let id = uuid::Uuid::parse_str(r.json()["id"].as_str().unwrap_or("")).expect("folder id");
    let folder = api.m.store.vfolder(id).expect("store").expect("the folder");
    let dir = api.m.storage.folder_dir(&folder).expect("its directory");
    std::fs::write(dir.join("model-definition.yaml"), DEFINITION).expect("the definition");
    let r = api
        .call(
            "POST",
            "/services",
            USER,
            &json!({"name": name, "image": IMAGE, "replicas": 0,
                    "config": {"model": model, "resources": {"cpu": 1, "mem": "1g"}}}),
        )
        .await;
    assert!(r.status < 300, "{:?}", r.body);
    r.json()["endpoint_id"].as_str().unwrap_or("").to_string()
}

#[tokio::test]
async fn rule_fields_read_in_any_case_null_clears_and_a_bad_field_is_named() {
    use bai_api::services::{Comparator, MetricSource, Rule, RuleList};
    let api = Api::start_with_agent().await;
    let svc = service(&api, "rulesvc").await;
    let rules = format!("/services/{svc}/rules");
    // Backend.AI's spelling: enum words in lower case, numbers as text.
    let r = api
        .call(
            "POST",
            &rules,
            USER,
            &json!({
            "metric_source": "inference_framework", "metric_name": "inflight",
            "threshold": "2", "comparator": "greater_than", "step_size": "1",
            "min_replicas": "1", "max_replicas": 3, "cooldown_seconds": "5"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let rule: Rule = serde_json::from_value(r.json()).expect("a rule");
    assert_eq!(rule.metric_source, MetricSource::InferenceFramework);
    assert_eq!(rule.comparator, Some(Comparator::GreaterThan));
    assert_eq!(
        (rule.step_size, rule.min_replicas, rule.max_replicas),
        (Some(1), Some(1), Some(3))
    );
    assert_eq!(rule.cooldown_seconds, 5);
    let one = format!("{rules}/{}", rule.id);

    // null clears a bound; a field left out keeps its value.
    let r = api
        .call(
            "PATCH",
            &one,
            USER,
            &json!({"min_replicas": null, "enabled": false}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let changed: Rule = serde_json::from_value(r.json()).expect("a rule");
    assert_eq!(
        (changed.min_replicas, changed.max_replicas),
        (None, Some(3))
    );
    assert!(!changed.enabled);

    // Refusals name the field and change nothing.
    for (body, field) in [
        (json!({"comparator": "bigger"}), "comparator"),
        (json!({"step_size": "one"}), "step_size"),
        (json!({"enabled": "no"}), "enabled"),
        (json!({"metric_source": "prometheus"}), "metric_source"),
        (json!({"colour": "red"}), "colour"),
        (json!({"min_replicas": 5}), "min_replicas"),
    ] {
        let msg = problem_msg(&api.call("PATCH", &one, USER, &body).await, 400);
        assert!(msg.contains(field), "{body}: {msg}");
    }
    let list = api.call("GET", &rules, USER, &Value::Null).await;
    let list: RuleList = serde_json::from_value(list.json()).expect("the rules");
    assert_eq!(list.rules, vec![changed.clone()]);

    // A rule is changed only through its own service: through another, it is not found and
    // stays as it was.
    let other = service(&api, "rulesvc2").await;
    let r = api
        .call(
            "PATCH",
            &format!("/services/{other}/rules/{}", rule.id),
            USER,
            &json!({"enabled": true}),
        )
        .await;
    assert_eq!(r.status, 404, "{}", String::from_utf8_lossy(&r.body));
    let list = api.call("GET", &rules, USER, &Value::Null).await;
    let list: RuleList = serde_json::from_value(list.json()).expect("the rules");
    assert!(
        !list.rules[0].enabled,
        "changed through another service: {:?}",
        list.rules
    );
}
