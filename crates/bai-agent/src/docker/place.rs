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
    /// The image's own values of the search-path variables the plugin appends to.
    pub image_paths: BTreeMap<String, String>,
    /// The agent's variables and labels the image carries: set or cleared at the create.
    pub carried: crate::owned::Carried,
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

/// What a kernel's placement reads of its image.
#[derive(Debug, Clone, Default)]
pub struct ImageConfig {
    /// The image's id (`sha256:…`).
    pub id: String,
    pub labels: HashMap<String, String>,
    /// The image's environment, `NAME` → value.
    pub env: BTreeMap<String, String>,
}

/// The image's labels and environment; `ImageNotFound` when the engine does not have it.
pub async fn image_config(inner: &Inner, image: &str) -> Result<ImageConfig, AgentError> {
    match inner.docker.inspect_image(image).await {
        Ok(i) => {
            let c = i.config.unwrap_or_default();
            let env = c
                .env
                .unwrap_or_default()
                .iter()
                .filter_map(|e| e.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Ok(ImageConfig {
                id: i.id.unwrap_or_default(),
                labels: c.labels.unwrap_or_default(),
                env,
            })
        }
        Err(e) if is_not_found(&e) => Err(AgentError::ImageNotFound(image.to_string())),
        Err(e) => Err(runtime(format_args!("cannot inspect image {image}"), e)),
    }
}

/// `PATH` where neither the image nor the user sets one (Docker's default).
const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// `base` with `add`'s directories after it, those it already has left out.
fn append_dirs(base: &str, add: &str) -> String {
    let mut dirs: Vec<&str> = base.split(':').filter(|d| !d.is_empty()).collect();
    for d in add.split(':').filter(|d| !d.is_empty()) {
        if !dirs.contains(&d) {
            dirs.push(d);
        }
    }
    dirs.join(":")
}

/// Allocates cores and devices for `spec`. Nothing is held when this fails.
pub fn place(
    inner: &Inner,
    spec: &KernelSpec,
    image: &ImageConfig,
) -> Result<Placement, AgentError> {
    let labels = &image.labels;
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
    let image_paths = accel
        .search_paths
        .keys()
        .filter_map(|k| image.env.get(k).map(|v| (k.clone(), v.clone())))
        .collect();
    Ok(Placement {
        cores,
        devices,
        accel,
        corecount_vars,
        image_paths,
        carried: crate::owned::Carried::of(&image.env, labels),
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
    // The plugin's directories after the user's value, else the image's.
    for (k, add) in &placement.accel.search_paths {
        let base = env
            .get(k)
            .or_else(|| placement.image_paths.get(k))
            .map(String::as_str)
            .unwrap_or(if k == "PATH" { DEFAULT_PATH } else { "" });
        let joined = append_dirs(base, add);
        env.insert(k.clone(), joined);
    }
    // NVIDIA's container toolkit, where the engine runs it for every container, hands
    // out no GPU of its own: a kernel's GPUs are the plugin's alone (an image's `all`
    // or a user's value would otherwise give every GPU of the node).
    env.insert("NVIDIA_VISIBLE_DEVICES".into(), "void".into());
    let cluster = spec.cluster_info();
    if cluster.size > 1 {
        // Open MPI between ranks of one container: no cross-memory attach (it needs ptrace,
        // which kernels do not have).
        env.entry("OMPI_MCA_btl_vader_single_copy_mechanism".into())
            .or_insert_with(|| "none".into());
    }
    crate::kernel_env::add_session_vars(&mut env, spec);
    let mut env = env.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
    placement.carried.clear_env(&mut env);
    env
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
            egress: Default::default(),
            dotfiles: Vec::new(),
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
    fn the_plugins_search_paths_follow_the_users_or_the_images() {
        let mut p = Placement::default();
        p.accel
            .search_paths
            .insert("LD_LIBRARY_PATH".into(), "/usr/local/nvidia/lib64".into());
        p.accel
            .search_paths
            .insert("PATH".into(), "/usr/local/nvidia/bin".into());
        // Neither sets them: Docker's PATH, a library path of the plugin's alone.
        let env = environment(&spec(1000, &[]), &p);
        assert_eq!(
            get(&env, "LD_LIBRARY_PATH"),
            Some("/usr/local/nvidia/lib64")
        );
        assert_eq!(
            get(&env, "PATH"),
            Some(
                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/nvidia/bin"
            )
        );
        // The image's values are kept, a directory they already have is not repeated.
        p.image_paths.insert(
            "LD_LIBRARY_PATH".into(),
            "/opt/conda/lib:/usr/local/nvidia/lib64".into(),
        );
        p.image_paths
            .insert("PATH".into(), "/opt/conda/bin:/usr/bin".into());
        let env = environment(&spec(1000, &[]), &p);
        assert_eq!(
            get(&env, "LD_LIBRARY_PATH"),
            Some("/opt/conda/lib:/usr/local/nvidia/lib64")
        );
        assert_eq!(
            get(&env, "PATH"),
            Some("/opt/conda/bin:/usr/bin:/usr/local/nvidia/bin")
        );
        // The user's value wins over the image's, and still gets the driver's.
        let env = environment(&spec(1000, &[("LD_LIBRARY_PATH", "/home/work/lib")]), &p);
        assert_eq!(
            get(&env, "LD_LIBRARY_PATH"),
            Some("/home/work/lib:/usr/local/nvidia/lib64")
        );
    }

    #[test]
    fn no_kernel_asks_the_container_toolkit_for_gpus() {
        let s = spec(1000, &[("NVIDIA_VISIBLE_DEVICES", "all")]);
        let env = environment(&s, &Placement::default());
        assert_eq!(get(&env, "NVIDIA_VISIBLE_DEVICES"), Some("void"));
        assert_eq!(get(&env, "LD_LIBRARY_PATH"), None);
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
