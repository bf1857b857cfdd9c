//! Commit on the Kubernetes backend: on a node whose kubelet runs its containers with Docker
//! (the test cluster's dockershim), the agent commits the kernel's container through the
//! node's engine. The official client's `session convert-to-image` makes a private image of a
//! pod's session, the image carries nothing of the pod's runtime, and a new session runs from
//! it as a pod with what the first one installed.

use bai_e2e::images::{customized, image_config, run_rm};
use bai_e2e::kube::{Cluster, joined};
use bai_e2e::{Account, Run, Server, official_client};

fn ba(s: &Server, account: &Account, args: &[&str]) -> Run {
    s.run_as(official_client(), account, args)
}

const WRITE_PACKAGE: &str = "import os\n\
p = '/usr/local/lib/python3.11/dist-packages/kubeprobe'\n\
os.makedirs(p, exist_ok=True)\n\
open(p + '/__init__.py', 'w').write('ANSWER = 42\\n')\n\
print('written')";

#[test]
fn a_pods_session_becomes_an_image_that_runs_as_a_pod() {
    let cluster = Cluster::get();
    let ns = format!("bai-e2e-commit-{}", std::process::id());
    let (s, agent) = joined("kube-commit", &[], &cluster.kubeconfig, &ns);
    agent.started(
        &s,
        &s.user,
        "kimg",
        &["-r", "cpu=0.5", "-r", "mem=256m", "python"],
        120,
    );
    let w = s.bai(
        &s.user,
        &["run", "-t", "kimg", "-c", WRITE_PACKAGE, "python"],
    );
    assert!(w.ok() && w.stdout.contains("written"), "{w:?}");

    let r = ba(
        &s,
        &s.user,
        &["session", "convert-to-image", "kimg", "kube-pkg"],
    );
    assert!(r.ok(), "{r:?}\nagent:\n{}", agent.log());
    assert!(r.stderr.contains("export process completed"), "{r:?}");
    let reference = customized(&s, &s.user, "kube-pkg");

    // Nothing of the pod's runtime is in the image: no variable of bai's, no label of the
    // agent's (the kubelet's own labels on the container are not the image's either).
    let config = image_config(&reference);
    for stranger in [
        "BAI_KERNEL_ID",
        "BACKENDAI_KERNEL_ID",
        "ai.bai.kernel",
        "io.kubernetes",
    ] {
        assert!(!config.contains(stranger), "{stranger} in {config}");
    }

    // A new session from it runs as a pod and has the package.
    let r = run_rm(
        &s,
        &s.user,
        &["cpu=0.5", "mem=256m"],
        "import kubeprobe; print('probe', kubeprobe.ANSWER)",
        &reference,
    );
    assert!(r.ok(), "{r:?}\nagent:\n{}", agent.log());
    assert!(r.stdout.contains("probe 42"), "{r:?}");

    s.bai(&s.user, &["rm", "kimg"]).expect_ok();
    cluster.wait_no_pods(&ns);
    let _ = std::process::Command::new("docker")
        .args(["rmi", "-f", &reference])
        .output();
    drop(agent);
    drop(s);
    cluster.kubectl(&["delete", "namespace", &ns, "--wait=false"]);
}
