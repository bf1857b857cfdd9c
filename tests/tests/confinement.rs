//! Container confinement (issue 18): a session tries the classic escapes and each fails —
//! mounting, ptrace, raw sockets, writing /proc/sys, loading a kernel module, reaching the
//! Docker engine's or the manager's socket, and reaching another session's container over
//! the bridge. The engine's settings are checked too: Docker's default seccomp profile on,
//! no privileges, every capability dropped, never the host network.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::Server;
use serde_json::Value;
use std::process::Command;

/// Tries each escape inside the kernel and prints what happened as one JSON line.
const PROBE: &str = r#"
import ctypes, json, os, platform, socket
libc = ctypes.CDLL(None, use_errno=True)
res = {}
def fail():
    e = ctypes.get_errno()
    raise OSError(e, os.strerror(e))
def attempt(name, f):
    try:
        res[name] = "ALLOWED: %r" % (f(),)
    except Exception as e:
        res[name] = "refused: %s" % (e,)
def mount():
    os.makedirs("/tmp/m", exist_ok=True)
    if libc.mount(b"none", b"/tmp/m", b"tmpfs", 0, None) != 0: fail()
def ptrace():
    # PTRACE_ATTACH to a process of the host (the test runner's pid).
    if libc.ptrace(16, HOST_PID, None, None) != 0: fail()
def raw():
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
def proc_sys():
    with open("/proc/sys/kernel/hostname", "w") as f: f.write("escaped")
def load_module():
    nr = {"x86_64": 313, "aarch64": 273}[platform.machine()]
    fd = os.open("/etc/hostname", os.O_RDONLY)
    if libc.syscall(nr, fd, b"", 0) != 0: fail()
def docker_socket():
    for p in ("/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock"):
        if os.path.exists(p):
            s = socket.socket(socket.AF_UNIX); s.connect(p); return p
    raise OSError("no engine socket in the container")
def gateway():
    for line in open("/proc/net/route").read().splitlines()[1:]:
        f = line.split()
        if f[1] == "00000000":
            return socket.inet_ntoa(bytes.fromhex(f[2])[::-1])
def manager_api():
    for host in (gateway(), "127.0.0.1"):
        try:
            socket.create_connection((host, MANAGER_PORT), timeout=3); return host
        except OSError:
            pass
    raise OSError("the manager's API is unreachable")
def other_session():
    socket.create_connection((OTHER_IP, 8000), timeout=3)
for name, f in [("mount", mount), ("ptrace", ptrace), ("raw_socket", raw),
                ("proc_sys", proc_sys), ("load_module", load_module),
                ("docker_socket", docker_socket), ("manager_api", manager_api),
                ("other_session", other_session)]:
    attempt(name, f)
comms = set()
for p in os.listdir("/proc"):
    if p.isdigit():
        try: comms.add(open("/proc/%s/comm" % p).read().strip())
        except OSError: pass
res["host_processes"] = sorted(comms & {"dockerd", "containerd", "baid", "systemd", "docker-proxy"})
print("PROBE" + json.dumps(res))
"#;

fn inspect(container: &str) -> Value {
    let out = Command::new("docker")
        .args(["inspect", container])
        .output()
        .expect("docker inspect");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("inspect JSON");
    v[0].clone()
}

fn container_of(s: &Server, session: &str) -> String {
    let info = s.info(&s.user, session);
    info["kernels"][0]["container_id"]
        .as_str()
        .or_else(|| info["container_id"].as_str())
        .expect("a container id")
        .to_string()
}

fn address(c: &Value) -> String {
    c["NetworkSettings"]["Networks"]
        .as_object()
        .and_then(|n| {
            n.values()
                .find_map(|v| v["IPAddress"].as_str().filter(|a| !a.is_empty()))
        })
        .expect("an address")
        .to_string()
}

#[test]
fn a_session_cannot_escape_its_container_or_reach_another_session() {
    let s = Server::start();
    // Another user's session serving on port 8000.
    s.bai(
        &s.user2,
        &["run", "-t", "neighbour", "-c",
          "import subprocess; subprocess.Popen(['python3', '-m', 'http.server', '8000', '--bind', '0.0.0.0'])",
          "python"],
    )
    .expect_ok();
    let neighbour = inspect(&{
        let info = s.info(&s.user2, "neighbour");
        info["kernels"][0]["container_id"]
            .as_str()
            .or_else(|| info["container_id"].as_str())
            .expect("container")
            .to_string()
    });
    let other_ip = address(&neighbour);
    // It serves: the host reaches it, so a refusal below is the bridge's doing.
    let reached = bai_e2e::poll(
        std::time::Duration::from_secs(30),
        std::time::Duration::from_millis(500),
        || {
            std::net::TcpStream::connect((other_ip.as_str(), 8000))
                .is_ok()
                .then_some(())
        },
    );
    assert!(
        reached.is_some(),
        "the neighbour's server never answered the host"
    );

    let code = PROBE
        .replace("MANAGER_PORT", &s.port().to_string())
        .replace("OTHER_IP", &format!("{other_ip:?}"))
        .replace("HOST_PID", &std::process::id().to_string());
    let r = s.bai(&s.user, &["run", "-t", "prober", "-c", &code, "python"]);
    assert!(r.ok(), "{r:?}");
    let line = r
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("PROBE"))
        .unwrap_or_else(|| panic!("no probe result: {r:?}"));
    let res: Value = serde_json::from_str(line).expect("probe JSON");
    for escape in [
        "mount",
        "ptrace",
        "raw_socket",
        "proc_sys",
        "load_module",
        "docker_socket",
        "manager_api",
        "other_session",
    ] {
        let got = res[escape].as_str().unwrap_or("");
        assert!(got.starts_with("refused"), "{escape}: {got} ({res})");
    }
    assert_eq!(res["host_processes"], serde_json::json!([]), "{res}");

    // What the engine was asked for.
    let c = inspect(&container_of(&s, "prober"));
    let host = &c["HostConfig"];
    assert_eq!(host["Privileged"], false);
    assert_ne!(host["NetworkMode"], "host");
    assert_ne!(host["PidMode"], "host");
    assert_eq!(host["CapDrop"], serde_json::json!(["ALL"]));
    assert!(host["CapAdd"].is_null() || host["CapAdd"] == serde_json::json!([]));
    let opts: Vec<String> = host["SecurityOpt"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    assert!(opts.iter().any(|o| o == "no-new-privileges"), "{opts:?}");
    assert!(!opts.iter().any(|o| o.contains("unconfined")), "{opts:?}");
    // The engine applies its default seccomp profile.
    let engine = Command::new("docker")
        .args(["info", "--format", "{{json .SecurityOptions}}"])
        .output()
        .expect("docker info");
    assert!(
        String::from_utf8_lossy(&engine.stdout).contains("seccomp"),
        "{}",
        String::from_utf8_lossy(&engine.stdout)
    );
    for name in ["prober", "neighbour"] {
        let who = if name == "prober" { &s.user } else { &s.user2 };
        s.bai(who, &["rm", name]).expect_ok();
    }
}
