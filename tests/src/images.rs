//! Running an image once, and the images users made from their sessions: what several test
//! binaries (warm pools, the Kubernetes backend) check alike.

use crate::{Account, Run, Server};

/// `bai run --rm -r R… -c CODE IMAGE` by `account`: a new session of `image` with the
/// `resources` (`cpu=0.5`, `mem=256m` …) that runs `code` once and is removed.
pub fn run_rm(s: &Server, account: &Account, resources: &[&str], code: &str, image: &str) -> Run {
    let mut a = vec!["run", "--rm"];
    for r in resources {
        a.extend_from_slice(&["-r", r]);
    }
    a.extend_from_slice(&["-c", code, image]);
    s.bai(account, &a)
}

/// The reference (canonical name) of the customized image `name` that `account` made.
pub fn customized(s: &Server, account: &Account, name: &str) -> String {
    let r = s.bai(account, &["images", "--customized", "--json"]);
    r.expect_ok();
    let list: Vec<bai_api::images::Image> =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {r:?}"));
    list.into_iter()
        .find(|i| i.label("ai.backend.customized-image.name") == Some(name))
        .and_then(|i| i.canonical_name)
        .unwrap_or_else(|| panic!("no customized image {name}: {}", r.stdout))
}

/// `docker image inspect` of `reference`: its environment and labels, as JSON text.
pub fn image_config(reference: &str) -> String {
    let out = std::process::Command::new("docker")
        .args([
            "image",
            "inspect",
            "--format",
            "{{json .Config.Env}} {{json .Config.Labels}}",
            reference,
        ])
        .output()
        .expect("docker image inspect");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}
