//! Idle checks of inference sessions (seed 000): a service's replicas are never reclaimed by
//! the idle checkers (the service decides how many run), but a bare inference session is
//! checked as any other.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

mod harness;

use bai_core::idle::Checker;
use bai_core::status::SessionStatus as S;
use bai_core::status::SessionType;
use harness::Plane;

#[tokio::test(start_paused = true)]
async fn only_a_services_replicas_are_exempt_from_the_idle_checks() {
    let h = Plane::start().await;
    h.store
        .put_policy(&bai_store::PolicyRow {
            name: "default".into(),
            max_session_lifetime: 7200,
            idle_timeout: 1800,
            ..Default::default()
        })
        .expect("policy");
    let bare = h.create("bare-infer", |s| s.session_type = SessionType::Inference);
    let row = h.wait_status(bare.id, S::Running).await;
    let checkers: Vec<Checker> = bai_ground::stats::view::reports(&h.readings, &row)
        .iter()
        .map(|r| r.checker)
        .collect();
    assert!(
        checkers.contains(&Checker::SessionLifetime) && checkers.contains(&Checker::NetworkTimeout),
        "a bare inference session is checked: {checkers:?}"
    );

    // Owned by a service's route: exempt.
    h.store
        .insert_route(&bai_store::RouteRow {
            id: uuid::Uuid::new_v4(),
            endpoint_id: uuid::Uuid::new_v4(),
            session_id: Some(row.id),
            status: "healthy".into(),
            traffic_ratio: 1.0,
            error: None,
            created_at: String::new(),
        })
        .expect("route");
    assert!(bai_ground::stats::view::reports(&h.readings, &row).is_empty());
}
