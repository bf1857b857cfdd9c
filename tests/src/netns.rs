//! Test "machines" for multi-machine tests: each [`Machine`] is a Linux network namespace
//! joined to the host by a veth pair, with its own Docker engine running inside it. A process
//! started with [`Machine::command`] (a remote bai agent, say) sees only the namespace's
//! interfaces and reaches the host only through the veth, at [`Machine::host_addr`].
//!
//! Layout of machine `i` (1..=50):
//! - network namespace `bai-e2e-m<i>`; veth `baie2e<i>h` on the host with `10.213.<i>.1/24`,
//!   its peer `baie2e<i>n` in the namespace with `10.213.<i>.2/24` and the default route;
//! - a `dockerd` started with `nsenter --net=...` (not `ip netns exec`, which remounts `/sys`
//!   and hides the cgroup mounts dockerd needs), so it shares the host's mount namespace but
//!   manages bridges and iptables inside the namespace. Its bridge is `10.214.<i>.1/24`, clear
//!   of the host engine's `172.17.0.0/16`, of Docker's default pools and of other machines;
//! - its files in `$TMPDIR/bai-e2e-m<i>` (data root, exec root, socket, pid file, log). The
//!   managed containerd that dockerd starts keeps its socket, state and root under the exec and
//!   data roots, and runc's state under `exec-root/runtime-runc`, so nothing clashes with the
//!   host engine.
//!
//! The host reaches every machine's address directly and each machine reaches the host's
//! side of its veth; traffic from one machine to another is forwarded by the host, where the
//! host engine's iptables `FORWARD` policy (DROP) stops it, so machines do not see each other.
//!
//! Storage driver: `overlay2` (the default here: the data root lies on ext4, where overlayfs
//! works). Set `BAI_E2E_NETNS_STORAGE_DRIVER=vfs` on hosts whose temp dir is itself on an
//! overlayfs (inside a container), where overlay2 cannot stack; vfs copies every layer, so it
//! is slower and much larger.
//!
//! Index `i` is claimed with an abstract Unix socket `bai-e2e-netns-m<i>` held for the
//! machine's life; the kernel frees it when the process dies, so a machine whose claim
//! succeeds knows that any namespace, veth, engine or directory of the same name was left by
//! a crashed run and removes it before starting.

use crate::host::{alive, bounded, remove_container_litter, terminate, unmount_under};
use crate::wait_until;
use std::ffi::OsStr;
use std::net::Ipv4Addr;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long `dockerd` may take to answer after it is started.
const ENGINE_DEADLINE: Duration = Duration::from_secs(120);

/// Serialises `docker save` into the image cache within this process (other processes are
/// kept apart by writing to a private temp file and renaming it into place).
static IMAGE_CACHE: Mutex<()> = Mutex::new(());

/// One test machine: a network namespace with a veth to the host and its own Docker engine.
/// Dropping it removes the engine's containers, stops the engine, and deletes its files, the
/// veth and the namespace.
pub struct Machine {
    index: u8,
    name: String,
    dir: PathBuf,
    dockerd: Option<Child>,
    /// The claim on `index` across processes (an abstract Unix socket), released on drop.
    _claim: UnixListener,
}

impl Machine {
    /// Creates the namespace, the veth and the machine's own `dockerd`, and waits (up to
    /// 120 s) until the engine answers. `index` (1..=50) picks the addresses and names and
    /// must be unique among the machines alive on this host. Panics with the tail of dockerd's
    /// log if the engine does not come up.
    pub fn start(index: u8) -> Machine {
        assert!(
            (1..=50).contains(&index),
            "machine index {index} is out of range 1..=50"
        );
        let started = Instant::now();
        let claim_name = format!("bai-e2e-netns-m{index}");
        let claim = SocketAddr::from_abstract_name(claim_name.as_bytes())
            .and_then(|addr| UnixListener::bind_addr(&addr))
            .unwrap_or_else(|e| {
                panic!(
                    "machine {index} is already in use on this host (cannot claim @{claim_name}: {e})"
                )
            });
        let name = format!("bai-e2e-m{index}");
        let mut machine = Machine {
            index,
            dir: std::env::temp_dir().join(&name),
            name,
            dockerd: None,
            _claim: claim,
        };
        // We hold the claim, so whatever carries our names was left by a crashed run.
        machine.clean_up();
        machine.create_network();
        machine.start_engine();
        eprintln!(
            "netns: machine {} ({}) up in {:.1}s",
            machine.name,
            machine.addr(),
            started.elapsed().as_secs_f64()
        );
        machine
    }

