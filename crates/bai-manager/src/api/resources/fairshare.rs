//! `GET /admin/fairshare`: each resource group's share tree (shares, decayed usage,
//! factor), as `sshare` prints it; `PUT /admin/fairshare/shares`: an administrator's shares.

use super::{existing_group, typed_body};
use crate::error::ApiResult;
use crate::state::Manager;
use axum::Json;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use bai_api::resources::{
    FairShareChange, FairShareGroup, FairShareNode, FairShareReport, Scheduler,
};
use bai_control::scheduler::fairshare as fs;
use bai_core::Problem;
use bai_sched::Sequencer;
use bai_sched::fairshare::Level;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Debug, Deserialize, Default)]
pub struct GroupQuery {
    #[serde(default)]
    group: Option<String>,
}

fn scheduler_word(s: &str) -> Scheduler {
    match Sequencer::parse(s).unwrap_or_default() {
        Sequencer::Fifo => Scheduler::Fifo,
        Sequencer::Lifo => Scheduler::Lifo,
        Sequencer::Drf => Scheduler::Drf,
        Sequencer::FairShare => Scheduler::Fairshare,
    }
}

/// `GET /admin/fairshare[?group=G]`.
pub async fn report(
    State(m): State<Arc<Manager>>,
    Query(q): Query<GroupQuery>,
) -> ApiResult<Json<FairShareReport>> {
    let groups = match &q.group {
        Some(g) => vec![existing_group(&m, g)?],
        None => m.store.resource_groups()?,
    };
    let shares = fs::shares(&m.store)?;
    let now = chrono::Utc::now();
    // Users are shown by email (their id when it is unknown).
    let mut emails: HashMap<String, String> = HashMap::new();
    let mut out = Vec::new();
    for g in groups {
        let tree = fs::tree(&m.store, &g, &shares, std::iter::empty(), now)?;
        let policy = fs::policy_of(&g);
        let mut nodes = Vec::new();
        for (depth, n) in tree.walk() {
            let name = if n.level == Level::User {
                match emails.get(&n.name) {
                    Some(e) => e.clone(),
                    None => {
                        let e = m
                            .store
                            .user_by_id(&n.name)?
                            .map(|u| u.email)
                            .unwrap_or_else(|| n.name.clone());
                        emails.insert(n.name.clone(), e.clone());
                        e
                    }
                }
            } else {
                n.name.clone()
            };
            nodes.push(FairShareNode {
                level: n.level.as_str().to_string(),
                name,
                depth: depth as u32,
                shares: n.raw_shares,
                norm_shares: n.norm_shares,
                usage: n.usage,
                norm_usage: n.norm_usage,
                effective_usage: n.effective_usage,
                factor: n.factor,
            });
        }
        out.push(FairShareGroup {
            resource_group: g.name.clone(),
            scheduler: scheduler_word(&g.scheduler),
            half_life_secs: policy.half_life_secs,
            weights: policy.weights.to_string(),
            nodes,
        });
    }
    Ok(Json(FairShareReport { groups: out }))
}

/// `PUT /admin/fairshare/shares`.
pub async fn set_shares(
    State(m): State<Arc<Manager>>,
    body: axum::body::Bytes,
) -> ApiResult<StatusCode> {
    let c: FairShareChange = typed_body(&body)?;
    let level = Level::parse(&c.level).ok_or_else(|| {
        Problem::invalid(format!("level {:?}: use domain, project or user", c.level))
    })?;
    if let Some(s) = c.shares
        && !(s.is_finite() && s >= 0.0)
    {
        return Err(Problem::invalid(format!("shares must be a number >= 0, not {s}")).into());
    }
    let name = match level {
        Level::User => m
            .store
            .user_by_email(&c.name)?
            .map(|u| u.id)
            .ok_or_else(|| Problem::not_found("user", format!("no user {:?}", c.name)))?,
        Level::Project if !m.store.project_exists(&c.name)? => {
            return Err(Problem::not_found("project", format!("no project {:?}", c.name)).into());
        }
        _ => c.name.clone(),
    };
    m.store
        .set_fairshare_share(level.as_str(), &name, c.shares)?;
    m.bus.wake_scheduler();
    Ok(StatusCode::NO_CONTENT)
}
