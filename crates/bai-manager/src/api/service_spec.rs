//! A `POST /services` request (read by `bai_api::services::read_new_service`, in every
//! spelling) becomes a domain [`ServiceSpec`] here, at the edge; `bai-serving` checks and
//! plans the spec and never sees the wire's request.

use bai_api::services::NewService;
use bai_core::serving::ServiceSpec;

/// The request as a spec: the fields a service is made from, nothing checked yet.
pub fn spec_of(req: NewService) -> ServiceSpec {
    let config = req.config;
    ServiceSpec {
        name: req.name,
        image: req.image,
        replicas: req.replicas,
        project: req.group,
        domain: req.domain,
        cluster_size: req.cluster_size,
        cluster_mode: req.cluster_mode,
        owner_access_key: req.owner_access_key,
        open_to_public: req.open_to_public.unwrap_or(false),
        runtime_variant: req.runtime_variant,
        startup_command: req.startup_command,
        bootstrap_script: req.bootstrap_script,
        tag: req.tag,
        model: config.model,
        model_mount_destination: config.model_mount_destination,
        model_definition_path: config.model_definition_path,
        scaling_group: config.scaling_group,
        resources: config.resources.unwrap_or_default(),
        resource_opts: config.resource_opts.unwrap_or_default(),
        environ: config.environ.unwrap_or_default(),
    }
}
