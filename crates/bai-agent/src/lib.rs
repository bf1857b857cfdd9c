//! The bai agent: runs kernels as containers in a real Docker engine (bollard) and reaches
//! each kernel's runner (`bai-krunner`) over a Unix socket in a per-kernel host directory;
//! or, with its peer backend [`kubernetes`], as pods on a Kubernetes cluster, reached the
//! same way.
//!
//! The agent must run as root (or as a user that may `chown` to uid 1000 and talk to the
//! Docker engine): kernel directories are handed to the image's `work` user.
#![forbid(unsafe_code)]

pub mod accel;
pub mod cores;
mod docker;
pub mod dummy;
mod engine;
mod error;
pub mod host;
mod kernel_env;
pub mod kernel_files;
mod krunner_link;
pub mod krunner_proto;
pub mod kubernetes;
mod nft;
mod owned;
pub mod paths;
mod pool_demand;
pub(crate) mod pool_folders;
mod pool_kernel;
pub mod runner;
mod sshd_kit;

pub use docker::{
    DockerAgent, DockerAgentConfig, LABEL_AGENT, LABEL_CPUSET, LABEL_DEVICES, LABEL_KERNEL,
    LABEL_KERNELSPEC, LABEL_SESSION, LOG_TAIL_BYTES,
};
pub use dummy::{CreateStep, DummyAgent, DummyAgentConfig};
pub use kubernetes::{KubeError, KubernetesAgent, KubernetesAgentConfig};
