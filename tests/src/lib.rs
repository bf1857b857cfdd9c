//! Harness for end-to-end tests: starts a real `baid up` (own data dir, own port, the local
//! Docker engine) and runs the `bai` CLI or the official client against it. Binaries are
//! taken from the same target profile as the test (`make test` builds them first).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect
#![forbid(unsafe_code)]

pub mod accounts;
pub mod apps;
pub mod crash;
pub mod cut;
pub mod diagnose;
pub mod host;
pub mod images;
pub mod kube;
mod launch;
pub mod model;
pub mod netns;
pub mod oidc;
pub mod pg;
pub mod probe;
pub mod registry;
pub mod remote;
mod run;
pub mod suite;
pub mod tunnel;

use launch::{Early, Ready, Started};
pub use run::Run;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The target directory of the running test (`target/debug` or `target/release`).
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test exe path");
    // target/<profile>/deps/<test-binary>
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .to_path_buf()
}

pub fn bin(name: &str) -> PathBuf {
    let p = target_dir().join(name);
    assert!(
        p.exists(),
        "{} is missing: run `make test` (it builds all binaries first)",
        p.display()
    );
    p
}

/// The official Backend.AI client (`make test` installs it with scripts/official-client.sh).
/// The official client's account variables (a test gives each command its own).
pub const CLIENT_ENV: [&str; 4] = [
    "BACKEND_ENDPOINT",
    "BACKEND_ACCESS_KEY",
    "BACKEND_SECRET_KEY",
    "BACKEND_ENDPOINT_TYPE",
];

pub fn official_client() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv-official/bin/backend.ai");
    assert!(
        p.exists(),
        "{} is missing: `make test` installs it (scripts/official-client.sh)",
        p.display()
    );
    p
}

/// Asks `f` every `every` until it answers Some, and returns that; None once `limit` has
/// passed. The one poll of these tests ([`wait_until`], [`Server::wait_for`] and the
/// [`Server::wait_status`] on it are its spellings).
pub fn poll<T>(limit: Duration, every: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(every);
    }
}

/// Polls `done` every 100 ms until it holds (true) or `limit` passes (false).
pub fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    poll(limit, Duration::from_millis(100), || done().then_some(())).is_some()
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// Credentials of one account, parsed from `$BAI_DATA_DIR/env-*.sh`.
#[derive(Debug, Clone)]
pub struct Account {
    pub vars: Vec<(String, String)>,
}

impl Account {
    /// The same account with requests sent to `endpoint`.
    pub fn at(&self, endpoint: &str) -> Account {
        let mut a = self.clone();
        for (k, v) in &mut a.vars {
            if k == "BACKEND_ENDPOINT" {
                *v = endpoint.to_string();
            }
        }
        a
    }

    fn load(path: &Path) -> Account {
        let text = std::fs::read_to_string(path).expect("env file");
        let vars = text
            .split_whitespace()
            .filter_map(|w| w.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Account { vars }
    }
    pub fn get(&self, k: &str) -> &str {
        self.vars
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
            .unwrap_or("")
    }
}

/// In a server's environment: the baid binary to run instead of the build's (a test that
/// replaces it while it runs, as an upgrade does).
pub const BAID_BINARY: &str = "BAI_E2E_BAID";

/// A running `baid up`. Dropping it stops the server and removes its containers.
pub struct Server {
    child: Child,
    /// The thread copying baid's stderr into `baid.log`; it ends when baid does.
    log_thread: Option<std::thread::JoinHandle<()>>,
    pub endpoint: String,
    pub data_dir: tempfile::TempDir,
    pub agent_id: String,
    /// Where remote agents connect (`agents join` in the banner), if it listens.
    pub agent_listen: Option<std::net::SocketAddr>,
    pub user: Account,
    /// A second normal user (`user2@bai.local`).
    pub user2: Account,
    pub admin: Account,
    pub work: tempfile::TempDir,
}

impl Server {
    pub fn start() -> Server {
        Self::start_with(&[])
    }

