//! The kernel's user in a pod of an image that lacks it (issue 57: "the same uid/gid as
//! Docker kernels", the same images on both backends). An image without `work` at uid 1000
//! (bai's python image less its `work` user, as an image made for Backend.AI is) gets it:
//! `whoami` says `work` in code and over SSH, which sshd refuses to a user without a name.
//! The agent learns from each image's first pod whether it needs this: a second pod of such
//! an image makes the account files again; a second pod of bai's own image (which has the
//! user) runs without the init container.

use bai_e2e::apps::{forward, session_key, ssh_opts};
use bai_e2e::images::TestImage;
use bai_e2e::kube::{Cluster, NamespaceGuard, joined};
use bai_e2e::{Server, bin};
use std::process::{Command, Stdio};

/// The names of the init containers of session `name`'s pod in `ns`.
fn inits(cluster: &Cluster, ns: &str, name: &str) -> Vec<String> {
    let out = cluster.kubectl(&[
        "get",
        "pods",
        "-n",
        ns,
        "-o",
        r#"jsonpath={range .items[*]}{.metadata.annotations.ai\.bai/session-name}={.spec.initContainers[*].name}{"\n"}{end}"#,
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("no pod of {name} in {ns}: {text:?} {out:?}"));
    line.split_whitespace().map(str::to_string).collect()
}

/// Starts session `name` of `image` and answers who its code runs as, with its home.
fn started_as(s: &Server, name: &str, image: &str) -> String {
    let admin = &s.admin;
    s.bai(
        admin,
        &[
            "start", "-t", name, "-r", "cpu=0.25", "-r", "mem=256m", image,
        ],
    )
    .expect_ok();
    let code = "import os, pwd\n\
                e = pwd.getpwuid(os.getuid())\n\
                print(e.pw_name, e.pw_dir)";
    let r = s.bai(admin, &["run", "-t", name, "-c", code, image]);
    assert!(r.ok(), "{r:?}");
    // The pod's own report is in once its logs can be read: what the agent learns from.
    s.bai(admin, &["logs", name]).expect_ok();
    r.stdout.trim().to_string()
}

#[test]
fn a_pod_of_an_image_without_the_work_user_has_it() {
    let cluster = Cluster::get();
    let tag = format!("bai-test/no-work-{}:x", std::process::id());
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("Dockerfile"),
        "FROM bai/python:3.11-bookworm\nUSER root\nRUN userdel work && ! id 1000\nUSER 1000\n",
    )
    .expect("Dockerfile");
    let image = TestImage::build(&tag, dir.path());
    let ns = format!("bai-e2e-users-{}", std::process::id());
    let _ns = NamespaceGuard::new(&cluster, &ns);
    let (s, agent) = joined("kube-users", &[], &cluster.kubeconfig, &ns);
    let admin = &s.admin;
    image.wait_listed(&s, admin);

    // Nameless in the image; `work` in the kernel, its first pod and every later one.
    assert_eq!(
        started_as(&s, "nowork", &tag),
        "work /home/work",
        "{}",
        agent.log()
    );
    assert_eq!(inits(&cluster, &ns, "nowork"), ["accounts"]);
    let key = session_key(&s, admin, "nowork");
    let (sshd, sp) = forward(&s, &bin("bai"), admin, "nowork", "sshd");
    let out = Command::new("ssh")
        .args(ssh_opts(&key, "-p", sp))
        .args(["work@localhost", "echo $(whoami) $(id -gn) $HOME"])
        .stdin(Stdio::null())
        .output()
        .expect("ssh");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "work work /home/work",
        "{out:?}\nforwarder:\n{}\nagent:\n{}",
        sshd.log(),
        agent.log()
    );
    drop(sshd);
    s.bai(admin, &["rm", "nowork"]).expect_ok();
    assert_eq!(started_as(&s, "nowork2", &tag), "work /home/work");
    assert_eq!(inits(&cluster, &ns, "nowork2"), ["accounts"]);
    s.bai(admin, &["rm", "nowork2"]).expect_ok();

    // bai's image names the user: asked in its first pod only.
    let python = "bai/python:3.11-bookworm";
    assert_eq!(started_as(&s, "named", python), "work /home/work");
    assert_eq!(inits(&cluster, &ns, "named"), ["accounts"]);
    s.bai(admin, &["rm", "named"]).expect_ok();
    assert_eq!(started_as(&s, "named2", python), "work /home/work");
    assert!(inits(&cluster, &ns, "named2").is_empty(), "{}", agent.log());
    s.bai(admin, &["rm", "named2"]).expect_ok();
    cluster.wait_no_pods(&ns);
}
