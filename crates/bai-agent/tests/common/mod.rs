//! What the Docker tests share: the krunner binary, an agent of their own, a kernel spec,
//! running code in a kernel.
#![allow(dead_code)]

use bai_agent::{DockerAgent, DockerAgentConfig};
use bai_core::agent::{AgentEvent, AgentRpc, ExecEvent, ExecRequest, KernelExit, KernelSpec};
use bai_core::resources::ResourceSlots;
use bai_core::status::SessionType;
use futures::StreamExt;
use futures::stream::BoxStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;
use uuid::Uuid;

pub const IMAGE: &str = "bai/python:3.11-bookworm";

/// The krunner binary next to this test's profile directory, built once per test run.
pub fn krunner() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            // Tests run from target/<profile>/deps/.
            let exe = std::env::current_exe().expect("the test's own path");
            let profile_dir = exe
                .parent()
                .and_then(Path::parent)
                .expect("target/<profile>")
                .to_path_buf();
            // The runner as `make build` makes it (static: scripts/build-krunner.sh); a
            // plain `cargo build` here would put back a dynamically linked one, which tests
            // running beside this one (images without glibc) would then start.
            let script =
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/build-krunner.sh");
            let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
                Some("debug") | None => "dev",
                Some(other) => other,
            };
            let status = Command::new(script)
                .arg("--quiet")
                .env("PROFILE", profile)
                .status()
                .expect("scripts/build-krunner.sh runs");
            assert!(status.success(), "scripts/build-krunner.sh failed");
            let p = profile_dir.join("bai-krunner");
            assert!(p.is_file(), "{} is missing after the build", p.display());
            p
        })
        .clone()
}

/// An agent with its own id and data directory. Dropping it force-removes whatever
/// containers a failed test left behind.
pub struct TestAgent {
    pub agent: DockerAgent,
    pub id: String,
    pub dir: tempfile::TempDir,
}

impl Drop for TestAgent {
    fn drop(&mut self) {
        // What a pool's claims mounted under the data directory (a failed test leaves its
        // kernels), deepest first, so the directory can go.
        let _ = self.unmount_all();
        let out = Command::new("docker")
            .args(["ps", "-aq", "--filter"])
            .arg(format!("label=ai.bai.agent={}", self.id))
            .output();
        if let Ok(out) = out {
            let ids = String::from_utf8_lossy(&out.stdout);
            let ids: Vec<&str> = ids.split_whitespace().collect();
            if !ids.is_empty() {
                let _ = Command::new("docker").args(["rm", "-f"]).args(ids).output();
            }
        }
    }
}

impl TestAgent {
    fn unmount_all(&self) -> std::io::Result<()> {
        let info = std::fs::read_to_string("/proc/self/mountinfo")?;
        let root = std::fs::canonicalize(self.dir.path())?;
        let mut points: Vec<&str> = info
            .lines()
            .filter_map(|l| l.split(' ').nth(4))
            .filter(|p| Path::new(p).starts_with(&root))
            .collect();
        points.sort_by_key(|p| std::cmp::Reverse(p.len()));
        for p in points {
            let _ = Command::new("umount").args(["-l", p]).output();
        }
        Ok(())
    }
}

pub async fn agent() -> TestAgent {
    agent_with_pool(Vec::new()).await
}

/// An agent that keeps these warm pools.
pub async fn agent_with_pool(warm_pool: Vec<bai_core::pool::PoolTarget>) -> TestAgent {
    let dir = tempfile::tempdir().expect("tempdir");
    let id = format!("test-{}", &Uuid::new_v4().simple().to_string()[..12]);
    let agent = DockerAgent::connect(DockerAgentConfig {
        accelerator: None,
        agent_id: id.clone(),
        scaling_group: "default".into(),
        data_dir: dir.path().to_path_buf(),
        krunner_path: krunner(),
        reserved_mem: 0,
        reserved_cpu_milli: 0,
        storage_hosts: Default::default(),
        registry: None,
        manager_host: None,
        warm_pool,
    })
    .await
    .expect("a running Docker engine");
    TestAgent { agent, id, dir }
}

pub fn spec(ty: SessionType, mem_mib: u64, startup: Option<&str>) -> KernelSpec {
    KernelSpec {
        kernel_id: Uuid::new_v4(),
        session_id: Uuid::new_v4(),
        session_name: "agent-test".into(),
        session_type: ty,
        image: IMAGE.into(),
        slots: ResourceSlots {
            cpu_milli: 500,
            mem: mem_mib << 20,
            accel: Default::default(),
        },
        shmem: 16 << 20,
        environ: [("FOO".to_string(), "bar".to_string())]
            .into_iter()
            .collect(),
        startup_command: startup.map(str::to_string),
        bootstrap_script: None,
        owner_access_key: "AK".into(),
        mounts: Vec::new(),
        cluster: None,
        egress: Default::default(),
        dotfiles: Vec::new(),
    }
}

/// Collects a whole execution: (stdout, stderr, exit code).
pub async fn collect(mut s: BoxStream<'static, ExecEvent>) -> (String, String, i32) {
    let (mut out, mut err, mut code) = (String::new(), String::new(), -1);
    while let Some(ev) = tokio::time::timeout(Duration::from_secs(30), s.next())
        .await
        .expect("execution event within 30 s")
    {
        match ev {
            ExecEvent::Stdout { data } => out.push_str(&data),
            ExecEvent::Stderr { data } => err.push_str(&data),
            ExecEvent::Finished { exit_code } => code = exit_code,
            ExecEvent::WaitingInput { .. } => panic!("unexpected waiting-input"),
        }
    }
    (out, err, code)
}

pub async fn run(a: &DockerAgent, k: Uuid, req: ExecRequest) -> (String, String, i32) {
    collect(a.execute(k, req).await.expect("execute")).await
}

pub fn q(code: &str) -> ExecRequest {
    ExecRequest::Query { code: code.into() }
}

/// The next exit report of kernel `k` (30 s at most).
pub async fn next_exit(events: &mut BoxStream<'static, AgentEvent>, k: Uuid) -> KernelExit {
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match events.next().await {
                Some(AgentEvent::KernelExited(e)) if e.kernel_id == k => return e,
                Some(_) => continue,
                None => panic!("the event stream ended"),
            }
        }
    })
    .await
    .expect("an exit event within 30 s")
}

pub fn kernel_dir(t: &TestAgent, k: Uuid) -> PathBuf {
    t.dir.path().join("kernels").join(k.to_string())
}
