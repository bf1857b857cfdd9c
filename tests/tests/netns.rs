//! Self-test of the multi-machine harness (`bai_e2e::netns`): two namespaced machines, each
//! with its own Docker engine, that reach the host only through their veth.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::netns::Machine;
use std::io::Read;
use std::net::{Ipv4Addr, TcpListener};
use std::process::Output;
use std::time::{Duration, Instant};

const IMAGE: &str = "bai/python:3.11-bookworm";

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

#[track_caller]
fn ok(what: &str, o: Output) -> String {
    assert!(
        o.status.success(),
        "{what} failed ({}):\nstdout: {}\nstderr: {}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    text(&o)
}

/// From inside `m`, opens a TCP connection to `host_addr:port` and writes "hi" (bash's
/// /dev/tcp, bounded by `timeout 5`). True if it succeeded.
fn dial_host(m: &Machine, port: u16) -> bool {
    let script = format!("echo hi > /dev/tcp/{}/{port}", m.host_addr());
    m.command("timeout")
        .args(["5", "bash", "-c", &script])
        .output()
        .expect("run bash inside the namespace")
        .status
        .success()
}

/// Accepts the connection that a successful dial left in the listener's backlog and returns
/// the peer's address and what it sent.
fn accept_one(listener: &TcpListener) -> (Ipv4Addr, String) {
    listener.set_nonblocking(false).expect("blocking listener");
    let (mut conn, peer) = listener.accept().expect("accept");
    conn.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("read timeout");
    let mut got = String::new();
    conn.read_to_string(&mut got)
        .expect("read from the machine");
    let ip = match peer.ip() {
        std::net::IpAddr::V4(v4) => v4,
        std::net::IpAddr::V6(v6) => v6.to_ipv4_mapped().expect("an IPv4 peer"),
    };
    (ip, got.trim().to_string())
}

/// Nothing is waiting in the listener's backlog.
fn nothing_pending(listener: &TcpListener) -> bool {
    listener
        .set_nonblocking(true)
        .expect("non-blocking listener");
    matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

#[test]
fn two_machines_with_own_engines_reach_the_host_through_their_veth() {
    let host_images = std::process::Command::new("docker")
        .args(["image", "inspect", "--format", "{{.Id}}", IMAGE])
        .output()
        .expect("docker on the host");
    assert!(
        host_images.status.success(),
        "{IMAGE} is not on the host's engine: run scripts/ensure-deps.sh (it builds the kernel images)"
    );

    let t = Instant::now();
    let m1 = Machine::start(1);
    let m2 = Machine::start(2);
    eprintln!("two machines started in {:.1}s", t.elapsed().as_secs_f64());
    assert_eq!(m1.name(), "bai-e2e-m1");
    assert_eq!(m1.addr(), Ipv4Addr::new(10, 213, 1, 2));
    assert_eq!(m2.host_addr(), Ipv4Addr::new(10, 213, 2, 1));
    assert_ne!(m1.docker_host(), m2.docker_host());

    for m in [&m1, &m2] {
        let t = Instant::now();
        m.load_image(IMAGE);
        eprintln!(
            "{IMAGE} loaded into {} in {:.1}s",
            m.name(),
            t.elapsed().as_secs_f64()
        );
        // Loading again is a no-op: the engine already has the same image id.
        m.load_image(IMAGE);
        let out = ok(
            "docker run",
            m.docker(&["run", "--rm", IMAGE, "python3", "-c", "print(6*7)"]),
        );
        assert_eq!(out, "42", "container output on {}", m.name());
    }

    // The engines are distinct: a container on machine 1 is seen by neither machine 2 nor
    // the host.
    let probe = "bai-e2e-netns-probe";
    ok(
        "docker run -d",
        m1.docker(&["run", "-d", "--name", probe, IMAGE, "sleep", "300"]),
    );
    let names = |o: Output| ok("docker ps", o);
    assert!(names(m1.docker(&["ps", "--format", "{{.Names}}"])).contains(probe));
    assert!(!names(m2.docker(&["ps", "-a", "--format", "{{.Names}}"])).contains(probe));
    let host_ps = std::process::Command::new("docker")
        .args(["ps", "-a", "--format", "{{.Names}}"])
        .output()
        .expect("docker ps on the host");
    assert!(!names(host_ps).contains(probe));

    // The namespace reaches the host at host_addr, through the veth, from machine's address.
    let listener = TcpListener::bind("0.0.0.0:0").expect("bind a host listener");
    let port = listener.local_addr().expect("listener address").port();
    assert!(dial_host(&m1, port), "machine 1 cannot reach the host");
    assert_eq!(accept_one(&listener), (m1.addr(), "hi".to_string()));

    // A container of machine 1's engine reaches the host too (NAT to the machine's address).
    let dial = format!(
        "import socket; s = socket.create_connection(('{}', {port}), timeout=10); s.sendall(b'hi'); s.close()",
        m1.host_addr()
    );
    ok(
        "container dialling the host",
        m1.docker(&["run", "--rm", IMAGE, "python3", "-c", &dial]),
    );
    assert_eq!(accept_one(&listener), (m1.addr(), "hi".to_string()));

    // Cut: nothing passes. Heal: it works again, with the same addresses and routes.
    m1.cut();
    assert!(
        !dial_host(&m1, port),
        "machine 1 reached the host while cut"
    );
    assert!(nothing_pending(&listener), "a connection arrived while cut");
    m1.heal();
    assert!(
        dial_host(&m1, port),
        "machine 1 cannot reach the host after heal"
    );
    assert_eq!(accept_one(&listener), (m1.addr(), "hi".to_string()));
    // Machine 2 was never cut.
    assert!(dial_host(&m2, port), "machine 2 cannot reach the host");
    assert_eq!(accept_one(&listener), (m2.addr(), "hi".to_string()));

    let t = Instant::now();
    drop(m1);
    drop(m2);
    eprintln!("two machines removed in {:.1}s", t.elapsed().as_secs_f64());
    for name in ["bai-e2e-m1", "bai-e2e-m2"] {
        assert!(
            !std::path::Path::new("/var/run/netns").join(name).exists(),
            "namespace {name} is left over"
        );
    }
}
