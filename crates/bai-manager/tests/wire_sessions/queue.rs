//! Sessions that wait or are refused on the wire: the queue's answers and its problems.

use super::*;

#[tokio::test]
async fn queued_sessions_and_refusals() {
    let api = Api::start_with_agent().await;
    // A batch session that may start only in an hour stays PENDING.
    let mut req = create_request("wire-later", IMAGE);
    req.session_type = Some(SessionType::Batch);
    req.startup_command = Some("true".into());
    req.starts_at = Some("1h".into());
    req.batch_timeout = Some(NumberOrText::Text("30m".into()));
    req.enqueue_only = Some(true);
    let r = api.call("POST", "/session", USER, &to_json(&req)).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let created: CreateReply = typed(&r);
    assert_eq!(created.status, CreateStatus::Pending);
    assert!(created.sessions.is_none());

    // Its info, once the scheduler looked at it: why it waits.
    wait_for(&api, "wire-later", SessionStatus::Pending).await;
    let info: SessionInfo = common::poll(async || {
        let info: SessionInfo = typed(&get(&api, "/session/wire-later", USER).await);
        info.pending.is_some().then_some(info)
    })
    .await
    .expect("the scheduler says why it waits");
    assert_eq!(info.kind, SessionType::Batch);
    assert_eq!(info.batch_timeout, Some(1800));
    let _: StatusHistory = typed(&get(&api, "/session/wire-later/status-history", USER).await);
    let _: SchedulingHistory =
        typed(&get(&api, "/session/wire-later/scheduling-history", USER).await);
    let _: Stats = typed(&get(&api, "/session/wire-later/stats", USER).await);

    // The same name again: reused (200) or refused (409, with the existing id).
    let mut again = req.clone();
    again.reuse_if_exists = Some(true);
    let r = api.call("POST", "/session", USER, &to_json(&again)).await;
    assert_eq!(r.status, 200);
    let reused: CreateReply = typed(&r);
    assert!(!reused.created);
    again.reuse_if_exists = Some(false);
    let p = problem(
        &api.call("POST", "/session", USER, &to_json(&again)).await,
        409,
    );
    assert!(p.data.is_some());

    // `count`: several sessions in one go.
    let mut many = req.clone();
    many.name = Some("wire-many".into());
    many.count = Some(2);
    let r = api.call("POST", "/session", USER, &to_json(&many)).await;
    assert_eq!(r.status, 201);
    let created: CreateReply = typed(&r);
    assert_eq!(created.sessions.map(|s| s.len()), Some(2));

    // Rename (204), and a name that is taken (409).
    let r = api
        .call(
            "POST",
            "/session/wire-later/rename?name=wire-renamed",
            USER,
            &Value::Null,
        )
        .await;
    assert_eq!(r.status, 204);
    problem(
        &api.call(
            "POST",
            "/session/wire-renamed/rename?name=wire-many-1",
            USER,
            &Value::Null,
        )
        .await,
        409,
    );
    problem(
        &api.call("POST", "/session/wire-renamed/rename", USER, &Value::Null)
            .await,
        400,
    );

    // The errors of each kind are problems.
    problem(
        &api.call(
            "POST",
            "/session",
            USER,
            &to_json(&create_request("wire-x", "no-such-image")),
        )
        .await,
        400,
    );
    problem(&get(&api, "/session/no-such-session", USER).await, 404);
    problem(
        &get(&api, "/session/wire-renamed/logs?kernel_id=nope", USER).await,
        404,
    );
    let mut other = create_request("wire-other", IMAGE);
    other.owner_access_key = Some(ADMIN.access_key.into());
    problem(
        &api.call("POST", "/session", USER, &to_json(&other)).await,
        403,
    );
    let r = api
        .send("GET", "/session/wire-renamed", None, "", &[], "")
        .await;
    problem(&r, 401);
    let r = api
        .send(
            "POST",
            "/session",
            Some(USER),
            "application/json",
            &[],
            "{not json",
        )
        .await;
    problem(&r, 400);
    problem(
        &get(&api, "/stream/session/wire-renamed/apps", USER).await,
        400,
    );

    // Ending a PENDING session cancels it.
    let done: Destroyed = typed(
        &api.call("DELETE", "/session/wire-renamed", USER, &Value::Null)
            .await,
    );
    assert_eq!(done.status, SessionStatus::Cancelled);
    assert_eq!(done.stats.status, "cancelled");
    let ended: SessionInfo =
        typed(&get(&api, &format!("/session/{}", done.session_id), USER).await);
    assert_eq!(ended.status, SessionStatus::Cancelled);
}

#[tokio::test]
async fn a_group_without_agents_is_a_problem() {
    let api = Api::start_with_agent().await;
    api.m
        .store
        .put_resource_group(&bai_store::ResourceGroupRow::new("empty"))
        .expect("group");
    let mut req = create_request("wire-none", IMAGE);
    req.scaling_group = Some("empty".into());
    let r = api.call("POST", "/session", USER, &to_json(&req)).await;
    problem(&r, 503);
}