    pub fn start_with(env: &[(&str, &str)]) -> Server {
        let data_dir = tempfile::Builder::new()
            .prefix("bai-e2e-")
            .tempdir()
            .expect("tempdir");
        Self::start_in(data_dir, env)
    }

    /// Only dummy agents (no containers): `n` agents of `capacity` (e.g. `cpu=2,mem=4g`).
    pub fn start_dummy(n: u32, capacity: &str) -> Server {
        let n = n.to_string();
        Self::start_with(&[
            ("BAI_NO_DOCKER", "true"),
            ("BAI_DUMMY_AGENTS", &n),
            ("BAI_DUMMY_CAPACITY", capacity),
            ("BAI_SCHEDULE_TICK_MS", "200"),
        ])
    }

    /// Kills baid with SIGKILL (no clean shutdown) and keeps its data dir for a restart.
    pub fn crash(mut self) -> tempfile::TempDir {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.take_data_dir()
    }

    /// [`Server::crash`] as a real crash is: its containers stay for the restart to find
    /// (the restarted server's handle removes them at the end).
    pub fn crash_keeping_containers(mut self) -> tempfile::TempDir {
        self.agent_id.clear();
        self.crash()
    }

    /// Hands the data dir over for a restart: swaps it with an empty one that Drop may remove.
    fn take_data_dir(&mut self) -> tempfile::TempDir {
        let dir = tempfile::Builder::new()
            .prefix("bai-e2e-")
            .tempdir()
            .expect("tempdir");
        std::mem::replace(&mut self.data_dir, dir)
    }

