//! An image whose uid 1000 is another user (as Ubuntu's images have `ubuntu`) and which has
//! no `work`: kernels run as uid 1000, so without a line for `work` its code saw the name
//! `ubuntu` and sshd refused every login as `work` ("Invalid user work"). The agent writes
//! the image's account files with `work` in them into each container before it starts
//! (`bai-agent/src/kernel_files/users.rs`); the image itself is left as it was.

use super::ssh::{chmod600, ssh_args};
use bai_e2e::{Server, bin};
use std::process::{Command, Stdio};

/// Builds `tag` from the python image with `work` replaced by `ubuntu` at uid 1000.
fn ubuntu_like_image(tag: &str) -> super::TestImage {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("Dockerfile"),
        "FROM bai/python:3.11-bookworm\n\
         USER root\n\
         RUN userdel work && groupdel work 2>/dev/null; \
             groupadd -g 1000 ubuntu && useradd -u 1000 -g 1000 -m -s /bin/bash ubuntu\n\
         USER 1000\n",
    )
    .unwrap();
    super::TestImage::build(tag, dir.path())
}

#[test]
fn an_image_without_the_work_user_gets_it_for_code_and_ssh() {
    let tag = format!("bai-test/ubuntu-like-{}:x", std::process::id());
    let image = ubuntu_like_image(&tag);
    let s = Server::start();
    let user = &s.user;
    image.wait_listed(&s, user);
    let code = "import os, pwd; p = pwd.getpwuid(os.getuid()); print('user:', p.pw_name, p.pw_dir)";
    let r = s.bai(user, &["run", "-t", "usersess", "-c", code, &tag]);
    assert!(r.stdout.contains("user: work /home/work"), "{r:#?}");

    // SSH as `work`, with the session's own key.
    s.bai(user, &["download", "usersess", "id_container"])
        .expect_ok();
    let key = s.work.path().join("id_container");
    chmod600(&key);
    let (_fwd, port) = super::forward(&s, &bin("bai"), user, "usersess", "sshd");
    let out = Command::new("ssh")
        .args(ssh_args(&key, port))
        .arg("work@localhost")
        .arg("echo ssh as $(whoami) in $HOME")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "ssh as work in /home/work"
    );

    // The image keeps its own accounts.
    let passwd = Command::new("docker")
        .args(["run", "--rm", "--entrypoint", "cat", &tag, "/etc/passwd"])
        .output()
        .unwrap();
    let passwd = String::from_utf8_lossy(&passwd.stdout);
    assert!(
        passwd.contains("ubuntu:x:1000") && !passwd.contains("work:"),
        "{passwd}"
    );
    s.bai(user, &["rm", "usersess"]).expect_ok();
}
