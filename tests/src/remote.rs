//! Remote agents for multi-machine tests: `baid agent` processes started inside test
//! [`Machine`]s, and what tests ask the manager about them.

use crate::netns::Machine;
use crate::{Server, bin};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub const IMAGE: &str = "bai/python:3.11-bookworm";

/// A `baid agent` process (killed on drop) and its data dir.
pub struct Agent {
    pub name: String,
    child: Option<Child>,
    data: tempfile::TempDir,
    /// More `baid agent` flags.
    extra: Vec<String>,
}

pub fn agent_command(
    program: Command,
    name: &str,
    manager: &str,
    token: &str,
    data: &Path,
) -> Command {
    let mut c = program;
    c.args(["agent", "--manager", manager, "--name", name])
        .args(["--heartbeat", "1s"])
        .env("BAI_DATA_DIR", data)
        .env("BAI_AGENT_TOKEN", token)
        .env("BAI_KRUNNER", bin("bai-krunner"))
        .env("BAI_RESERVED_MEM_MB", "0")
        .env("RUST_LOG", "info,bollard=warn")
        .stdin(Stdio::null());
    c
}

impl Agent {
    pub fn start(m: &Machine, name: &str, port: u16, token: &str, extra: &[String]) -> Agent {
        Self::start_at(m, name, &format!("{}:{port}", m.host_addr()), token, extra)
    }

    /// [`Agent::start`] with `--manager MANAGERS` as given (`HOST:PORT,HOST:PORT`).
    pub fn start_at(
        m: &Machine,
        name: &str,
        managers: &str,
        token: &str,
        extra: &[String],
    ) -> Agent {
        let data = tempfile::Builder::new()
            .prefix("bai-agent-")
            .tempdir()
            .expect("tempdir");
        let mut a = Agent {
            name: name.to_string(),
            child: None,
            data,
            extra: extra.to_vec(),
        };
        a.restart_at(m, managers, token);
        a
    }

    /// Starts (again) in the same data dir: same id, same credential.
    pub fn restart(&mut self, m: &Machine, port: u16, token: &str) {
        self.restart_at(m, &format!("{}:{port}", m.host_addr()), token)
    }

    fn restart_at(&mut self, m: &Machine, managers: &str, token: &str) {
        let log = std::fs::File::create(self.data.path().join("agent.log")).expect("log");
        let mut c = agent_command(
            m.command(bin("baid")),
            &self.name,
            managers,
            token,
            self.data.path(),
        );
        c.args(&self.extra)
            .stdout(log.try_clone().expect("log"))
            .stderr(log);
        self.child = Some(c.spawn().expect("spawn baid agent"));
    }

    /// `kill -9`: no goodbye to the manager.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.data.path().join("agent.log")).unwrap_or_default()
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        self.kill();
        // A warm pool's shared kernels directory and the folders its claims mounted.
        crate::host::unmount_under(self.data.path());
    }
}

/// `GET /agents` as an administrator sees it.
pub fn agents(s: &Server) -> Vec<bai_api::resources::Agent> {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(s.client(&s.admin).agents())
        .expect("GET /agents")
        .agents
}

pub fn agent_status(s: &Server, id: &str) -> Option<String> {
    agents(s).into_iter().find(|a| a.id == id).map(|a| a.status)
}

pub fn wait_status(s: &Server, id: &str, status: &str, secs: u64) {
    s.wait_for(secs, &format!("agent {id} to be {status}"), || {
        (agent_status(s, id).as_deref() == Some(status)).then_some(())
    });
}

/// Starts a session and waits until it runs; returns the agent it runs on.
pub fn start_session(s: &Server, name: &str, extra: &[&str]) -> String {
    let mut args = vec!["start", "-t", name, "-r", "cpu=0.5", "-r", "mem=256m"];
    args.extend_from_slice(extra);
    args.push("python");
    s.bai(&s.admin, &args).expect_ok();
    s.wait_for(180, &format!("{name} to run"), || {
        let i = s.info(&s.admin, name);
        (i["status"] == "RUNNING").then(|| i["agent"].as_str().unwrap_or("").to_string())
    })
}

pub fn query(s: &Server, session: &str, code: &str) -> String {
    let r = s.bai(&s.admin, &["run", "-t", session, "-c", code, "python"]);
    r.expect_ok();
    r.stdout.clone()
}

/// Containers of `agent` on `m`'s engine.
pub fn containers(m: &Machine, agent: &str) -> usize {
    let filter = format!("label=ai.bai.agent={agent}");
    let out = m.docker(&["ps", "-q", "--filter", &filter]);
    String::from_utf8_lossy(&out.stdout).lines().count()
}

/// A manager without an agent of its own that agents in test machines join (it listens on
/// every address, so the machines reach it at their host address), with `env` added; returns
/// it, its agent port and a join token.
pub fn manager_for_machines(env: &[(&str, &str)]) -> (Server, u16, String) {
    let port = crate::free_port();
    let listen = format!("0.0.0.0:{port}");
    let mut all = vec![
        ("BAI_NO_LOCAL_AGENT", "true"),
        ("BAI_AGENT_LISTEN", listen.as_str()),
        ("BAI_SCHEDULE_TICK_MS", "200"),
    ];
    all.extend_from_slice(env);
    let s = Server::start_with(&all);
    let token = join_token(&s);
    (s, port, token)
}

/// A join token of the right shape that no manager issued (for agents refused before they
/// dial).
pub fn unissued_join_token() -> String {
    format!(
        "bai1.{}.{}.{}",
        "a".repeat(8),
        "b".repeat(32),
        "c".repeat(64)
    )
}

/// A new join token from `s` (`bai admin agent-token create`).
pub fn join_token(s: &Server) -> String {
    s.bai(&s.admin, &["admin", "agent-token", "create"])
        .expect_ok()
        .stdout
        .trim()
        .to_string()
}

/// An HTTP GET of `/` through `bai app SESSION ttyd`.
pub fn ttyd_page(s: &Server, session: &str) -> String {
    let port = crate::free_port();
    let mut child = s
        .bai_command(&s.admin, &["app", session, "ttyd", "-b", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("bai app");
    let page = s.wait_for(60, "the ttyd page through the tunnel", || {
        let mut c = TcpStream::connect(("127.0.0.1", port)).ok()?;
        c.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
        c.write_all(b"GET / HTTP/1.0\r\nHost: localhost\r\n\r\n")
            .ok()?;
        let mut body = String::new();
        c.read_to_string(&mut body).ok()?;
        body.contains("200").then_some(body)
    });
    let _ = child.kill();
    let _ = child.wait();
    page
}

/// Each kernel's hostname and agent, main1 first.
pub fn kernel_agents(info: &serde_json::Value) -> Vec<(String, String)> {
    info["kernels"]
        .as_array()
        .map(|ks| {
            ks.iter()
                .map(|k| {
                    (
                        k["cluster_hostname"].as_str().unwrap_or("").to_string(),
                        k["agent"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}
