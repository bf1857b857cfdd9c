//! Images end to end on `baid up` with its Docker engine: the catalogue as the official
//! client and `bai images` list it; a session converted to a private image with the official
//! client (a package written outside /home/work, into the Python prefix the `python` image
//! lets its work user write) and started again from it; another user's view; a terminate
//! refused while a commit runs and a forced one that leaves no image; the quota; a commit to a
//! tarball on the agent.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_api::images::Image;
use bai_e2e::{Account, Run, Server, official_client};
use futures::StreamExt;
use serde_json::json;

fn ba(s: &Server, account: &Account, args: &[&str]) -> Run {
    s.run_as(official_client(), account, args)
}

fn images(s: &Server, account: &Account, customized: bool) -> Vec<Image> {
    let mut args = vec!["images", "--json"];
    if customized {
        args.push("--customized");
    }
    let r = s.bai(account, &args);
    r.expect_ok();
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {r:#?}"))
}

fn customized_named(s: &Server, account: &Account, name: &str) -> Option<Image> {
    images(s, account, true)
        .into_iter()
        .find(|i| i.label("ai.backend.customized-image.name") == Some(name))
}

/// The engine's images made from sessions of `owner` (the owner label, unique per server).
fn engine_images_of(owner: &str) -> Vec<String> {
    let out = std::process::Command::new("docker")
        .args([
            "images",
            "--filter",
            &format!("label=ai.backend.customized-image.owner={owner}"),
            "--format",
            "{{.ID}} {{.Repository}}:{{.Tag}}",
        ])
        .output()
        .expect("docker images");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Removes what the test made from the shared engine.
fn remove_engine_images_of(owner: &str) {
    for line in engine_images_of(owner) {
        if let Some(id) = line.split_whitespace().next() {
            let _ = std::process::Command::new("docker")
                .args(["rmi", "-f", id])
                .output();
        }
    }
}

/// Runs code in the running session `name` (`bai run` reuses a live session by name).
fn code(s: &Server, name: &str, code: &str) -> Run {
    s.bai(&s.user, &["run", "-t", name, "-c", code, "python"])
}

const WRITE_PACKAGE: &str = "import os\n\
p = '/usr/local/lib/python3.11/dist-packages/baiprobe'\n\
os.makedirs(p, exist_ok=True)\n\
open(p + '/__init__.py', 'w').write('ANSWER = 42\\n')\n\
open('/home/work/only-in-work.txt', 'w').write('scratch')\n\
print('written')";

#[test]
fn sessions_become_private_images_with_a_quota_and_commits_block_terminate() {
    let s = Server::start();
    // The catalogue: the official client's `image list` and `bai images` (aliases, minimums).
    let r = ba(&s, &s.user, &["image", "list"]);
    r.expect_ok();
    assert!(r.stdout.contains("bai/python"), "{r:#?}");
    let python = images(&s, &s.user, false)
        .into_iter()
        .find(|i| i.canonical_name.as_deref() == Some("bai/python:3.11-bookworm"))
        .expect("the python image is listed");
    assert!(
        python
            .aliases
            .clone()
            .unwrap_or_default()
            .contains(&"python".to_string())
    );
    assert!(
        python
            .resource_limits
            .clone()
            .unwrap_or_default()
            .iter()
            .any(|l| l.key == "mem"),
        "{python:?}"
    );
    assert_eq!(python.installed_agents, Some(vec![s.agent_id.clone()]));

    // A package outside /home/work, converted with the official client.
    ba(&s, &s.user, &["start", "-t", "imgsrc", "python"]).expect_ok();
    let w = code(&s, "imgsrc", WRITE_PACKAGE);
    w.expect_ok();
    assert!(w.stdout.contains("written"), "{w:#?}");
    let r = ba(
        &s,
        &s.user,
        &["session", "convert-to-image", "imgsrc", "pkg-env"],
    );
    r.expect_ok();
    assert!(r.stderr.contains("export process completed"), "{r:#?}");
    let img = customized_named(&s, &s.user, "pkg-env").expect("pkg-env is listed");
    let reference = img.canonical_name.clone().expect("reference");
    let owner = img
        .label("ai.backend.customized-image.owner")
        .expect("owner label")
        .to_string();
    assert!(owner.starts_with("user:"), "{owner}");
    assert!(
        reference.starts_with("bai/python:3.11-bookworm-customized_"),
        "{reference}"
    );
    assert!(
        img.tags
            .clone()
            .unwrap_or_default()
            .iter()
            .any(|t| t.key == "Customized")
    );
    let r = ba(&s, &s.user, &["image", "list", "--customized"]);
    r.expect_ok();
    assert!(
        r.stdout.contains("pkg-env (Owner: user@bai.local)"),
        "{r:#?}"
    );

    // A new session from it has the package, not the scratch file of /home/work.
    let r = s.bai(
        &s.user,
        &[
            "run",
            "--rm",
            "-c",
            "import baiprobe, os; print('probe', baiprobe.ANSWER, os.path.exists('/home/work/only-in-work.txt'))",
            &reference,
        ],
    );
    r.expect_ok();
    assert!(r.stdout.contains("probe 42 False"), "{r:#?}");

    // Another user neither lists nor launches it.
    assert!(images(&s, &s.user2, true).is_empty());
    assert!(
        !images(&s, &s.user2, false)
            .iter()
            .any(|i| i.canonical_name.as_deref() == Some(reference.as_str()))
    );
    let r = ba(&s, &s.user2, &["image", "list"]);
    r.expect_ok();
    assert!(!r.stdout.contains("customized_"), "{r:#?}");
    s.bai(&s.user2, &["start", &reference]).expect_fail("image");

    // A large writable layer keeps the next commit (converting again to `pkg-env`, which
    // would replace it) busy: terminate is refused meanwhile; a forced one stops it, leaves
    // no half image and keeps the image it was to replace.
    let w = code(
        &s,
        "imgsrc",
        "import os\nwith open('/usr/local/lib/python3.11/dist-packages/big.bin', 'wb') as f:\n    for _ in range(64): f.write(os.urandom(8 << 20))\nprint('big')",
    );
    w.expect_ok();
    let task = s
        .api(
            &s.user,
            "POST",
            "/session/imgsrc/imagify",
            Some(json!({"image_name": "pkg-env"})),
        )
        .expect("imagify starts");
    let task_id = task["task_id"].as_str().expect("task_id").to_string();
    let client = s.client(&s.user);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let events = rt
        .block_on(client.bgtask_events(&task_id))
        .expect("the task's events");
    s.bai(&s.user, &["rm", "imgsrc"])
        .expect_fail("being committed");
    s.bai(&s.user, &["rm", "-f", "imgsrc"]).expect_ok();
    let names: Vec<String> = rt.block_on(
        events
            .map(|e| e.map(|e| e.name).unwrap_or_default())
            .collect(),
    );
    assert_eq!(
        names.last().map(String::as_str),
        Some("bgtask_cancelled"),
        "{names:?}"
    );
    let kept = customized_named(&s, &s.user, "pkg-env").expect("pkg-env is kept");
    assert!(
        img.digest
            .as_deref()
            .is_some_and(|d| d.starts_with("sha256:")),
        "{img:?}"
    );
    assert_eq!(
        kept.digest, img.digest,
        "the image it was to replace is untouched"
    );
    assert_eq!(
        engine_images_of(&owner).len(),
        1,
        "{:?}",
        engine_images_of(&owner)
    );

    // The quota: three images; a fourth name is refused, the same name replaces.
    ba(&s, &s.user, &["start", "-t", "imgsrc2", "python"]).expect_ok();
    for name in ["pkg-two", "pkg-three"] {
        ba(
            &s,
            &s.user,
            &["session", "convert-to-image", "imgsrc2", name],
        )
        .expect_ok();
        assert!(customized_named(&s, &s.user, name).is_some(), "{name}");
    }
    let r = ba(
        &s,
        &s.user,
        &["session", "convert-to-image", "imgsrc2", "pkg-four"],
    );
    assert!(!r.ok(), "{r:#?}");
    assert!(
        format!("{}{}", r.stdout, r.stderr).contains("quota"),
        "{r:#?}"
    );
    let r = s.bai(
        &s.user,
        &["session", "convert-to-image", "imgsrc2", "pkg-four"],
    );
    r.expect_fail("current: 3, limit: 3");
    // The limit is the user's resource policy, which admins change and assign.
    let admin = |args: &[&str]| {
        let mut a = vec!["admin", "user-policy"];
        a.extend_from_slice(args);
        s.bai(&s.admin, &a)
    };
    admin(&["create", "two-images", "--max-customized-images", "2"]).expect_ok();
    admin(&["assign", "user@bai.local", "two-images"]).expect_ok();
    s.bai(
        &s.user,
        &["session", "convert-to-image", "imgsrc2", "pkg-four"],
    )
    .expect_fail("current: 3, limit: 2");
    s.bai(
        &s.user,
        &[
            "admin",
            "user-policy",
            "update",
            "two-images",
            "--max-customized-images",
            "9",
        ],
    )
    .expect_fail("only administrators");
    admin(&["delete", "two-images"]).expect_fail("held by 1 user");
    admin(&["update", "two-images", "--max-customized-images=-4"]).expect_fail("out of range");
    let listed = admin(&["list", "--json"]);
    listed.expect_ok();
    assert!(
        listed.stdout.contains("\"two-images\""),
        "{}",
        listed.stdout
    );
    admin(&["assign", "user@bai.local", "default"]).expect_ok();
    admin(&["delete", "two-images"]).expect_ok();
    let before = customized_named(&s, &s.user, "pkg-two").expect("pkg-two");
    s.bai(
        &s.user,
        &["session", "convert-to-image", "imgsrc2", "pkg-two"],
    )
    .expect_ok();
    let after = customized_named(&s, &s.user, "pkg-two").expect("pkg-two");
    assert_eq!(before.id, after.id, "the same name keeps its image id");
    assert_eq!(images(&s, &s.user, true).len(), 3);
    // Names are checked on the server.
    let bad = s.api(
        &s.user,
        "POST",
        "/session/imgsrc2/imagify?image_name=abc",
        None,
    );
    assert!(
        matches!(bad, Err((400, ref m)) if m.contains("4 to 32")),
        "{bad:?}"
    );

    // Forget frees a place; the engine keeps the layers until a purge.
    s.bai(&s.user, &["image", "forget", "pkg-three"])
        .expect_ok();
    assert!(customized_named(&s, &s.user, "pkg-three").is_none());
    s.bai(&s.user, &["image", "purge", "pkg-two"]).expect_ok();
    assert!(customized_named(&s, &s.user, "pkg-two").is_none());

    // A commit to a tarball on the agent, with the official client.
    ba(&s, &s.user, &["session", "commit", "imgsrc2"]).expect_ok();
    let dir = s.data_dir.path().join("commit").join("user_bai.local");
    let tarball = s.wait_for(300, "the commit tarball", || {
        let st = s
            .api(&s.user, "GET", "/session/imgsrc2/commit", None)
            .ok()?;
        if st["status"] != "ready" {
            return None;
        }
        std::fs::read_dir(&dir)
            .ok()?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
    });
    let head = std::fs::read(&tarball).expect("tarball");
    assert_eq!(&head[..2], &[0x1f, 0x8b], "gzip");
    assert!(
        tarball
            .to_string_lossy()
            .contains("_imgsrc2_python-3.11-bookworm.tar.gz"),
        "{tarball:?}"
    );
    ba(&s, &s.user, &["session", "destroy", "imgsrc2"]).expect_ok();
    remove_engine_images_of(&owner);
}

/// The second environment: `python-ml` (Debian's CPU build of PyTorch, NumPy, pandas,
/// scikit-learn, matplotlib) is in the catalogue with its apps and minimums, and its
/// sessions import torch.
#[test]
fn the_python_ml_environment_runs_torch() {
    let s = Server::start();
    let ml = images(&s, &s.user, false)
        .into_iter()
        .find(|i| i.name.as_deref() == Some("bai/python-ml"))
        .expect("python-ml is in the catalogue (images/python-ml/build.sh)");
    assert!(
        ml.apps
            .clone()
            .unwrap_or_default()
            .contains(&"jupyter".to_string())
    );
    assert!(
        ml.resource_limits
            .clone()
            .unwrap_or_default()
            .iter()
            .any(|l| l.key == "mem" && l.min.as_deref() == Some("256m")),
        "{ml:?}"
    );
    let r = s.bai(
        &s.user,
        &[
            "run",
            "--rm",
            "-r",
            "mem=1g",
            "-c",
            "import torch, numpy, pandas, sklearn, matplotlib; print('sum', torch.tensor([1.0, 2.0]).sum().item())",
            "python-ml",
        ],
    );
    r.expect_ok();
    assert!(r.stdout.contains("sum 3.0"), "{r:#?}");
}
