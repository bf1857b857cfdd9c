//! The resources area's bodies in `bai-api` are what the server sends and accepts: every
//! request is built from its type, every answer is read as its type and written back
//! unchanged (`bai_api::check::round_trip`), by the real router.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

mod common;
#[path = "wire_resources/groups.rs"]
mod groups;

use bai_api::Problem;
use bai_api::check::round_trip;
use bai_api::resources::*;
use common::{ADMIN, Api, Reply, USER};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// The request body of `value`, as a client would send it.
fn body<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("a request type writes JSON")
}

/// The answer read as `T`, after checking its status.
fn answer<T: Serialize + DeserializeOwned>(r: &Reply, status: u16) -> T {
    assert_eq!(
        r.status,
        status,
        "{}",
        String::from_utf8_lossy(&r.body).into_owned()
    );
    round_trip::<T>(&r.json()).unwrap_or_else(|e| panic!("{e}"))
}

/// A 204 answer: nothing in the body.
fn no_content(r: &Reply) {
    assert_eq!(r.status, 204, "{:?}", r.body);
    assert!(r.body.is_empty(), "{:?}", r.body);
}

/// A slot map as a client gives it.
fn spec(cpu: Amount, mem: &str) -> ResourceSlotsSpec {
    ResourceSlotsSpec {
        cpu: Some(cpu),
        mem: Some(mem.into()),
        accelerators: Default::default(),
    }
}

#[tokio::test]
async fn presets_and_what_fits() {
    let api = Api::start_with_agent().await;
    let small = NewPreset {
        name: "small".into(),
        resource_slots: spec(Amount::from(1), "1g"),
        shared_memory: Some("256m".into()),
    };
    let r = api
        .call("POST", "/admin/resource-presets", ADMIN, &body(&small))
        .await;
    let p: Preset = answer(&r, 201);
    assert_eq!(p.shared_memory.as_deref(), Some("268435456"));
    assert_eq!(
        (p.resource_slots.cpu.as_str(), p.resource_slots.mem.as_str()),
        ("1", "1073741824")
    );
    let huge = NewPreset {
        name: "huge".into(),
        resource_slots: spec("64".into(), "512g"),
        shared_memory: None,
    };
    let r = api
        .call("POST", "/admin/resource-presets", ADMIN, &body(&huge))
        .await;
    let p: Preset = answer(&r, 201);
    assert_eq!(p.shared_memory, None, "sent as null");

    let r = api
        .call("GET", "/resource/presets", USER, &Value::Null)
        .await;
    let list: PresetList = answer(&r, 200);
    assert_eq!(list.presets.len(), 2);

    for check in [
        PresetCheck::default(),
        PresetCheck {
            scaling_group: Some("default".into()),
        },
    ] {
        let r = api
            .call("POST", "/resource/check-presets", USER, &body(&check))
            .await;
        let fits: PresetFits = answer(&r, 200);
        assert_eq!(fits.scaling_group, "default");
        assert_eq!(fits.keypair_limits.cpu, "Infinity", "the default policy");
        let fit = |name: &str| {
            fits.presets
                .iter()
                .find(|f| f.preset.name == name)
                .map(|f| f.allocatable)
        };
        assert_eq!((fit("small"), fit("huge")), (Some(true), Some(false)));
    }

    no_content(
        &api.call(
            "DELETE",
            "/admin/resource-presets/huge",
            ADMIN,
            &Value::Null,
        )
        .await,
    );
}

