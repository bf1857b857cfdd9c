//! The kernel pod's init containers, as [`crate::kubernetes::pod::kernel_pod`] puts them in.

use crate::kubernetes::pod::tests::{at, container};
use crate::kubernetes::pod::{Detached, Disk, KRUNNER_INSIDE, Placement, kernel_pod};
use crate::kubernetes::test_spec::spec;

/// Where the agent does not know that the image names the kernel's user, the kernel's
/// image runs `krunner accounts` first (as the kernel, the runner mounted as the kernel has
/// it, after the runner's copy in a detached pod) into an emptyDir whose `passwd` and
/// `group` the kernel mounts read-only over the image's.
#[test]
fn an_image_that_may_lack_the_user_gets_its_account_files_from_an_init_container() {
    let with = Placement {
        accounts: true,
        ..at()
    };
    let p = kernel_pod(&spec(), &with).unwrap();
    let pod_spec = p.spec.as_ref().unwrap();
    let c = container(&p);
    let inits = pod_spec.init_containers.as_ref().unwrap();
    assert_eq!(inits.len(), 1);
    let init = &inits[0];
    assert_eq!(init.name, "accounts");
    assert_eq!(init.image, c.image);
    assert_eq!(
        init.command.as_deref().unwrap(),
        &[
            KRUNNER_INSIDE.to_string(),
            "accounts".into(),
            "/opt/bai/accounts".into()
        ]
    );
    assert_eq!(init.security_context, c.security_context);
    let init_mounts = init.volume_mounts.as_ref().unwrap();
    let runner = init_mounts.iter().find(|m| m.name == "krunner").unwrap();
    assert_eq!(
        (runner.mount_path.as_str(), runner.read_only),
        (KRUNNER_INSIDE, Some(true))
    );
    let out = init_mounts.iter().find(|m| m.name == "accounts").unwrap();
    assert_eq!(
        (out.mount_path.as_str(), out.read_only),
        ("/opt/bai/accounts", None)
    );
    let volumes = pod_spec.volumes.as_ref().unwrap();
    let v = volumes.iter().find(|v| v.name == "accounts").unwrap();
    assert!(v.empty_dir.is_some(), "{v:?}");
    for f in ["passwd", "group"] {
        let at = format!("/etc/{f}");
        let m = c
            .volume_mounts
            .as_ref()
            .unwrap()
            .iter()
            .find(|m| m.mount_path == at)
            .unwrap();
        assert_eq!(
            (m.name.as_str(), m.sub_path.as_deref(), m.read_only),
            ("accounts", Some(f), Some(true))
        );
    }

    // Detached: the runner is copied in first, then it makes the accounts.
    let mut detached = with.clone();
    detached.disk = Disk::Detached(Detached {
        runner_image: "bai/agent:1".into(),
        secret: "bai-k-1".into(),
        mounts: Vec::new(),
        hosts: false,
    });
    let p = kernel_pod(&spec(), &detached).unwrap();
    let inits = p.spec.as_ref().unwrap().init_containers.as_ref().unwrap();
    let names: Vec<&str> = inits.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["runner", "accounts"]);
    let runner = inits[1]
        .volume_mounts
        .as_ref()
        .unwrap()
        .iter()
        .find(|m| m.name == "krunner")
        .unwrap();
    assert_eq!(
        (runner.mount_path.as_str(), runner.read_only),
        ("/opt/bai/bin", Some(true))
    );

    // Known to name the user: none of it.
    let p = kernel_pod(&spec(), &at()).unwrap();
    assert!(p.spec.as_ref().unwrap().init_containers.is_none());
    assert!(
        !container(&p)
            .volume_mounts
            .as_ref()
            .unwrap()
            .iter()
            .any(|m| m.mount_path == "/etc/passwd")
    );
}
