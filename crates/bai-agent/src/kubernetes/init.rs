//! A kernel pod's init containers (pure): the runner's, which copies the runner into a
//! detached pod ([`runner`]), and the kernel's account files, made in the kernel's own
//! image where the agent does not know it names the kernel's user ([`accounts`],
//! [`super::accounts`]). Both run as the kernel does, with the kernel's CPU and memory, so
//! the pod stays Guaranteed and asks for no more than the kernel.

use super::layout::{
    ACCOUNTS_CONTAINER as ACCOUNTS, INIT_CONTAINER, KRUNNER_INSIDE, RUN_INSIDE, mount,
};
use k8s_openapi::api::core::v1::{
    Container, EmptyDirVolumeSource, ResourceRequirements, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use std::collections::BTreeMap;

/// Where the runner is in its image (`images/agent`).
const KRUNNER_IN_IMAGE: &str = "/usr/local/bin/bai-krunner";
/// The emptyDir the account files are made in, and where the init container has it.
const ACCOUNTS_VOLUME: &str = "accounts";
const ACCOUNTS_INSIDE: &str = "/opt/bai/accounts";

/// An init container's resources: the kernel's CPU and memory (requests = limits, so the
/// pod's class and what it holds do not change), none of its devices.
fn resources(kernel: &Container) -> Option<ResourceRequirements> {
    let cpu_mem = |m: &Option<BTreeMap<String, Quantity>>| {
        m.as_ref().map(|m| {
            m.iter()
                .filter(|(k, _)| *k == "cpu" || *k == "memory")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<BTreeMap<_, _>>()
        })
    };
    kernel.resources.as_ref().map(|r| ResourceRequirements {
        requests: cpu_mem(&r.requests),
        limits: cpu_mem(&r.limits),
        ..Default::default()
    })
}

/// The init container of a detached pod: `bai-krunner install` from `runner_image`
/// copies the runner into the pod's `krunner` volume and makes the empty host table.
pub fn runner(runner_image: &str, kernel: &Container) -> Container {
    Container {
        name: INIT_CONTAINER.into(),
        image: Some(runner_image.to_string()),
        image_pull_policy: Some("IfNotPresent".into()),
        command: Some(vec![
            KRUNNER_IN_IMAGE.into(),
            "install".into(),
            KRUNNER_INSIDE.into(),
            RUN_INSIDE.into(),
        ]),
        resources: resources(kernel),
        security_context: kernel.security_context.clone(),
        volume_mounts: Some(vec![
            mount("krunner", "/opt/bai/bin", false),
            mount("run", RUN_INSIDE, false),
        ]),
        ..Default::default()
    }
}

/// The init container `accounts`: `bai-krunner accounts` in the kernel's image (the runner
/// mounted as the kernel has it; after [`runner`] in a detached pod) writes the kernel's
/// `passwd` and `group` into the pod's `accounts` volume.
pub fn accounts(kernel: &Container) -> Container {
    let krunner = kernel
        .volume_mounts
        .iter()
        .flatten()
        .find(|m| m.name == "krunner")
        .map(|m| VolumeMount {
            read_only: Some(true),
            ..m.clone()
        });
    Container {
        name: ACCOUNTS.into(),
        image: kernel.image.clone(),
        image_pull_policy: kernel.image_pull_policy.clone(),
        command: Some(vec![
            KRUNNER_INSIDE.into(),
            "accounts".into(),
            ACCOUNTS_INSIDE.into(),
        ]),
        resources: resources(kernel),
        security_context: kernel.security_context.clone(),
        volume_mounts: Some(
            krunner
                .into_iter()
                .chain([mount(ACCOUNTS_VOLUME, ACCOUNTS_INSIDE, false)])
                .collect(),
        ),
        ..Default::default()
    }
}

/// The `accounts` volume and the kernel's mounts of its files over the image's.
pub fn accounts_volume() -> (Volume, Vec<VolumeMount>) {
    let volume = Volume {
        name: ACCOUNTS_VOLUME.into(),
        empty_dir: Some(EmptyDirVolumeSource::default()),
        ..Default::default()
    };
    let mounts = ["passwd", "group"]
        .into_iter()
        .map(|f| VolumeMount {
            sub_path: Some(f.into()),
            ..mount(ACCOUNTS_VOLUME, &format!("/etc/{f}"), true)
        })
        .collect();
    (volume, mounts)
}

#[cfg(test)]
#[path = "init_tests.rs"]
mod tests;