#[tokio::test]
async fn keypair_resource_policies() {
    let api = Api::start_with_agent().await;
    let capped = NewResourcePolicy {
        name: "capped".into(),
        max_concurrent_sessions: Some(2),
        max_pending_sessions: Some(5),
        total_resource_slots: Some(spec("4".into(), "8g")),
        max_session_lifetime: Some(3600),
        idle_timeout: Some(600),
        max_containers_per_session: Some(3),
    };
    let r = api
        .call("POST", "/admin/resource-policies", ADMIN, &body(&capped))
        .await;
    let p: ResourcePolicy = answer(&r, 201);
    assert_eq!(p.max_concurrent_sessions, Some(2));
    assert_eq!(p.max_containers_per_session, Some(3));
    assert_eq!(
        p.total_resource_slots.map(|s| s.mem),
        Some((8u64 << 30).to_string())
    );
    let open = NewResourcePolicy {
        name: "open".into(),
        max_concurrent_sessions: None,
        max_pending_sessions: None,
        total_resource_slots: None,
        max_session_lifetime: None,
        idle_timeout: None,
        max_containers_per_session: None,
    };
    let r = api
        .call("POST", "/admin/resource-policies", ADMIN, &body(&open))
        .await;
    let p: ResourcePolicy = answer(&r, 201);
    assert_eq!(
        (p.max_concurrent_sessions, p.total_resource_slots),
        (None, None)
    );

    let choice = PolicyChoice {
        name: "capped".into(),
    };
    let r = api
        .call(
            "POST",
            &format!("/admin/keypairs/{}/resource-policy", USER.access_key),
            ADMIN,
            &body(&choice),
        )
        .await;
    let a: PolicyAssignment = answer(&r, 200);
    assert_eq!(
        (a.access_key.as_str(), a.resource_policy.as_str()),
        (USER.access_key, "capped")
    );

    let r = api
        .call("GET", "/admin/resource-policies", ADMIN, &Value::Null)
        .await;
    let list: ResourcePolicyList = answer(&r, 200);
    let assigned = list
        .resource_policies
        .iter()
        .find(|p| p.policy.name == "capped")
        .expect("the new policy");
    assert_eq!(assigned.keypairs, vec![USER.access_key.to_string()]);

    // The cap shows in what fits.
    let r = api
        .call(
            "POST",
            "/resource/check-presets",
            USER,
            &body(&PresetCheck::default()),
        )
        .await;
    let fits: PresetFits = answer(&r, 200);
    assert_eq!(fits.keypair_limits.cpu, "4");

    no_content(
        &api.call(
            "DELETE",
            "/admin/resource-policies/open",
            ADMIN,
            &Value::Null,
        )
        .await,
    );
}

#[tokio::test]
async fn agents_and_users() {
    let api = Api::start_with_agent().await;
    let r = api.call("GET", "/agents", USER, &Value::Null).await;
    let list: AgentList = answer(&r, 200);
    let agent = list.agents.first().expect("the dummy agent");
    assert_eq!(
        (agent.id.as_str(), agent.scaling_group.as_str()),
        ("dummy-test", "default")
    );
    assert_eq!(agent.capacity.mem, (16u64 << 30).to_string());
    assert!(agent.devices.is_empty(), "the dummy agent has no devices");

    // An agent's accelerator devices, with amounts as decimal strings like the slots.
    {
        let handle = api
            .m
            .agents
            .all()
            .into_iter()
            .next()
            .expect("the dummy agent");
        let mut info = handle.info.write().unwrap();
        info.devices = vec![bai_core::accel::DeviceInfo {
            slot: "cuda.shares".into(),
            id: "0".into(),
            plugin: "cuda".into(),
            model: "NVIDIA H100 80GB HBM3".into(),
            memory: 80 << 30,
            numa_node: Some(0),
            capacity_milli: 1000,
            quantum_milli: 100,
        }];
    }
    let r = api.call("GET", "/agents", ADMIN, &Value::Null).await;
    let list: AgentList = answer(&r, 200);
    assert_eq!(
        list.agents[0].devices,
        vec![AgentDevice {
            slot: "cuda.shares".into(),
            id: "0".into(),
            plugin: "cuda".into(),
            model: "NVIDIA H100 80GB HBM3".into(),
            memory: 80 << 30,
            numa_node: Some(0),
            capacity: "1".into(),
            quantum: "0.1".into(),
        }]
    );

    let r = api
        .call("GET", "/admin/users/user@test", ADMIN, &Value::Null)
        .await;
    let u: UserKeypair = answer(&r, 200);
    assert_eq!(
        (u.access_key.as_str(), u.is_admin),
        (USER.access_key, false)
    );
}

