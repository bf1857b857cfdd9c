//! The session's environment in every shell: a session launched with `-e PATH=…` and a
//! variable of its own keeps both in the web terminal's tmux (a login shell, which runs
//! Debian's `/etc/profile`), in an SSH command and in an SSH login shell; the user's own
//! `~/.profile` still adds to `PATH`; and a user's `.tmux.conf` that only changes the prefix
//! keeps the system's mouse mode.

use super::forward;
use super::ssh::{chmod600, ssh_args};
use bai_e2e::{Server, bin};
use std::process::{Command, Stdio};

const PATH: &str = "/opt/x/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

#[test]
fn the_sessions_environment_holds_in_the_terminal_and_over_ssh() {
    let s = Server::start();
    let user = &s.user;
    let w = s.work.path().to_path_buf();
    std::fs::write(w.join("profile"), "export PATH=\"$PATH:/from-profile\"\n").unwrap();
    s.bai(user, &["dotfile", "create", ".profile", "-f", "profile"])
        .expect_ok();
    std::fs::write(w.join("tmux.conf"), "set -g prefix C-a\n").unwrap();
    s.bai(
        user,
        &["dotfile", "create", ".tmux.conf", "-f", "tmux.conf"],
    )
    .expect_ok();
    let path_env = format!("PATH={PATH}");
    s.bai(
        user,
        &[
            "start",
            "-t",
            "envsess",
            "-e",
            &path_env,
            "-e",
            "MYVAR=from-launch",
            "python",
        ],
    )
    .expect_ok();

    // The web terminal: tmux's shell is a login shell.
    let url = {
        let r = s.bai(user, &["open", "envsess", "ttyd", "--path"]);
        r.expect_ok();
        r.stdout.trim().to_string()
    };
    let (base, cookie) = super::proxy::permit_cookie(&url);
    let mut ws = super::proxy::ws_connect(&format!("{base}ws"), Some(&cookie));
    ws.send(tungstenite::Message::Binary(
        b"echo \"P[$PATH] V[$MYVAR] M[$(tmux show -gv mouse)] K[$(tmux show -gv prefix)]\"\r"
            .to_vec()
            .into(),
    ))
    .expect("type into the terminal");
    let mut seen = String::new();
    let want = format!("P[{PATH}:/from-profile] V[from-launch] M[on] K[C-a]");
    while !seen.contains(&want) {
        match ws.read() {
            Ok(tungstenite::Message::Binary(b)) => seen.push_str(&String::from_utf8_lossy(&b)),
            Ok(_) => {}
            Err(e) => panic!("terminal closed before {want:?}: {e}; saw {seen:?}"),
        }
    }
    drop(ws);

    // SSH: a command (sshd's own environment), then a login shell.
    s.bai(user, &["download", "envsess", "id_container"])
        .expect_ok();
    let key = w.join("id_container");
    chmod600(&key);
    let (_fwd, port) = forward(&s, &bin("bai"), user, "envsess", "sshd");
    let ssh = |command: &str| {
        let out = Command::new("ssh")
            .args(ssh_args(&key, port))
            .arg("work@localhost")
            .arg(command)
            .stdin(Stdio::null())
            .output()
            .expect("run ssh");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(
        ssh("echo \"P[$PATH] V[$MYVAR]\""),
        format!("P[{PATH}] V[from-launch]")
    );
    assert_eq!(
        ssh("bash -lc 'echo \"P[$PATH] V[$MYVAR]\"'"),
        format!("P[{PATH}:/from-profile] V[from-launch]")
    );
    s.bai(user, &["rm", "envsess"]).expect_ok();
}
