//! What a new kernel gets on this node before its container is made: pinned cores for a
//! whole-core CPU request, its part of the accelerator devices, and the environment that
//! follows from both (thread counts, the plugin's variables).

use super::Inner;
use crate::accel::{ContainerArgs, DeviceAlloc};
use crate::error::{is_not_found, runtime};
use bai_core::agent::{AgentError, KernelSpec};
use std::collections::{BTreeMap, HashMap};

/// Image label naming more variables that get the number of allocated cores.
pub const LABEL_CORECOUNT: &str = "ai.backend.envs.corecount";
/// Thread-pool variables of the common numeric runtimes, set to the allocated cores unless
/// the user set them.
pub const THREAD_VARS: [&str; 4] = [
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
];

/// What a kernel holds on this node.
#[derive(Debug, Clone, Default)]
pub struct Placement {
    /// Pinned cores (whole-core requests only).
    pub cores: Option<Vec<u32>>,
    pub devices: DeviceAlloc,
    /// What the accelerator plugin adds to the container.
    pub accel: ContainerArgs,
    /// Variables the image wants set to the core count (`ai.backend.envs.corecount`).
    pub corecount_vars: Vec<String>,
}

impl Placement {
    /// How many cores the kernel's thread pools should use.
    pub fn core_count(&self, spec: &KernelSpec) -> u64 {
        match &self.cores {
            Some(c) => c.len() as u64,
            None => spec.slots.cpu_milli.div_ceil(1000).max(1),
        }
    }
}

/// The image's labels; `ImageNotFound` when the engine does not have it.
pub async fn image_labels(
    inner: &Inner,
    image: &str,
) -> Result<HashMap<String, String>, AgentError> {
    match inner.docker.inspect_image(image).await {
        Ok(i) => Ok(i.config.and_then(|c| c.labels).unwrap_or_default()),
        Err(e) if is_not_found(&e) => Err(AgentError::ImageNotFound(image.to_string())),
        Err(e) => Err(runtime(format_args!("cannot inspect image {image}"), e)),
    }
}

