//! The kernel the Kubernetes backend's unit tests build pods and Secrets for.

use bai_core::agent::KernelSpec;
use bai_core::resources::ResourceSlots;
use bai_core::status::SessionType;
use std::collections::BTreeMap;
use uuid::Uuid;

/// Kernel 1 of session 2: half a core, 256 MiB, 64 MiB of shmem, one variable.
pub fn spec() -> KernelSpec {
    KernelSpec {
        kernel_id: Uuid::from_u128(1),
        session_id: Uuid::from_u128(2),
        session_name: "s1".into(),
        session_type: SessionType::Interactive,
        image: "bai/python:3.11-bookworm".into(),
        slots: ResourceSlots {
            cpu_milli: 500,
            mem: 256 << 20,
            accel: BTreeMap::new(),
        },
        shmem: 64 << 20,
        environ: BTreeMap::from([("FOO".into(), "bar".into())]),
        startup_command: None,
        bootstrap_script: None,
        owner_access_key: "AKIA".into(),
        mounts: vec![],
        cluster: None,
        egress: Default::default(),
        dotfiles: vec![],
    }
}
