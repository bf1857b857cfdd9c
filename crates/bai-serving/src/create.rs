//! `POST /services`: everything is checked before anything is stored. The replicas' session
//! is checked as `POST /session` checks a session (cluster shape, resources, environment,
//! then image, group, owner and the rest by the lifecycle's `plan_spec`), the model folder
//! must be a `model` folder the owner can see, and its definition must parse; a wrong field
//! is a 400 naming it. The request arrives as a domain [`ServiceSpec`], made at the HTTP edge.

use super::definition::{self, Definition};
use super::replica;
use crate::state::Serving;
use bai_control::lifecycle::create::{CreatePlan, plan_spec};
use bai_core::amount::resource_ask;
use bai_core::cluster::{self, ClusterMode};
use bai_core::resources::ResourceRequest;
use bai_core::serving::{ReplicaTemplate, ServiceSpec, invalid_params};
use bai_core::spec::check_env;
use bai_core::{Problem, SessionName, SessionSpec, SessionType};
use bai_ground::identity::Caller;
use bai_store::{EndpointRow, EndpointSpec, EndpointState, VFolderRow};
use uuid::Uuid;

/// A service name: 4–64 of letters, digits, `_` and `-`, starting and ending with a letter,
/// digit or `_` (Backend.AI's `^\w[\w-]*\w$`).
pub fn check_name(name: &str) -> Result<(), Problem> {
    let n = name.chars().count();
    let ok = (4..=64).contains(&n)
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(invalid_params(format!(
            "name {name:?} is not a service name: use 4 to 64 letters, digits, '_' and '-', not starting or ending with '-'"
        )))
    }
}

/// Refuses more replicas than the user's resource policy lets one service run
/// (`max_session_count_per_model_session`).
pub fn check_policy_replicas(serving: &Serving, user_id: &str, n: u32) -> Result<(), Problem> {
    let p = serving.store.user_policy_of(user_id)?;
    if i64::from(n) > p.max_session_count_per_model_session {
        return Err(invalid_params(format!(
            "{n} replicas are more than the user resource policy {:?} allows one service \
             ({} at most)",
            p.name, p.max_session_count_per_model_session
        )));
    }
    Ok(())
}

/// The model folder `r` (id or name) as `owner` sees it; it must be a `model` folder.
pub fn model_folder(
    serving: &Serving,
    owner: &str,
    is_admin: bool,
    r: &str,
) -> Result<VFolderRow, Problem> {
    let by_id = match Uuid::parse_str(r) {
        Ok(id) => serving
            .store
            .vfolder(id)?
            .filter(|v| serving.store.can_see_vfolder(owner, v).unwrap_or(false) || is_admin),
        Err(_) => None,
    };
    let v = match by_id {
        Some(v) => v,
        None => serving
            .store
            .visible_vfolder_by_name(owner, r, is_admin)?
            .ok_or_else(|| {
                Problem::not_found(
                    "vfolder",
                    format!("config.model: no data folder named or with the id {r:?} is visible to the owner"),
                )
            })?,
    };
    if v.usage_mode != "model" {
        return Err(invalid_params(format!(
            "config.model: Selected VFolder is not a model folder ({:?} has usage mode {}); create one with usage mode model",
            v.name, v.usage_mode
        )));
    }
    Ok(v)
}

/// Reads and parses the folder's definition (`path`, else the default names).
pub fn read_definition(
    serving: &Serving,
    folder: &VFolderRow,
    path: Option<&str>,
) -> Result<(String, Definition), Problem> {
    let candidates: Vec<&str> = match path {
        Some(p) => vec![p],
        None => definition::DEFAULT_PATHS.to_vec(),
    };
    for rel in &candidates {
        let file = serving.storage.resolve(folder, rel)?;
        match std::fs::read_to_string(&file) {
            Ok(text) => {
                let def = definition::parse(&text).map_err(|e| {
                    invalid_params(format!("{rel} in model folder {:?}: {e}", folder.name))
                })?;
                return Ok((rel.to_string(), def));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Err(invalid_params(format!(
                    "{rel} in model folder {:?} cannot be read: {e}",
                    folder.name
                )));
            }
        }
    }
    Err(invalid_params(format!(
        "config.model_definition_path: model folder {:?} has no {}; add a model definition",
        folder.name,
        candidates.join(" or ")
    )))
}

/// The replicas' session checked as `POST /session` checks one (the cluster shape, the
/// resources, the environment, then what needs the server's state), planned and not
/// stored: whose it is, where it runs and on which image.
fn check_session(
    serving: &Serving,
    caller: &Caller,
    req: &ServiceSpec,
) -> Result<CreatePlan, Problem> {
    let cluster_mode = req
        .cluster_mode
        .as_deref()
        .map(str::parse::<ClusterMode>)
        .transpose()
        .map_err(invalid_params)?
        .unwrap_or_default();
    let cluster_size = cluster::check_size(req.cluster_size.unwrap_or(1))?;
    let ask = resource_ask(Some(&req.resources), Some(&req.resource_opts));
    let resources = ResourceRequest::parse(&ask, &serving.lifecycle.agents.accel_slots())
        .map_err(|e| Problem::invalid(e.to_string()))?;
    for (k, v) in &req.environ {
        check_env(k, v).map_err(Problem::invalid)?;
    }
    let mut s = SessionSpec::new(req.image.clone(), resources);
    s.name = Some(SessionName::parse("serve-check").map_err(|e| Problem::internal(e.to_string()))?);
    s.session_type = SessionType::Inference;
    s.owner_access_key = req.owner_access_key.clone();
    s.project = req.project.clone().unwrap_or_else(|| "default".into());
    s.domain = req.domain.clone().unwrap_or_else(|| "default".into());
    s.scaling_group = req.scaling_group.clone();
    s.cluster_mode = cluster_mode;
    s.cluster_size = cluster_size;
    s.environ = req.environ.clone();
    plan_spec(&serving.lifecycle, caller, &s)
}