    /// The network namespace's name, e.g. `bai-e2e-m1` (`/var/run/netns/bai-e2e-m1`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The namespace side of the veth, `10.213.<index>.2`: where the host reaches this
    /// machine (ports that its processes or its containers publish listen here).
    pub fn addr(&self) -> Ipv4Addr {
        Ipv4Addr::new(10, 213, self.index, 2)
    }

    /// The host side of the veth, `10.213.<index>.1`: what processes inside this machine dial
    /// to reach the host (a manager listening on `0.0.0.0`).
    pub fn host_addr(&self) -> Ipv4Addr {
        Ipv4Addr::new(10, 213, self.index, 1)
    }

    /// `unix:///.../docker.sock`: this machine's engine, for `DOCKER_HOST`.
    pub fn docker_host(&self) -> String {
        format!("unix://{}", self.socket().display())
    }

    /// A command that runs `program` inside the namespace (`nsenter --net=... -- program`)
    /// with `DOCKER_HOST` set to this machine's engine. The caller adds arguments and
    /// environment and spawns it; it runs in the host's mount and PID namespaces.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut cmd = Command::new("nsenter");
        cmd.arg(format!("--net={}", self.netns_path().display()))
            .arg("--")
            .arg(program)
            .env("DOCKER_HOST", self.docker_host());
        cmd
    }

    /// Runs the docker CLI (on the host) against this machine's engine.
    pub fn docker(&self, args: &[&str]) -> Output {
        Command::new("docker")
            .args(args)
            .env("DOCKER_HOST", self.docker_host())
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run docker {}: {e}", args.join(" ")))
    }

    /// Loads `image` from the host's engine into this machine's engine, unless it already has
    /// the same image id. The image is saved once per image id into
    /// `<target dir>/netns-images/<id>.tar`, which later machines and tests reuse.
    pub fn load_image(&self, image: &str) {
        let host_id = image_id(None, image)
            .unwrap_or_else(|| panic!("image {image} is not on the host's Docker engine"));
        let own = Some(self.docker_host());
        if image_id(own.as_deref(), image).as_deref() == Some(host_id.as_str()) {
            return;
        }
        let tar = cached_image(image, &host_id);
        let out = self.docker(&["load", "-i", &tar.to_string_lossy()]);
        assert!(
            out.status.success(),
            "docker load of {image} into {} failed: {}",
            self.name,
            String::from_utf8_lossy(&out.stderr)
        );
        let loaded = image_id(own.as_deref(), image);
        assert_eq!(
            loaded.as_deref(),
            Some(host_id.as_str()),
            "{image} in {} has another id after docker load",
            self.name
        );
    }

    /// Takes the veth down on both sides, so nothing passes between the machine and the host
    /// (connections fail with "network unreachable" inside, and nothing arrives outside).
    pub fn cut(&self) {
        ip(&["link", "set", &self.host_veth(), "down"]);
        ip(&["-n", &self.name, "link", "set", &self.ns_veth(), "down"]);
    }

    /// Brings the veth back up after [`Machine::cut`], with the same addresses and routes.
    pub fn heal(&self) {
        self.configure_links();
    }

    /// Stops the machine's engine (SIGTERM: its containers stop with it, as on a reboot of
    /// the engine) and starts it again on the same data and exec roots; waits until it answers.
    pub fn restart_engine(&mut self) {
        if let Some(mut child) = self.dockerd.take() {
            terminate(child.id(), || matches!(child.try_wait(), Ok(Some(_))));
            let _ = child.kill();
            let _ = child.wait();
        }
        self.start_engine();
    }

    /// The veth's end on the host.
    pub fn host_veth(&self) -> String {
        format!("baie2e{}h", self.index)
    }

    /// The veth's end inside the namespace.
    fn ns_veth(&self) -> String {
        format!("baie2e{}n", self.index)
    }

    fn netns_path(&self) -> PathBuf {
        Path::new("/var/run/netns").join(&self.name)
    }

    fn socket(&self) -> PathBuf {
        self.dir.join("docker.sock")
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join("dockerd.log")
    }

    /// Creates the namespace and the veth pair and gives them addresses and routes.
    fn create_network(&self) {
        ip(&["netns", "add", &self.name]);
        ip(&[
            "link",
            "add",
            &self.host_veth(),
            "type",
            "veth",
            "peer",
            "name",
            &self.ns_veth(),
            "netns",
            &self.name,
        ]);
        ip(&["-n", &self.name, "link", "set", "lo", "up"]);
        self.configure_links();
    }

    /// Sets both veth ends up with their /24 addresses and the namespace's default route via
    /// the host side (idempotent: used at start and by `heal`). Taking a link down drops its
    /// routes, so they are put back each time.
    fn configure_links(&self) {
        let host_cidr = format!("{}/24", self.host_addr());
        let ns_cidr = format!("{}/24", self.addr());
        let host_addr = self.host_addr().to_string();
        ip(&["addr", "replace", &host_cidr, "dev", &self.host_veth()]);
        ip(&["link", "set", &self.host_veth(), "up"]);
        ip(&[
            "-n",
            &self.name,
            "addr",
            "replace",
            &ns_cidr,
            "dev",
            &self.ns_veth(),
        ]);
        ip(&["-n", &self.name, "link", "set", &self.ns_veth(), "up"]);
        ip(&[
            "-n", &self.name, "route", "replace", "default", "via", &host_addr,
        ]);
    }

    /// Starts dockerd inside the namespace and waits until it answers.
    fn start_engine(&mut self) {
        let data = self.dir.join("data");
        let exec = self.dir.join("exec");
        for d in [&data, &exec] {
            std::fs::create_dir_all(d)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", d.display()));
        }
        // Our own config file, so the host's /etc/docker/daemon.json does not apply; test
        // registries listen on the hosts' veth addresses over plain HTTP.
        let config = self.dir.join("daemon.json");
        std::fs::write(&config, "{\"insecure-registries\": [\"10.213.0.0/16\"]}\n")
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", config.display()));
        let log = std::fs::File::create(self.log_path())
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", self.log_path().display()));
        let log_err = log
            .try_clone()
            .unwrap_or_else(|e| panic!("cannot duplicate the dockerd log handle: {e}"));
        let driver = std::env::var("BAI_E2E_NETNS_STORAGE_DRIVER")
            .ok()
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| "overlay2".to_string());
        let child = Command::new("nsenter")
            .arg(format!("--net={}", self.netns_path().display()))
            .arg("--")
            .arg("dockerd")
            .arg("--config-file")
            .arg(&config)
            .arg("--data-root")
            .arg(&data)
            .arg("--exec-root")
            .arg(&exec)
            .arg("--pidfile")
            .arg(self.dir.join("docker.pid"))
            .arg("-H")
            .arg(self.docker_host())
            .arg("--bip")
            .arg(format!("10.214.{}.1/24", self.index))
            .arg("--storage-driver")
            .arg(&driver)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start dockerd (nsenter) for {}: {e}", self.name));
        self.dockerd = Some(child);

        let deadline = Instant::now() + ENGINE_DEADLINE;
        loop {
            let answered = Command::new("docker")
                .args(["version", "--format", "{{.Server.Version}}"])
                .env("DOCKER_HOST", self.docker_host())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            if answered {
                return;
            }
            if let Some(Ok(Some(status))) = self.dockerd.as_mut().map(Child::try_wait) {
                panic!(
                    "dockerd of {} exited early ({status}); log tail:\n{}",
                    self.name,
                    self.log_tail()
                );
            }
            if Instant::now() > deadline {
                panic!(
                    "dockerd of {} did not answer within {}s; log tail:\n{}",
                    self.name,
                    ENGINE_DEADLINE.as_secs(),
                    self.log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// The last 40 lines of dockerd's log.
    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.log_path()).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// Stops our dockerd: removes its containers, sends SIGTERM (dockerd then stops its
    /// containerd) and waits, then SIGKILL.
    fn stop_engine(&mut self) {
        let Some(mut child) = self.dockerd.take() else {
            return;
        };
        if let Ok(None) = child.try_wait() {
            let ids = bounded(
                Command::new("docker")
                    .args(["ps", "-aq"])
                    .env("DOCKER_HOST", self.docker_host()),
            )
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
            let ids: Vec<&str> = ids.split_whitespace().collect();
            if !ids.is_empty() {
                let _ = bounded(
                    Command::new("docker")
                        .args(["rm", "-f"])
                        .args(&ids)
                        .env("DOCKER_HOST", self.docker_host()),
                );
            }
        }
        terminate(child.id(), || matches!(child.try_wait(), Ok(Some(_))));
        let _ = child.kill();
        let _ = child.wait();
    }

    /// Removes everything that carries this machine's names: a dockerd still running from our
    /// directory, runc containers left in it, processes left in the namespace, mounts and
    /// files under the directory, the veth and the namespace. Never panics.
    fn clean_up(&self) {
        // A dockerd left by a crashed run (ours has been stopped already).
        if let Some(pid) = std::fs::read_to_string(self.dir.join("docker.pid"))
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
        {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let dir = self.dir.to_string_lossy();
            if String::from_utf8_lossy(&cmdline).contains(dir.as_ref()) {
                terminate(pid, || !alive(pid));
            }
        }
        // Containers whose engine died with them: delete them by runc's state. Their ids
        // come from runc and from containerd's task directories (a task may outlive its runc
        // state while its shim is still running).
        let exec = self.dir.join("exec");
        let runc_root = exec.join("runtime-runc/moby");
        let mut ids: Vec<String> =
            std::fs::read_dir(exec.join("containerd/daemon/io.containerd.runtime.v2.task/moby"))
                .map(|dir| {
                    dir.filter_map(Result::ok)
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
        if runc_root.is_dir() {
            let list = bounded(
                Command::new("runc")
                    .arg("--root")
                    .arg(&runc_root)
                    .args(["list", "-q"]),
            )
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
            for id in list.split_whitespace() {
                let _ = bounded(
                    Command::new("runc")
                        .arg("--root")
                        .arg(&runc_root)
                        .args(["delete", "--force", id]),
                );
                ids.push(id.to_string());
            }
        }
        ids.retain(|id| id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit()));
        ids.sort();
        ids.dedup();
        // Anything else still in the namespace (containerd, shims).
        if self.netns_path().exists() {
            let pids = bounded(Command::new("ip").args(["netns", "pids", &self.name]))
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_default();
            for pid in pids
                .split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok())
            {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .stderr(Stdio::null())
                    .status();
                wait_until(Duration::from_secs(10), || !alive(pid));
            }
        }
        let containerd = exec.join("containerd/containerd.sock");
        for id in &ids {
            remove_container_litter(&containerd, id);
        }
        unmount_under(&self.dir);
        if self.dir.exists()
            && let Err(e) = std::fs::remove_dir_all(&self.dir)
        {
            eprintln!("netns: cannot remove {}: {e}", self.dir.display());
        }
        // Deleting the host end deletes its peer; namespaces are freed asynchronously, so
        // the veth is deleted by name rather than left to the namespace's teardown.
        if Path::new("/sys/class/net").join(self.host_veth()).exists() {
            let _ = bounded(Command::new("ip").args(["link", "del", &self.host_veth()]));
        }
        if self.netns_path().exists() {
            let _ = bounded(Command::new("ip").args(["netns", "delete", &self.name]));
        }
    }
}

impl Drop for Machine {
    fn drop(&mut self) {
        self.stop_engine();
        self.clean_up();
    }
}

/// Runs `ip ARGS`, panicking with its stderr if it fails.
fn ip(args: &[&str]) {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run ip (install iproute2): {e}"));
    assert!(
        out.status.success(),
        "ip {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).trim()
    );
}

/// The id (`sha256:...`) of `image` in the engine at `docker_host` (None: the host's own
/// engine, as the test environment configures it), if it has the image.
fn image_id(docker_host: Option<&str>, image: &str) -> Option<String> {
    let mut cmd = Command::new("docker");
    cmd.args(["image", "inspect", "--format", "{{.Id}}", image])
        .stdin(Stdio::null());
    if let Some(h) = docker_host {
        cmd.env("DOCKER_HOST", h);
    }
    let out = cmd.output().ok()?;
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !id.is_empty()).then_some(id)
}

/// `<target dir>/netns-images/<id>.tar`, made by `docker save` on the host if missing.
fn cached_image(image: &str, id: &str) -> PathBuf {
    let dir = crate::target_dir().join("netns-images");
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    let key: String = id
        .trim_start_matches("sha256:")
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    let tar = dir.join(format!("{key}.tar"));
    let _guard = IMAGE_CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if tar.exists() {
        return tar;
    }
    let partial = dir.join(format!("{key}.tar.{}.partial", std::process::id()));
    // Saved by name so that `docker load` restores the tag; if the tag moved on the host
    // since `id` was read, `load_image` notices the other id after loading.
    let out = Command::new("docker")
        .args(["save", "-o"])
        .arg(&partial)
        .arg(image)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run docker save: {e}"));
    if !out.status.success() {
        let _ = std::fs::remove_file(&partial);
        panic!(
            "docker save {image} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::rename(&partial, &tar).unwrap_or_else(|e| {
        panic!(
            "cannot move {} to {}: {e}",
            partial.display(),
            tar.display()
        )
    });
    tar
}
