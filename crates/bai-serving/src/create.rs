//! `POST /services`: everything is checked before anything is stored. The replicas' session
//! request is validated exactly as `POST /session` would validate it (image, group,
//! resources, environment, cluster shape, owner), the model folder must be a `model` folder
//! the owner can see, and its definition must parse; a wrong field is a 400 naming it.

use super::definition::{self, Definition};
use super::replica;
use crate::identity::Caller;
use crate::state::Serving;
use bai_core::Problem;
use bai_core::serving::ReplicaTemplate;
use bai_store::{EndpointRow, EndpointSpec, EndpointState, VFolderRow};

use bai_api::services::{NewService, invalid_params};
use bai_api::sessions::{CreateConfig, CreateRequest, SessionType};
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

/// Validates a `POST /services` request (read at the edge by
/// `bai_api::services::read_new_service`) into a service row (not stored).
pub fn plan(serving: &Serving, caller: &Caller, req: &NewService) -> Result<EndpointRow, Problem> {
    let config = &req.config;
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
    let model_ref = config.model.as_str();
    // A relative destination (Backend.AI's test suite sends `models`) is under `/`.
    let asked = config
        .model_mount_destination
        .as_deref()
        .unwrap_or("/models");
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
    let public = req.open_to_public.unwrap_or(false);

    // The replicas' session request, checked as POST /session checks it.
    let session_req = CreateRequest {
        name: Some("serve-check".into()),
        session_type: Some(SessionType::Inference),
        group: Some(req.group.clone().unwrap_or_else(|| "default".into())),
        domain: Some(req.domain.clone().unwrap_or_else(|| "default".into())),
        cluster_size: Some(req.cluster_size.unwrap_or(1)),
        cluster_mode: req
            .cluster_mode
            .as_deref()
            .map(str::parse)
            .transpose()
            .map_err(invalid_params)?,
        owner_access_key: req.owner_access_key.clone(),
        config: Some(CreateConfig {
            resources: config.resources.clone(),
            resource_opts: config.resource_opts.clone(),
            environ: config.environ.clone(),
            scaling_group: config.scaling_group.clone(),
            ..CreateConfig::default()
        }),
        ..CreateRequest::new(req.image.clone())
    };
    let session_spec = crate::lifecycle::request::spec_of(&serving.lifecycle, &session_req)?;
    let check = crate::lifecycle::create::plan_spec(&serving.lifecycle, caller, &session_spec)?;
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
    let def_path = config.model_definition_path.as_deref();
    let (def_path, def) = read_definition(serving, &folder, def_path)?;
    let replica = ReplicaTemplate {
        resources: config.resources.clone().unwrap_or_default(),
        resource_opts: config.resource_opts.clone().unwrap_or_default(),
        environ: config.environ.clone().unwrap_or_default(),
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
