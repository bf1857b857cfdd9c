//! What a kernel's pod is made of, by name (pure): its containers, where the runner and its
//! directory are inside, a volume's mount, and a container's status by name. The pod's
//! builder ([`super::pod`]), its init containers ([`super::init`]) and what reads pods back
//! ([`super::observe`], [`super::accounts`]) all take these from here.

use k8s_openapi::api::core::v1::{ContainerStatus, VolumeMount};

/// The kernel's container in its pod.
pub const CONTAINER: &str = "kernel";
/// The init container that copies the runner into a detached pod.
pub const INIT_CONTAINER: &str = "runner";
/// The init container that makes the kernel's account files ([`super::accounts`]).
pub const ACCOUNTS_CONTAINER: &str = "accounts";
/// Where the runner is inside the kernel (as on Docker).
pub const KRUNNER_INSIDE: &str = "/opt/bai/bin/krunner";
/// Where the kernel's run directory (the runner's socket, its gate) is inside.
pub const RUN_INSIDE: &str = "/opt/bai/run";

/// A volume `name` mounted at `at`.
pub fn mount(name: &str, at: &str, read_only: bool) -> VolumeMount {
    VolumeMount {
        name: name.into(),
        mount_path: at.into(),
        read_only: read_only.then_some(true),
        ..Default::default()
    }
}

/// The status of the container `name` among `statuses` (a pod's containers' or init
/// containers').
pub fn named<'a>(
    statuses: &'a Option<Vec<ContainerStatus>>,
    name: &str,
) -> Option<&'a ContainerStatus> {
    statuses.iter().flatten().find(|c| c.name == name)
}