    /// Waits (up to `secs`) for baid to end by itself, as a test build does at an armed fault
    /// point (`BAI_FAULT_POINT`), and keeps its data dir for a restart. Panics with the log if
    /// it is still running.
    pub fn wait_exit(mut self, secs: u64) -> (std::process::ExitStatus, String, tempfile::TempDir) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        let status = loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                break status;
            }
            if Instant::now() > deadline {
                panic!(
                    "baid did not end within {secs}s\n--- baid log ---\n{}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        // Its stderr is closed now: the log thread writes the last lines and ends.
        if let Some(t) = self.log_thread.take() {
            let _ = t.join();
        }
        let log = self.log();
        // Its containers are the restart's to find: dropping this handle must not remove them.
        self.agent_id.clear();
        (status, log, self.take_data_dir())
    }

    /// Starts baid on an existing data dir (a restart keeps the database).
    pub fn start_in(data_dir: tempfile::TempDir, env: &[(&str, &str)]) -> Server {
        Self::start_in_port(data_dir, env, free_port())
    }

    /// The port the API listens on.
    pub fn port(&self) -> u16 {
        self.endpoint
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("the endpoint has a port")
    }

    /// [`Server::start_in`] on a given port (a restart where clients wait for it).
    pub fn start_in_port(data_dir: tempfile::TempDir, env: &[(&str, &str)], port: u16) -> Server {
        Self::start_ready(data_dir, env, port, Ready::Up)
    }

    /// A second manager of `leader`'s database (`env` names it): started until it stands by,
    /// with the leader's accounts pointed at its own address.
    pub fn start_standby(env: &[(&str, &str)], port: u16, leader: &Server) -> Server {
        let data_dir = tempfile::Builder::new()
            .prefix("bai-e2e-")
            .tempdir()
            .expect("tempdir");
        Self::start_ready(data_dir, env, port, Ready::StandingBy(leader))
    }

    /// baid's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// How baid ended, if it did (it is reaped then).
    pub fn ended(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Sends `signal` (`-STOP`, `-CONT`, …) to baid.
    pub fn signal(&self, signal: &str) {
        let ok = Command::new("kill")
            .args([signal, &self.pid().to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill {signal} {}", self.pid());
    }

    /// The web password `baid up` made for `email` (`web-login.txt` in its data dir: one
    /// `EMAIL PASSWORD` a line).
    pub fn web_password(&self, email: &str) -> String {
        std::fs::read_to_string(self.data_dir.path().join("web-login.txt"))
            .expect("baid writes the web passwords")
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{email} ")))
            .expect("a web password")
            .trim()
            .to_string()
    }

    /// What baid printed on its standard output so far.
    pub fn output(&self) -> String {
        std::fs::read_to_string(self.data_dir.path().join("baid.out")).unwrap_or_default()
    }

    /// Starts baid and waits for what `ready` names in its output. A port that another
    /// process took meanwhile (a restart on the same port, with other tests' servers and
    /// clients side by side) is tried again a few times; any other early end fails the test
    /// with baid's output.
    fn start_ready(
        data_dir: tempfile::TempDir,
        env: &[(&str, &str)],
        port: u16,
        ready: Ready<'_>,
    ) -> Server {
        let mut attempt = 0;
        let started = loop {
            attempt += 1;
            match launch::spawn_until(&data_dir, env, port, ready) {
                Ok(started) => break started,
                Err(Early { text, port_taken }) if port_taken && attempt < 5 => {
                    eprintln!(
                        "baid could not listen on {port} (attempt {attempt}); again:\n{text}"
                    );
                    std::thread::sleep(Duration::from_secs(1));
                }
                Err(Early { text, .. }) => panic!("{text}"),
            }
        };
        let Started {
            child,
            log_thread,
            agent_id,
            agent_listen,
        } = started;
        let (user, user2, admin) = match ready {
            Ready::Up => (
                Account::load(&data_dir.path().join("env-user.sh")),
                Account::load(&data_dir.path().join("env-user2.sh")),
                Account::load(&data_dir.path().join("env-admin.sh")),
            ),
            Ready::StandingBy(leader) => {
                let here = format!("http://127.0.0.1:{port}");
                (
                    leader.user.at(&here),
                    leader.user2.at(&here),
                    leader.admin.at(&here),
                )
            }
        };
        // http:// or https://, as baid wrote it.
        let scheme = admin
            .get("BACKEND_ENDPOINT")
            .split_once("://")
            .map(|(s, _)| s.to_string())
            .unwrap_or_else(|| "http".into());
        Server {
            child,
            log_thread: Some(log_thread),
            endpoint: format!("{scheme}://127.0.0.1:{port}"),
            data_dir,
            agent_id,
            agent_listen,
            user,
            user2,
            admin,
            work: tempfile::tempdir().expect("work dir"),
        }
    }

    /// Our SDK's client, signed as `account`.
    pub fn client(&self, account: &Account) -> bai_client::Client {
        let mut cfg = bai_client::Config::new(
            &self.endpoint,
            account.get("BACKEND_ACCESS_KEY"),
            account.get("BACKEND_SECRET_KEY"),
        )
        .expect("client config");
        let ca = account.get("BAI_CA_CERT");
        if !ca.is_empty() {
            cfg.ca_files.push(ca.into());
        }
        bai_client::Client::new(cfg).expect("client")
    }

    /// Runs `bai ARGS` as `account`, in the server's scratch work dir.
    pub fn bai(&self, account: &Account, args: &[&str]) -> Run {
        self.run_as(bin("bai"), account, args)
    }

    /// Sets resource group `group`'s egress policy (`open`, `default`, `closed`) as the
    /// administrator, with `bai admin resource-group update`.
    pub fn set_egress(&self, group: &str, policy: &str) {
        self.bai(
            &self.admin,
            &[
                "admin",
                "resource-group",
                "update",
                group,
                "--egress",
                policy,
            ],
        )
        .expect_ok();
    }

    /// `program ARGS` as `account`, in the server's scratch work dir, with no input.
    /// `bai ARGS` as `account`, in the server's scratch work dir, with no input: to spawn
    /// with the outputs the caller sets.
    pub fn bai_command(&self, account: &Account, args: &[&str]) -> Command {
        self.command_as(&bin("bai"), account, args)
    }

    fn command_as(&self, program: &Path, account: &Account, args: &[&str]) -> Command {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(self.work.path())
            .stdin(Stdio::null());
        for k in CLIENT_ENV {
            cmd.env_remove(k);
        }
        for (k, v) in &account.vars {
            cmd.env(k, v);
        }
        cmd
    }

    /// Starts `bai ARGS` as `account` without waiting for it (its output is dropped).
    pub fn spawn_bai(&self, account: &Account, args: &[&str]) -> Child {
        self.command_as(&bin("bai"), account, args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn bai")
    }

    pub fn run_as(&self, program: PathBuf, account: &Account, args: &[&str]) -> Run {
        let out = self
            .command_as(&program, account, args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
        Run::from(out, format!("{} {}", program.display(), args.join(" ")))
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.data_dir.path().join("baid.log")).unwrap_or_default()
    }

    /// Polls `f` every 200 ms until it returns Some, or panics after `secs`.
    pub fn wait_for<T>(&self, secs: u64, what: &str, f: impl FnMut() -> Option<T>) -> T {
        poll(Duration::from_secs(secs), Duration::from_millis(200), f).unwrap_or_else(|| {
            panic!(
                "timed out waiting for {what}\n--- baid log ---\n{}",
                self.log()
            )
        })
    }

    /// A signed request through bai's SDK: Ok(reply JSON) or Err((status, problem text)).
    pub fn api(
        &self,
        account: &Account,
        method: &str,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> Result<serde_json::Value, (u16, String)> {
        let c = self.client(account);
        let m = bai_client::Method::from_bytes(method.as_bytes()).expect("method");
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        rt.block_on(c.send_json(m, path, body.as_ref()))
            .map_err(|e| (e.status().unwrap_or(0), e.to_string()))
    }

    /// The session's fields as `bai session info --json` reports them.
    pub fn info(&self, account: &Account, reference: &str) -> serde_json::Value {
        let r = self.bai(account, &["session", "info", "--json", reference]);
        assert!(r.ok(), "session info failed: {r:?}");
        serde_json::from_str(&r.stdout)
            .unwrap_or_else(|e| panic!("info is not JSON ({e}): {}", r.stdout))
    }

    /// Waits until the session is in status `want` and returns its fields.
    pub fn wait_status(
        &self,
        account: &Account,
        reference: &str,
        want: &str,
        secs: u64,
    ) -> serde_json::Value {
        self.wait_for(secs, &format!("{reference} to be {want}"), || {
            let i = self.info(account, reference);
            (i["status"] == want).then_some(i)
        })
    }

    /// Waits until the session is TERMINATED and returns its fields.
    pub fn wait_terminated(
        &self,
        account: &Account,
        reference: &str,
        secs: u64,
    ) -> serde_json::Value {
        self.wait_status(account, reference, "TERMINATED", secs)
    }

    pub fn status(&self, account: &Account, reference: &str) -> String {
        self.info(account, reference)["status"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !self.agent_id.is_empty() {
            let filter = format!("label=ai.bai.agent={}", self.agent_id);
            if let Ok(out) = Command::new("docker")
                .args(["ps", "-aq", "--filter", &filter])
                .output()
            {
                let ids: Vec<String> = String::from_utf8_lossy(&out.stdout)
                    .split_whitespace()
                    .map(str::to_string)
                    .collect();
                if !ids.is_empty() {
                    let _ = Command::new("docker")
                        .arg("rm")
                        .arg("-f")
                        .args(&ids)
                        .output();
                }
            }
            // Its cluster networks too (a server killed before it could remove its spare).
            let _ = Command::new("docker")
                .args(["network", "prune", "-f", "--filter", &filter])
                .output();
        }
        // A warm pool's shared kernels directory and the folders its claims mounted.
        host::unmount_under(self.data_dir.path());
    }
}

/// The SHA-256 of a file, in hex (by `sha256sum`).
pub fn sha256(path: &Path) -> String {
    let out = Command::new("sha256sum")
        .arg(path)
        .output()
        .expect("sha256sum");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}
