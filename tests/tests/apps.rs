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

use bai_e2e::images::TestImage;

fn official() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv-official/bin/backend.ai")
}
