//! The bai agent: runs kernels as containers in a real Docker engine (bollard) and reaches
//! each kernel's runner over a Unix socket in a per-kernel host directory.
#![forbid(unsafe_code)]

mod docker;
pub mod host;
pub mod paths;

pub use docker::{DockerAgent, DockerAgentConfig};
