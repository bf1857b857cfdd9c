//! Resource groups on the wire: their fields, updates, warm pools and what a user sees.

use super::common::{self, ADMIN, Api, USER};
use super::{answer, body, no_content};
use bai_api::Problem;
use bai_api::resources::*;
use serde_json::{Value, json};

/// A group's warm pools: set, shown with the image resolved, refused with the reason (a bad
/// entry, an image nobody has, a shape no agent of the group can hold, a group without
/// agents), and a refused change changes nothing.
#[tokio::test]
async fn resource_group_warm_pools() {
    let api = Api::start_with_agent().await;
    let patch = |g: &'static str, v: Value| {
        let api = &api;
        async move {
            api.call("PATCH", &format!("/admin/resource-groups/{g}"), ADMIN, &v)
                .await
        }
    };
    let r = patch(
        "default",
        json!({"warm_pool": format!("{},cpu=0.5,mem=512m,count=2", common::IMAGE), "warm_pool_auto": 0}),
    )
    .await;
    let g: ResourceGroup = answer(&r, 200);
    assert_eq!(
        g.warm_pool,
        format!("{},cpu=0.5,mem=512m,shm=64m,count=2", common::IMAGE)
    );
    assert_eq!(g.warm_pool_auto, 0);
    let r = api
        .call(
            "POST",
            "/admin/resource-groups",
            ADMIN,
            &json!({"name": "empty"}),
        )
        .await;
    let created: ResourceGroup = answer(&r, 201);
    assert_eq!(created.warm_pool_auto, bai_core::pool::DEFAULT_AUTO);
    for (group, bad, says) in [
        ("default", json!({"warm_pool": "cpu=1"}), "needs an image"),
        (
            "default",
            json!({"warm_pool": format!("{},count=0", common::IMAGE)}),
            "count",
        ),
        ("default", json!({"warm_pool": "no/such:image"}), "no image"),
        (
            "default",
            json!({"warm_pool": format!("{},cpu=64", common::IMAGE)}),
            "no agent can hold",
        ),
        ("default", json!({"warm_pool_auto": 9}), "at most 8"),
        (
            "empty",
            json!({"warm_pool": common::IMAGE}),
            "has no agents",
        ),
    ] {
        let r = patch(group, bad.clone()).await;
        let p: Problem = answer(&r, 400);
        assert!(p.msg.contains(says), "{bad}: {p:?}");
    }
    let r = api
        .call("GET", "/resource-groups?all=true", ADMIN, &Value::Null)
        .await;
    let list: ResourceGroupList = answer(&r, 200);
    let default = list.resource_groups.iter().find(|g| g.name == "default");
    assert_eq!(
        default.map(|g| g.warm_pool.clone()),
        Some(format!(
            "{},cpu=0.5,mem=512m,shm=64m,count=2",
            common::IMAGE
        )),
        "a refused change changes nothing"
    );
    // A user may not change it.
    let r = api
        .call(
            "PATCH",
            "/admin/resource-groups/default",
            USER,
            &json!({"warm_pool": ""}),
        )
        .await;
    assert_eq!(r.status, 403, "{:?}", r.body);
}

