use super::*;
use serde_json::{Value, json};

const NOW: &str = "2026-11-27T12:00:00Z";

fn now() -> DateTime<Utc> {
    NOW.parse().unwrap()
}

fn spec_with(
    body: Value,
    preset: Option<(&ResourceSlots, Option<u64>)>,
) -> Result<SessionSpec, Problem> {
    // As the server reads a body: every spelling first.
    let req: CreateRequest =
        crate::read::from_value(super::super::canonical_create_body(body)).unwrap();
    let shares = [AccelSlot {
        name: "cuda.shares".into(),
        quantum_milli: 100,
    }];
    req.to_spec(&SpecContext {
        preset,
        accel_slots: &shares,
        reserved_ports: &[2000, 8080],
        now: now(),
    })
}

fn spec(body: Value) -> Result<SessionSpec, Problem> {
    spec_with(body, None)
}

fn refused(body: Value) -> String {
    spec(body).unwrap_err().msg
}

#[test]
fn defaults_fill_what_is_not_given() {
    let s = spec(json!({"image": "python"})).unwrap();
    assert_eq!(s, SessionSpec::new("python", s.resources.clone()));
    assert_eq!(s.resources.slots.cpu_milli, 1000);
    assert_eq!(s.resources.slots.mem, 1 << 30);
    assert_eq!(s.resources.shmem, 64 << 20);
    assert_eq!((s.priority, s.count, s.cluster_size), (10, 1, 1));
    assert!(s.reuse_if_exists && !s.enqueue_only);
}

#[test]
fn every_field_is_carried_over() {
    let s = spec(json!({
        "image": "python", "name": "train-1", "type": "batch",
        "startupCommand": "python train.py", "batch_timeout": "5m", "startsAt": "90s",
        "group": "lab", "domain": "d1", "priority": 50, "count": 3, "tag": "t",
        "clusterSize": 2, "clusterMode": "multi-node", "enqueueOnly": true,
        "maxWaitSeconds": 7, "reuseIfExists": false, "dependencies": ["prep"],
        "config": {
            "resources": {"cpu": 2, "mem": "2g", "gpu": "0.5"},
            "resource_opts": {"shmem": "128m"},
            "scalingGroup": "gpu", "environ": {"EPOCHS": "3"},
            "mounts": ["data"], "mount_map": {"data": "/home/work/in"},
            "mount_ids": ["3f2a"], "preopen_ports": "9000, 9001", "agentList": "agent-2"
        }
    }))
    .unwrap();
    assert_eq!(s.name.as_ref().map(|n| n.as_str()), Some("train-1"));
    assert_eq!(s.session_type, SessionType::Batch);
    assert_eq!(s.batch_timeout_secs, Some(300));
    assert_eq!(s.starts_at, Some(now() + chrono::Duration::seconds(90)));
    assert_eq!((s.project.as_str(), s.domain.as_str()), ("lab", "d1"));
    assert_eq!((s.priority, s.count), (50, 3));
    assert_eq!(
        (s.cluster_mode, s.cluster_size),
        (ClusterMode::MultiNode, 2)
    );
    assert_eq!(s.resources.slots.cpu_milli, 2000);
    assert_eq!(s.resources.slots.accel["cuda.shares"], 500);
    assert_eq!(s.resources.shmem, 128 << 20);
    assert_eq!(s.scaling_group.as_deref(), Some("gpu"));
    assert_eq!(s.agent.as_deref(), Some("agent-2"));
    assert_eq!(s.environ["EPOCHS"], "3");
    assert_eq!(
        s.mounts,
        vec![
            MountAsk {
                folder: FolderRef::Name("data".into()),
                target: Some("/home/work/in".into())
            },
            MountAsk {
                folder: FolderRef::Id("3f2a".into()),
                target: None
            },
        ]
    );
    assert_eq!(s.preopen_ports, vec![9000, 9001]);
    assert_eq!(s.dependencies, vec!["prep".to_string()]);
    assert!(s.enqueue_only && !s.reuse_if_exists);
    assert_eq!(s.max_wait_secs, 7);
}

#[test]
fn a_preset_fills_in_and_the_request_wins() {
    let preset = ResourceSlots {
        cpu_milli: 4000,
        mem: 8 << 30,
        accel: BTreeMap::new(),
    };
    let s = spec_with(
        json!({"image": "python", "config": {"resources": {"cpu": 1}, "preset": "big"}}),
        Some((&preset, Some(1 << 30))),
    )
    .unwrap();
    assert_eq!(s.resources.slots.cpu_milli, 1000);
    assert_eq!(s.resources.slots.mem, 8 << 30);
    assert_eq!(s.resources.shmem, 1 << 30);
}

#[test]
fn bad_requests_are_refused_with_the_reason() {
    assert!(refused(json!({"image": "python", "type": "system"})).contains("platform itself"));
    assert!(refused(json!({"image": "python", "type": "batch"})).contains("startup command"));
    assert!(refused(json!({"image": "python", "batch_timeout": "5m"})).contains("only to batch"));
    assert!(
        refused(json!({"image": "python", "type": "batch", "startupCommand": "x", "batch_timeout": "soon"}))
            .contains("not a duration")
    );
    assert!(refused(json!({"image": "python", "startsAt": "5m"})).contains("only to batch"));
    assert!(refused(json!({"image": "python", "name": "a b"})).contains("a b"));
    assert!(refused(json!({"image": "python", "priority": 101})).contains("0 to 100"));
    assert!(refused(json!({"image": "python", "count": 0})).contains("1 to 100"));
    assert!(refused(json!({"image": "python", "clusterSize": 0})).contains("clusterSize 0"));
    let too_many = spec(json!({"image": "python", "clusterSize": 1000})).unwrap_err();
    assert_eq!(
        too_many.error_code.as_deref(),
        Some("session_create_unavailable")
    );
    assert!(
        refused(json!({"image": "python", "config": {"agentList": ["a", "b"]}}))
            .contains("one agent")
    );
    assert!(
        refused(json!({"image": "python", "config": {"environ": {"BAI_X": "1"}}}))
            .contains("reserved")
    );
    assert!(
        refused(json!({"image": "python", "config": {"resources": {"mem": "lots"}}}))
            .contains("mem")
    );
    let port = |p: Value| refused(json!({"image": "python", "config": {"preopen_ports": p}}));
    assert!(port(json!([80])).contains("1024 to 65535"));
    assert!(port(json!("9000,9000")).contains("twice"));
    assert!(port(json!([8080])).contains("built-in app"));
    let seventeen: Vec<u32> = (10000..10017).collect();
    assert!(port(json!(seventeen)).contains("at most 16"));
}

#[test]
fn starts_at_reads_times_and_delays() {
    let at = |s: &str| parse_starts_at(s, now());
    assert_eq!(
        at("2026-11-22T10:00:00+00:00").unwrap().to_rfc3339(),
        "2026-11-22T10:00:00+00:00"
    );
    assert_eq!(
        at("2026-11-22 10:00:00").unwrap().to_rfc3339(),
        "2026-11-22T10:00:00+00:00"
    );
    assert_eq!(at("1h").unwrap(), now() + chrono::Duration::hours(1));
    assert!(at("tomorrow-ish").is_err());
}
