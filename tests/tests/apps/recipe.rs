//! An image's own web app, started from its recipe in Backend.AI's format
//! (`/etc/backend.ai/service-defs/<app>.json`, `bai-krunner/src/recipe.rs`): an image made
//! from `bai/python` declares `webdemo:http:8180` and brings a recipe whose steps make a
//! page (with the app's port and the output of a command run with the image's runtime path)
//! and whose command serves it with Python's `http.server`. Opened through the HTTP app
//! proxy (which gives it paths without the proxy's prefix, as it serves at its root) and
//! through `bai app`'s tunnel (whose URL is the root). Before, krunner knew only its own
//! Jupyter and TensorBoard: "krunner does not know how to start the app". The image's
//! runtime path (a wrapper that marks its processes) is also the Python its code runs in.

use bai_e2e::apps::{forward, http_get_ok};
use bai_e2e::{Server, bin};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

const RECIPE: &str = r#"{
  "prestart": [
    {"action": "mkdir", "args": {"path": "/tmp/webdemo"}},
    {"action": "run_command", "ref": "major",
     "args": {"command": ["{runtime_path}", "-c", "import sys; print(sys.version_info[0], end='')"]}},
    {"action": "write_file", "args": {"filename": "/tmp/webdemo/index.html",
     "body": ["<p>recipe on {ports[0]} (${{ ports[0] }}) with python {major[out]}, {{ok}}</p>"]}}
  ],
  "command": ["{runtime_path}", "-m", "http.server", "{ports[0]}", "--directory", "/tmp/webdemo"],
  "url_template": "http://{host}:{port}/"
}"#;

/// Builds `tag` from the python image with the recipe and the labels that declare it.
fn recipe_image(tag: &str) -> super::TestImage {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("webdemo.json"), RECIPE).unwrap();
    std::fs::write(
        dir.path().join("python"),
        "#!/bin/sh\nexport BAI_TEST_RUNTIME=the-images\nexec /usr/bin/python3 \"$@\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(
        dir.path().join("python"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("Dockerfile"),
        "FROM bai/python:3.11-bookworm\n\
         COPY webdemo.json /etc/backend.ai/service-defs/webdemo.json\n\
         COPY python /opt/runtime/bin/python\n\
         LABEL ai.backend.service-ports=\"jupyter:http:8091,webdemo:http:8180,norecipe:http:8181\" \
               ai.backend.runtime-path=/opt/runtime/bin/python\n",
    )
    .unwrap();
    super::TestImage::build(tag, dir.path())
}

#[test]
fn an_images_recipe_starts_its_app_behind_the_proxy_and_a_tunnel() {
    let tag = format!("bai-test/recipe-{}:x", std::process::id());
    let image = recipe_image(&tag);
    let s = Server::start();
    let user = &s.user;
    image.wait_listed(&s, user);
    s.bai(user, &["start", "-t", "recipesess", &tag])
        .expect_ok();
    let apps = s.bai(user, &["apps", "recipesess"]);
    assert!(apps.stdout.contains("webdemo"), "{apps:#?}");

    // Code runs in the image's Python (its runtime path), not the first python3 on PATH.
    let code = "import os; print('runtime:', os.environ.get('BAI_TEST_RUNTIME'))";
    let r = s.bai(user, &["run", "-t", "recipesess", "-c", code, &tag]);
    assert!(r.stdout.contains("runtime: the-images"), "{r:#?}");

    // The HTTP proxy: the page the recipe's steps made, served by its command.
    let want = "<p>recipe on 8180 (8180) with python 3, {ok}</p>";
    let (_, base, cookie) = super::proxy::open_app(&s, user, "recipesess", &["webdemo"]);
    let (status, _, body) = super::proxy::http(&base, "GET", Some(&cookie), "");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(want), "{body}");

    // `bai app`: the tunnel's URL is the app's root, where it answers.
    let port = bai_e2e::free_port();
    let mut app = Command::new(bin("bai"))
        .args(["app", "recipesess", "webdemo", "-b", &port.to_string()])
        .envs(user.vars.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(app.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _ = app.kill();
    let _ = app.wait();
    assert!(
        line.trim_end()
            .ends_with(&format!("at: http://127.0.0.1:{port}/")),
        "{line}"
    );
    let (_tunnel, port) = forward(&s, &bin("bai"), user, "recipesess", "webdemo");
    let page = http_get_ok(&s, port, "/", 60);
    assert!(page.contains(want), "{page}");

    // An app the image declares without a recipe is refused with the reason.
    let r = s.bai(user, &["open", "recipesess", "norecipe"]);
    assert_ne!(r.code, 0, "{r:#?}");
    assert!(r.stderr.contains("no recipe for it"), "{r:#?}");
    s.bai(user, &["rm", "recipesess"]).expect_ok();
}
