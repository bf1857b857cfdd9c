//! SSH through the app tunnel: the seed's recipe with `bai` and the official client (ssh, scp,
//! sftp), and the user's own keys from the `.ssh` folder.

use super::{forward, official};
use bai_e2e::apps::ssh_opts;
use bai_e2e::{Server, bin, sha256};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

pub(super) fn ssh_args(key: &Path, port: u16) -> Vec<String> {
    ssh_opts(key, "-p", port)
}

fn ssh(key: &Path, port: u16, command: &str) -> std::process::Output {
    Command::new("ssh")
        .args(ssh_args(key, port))
        .arg("work@localhost")
        .arg(command)
        .stdin(Stdio::null())
        .output()
        .expect("run ssh")
}

pub(super) fn chmod600(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o600)).expect("chmod");
}

#[test]
fn the_seed_ssh_recipe_works_with_bai_and_the_official_client() {
    let s = Server::start();
    let user = &s.user;
    let w = s.work.path().to_path_buf();
    s.bai(user, &["start", "-t", "mysess", "python"])
        .expect_ok();
    let apps = s.bai(user, &["apps", "mysess"]);
    apps.expect_ok();
    assert!(
        apps.stdout.contains("sshd") && apps.stdout.contains("2200"),
        "{apps:#?}"
    );
    s.bai(user, &["download", "mysess", "id_container"])
        .expect_ok();
    let key = w.join("id_container");
    assert!(
        std::fs::read_to_string(&key)
            .unwrap_or_default()
            .contains("PRIVATE KEY"),
        "id_container is a private key"
    );
    chmod600(&key);
    let (fwd, port) = forward(&s, &bin("bai"), user, "mysess", "sshd");
    let out = ssh(&key, port, "echo hi from $(whoami) in $(hostname)");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "hi from work in main1"
    );
    // scp 100 MB in and back out, intact.
    let big = w.join("big.bin");
    let st = Command::new("dd")
        .args([
            "if=/dev/urandom",
            &format!("of={}", big.display()),
            "bs=1M",
            "count=100",
            "status=none",
        ])
        .status()
        .expect("dd");
    assert!(st.success());
    let sum = sha256(&big);
    let scp = |from: &str, to: &str| {
        let out = Command::new("scp")
            .arg("-q")
            .args(ssh_opts(&key, "-P", port))
            .args([from, to])
            .output()
            .expect("scp");
        assert!(out.status.success(), "scp {from} {to}: {out:?}");
    };
    scp(
        &big.display().to_string(),
        "work@localhost:/home/work/big.bin",
    );
    let out = ssh(&key, port, "sha256sum /home/work/big.bin");
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with(&sum),
        "{out:?}"
    );
    let back = w.join("back.bin");
    scp(
        "work@localhost:/home/work/big.bin",
        &back.display().to_string(),
    );
    assert_eq!(sha256(&back), sum);
    // sftp lists the container's home.
    let mut sftp = Command::new("sftp")
        .args(ssh_opts(&key, "-P", port))
        .args(["-b", "-", "work@localhost"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("sftp");
    sftp.stdin
        .take()
        .expect("stdin")
        .write_all(b"ls /home/work\n")
        .expect("sftp commands");
    let out = sftp.wait_with_output().expect("sftp output");
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("big.bin"),
        "{out:?}"
    );
    // The tunnels' bytes are recorded for the idle checker.
    let info = s.info(user, "mysess");
    assert!(
        info["network"]["rx_bytes"].as_u64().unwrap_or(0) > 100 << 20,
        "{}",
        info["network"]
    );
    assert!(info["network"]["last_activity"].is_string());
    drop(fwd);

    // The same recipe with the official client.
    let dl = s.work.path().join("official");
    std::fs::create_dir_all(&dl).unwrap();
    let r = s.run_as(
        official(),
        user,
        &[
            "session",
            "download",
            "mysess",
            "id_container",
            "--dest",
            &dl.display().to_string(),
        ],
    );
    r.expect_ok();
    let key2 = dl.join("id_container");
    assert_eq!(
        std::fs::read(&key2).expect("official download"),
        std::fs::read(&key).expect("our download")
    );
    chmod600(&key2);
    let (_fwd2, port2) = forward(&s, &official(), user, "mysess", "sshd");
    let out = ssh(&key2, port2, "echo official $(id -u)");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "official 1000");
}

#[test]
fn own_keys_from_the_ssh_folder_and_the_http_tunnel() {
    let s = Server::start();
    let user = &s.user;
    let w = s.work.path().to_path_buf();
    // The user's own key pair, its public half in the `.ssh` folder.
    let mine = w.join("mykey");
    let st = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&mine)
        .status()
        .expect("ssh-keygen");
    assert!(st.success());
    std::fs::copy(w.join("mykey.pub"), w.join("authorized_keys")).expect("copy");
    s.bai(user, &["vfolder", "create", ".ssh"]).expect_ok();
    s.bai(user, &["vfolder", "upload", ".ssh", "authorized_keys"])
        .expect_ok();
    s.bai(user, &["start", "-t", "keysess", "python"])
        .expect_ok();
    s.bai(user, &["download", "keysess", "id_container"])
        .expect_ok();
    chmod600(&w.join("id_container"));
    let (_fwd, port) = forward(&s, &bin("bai"), user, "keysess", "sshd");
    let out = ssh(&mine, port, "echo own key");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "own key");
    // The folder's authorized_keys decides: the generated key is not let in.
    let out = ssh(&w.join("id_container"), port, "echo generated key");
    assert!(!out.status.success(), "{out:?}");

    // `httpproxy` tunnels web apps only: the terminal page comes through it; sshd does not.
    let client = s.client(user);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let page = rt.block_on(async {
        let e = client.open_http_tunnel("keysess", "sshd").await;
        assert!(e.is_err(), "sshd is not a web app");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let tunnel = client
            .open_http_tunnel("keysess", "ttyd")
            .await
            .expect("tunnel");
        tokio::spawn(async move {
            if let Ok((conn, _)) = listener.accept().await {
                let _ = tunnel.pump(conn).await;
            }
        });
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut c = tokio::net::TcpStream::connect(addr).await.expect("connect");
        c.write_all(b"GET / HTTP/1.0\r\nHost: x\r\n\r\n")
            .await
            .expect("send");
        let mut out = String::new();
        let _ = c.read_to_string(&mut out).await;
        out
    });
    assert!(
        page.starts_with("HTTP/1.1 200") && page.contains("xterm.js"),
        "{page}"
    );
}