/// Allocates cores and devices for `spec`. Nothing is held when this fails.
pub fn place(
    inner: &Inner,
    spec: &KernelSpec,
    labels: &HashMap<String, String>,
) -> Result<Placement, AgentError> {
    let kernel_id = spec.kernel_id;
    let short = |e: String| AgentError::InsufficientResources(e);
    let mut wanted = spec.slots.accel.iter().filter(|(_, v)| **v > 0);
    let (devices, accel) = match (inner.accelerator(), wanted.next()) {
        (_, None) => (DeviceAlloc::new(), ContainerArgs::default()),
        (Some(acc), Some((slot, milli))) if slot == acc.slot() && wanted.next().is_none() => {
            let alloc = inner.allocate_devices(kernel_id, *milli).map_err(short)?;
            let args = acc.container_args(&alloc);
            (alloc, args)
        }
        (_, Some((slot, _))) => {
            return Err(short(format!("this node has no {slot} accelerator")));
        }
    };
    let cores = if spec.slots.cpu_milli > 0 && spec.slots.cpu_milli.is_multiple_of(1000) {
        let n = (spec.slots.cpu_milli / 1000) as usize;
        match inner.allocate_cores(kernel_id, n) {
            Ok(c) => Some(c),
            Err(e) => {
                inner.release(kernel_id);
                return Err(short(e));
            }
        }
    } else {
        None
    };
    let corecount_vars = labels
        .get(LABEL_CORECOUNT)
        .map(|v| {
            v.split(',')
                .map(str::trim)
                .filter(|n| {
                    !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                })
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    Ok(Placement {
        cores,
        devices,
        accel,
        corecount_vars,
    })
}

/// The container's environment: thread counts from the allocated cores, the user's values
/// (which win over those), the accelerator plugin's (which make the allocation hold and
/// cannot be overridden), and what bai sets (`BAI_*`, never the user's).
pub fn environment(spec: &KernelSpec, placement: &Placement) -> Vec<String> {
    let mut env: BTreeMap<String, String> = BTreeMap::new();
    let threads = placement.core_count(spec).to_string();
    for var in THREAD_VARS
        .iter()
        .copied()
        .chain(placement.corecount_vars.iter().map(String::as_str))
    {
        env.insert(var.to_string(), threads.clone());
    }
    env.insert("HOME".into(), "/home/work".into());
    env.insert("LANG".into(), "C.UTF-8".into());
    for (k, v) in &spec.environ {
        env.insert(k.clone(), v.clone());
    }
    for (k, v) in &placement.accel.env {
        env.insert(k.clone(), v.clone());
    }
    let cluster = spec.cluster_info();
    if cluster.size > 1 {
        // Open MPI between ranks of one container: no cross-memory attach (it needs ptrace,
        // which kernels do not have).
        env.entry("OMPI_MCA_btl_vader_single_copy_mechanism".into())
            .or_insert_with(|| "none".into());
    }
    env.extend(cluster.environment(spec.session_id));
    env.insert("BAI_SESSION_ID".into(), spec.session_id.to_string());
    env.insert("BAI_KERNEL_ID".into(), spec.kernel_id.to_string());
    env.insert("BAI_SESSION_NAME".into(), spec.session_name.clone());
    env.insert("BAI_SESSION_TYPE".into(), spec.session_type.as_str().into());
    env.remove("BAI_STARTUP_COMMAND");
    env.remove("BAI_BOOTSTRAP_SCRIPT");
    if let Some(c) = &spec.startup_command {
        env.insert("BAI_STARTUP_COMMAND".into(), c.clone());
    }
    if let Some(s) = &spec.bootstrap_script {
        env.insert("BAI_BOOTSTRAP_SCRIPT".into(), s.clone());
    }
    env.into_iter().map(|(k, v)| format!("{k}={v}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bai_core::resources::ResourceSlots;
    use bai_core::status::SessionType;
    use uuid::Uuid;

    fn spec(cpu_milli: u64, environ: &[(&str, &str)]) -> KernelSpec {
        KernelSpec {
            kernel_id: Uuid::new_v4(),
            session_id: Uuid::new_v4(),
            session_name: "s".into(),
            session_type: SessionType::Interactive,
            image: "img".into(),
            slots: ResourceSlots {
                cpu_milli,
                mem: 1 << 30,
                ..Default::default()
            },
            shmem: 0,
            environ: environ
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            startup_command: None,
            bootstrap_script: None,
            owner_access_key: "AKIA".into(),
            mounts: vec![],
            cluster: None,
        }
    }

    fn get<'a>(env: &'a [String], k: &str) -> Option<&'a str> {
        env.iter()
            .find_map(|e| e.strip_prefix(k).and_then(|r| r.strip_prefix('=')))
    }

    #[test]
    fn thread_counts_follow_the_cores_and_the_user_wins() {
        let p = Placement {
            cores: Some(vec![2, 3]),
            corecount_vars: vec!["NPROC".into()],
            ..Default::default()
        };
        let env = environment(&spec(2000, &[("OMP_NUM_THREADS", "1")]), &p);
        assert_eq!(get(&env, "OMP_NUM_THREADS"), Some("1"));
        for v in [
            "OPENBLAS_NUM_THREADS",
            "MKL_NUM_THREADS",
            "NUMEXPR_NUM_THREADS",
            "NPROC",
        ] {
            assert_eq!(get(&env, v), Some("2"), "{v}");
        }
        // A fraction keeps a quota: thread pools get the cores rounded up.
        let env = environment(&spec(1500, &[]), &Placement::default());
        assert_eq!(get(&env, "MKL_NUM_THREADS"), Some("2"));
    }

    #[test]
    fn the_plugins_variables_and_bais_cannot_be_overridden() {
        let mut p = Placement::default();
        p.accel
            .env
            .insert("BACKENDAI_MOCK_CUDA_DEVICES".into(), "1".into());
        let s = spec(
            1000,
            &[
                ("BACKENDAI_MOCK_CUDA_DEVICES", "0,1"),
                ("BAI_SESSION_ID", "x"),
            ],
        );
        let env = environment(&s, &p);
        assert_eq!(get(&env, "BACKENDAI_MOCK_CUDA_DEVICES"), Some("1"));
        assert_eq!(
            get(&env, "BAI_SESSION_ID"),
            Some(s.session_id.to_string().as_str())
        );
    }
}
