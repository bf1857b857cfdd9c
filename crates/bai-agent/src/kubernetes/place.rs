//! Where a kernel's pod goes and what it mounts, for a kernel's pod and a pool pod alike.

use super::Inner;
use super::pod::{Detached, Disk, OnNode, Placement};
use super::secret::KernelSecret;
use crate::paths::KernelDirs;

/// Where a kernel's pod of `image` goes and what it mounts: this agent's node and
/// namespace, the runner (and the SSH server beside it), the kernel's directories `dirs`,
/// every kernel's `/etc` files and `more` (host → inside), the account files where the image
/// may lack the kernel's user; `home_propagates` false (a pool pod's sets it).
pub(crate) fn placement(
    inner: &Inner,
    image: &str,
    dirs: &KernelDirs,
    more: Vec<(String, String)>,
) -> Placement {
    let mut files: Vec<(String, String)> = crate::kernel_files::etc::files(&inner.config.data_dir)
        .into_iter()
        .map(|(host, inside)| (host.display().to_string(), inside.to_string()))
        .collect();
    for (host, inside) in crate::sshd_kit::beside(&inner.config.krunner_path) {
        files.push((host.display().to_string(), inside.to_string()));
    }
    files.extend(more);
    Placement {
        namespace: inner.config.namespace.clone(),
        agent_id: inner.config.agent_id.clone(),
        node: inner.node.clone(),
        gpu_sharing: inner.gpu_sharing(),
        runner_listen: inner.config.runner_reach.listen(),
        accounts: inner.accounts.wanted(image),
        disk: Disk::OnNode(OnNode {
            krunner: inner.config.krunner_path.display().to_string(),
            run_dir: dirs.run.display().to_string(),
            work_dir: dirs.work.display().to_string(),
            home_propagates: false,
            egress_gate: inner.config.network_policies == super::Enforcement::Node,
            files,
        }),
    }
}

/// Where a detached kernel's pod of `image` goes (`--runner-reach network`): nothing of the
/// node's disk but data folders; the runner from `runner_image`, the kernel's Secret mounted (`secret`:
/// its keys → paths inside), its host table in its run directory when `hosts`.
pub(crate) fn detached(
    inner: &Inner,
    image: &str,
    runner_image: &str,
    secret: &KernelSecret,
    hosts: bool,
) -> Placement {
    Placement {
        namespace: inner.config.namespace.clone(),
        agent_id: inner.config.agent_id.clone(),
        node: inner.node.clone(),
        gpu_sharing: inner.gpu_sharing(),
        runner_listen: inner.config.runner_reach.listen(),
        accounts: inner.accounts.wanted(image),
        disk: Disk::Detached(Detached {
            runner_image: runner_image.to_string(),
            secret: secret.secret.metadata.name.clone().unwrap_or_default(),
            mounts: secret.mounts.clone(),
            hosts,
        }),
    }
}
