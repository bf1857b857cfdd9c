//! A Docker engine's image work: commit a kernel's container as an image, list the kernel
//! images, tag, remove, pull from and push to the cluster's registry. The Docker backend does
//! all of its image work here; the Kubernetes backend does it here too on a node whose
//! container runtime is that same Docker engine (the kubelet's dockershim or cri-dockerd),
//! and refuses it with the reason elsewhere.

pub mod commit;
pub mod list;
mod reconfig;
pub mod registry;

use bai_core::agent::AgentEvent;
use bollard::Docker;
use std::path::PathBuf;
use std::sync::Arc;

/// Images of kernels carry this label (Backend.AI's kernelspec version).
pub const LABEL_KERNELSPEC: &str = "ai.backend.kernelspec";

/// What reports an image pull's progress.
pub type Report = Arc<dyn Fn(AgentEvent) + Send + Sync>;

/// One Docker engine, for its images.
#[derive(Clone)]
pub struct Engine {
    pub docker: Docker,
    /// Commit tarballs are written under `data_dir/commit`.
    pub data_dir: PathBuf,
    /// The cluster's registry (`HOST:PORT`), for pulls and pushes.
    pub registry: Option<String>,
    report: Report,
}

impl Engine {
    pub fn new(
        docker: Docker,
        data_dir: PathBuf,
        registry: Option<String>,
        report: Report,
    ) -> Self {
        Engine {
            docker,
            data_dir,
            registry,
            report,
        }
    }

    fn report(&self, ev: AgentEvent) {
        (self.report)(ev)
    }
}
