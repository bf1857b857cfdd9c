//! A pod's apps through bai's app proxy (issue 57 item 4): SSH and SCP through `bai app
//! sshd`, the web terminal's page through `bai app ttyd`, a Jupyter kernel running code, and a
//! preopen port served from inside the pod. The SSH connection is the first thing done once
//! `bai start` returns: a kernel is ready when its runner answers, which may be before the
//! kubelet has reported the pod's IP, and an app must still find the pod then.

use bai_e2e::apps::{forward, http_get_ok, jupyter_through_app, scp, session_key, ssh_opts};
use bai_e2e::images::TestImage;
use bai_e2e::kube::{Cluster, NamespaceGuard, joined};
use bai_e2e::remote::ttyd_page;
use bai_e2e::{bin, sha256};
use std::process::{Command, Stdio};

#[test]
fn a_pods_apps_work_through_the_app_proxy() {
    let cluster = Cluster::get();
    let ns = format!("bai-e2e-apps-{}", std::process::id());
    let _ns = NamespaceGuard::new(&cluster, &ns);
    let (s, agent) = joined("kube-apps", &[], &cluster.kubeconfig, &ns);
    let admin = &s.admin;
    let w = s.work.path().to_path_buf();
    let r = s.bai(
        admin,
        &[
            "start",
            "-t",
            "kapps",
            "-r",
            "cpu=0.5",
            "-r",
            "mem=768m",
            "--preopen",
            "8080",
            "python",
        ],
    );
    assert!(r.ok(), "{r:?}\nagent:\n{}", agent.log());

    // SSH at once, then SCP both ways.
    let key = session_key(&s, admin, "kapps");
    let (sshd, sp) = forward(&s, &bin("bai"), admin, "kapps", "sshd");
    let out = Command::new("ssh")
        .args(ssh_opts(&key, "-p", sp))
        .args(["work@localhost", "echo $(whoami)@$(id -u)"])
        .stdin(Stdio::null())
        .output()
        .expect("ssh");
    assert!(
        out.status.success(),
        "{out:?}\nforwarder:\n{}\nkernel's log:\n{}\nagent:\n{}\nmanager:\n{}",
        sshd.log(),
        s.bai(admin, &["logs", "kapps"]).stdout,
        agent.log(),
        s.log()
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "work@1000");
    let payload = w.join("payload.bin");
    std::fs::write(&payload, b"through the pod's sshd\n".repeat(4096)).expect("payload");
    scp(
        &key,
        sp,
        &payload.display().to_string(),
        "work@localhost:/home/work/by-scp.bin",
    );
    let back = w.join("back.bin");
    scp(
        &key,
        sp,
        "work@localhost:/home/work/by-scp.bin",
        &back.display().to_string(),
    );
    assert_eq!(sha256(&back), sha256(&payload));

    // The web terminal's page, and a Jupyter kernel that runs code.
    assert!(ttyd_page(&s, "kapps").contains("Terminal"));
    assert_eq!(jupyter_through_app(&s, admin, "kapps").trim(), "42");

    // A process in the pod serves on the preopen port; the tunnel reaches it.
    let code = "import subprocess, pathlib\n\
                pathlib.Path('/home/work/hello.txt').write_text('served from the pod')\n\
                subprocess.Popen(['python3', '-m', 'http.server', '8080'], cwd='/home/work',\n\
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)\n\
                print('started')";
    s.bai(admin, &["run", "-t", "kapps", "-c", code, "python"])
        .expect_ok();
    let (_web, port) = forward(&s, &bin("bai"), admin, "kapps", "8080");
    let body = http_get_ok(&s, port, "/hello.txt", 60);
    assert!(body.contains("served from the pod"), "{body}");

    s.bai(admin, &["rm", "kapps"]).expect_ok();
    cluster.wait_no_pods(&ns);
}

/// An image without sshd of its own (the python image less `/usr/sbin/sshd`): its pod runs
/// bai's static Dropbear, mounted beside the runner from the node, with the session's
/// variables for a command.
#[test]
fn a_pod_of_an_image_without_sshd_gets_bais_ssh_server() {
    let cluster = Cluster::get();
    let tag = format!("bai-test/no-sshd-{}:x", std::process::id());
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("Dockerfile"),
        "FROM bai/python:3.11-bookworm\nUSER root\nRUN rm /usr/sbin/sshd\nUSER work\n",
    )
    .expect("Dockerfile");
    let image = TestImage::build(&tag, dir.path());
    let ns = format!("bai-e2e-nosshd-{}", std::process::id());
    let _ns = NamespaceGuard::new(&cluster, &ns);
    let (s, agent) = joined("kube-nosshd", &[], &cluster.kubeconfig, &ns);
    let admin = &s.admin;
    image.wait_listed(&s, admin);
    let r = s.bai(
        admin,
        &[
            "start",
            "-t",
            "knossh",
            "-r",
            "cpu=0.5",
            "-r",
            "mem=512m",
            "-e",
            "MARK=kept",
            &tag,
        ],
    );
    assert!(r.ok(), "{r:?}\nagent:\n{}", agent.log());
    let key = session_key(&s, admin, "knossh");
    let (_sshd, sp) = forward(&s, &bin("bai"), admin, "knossh", "sshd");
    let out = Command::new("ssh")
        .args(ssh_opts(&key, "-p", sp))
        .args([
            "work@localhost",
            "test -e /usr/sbin/sshd || echo $(whoami) $MARK",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("ssh");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "work kept",
        "{out:?}\nagent:\n{}",
        agent.log()
    );
    s.bai(admin, &["rm", "knossh"]).expect_ok();
    cluster.wait_no_pods(&ns);
}