#[tokio::test]
async fn projects_and_members() {
    let api = Api::start().await;
    let new = NewProject {
        name: "vision".into(),
        description: Some("image models".into()),
    };
    let r = api
        .call("POST", "/admin/projects", ADMIN, &body(&new))
        .await;
    let p: CreatedProject = answer(&r, 201);
    assert_eq!(p.description, "image models");
    let bare = NewProject {
        name: "scratch".into(),
        description: None,
    };
    let r = api
        .call("POST", "/admin/projects", ADMIN, &body(&bare))
        .await;
    let p: CreatedProject = answer(&r, 201);
    assert_eq!(p.description, "");

    let join = MembershipChange {
        email: "user@test".into(),
        member: Some(true),
    };
    let r = api
        .call(
            "POST",
            "/admin/projects/vision/members",
            ADMIN,
            &body(&join),
        )
        .await;
    let m: Membership = answer(&r, 200);
    assert!(m.member);

    let r = api.call("GET", "/projects", USER, &Value::Null).await;
    let mine: ProjectList = answer(&r, 200);
    let vision = mine
        .projects
        .iter()
        .find(|p| p.name == "vision")
        .expect("the user's new project");
    assert_eq!(vision.members, vec!["user@test".to_string()]);
    assert!(!mine.projects.iter().any(|p| p.name == "scratch"));

    no_content(
        &api.call("DELETE", "/admin/projects/scratch", ADMIN, &Value::Null)
            .await,
    );
}

#[tokio::test]
async fn errors_are_problems() {
    let api = Api::start().await;
    let r = api
        .call("GET", "/admin/users/nobody@nowhere", ADMIN, &Value::Null)
        .await;
    let p: Problem = answer(&r, 404);
    assert!(p.msg.contains("nobody@nowhere"), "{p:?}");

    let bad = json!({"name": "bad", "scheduler": "random"});
    assert!(serde_json::from_value::<NewResourceGroup>(bad.clone()).is_err());
    let r = api
        .call("POST", "/admin/resource-groups", ADMIN, &bad)
        .await;
    let p: Problem = answer(&r, 400);
    assert!(p.msg.contains("scheduler"), "{p:?}");

    let r = api
        .call(
            "DELETE",
            "/admin/resource-policies/default",
            ADMIN,
            &Value::Null,
        )
        .await;
    let _: Problem = answer(&r, 400);
}

/// A flag that is not a boolean is refused with a 400 naming it; it is never read as true
/// (`"allow": "false"` used to open the group).
#[tokio::test]
async fn flags_must_be_booleans() {
    let api = Api::start().await;
    let r = api
        .call(
            "POST",
            "/admin/resource-groups",
            ADMIN,
            &json!({"name": "closed", "is_public": false}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.json());
    for (path, field, body) in [
        (
            "/admin/resource-groups/closed/access",
            "allow",
            json!({"access_key": "AKUSERTEST", "allow": "false"}),
        ),
        (
            "/admin/projects/default/members",
            "member",
            json!({"email": "user@test", "member": 0}),
        ),
    ] {
        let r = api.call("POST", path, ADMIN, &body).await;
        assert_eq!(r.status, 400, "{path}: {}", r.json());
        let p: Problem = round_trip(&r.json()).expect("a problem");
        assert!(p.msg.starts_with(&format!("{field}: ")), "{}", p.msg);
        assert!(p.msg.contains("expected a boolean"), "{}", p.msg);
    }
    // The group stayed closed to the user.
    let groups = api
        .call("GET", "/resource-groups", USER, &json!({}))
        .await
        .json();
    assert!(!groups.to_string().contains("\"closed\""), "{groups}");
}
