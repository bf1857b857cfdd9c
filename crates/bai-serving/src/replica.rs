//! One route of a service: an inference session of the service's owner that runs the model
//! definition's command in the model path, with the model folder mounted read-only (and no
//! other folder), named `<service>-<route>`.

use super::route_status;
use crate::state::Serving;
use bai_control::lifecycle::create::{CreatePlan, Created, create, plan_spec};
use bai_core::agent::Mount;
use bai_core::amount::resource_ask;
use bai_core::resources::ResourceRequest;
use bai_core::serving::ReplicaTemplate;
use bai_core::{Problem, SessionName, SessionSpec, SessionType};
use bai_ground::identity::Caller;
use bai_store::{EndpointRow, RouteRow};
use uuid::Uuid;

/// The session name of a route.
pub fn session_name(service: &str, route: Uuid) -> String {
    let head: String = service.chars().take(55).collect();
    format!("{head}-{}", &route.simple().to_string()[..8])
}

/// The replica's command: the service's own startup command when it has one, else the
/// definition's.
pub fn command(spec: &ReplicaTemplate) -> String {
    spec.startup_command
        .clone()
        .unwrap_or_else(|| spec.definition.command_line())
}

/// The validated session request of one route.
pub fn session_plan(
    serving: &Serving,
    e: &EndpointRow,
    route: Uuid,
) -> Result<CreatePlan, Problem> {
    let spec = &e.spec.replica;
    let owner = Caller {
        access_key: e.spec.access_key.clone(),
        user_id: e.spec.user_id.clone(),
        email: String::new(),
        is_admin: false,
    };
    let given = |s: &str| Some(s.to_string()).filter(|s| !s.is_empty());
    let ask = resource_ask(Some(&spec.resources), Some(&spec.resource_opts));
    let resources = ResourceRequest::parse(&ask, &serving.lifecycle.agents.accel_slots())
        .map_err(|err| Problem::invalid(format!("service {:?}: {err}", e.name)))?;
    let mut s = SessionSpec::new(e.spec.image.clone(), resources);
    s.name = Some(
        SessionName::parse(&session_name(&e.name, route))
            .map_err(|err| Problem::internal(format!("service {:?}: {err}", e.name)))?,
    );
    s.session_type = SessionType::Inference;
    s.project = given(&e.spec.project).unwrap_or_else(|| "default".into());
    s.domain = given(&e.spec.domain_name).unwrap_or_else(|| "default".into());
    s.cluster_size = spec.cluster_size;
    s.cluster_mode = spec.cluster_mode;
    s.startup_command = given(&command(spec));
    s.bootstrap_script = spec.bootstrap_script.clone();
    s.tag = spec.tag.clone();
    s.enqueue_only = true;
    s.reuse_if_exists = false;
    s.environ = spec.environ.clone();
    s.scaling_group = given(&e.spec.scaling_group);
    let mut p = plan_spec(&serving.lifecycle, &owner, &s)?;
    let folder = serving.store.vfolder(e.spec.model_id)?.ok_or_else(|| {
        Problem::invalid(format!(
            "the model folder {:?} of service {:?} no longer exists",
            spec.model_name, e.name
        ))
    })?;
    p.session.spec.mounts = vec![Mount {
        vfolder_id: folder.id,
        name: folder.name.clone(),
        host_path: serving.storage.folder_dir(&folder)?.display().to_string(),
        kernel_path: e.spec.model_mount.clone(),
        read_only: true,
    }];
    Ok(p)
}

/// Makes a new route and its session (PENDING); a route whose session cannot even be
/// requested is stored as failed, with the reason.
pub fn start(serving: &Serving, e: &EndpointRow) -> Result<RouteRow, Problem> {
    let mut route = RouteRow {
        id: Uuid::new_v4(),
        endpoint_id: e.id,
        session_id: None,
        status: route_status::PROVISIONING.into(),
        traffic_ratio: 1.0,
        error: None,
        created_at: String::new(),
    };
    let planned = session_plan(serving, e, route.id).and_then(|p| create(&serving.lifecycle, &p));
    match planned {
        Ok(Created::New(row) | Created::Reused(row) | Created::Retried(row)) => {
            route.session_id = Some(row.id);
            serving.store.insert_route(&route)?;
            tracing::info!(service = %e.id, route = %route.id, session = %row.id, "route started");
        }
        Err(p) => {
            route.status = route_status::FAILED_TO_START.into();
            let error = bai_core::serving::RouteError {
                name: p.title.clone(),
                repr: p.msg.clone(),
                src: "create".into(),
            };
            route.error = Some(error.to_text());
            serving.store.insert_route(&route)?;
            tracing::warn!(service = %e.id, route = %route.id, error = %p.msg, "route could not start");
        }
    }
    Ok(route)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_names_fit_the_session_name_rules() {
        let r = Uuid::new_v4();
        let n = session_name(&"x".repeat(64), r);
        assert!(n.len() <= 64);
        bai_core::SessionName::parse(&n).unwrap();
        assert!(session_name("svc1", r).starts_with("svc1-"));
    }
}