#[tokio::test]
async fn resource_groups() {
    let api = Api::start_with_agent().await;
    let new = NewResourceGroup {
        name: "batch".into(),
        settings: ResourceGroupSettings {
            description: Some("long jobs".into()),
            is_public: Some(false),
            scheduler: Some(Scheduler::Drf),
            selector: Some(Selector::Concentrated),
            starvation_secs: Some(60),
            pending_timeout_secs: Some(3600),
            egress: None,
            warm_pool: None,
            warm_pool_auto: Some(2),
            fairshare_half_life_secs: None,
            fairshare_weights: None,
            fairshare_priority: None,
            preemption: Some(bai_core::preemption::PreemptionMode::Priority),
            preemption_grace_secs: Some(30),
            preemption_min_runtime_secs: None,
            preempt_interactive: None,
        },
    };
    let r = api
        .call("POST", "/admin/resource-groups", ADMIN, &body(&new))
        .await;
    let g: ResourceGroup = answer(&r, 201);
    assert_eq!(
        (g.scheduler, g.selector, g.pending_timeout_secs),
        (Scheduler::Drf, Selector::Concentrated, 3600)
    );
    assert_eq!(
        (g.preemption.mode, g.preemption.grace_secs),
        (bai_core::preemption::PreemptionMode::Priority, 30)
    );

    // A bare name takes the defaults.
    let bare = NewResourceGroup {
        name: "bare".into(),
        settings: ResourceGroupSettings::default(),
    };
    let r = api
        .call("POST", "/admin/resource-groups", ADMIN, &body(&bare))
        .await;
    let g: ResourceGroup = answer(&r, 201);
    assert_eq!(
        (g.scheduler, g.selector),
        (Scheduler::Fifo, Selector::Dispersed)
    );

    let change = ResourceGroupSettings {
        scheduler: Some(Scheduler::Lifo),
        selector: Some(Selector::RoundRobin),
        ..Default::default()
    };
    let r = api
        .call(
            "PATCH",
            "/admin/resource-groups/batch",
            ADMIN,
            &body(&change),
        )
        .await;
    let g: ResourceGroup = answer(&r, 200);
    assert_eq!(
        (g.scheduler, g.selector),
        (Scheduler::Lifo, Selector::RoundRobin)
    );
    assert_eq!(
        g.description, "long jobs",
        "fields left out keep their value"
    );
    assert_eq!(
        g.preemption.grace_secs, 30,
        "the preemption left out keeps its value"
    );

    // `roundrobin` is read as `round-robin`, by the server and by the type.
    let alias = json!({"selector": "roundrobin"});
    let typed: ResourceGroupSettings = serde_json::from_value(alias.clone()).expect("alias");
    assert_eq!(typed.selector, Some(Selector::RoundRobin));
    let r = api
        .call("PATCH", "/admin/resource-groups/bare", ADMIN, &alias)
        .await;
    let g: ResourceGroup = answer(&r, 200);
    assert_eq!(g.selector, Selector::RoundRobin);

    // Egress: a new group is under the default policy; an admin closes it with destinations
    // (kept sorted, without repeats) or opens it; a bad destination is refused, naming it,
    // and changes nothing.
    assert_eq!(g.egress.mode, bai_core::egress::EgressMode::Default);
    let closed = json!({"egress": {"mode": "closed", "allow": ["10.9.0.0/16:3128", "10.1.2.3", "10.1.2.3"]}});
    let r = api
        .call("PATCH", "/admin/resource-groups/bare", ADMIN, &closed)
        .await;
    let g: ResourceGroup = answer(&r, 200);
    assert_eq!(g.egress.summary(), "closed allow 10.1.2.3,10.9.0.0/16:3128");
    for bad in [
        json!({"egress": {"mode": "closed", "allow": ["10.0.0.0/33"]}}),
        json!({"egress": {"mode": "shut"}}),
        json!({"egress": {"mode": "default", "allow": ["metadata.internal"]}}),
    ] {
        let r = api
            .call("PATCH", "/admin/resource-groups/bare", ADMIN, &bad)
            .await;
        let p: Problem = answer(&r, 400);
        assert!(p.msg.contains("egress"), "{bad}: {p:?}");
    }
    let r = api
        .call("GET", "/resource-groups?all=true", ADMIN, &Value::Null)
        .await;
    let list: ResourceGroupList = answer(&r, 200);
    let bare = list.resource_groups.iter().find(|g| g.name == "bare");
    assert_eq!(
        bare.map(|g| g.egress.summary()).as_deref(),
        Some("closed allow 10.1.2.3,10.9.0.0/16:3128"),
        "a refused change changes nothing"
    );
    // A user may not change it.
    let r = api
        .call(
            "PATCH",
            "/admin/resource-groups/bare",
            USER,
            &json!({"egress": {"mode": "open"}}),
        )
        .await;
    assert_eq!(r.status, 403, "{:?}", r.body);
    let r = api
        .call(
            "PATCH",
            "/admin/resource-groups/bare",
            ADMIN,
            &json!({"egress": {"mode": "open", "allow": ["10.0.0.1"]}}),
        )
        .await;
    let g: ResourceGroup = answer(&r, 200);
    assert_eq!(g.egress.summary(), "open", "open keeps no destinations");

    let allow_user = GroupAccessChange {
        access_key: Some(USER.access_key.into()),
        project: None,
        allow: Some(true),
    };
    let r = api
        .call(
            "POST",
            "/admin/resource-groups/batch/access",
            ADMIN,
            &body(&allow_user),
        )
        .await;
    let a: GroupAccess = answer(&r, 200);
    assert_eq!(a.access_key.as_deref(), Some(USER.access_key));
    assert!(a.allowed && a.project.is_none());
    let deny_project = GroupAccessChange {
        access_key: None,
        project: Some("default".into()),
        allow: Some(false),
    };
    let r = api
        .call(
            "POST",
            "/admin/resource-groups/bare/access",
            ADMIN,
            &body(&deny_project),
        )
        .await;
    let a: GroupAccess = answer(&r, 200);
    assert_eq!(a.project.as_deref(), Some("default"));
    assert!(!a.allowed && a.access_key.is_none());

    let r = api
        .call("GET", "/resource-groups", USER, &Value::Null)
        .await;
    let mine: ResourceGroupList = answer(&r, 200);
    let names: Vec<&str> = mine
        .resource_groups
        .iter()
        .map(|g| g.name.as_str())
        .collect();
    assert!(names.contains(&"batch"), "allowed to the user: {names:?}");
    let default = mine
        .resource_groups
        .iter()
        .find(|g| g.name == "default")
        .expect("the default group");
    assert_eq!(default.agents, vec!["dummy-test".to_string()]);
    assert_eq!(default.capacity.cpu, "8");
    let r = api
        .call("GET", "/resource-groups?all=true", ADMIN, &Value::Null)
        .await;
    let all: ResourceGroupList = answer(&r, 200);
    assert!(all.resource_groups.len() >= 3);

    no_content(
        &api.call("DELETE", "/admin/resource-groups/bare", ADMIN, &Value::Null)
            .await,
    );
}