/// Validates a new service (made a [`ServiceSpec`] at the HTTP edge) into a service row (not
/// stored).
pub fn plan(serving: &Serving, caller: &Caller, req: &ServiceSpec) -> Result<EndpointRow, Problem> {
    let name = match &req.name {
        Some(n) => n.clone(),
        None => format!("bai-serve-{}", &Uuid::new_v4().simple().to_string()[..8]),
    };
    check_name(&name)?;
    let replicas = req.replicas;
    check_policy_replicas(serving, &caller.user_id, replicas)?;
    let runtime_variant = req
        .runtime_variant
        .clone()
        .unwrap_or_else(|| "custom".into());
    if !matches!(runtime_variant.as_str(), "custom" | "cmd") {
        return Err(invalid_params(format!(
            "runtime_variant {runtime_variant:?} is not available here: use custom (a model-definition.yaml) or cmd"
        )));
    }
    let model_ref = req.model.as_str();
    // A relative destination (Backend.AI's test suite sends `models`) is under `/`.
    let asked = req.model_mount_destination.as_deref().unwrap_or("/models");
    let mount = match bai_core::vpath::confine(asked.trim_start_matches('/')) {
        Ok(p) if !p.as_os_str().is_empty() => format!("/{}", p.display()),
        _ => {
            return Err(invalid_params(format!(
                "config.model_mount_destination {asked:?} must be a path such as /models"
            )));
        }
    };
    const SYSTEM: &[&str] = &[
        "/proc",
        "/sys",
        "/dev",
        "/etc",
        "/usr",
        "/bin",
        "/sbin",
        "/lib",
        "/lib64",
        "/boot",
        "/run",
        "/opt/bai",
        "/home/config",
    ];
    if SYSTEM
        .iter()
        .any(|d| mount == *d || mount.starts_with(&format!("{d}/")))
    {
        return Err(invalid_params(format!(
            "config.model_mount_destination {mount:?} would hide the container's own files; use a path such as /models"
        )));
    }
    let mount = mount.as_str();
    let public = req.open_to_public;

    // The replicas' session, checked as POST /session checks one.
    let check = check_session(serving, caller, req)?;
    let owner = &check.session;
    if let Some(existing) = serving
        .store
        .live_endpoint_named(&owner.spec.access_key, &name)?
    {
        return Err(Problem::conflict(
            "service-already-exists",
            "The service already exists.",
            format!(
                "a service named {name:?} exists ({}); pick another name or remove it",
                existing.id
            ),
        ));
    }
    let owner_admin = serving
        .store
        .keypair(&owner.spec.access_key)
        .ok()
        .flatten()
        .is_some_and(|k| k.is_admin);
    let folder = model_folder(serving, &owner.spec.user_id, owner_admin, model_ref)?;
    let def_path = req.model_definition_path.as_deref();
    let (def_path, def) = read_definition(serving, &folder, def_path)?;
    let replica = ReplicaTemplate {
        resources: req.resources.clone(),
        resource_opts: req.resource_opts.clone(),
        environ: req.environ.clone(),
        cluster_mode: owner.spec.cluster_mode,
        cluster_size: owner.spec.cluster_size,
        startup_command: req.startup_command.clone(),
        bootstrap_script: req.bootstrap_script.clone(),
        tag: req.tag.clone(),
        model_name: folder.name.clone(),
        definition: def,
    };
    let row = EndpointRow {
        id: Uuid::new_v4(),
        name,
        created_at: String::new(),
        token_secret: hex::encode(rand::random::<[u8; 32]>()),
        spec: EndpointSpec {
            access_key: owner.spec.access_key.clone(),
            user_id: owner.spec.user_id.clone(),
            created_user: caller.user_id.clone(),
            domain_name: owner.spec.domain_name.clone(),
            project: owner.spec.group_name.clone(),
            scaling_group: owner.spec.scaling_group.clone(),
            image: owner.spec.image.clone(),
            model_id: folder.id,
            model_mount: mount.to_string(),
            model_definition_path: Some(def_path),
            replicas,
            open_to_public: public,
            runtime_variant,
            replica,
        },
        state: EndpointState {
            url: None,
            port: None,
            lifecycle: "created".into(),
            retries: 0,
            destroyed_at: None,
        },
    };
    // One replica's request, built now so a service that could never start is refused here.
    replica::session_plan(serving, &row, Uuid::new_v4())?;
    Ok(row)
}

/// Stores a planned service and wakes the reconciler.
pub fn create(serving: &Serving, row: &EndpointRow) -> Result<EndpointRow, Problem> {
    if !serving.store.insert_endpoint(row)? {
        return Err(Problem::conflict(
            "service-already-exists",
            "The service already exists.",
            format!("a service named {:?} exists; pick another name", row.name),
        ));
    }
    tracing::info!(service = %row.id, name = %row.name, replicas = row.spec.replicas, "service created");
    serving.wake.notify_one();
    serving
        .store
        .endpoint(row.id)?
        .ok_or_else(|| Problem::internal("the service vanished right after insert"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        assert!(check_name("svc-1").is_ok());
        assert!(check_name("_a_b").is_ok());
        assert!(check_name("ab").is_err());
        assert!(check_name("-abc").is_err());
        assert!(check_name("a.bc").is_err());
    }
}
