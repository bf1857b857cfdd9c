//! Running an image once, and the images users made from their sessions: what several test
//! binaries (warm pools, the Kubernetes backend) check alike; and images a test builds.

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

/// An image a test made on the shared engine, removed when the test ends, passed or not
/// (made before the test's server, so it goes after the server's containers).
pub struct TestImage(pub String);

impl TestImage {
    /// Builds `tag` from the Docker build folder `dir` (a Dockerfile and its files).
    pub fn build(tag: &str, dir: &std::path::Path) -> TestImage {
        let image = TestImage(tag.to_string());
        let out = std::process::Command::new("docker")
            .args(["build", "-q", "-t", tag])
            .arg(dir)
            .output()
            .unwrap_or_else(|e| panic!("docker build: {e}"));
        assert!(out.status.success(), "{out:#?}");
        image
    }

    /// Waits until the account's `bai images` lists it (the agent watches its engine).
    pub fn wait_listed(&self, s: &Server, account: &Account) {
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
