//! An image with no C library at all: Debian's statically linked busybox as `/bin/sh` and its
//! applets, nothing else (as Alpine's musl images, or images whose glibc is older than the
//! agent machine's, have no glibc the runner could load). The runner is the kernel's first
//! program in every image, so it must need nothing of the image (it was linked against the
//! agent machine's glibc and could not start there: "exec /opt/bai/bin/krunner failed: No
//! such file or directory"). A batch session runs with its output and exit code, an
//! interactive one runs a shell step and keeps its files, and its web terminal is a login
//! `sh` (no tmux, no bash there). Its kernel's user is `work` though the image has no
//! `/etc/passwd` (`bai-agent/src/kernel_files/users.rs`), and SSH, scp and sftp reach it
//! through bai's static Dropbear and sftp-server (`scripts/build-sshd.sh`), with the
//! session's `PATH`.

use bai_e2e::Server;

/// Imports the image as `tag`.
fn busybox_image(tag: &str) {
    let busybox = std::path::Path::new("/bin/busybox");
    assert!(
        busybox.is_file(),
        "Debian's busybox-static is needed (scripts/ensure-deps.sh --test installs it)"
    );
    let root = tempfile::tempdir().unwrap();
    let bin = root.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for dir in ["tmp", "etc", "home/work"] {
        std::fs::create_dir_all(root.path().join(dir)).unwrap();
    }
    std::fs::copy(busybox, bin.join("busybox")).unwrap();
    let applets = std::process::Command::new(busybox)
        .arg("--list")
        .output()
        .unwrap();
    for applet in String::from_utf8_lossy(&applets.stdout).lines() {
        if applet != "busybox" {
            std::os::unix::fs::symlink("busybox", bin.join(applet)).unwrap();
        }
    }
    let import = format!(
        "tar -C {} -c . | docker import -c 'ENV PATH=/bin' -c 'WORKDIR /home/work' \
         -c 'LABEL ai.backend.kernelspec=1' -c 'LABEL ai.backend.features=batch' \
         -c 'LABEL ai.backend.base-distro=busybox' - {tag}",
        root.path().display()
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &import])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:#?}");
}

/// Whether `bai images` lists `tag` for the user.
fn listed(s: &Server, tag: &str) -> bool {
    let r = s.bai(&s.user, &["images", "--json"]);
    r.expect_ok();
    let images: Vec<bai_api::images::Image> = serde_json::from_str(&r.stdout).unwrap();
    images.iter().any(|i| {
        format!(
            "{}:{}",
            i.name.as_deref().unwrap_or_default(),
            i.tag.as_deref().unwrap_or_default()
        ) == tag
    })
}

#[test]
fn an_image_without_a_c_library_runs_sessions_and_a_terminal() {
    let tag = format!("bai-test/busybox-{}:static", std::process::id());
    let _image = super::TestImage(tag.clone());
    let s = Server::start();
    busybox_image(&tag);
    // The agent watches its engine's images: the new one reaches the catalogue.
    let seen = (0..120).any(|_| {
        let found = listed(&s, &tag);
        if !found {
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        found
    });
    assert!(seen, "{tag} never reached the catalogue");

    let r = s.bai(
        &s.user,
        &[
            "start",
            "--type",
            "batch",
            "-t",
            "nolibc-batch",
            "-c",
            "echo from $(uname -s) without libc; exit 3",
            &tag,
        ],
    );
    let info = s.wait_terminated(&s.user, "nolibc-batch", 60);
    assert_eq!(info["exit_code"], 3, "{info} {r:#?}");
    let logs = s.bai(&s.user, &["logs", "nolibc-batch"]);
    assert!(logs.stdout.contains("from Linux without libc"), "{logs:#?}");

    // An interactive session: a shell step (batch mode) and its files.
    let ls = s.bai(
        &s.user,
        &[
            "run",
            "-t",
            "nolibc-shell",
            "-e",
            "PATH=/opt/own/bin:/bin",
            "--exec",
            "ls /bin/busybox > seen.txt; cat seen.txt; echo user=$(whoami)",
            &tag,
        ],
    );
    ls.expect_ok();
    assert!(ls.stdout.contains("/bin/busybox"), "{ls:#?}");
    // The image has no account files: the kernel's user is named all the same.
    assert!(ls.stdout.contains("user=work"), "{ls:#?}");
    let files = s.bai(&s.user, &["session", "files", "nolibc-shell"]);
    assert!(files.stdout.contains("seen.txt"), "{files:#?}");

    // The web terminal: a login sh, in the session's home.
    let url = {
        let r = s.bai(&s.user, &["open", "nolibc-shell", "ttyd", "--path"]);
        r.expect_ok();
        r.stdout.trim().to_string()
    };
    let (base, cookie) = super::proxy::permit_cookie(&url);
    let mut ws = super::proxy::ws_connect(&format!("{base}ws"), Some(&cookie));
    ws.send(tungstenite::Message::Binary(
        b"echo \"T[$((6*7))] $(cat seen.txt)\"\r".to_vec().into(),
    ))
    .expect("type into the terminal");
    let want = "T[42] /bin/busybox";
    let mut typed = String::new();
    while !typed.contains(want) {
        match ws.read() {
            Ok(tungstenite::Message::Binary(b)) => typed.push_str(&String::from_utf8_lossy(&b)),
            Ok(_) => {}
            Err(e) => panic!("terminal closed before {want:?}: {e}; saw {typed:?}"),
        }
    }
    drop(ws);

    // SSH: the image has no sshd, so the kernel runs bai's static Dropbear. A command sees
    // the session's PATH, scp (SFTP underneath) writes into the home, sftp lists it.
    s.bai(&s.user, &["download", "nolibc-shell", "id_container"])
        .expect_ok();
    let key = s.work.path().join("id_container");
    super::ssh::chmod600(&key);
    let (_fwd, port) = super::forward(&s, &bai_e2e::bin("bai"), &s.user, "nolibc-shell", "sshd");
    let local = s.work.path().join("up.txt");
    std::fs::write(&local, "sent over sftp\n").unwrap();
    bai_e2e::apps::scp(
        &key,
        port,
        &local.display().to_string(),
        "work@localhost:up.txt",
    );
    let out = std::process::Command::new("ssh")
        .args(super::ssh::ssh_args(&key, port))
        .arg("work@localhost")
        .arg("echo \"$(whoami) $PATH $(cat up.txt)\"")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "work /opt/own/bin:/bin sent over sftp"
    );
    let files = s.bai(&s.user, &["session", "files", "nolibc-shell"]);
    assert!(files.stdout.contains("up.txt"), "{files:#?}");
    s.bai(&s.user, &["rm", "nolibc-shell"]).expect_ok();
}
