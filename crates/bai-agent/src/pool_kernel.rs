//! What a pool kernel is made from, on either backend: the shape, and nothing of anybody's
//! session. Every variable it gives the kernel is one a session's spec gives too, so a bound
//! runner's environment is exactly the session's.

use bai_core::agent::KernelSpec;
use bai_core::egress::EgressSpec;
use bai_core::pool::PoolShape;
use bai_core::resources::ResourceSlots;
use bai_core::status::SessionType;
use uuid::Uuid;

/// The spec of pool kernel `id` of `shape`.
pub fn spec(shape: &PoolShape, id: Uuid) -> KernelSpec {
    KernelSpec {
        kernel_id: id,
        session_id: Uuid::nil(),
        session_name: String::new(),
        session_type: SessionType::Interactive,
        image: shape.image.clone(),
        slots: ResourceSlots {
            cpu_milli: shape.cpu_milli,
            mem: shape.mem,
            accel: Default::default(),
        },
        shmem: shape.shmem,
        environ: Default::default(),
        startup_command: None,
        bootstrap_script: None,
        owner_access_key: String::new(),
        mounts: Vec::new(),
        cluster: None,
        egress: EgressSpec::default(),
        dotfiles: Vec::new(),
    }
}
