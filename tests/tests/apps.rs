//! Apps end to end, against `baid up` and the real Docker engine: the seed's SSH recipe with
//! `bai` and with the unmodified official client (download `id_container`, tunnel sshd through
//! the manager, `ssh`, `scp` of 100 MB, `sftp`), the session's environment in its shells,
//! preopen ports, who may open a tunnel, and tunnels closing when their session ends, and the
//! raw tunnel of `bai app` next to the WebSocket one.
//!
//! One test binary; the tests are grouped by what they cover: `ssh` (the seed's SSH recipe,
//! own keys), `bare_image` (sessions and the terminal in an image with no C library),
//! `recipe` (an image's own web app from its Backend.AI recipe), `foreign_user` (an image
//! without the `work` user: its name for code and SSH),
//! `environ` (the session's variables in the terminal and over SSH), `proxy` (web
//! apps through the HTTP proxy) and `tunnels` (preopen ports, permits, tunnels closing with
//! their session, raw and WebSocket tunnels). The helpers they share are here.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

#[path = "apps/bare_image.rs"]
mod bare_image;
#[path = "apps/environ.rs"]
mod environ;
#[path = "apps/foreign_user.rs"]
mod foreign_user;
#[path = "apps/proxy.rs"]
mod proxy;
#[path = "apps/recipe.rs"]
mod recipe;
#[path = "apps/ssh.rs"]
mod ssh;
#[path = "apps/tunnels.rs"]
mod tunnels;

use bai_e2e::apps::forward;
use std::path::PathBuf;

/// An image a test made on the shared engine, removed when the test ends, passed or not
/// (made before the test's server, so it goes after the server's containers).
struct TestImage(String);

impl TestImage {
    /// Builds `tag` from the Docker build folder `dir` (a Dockerfile and its files).
    fn build(tag: &str, dir: &std::path::Path) -> TestImage {
        let image = TestImage(tag.to_string());
        let out = std::process::Command::new("docker")
            .args(["build", "-q", "-t", tag])
            .arg(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:#?}");
        image
    }

    /// Waits until the account's `bai images` lists it (the agent watches its engine).
    fn wait_listed(&self, s: &bai_e2e::Server, account: &bai_e2e::Account) {
        let repo = self.0.split(':').next().unwrap_or_default();
        s.wait_for(60, "the image in the catalogue", || {
            s.bai(account, &["images"])
                .stdout
                .contains(repo)
                .then_some(())
        });
    }
}

impl Drop for TestImage {
    fn drop(&mut self) {
        let _ = std::process::Command::new("docker")
            .args(["rmi", "-f", &self.0])
            .output();
    }
}

fn official() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv-official/bin/backend.ai")
}
