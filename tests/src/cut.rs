//! A TCP link the test can cut: a forwarder on a loopback port of its own to a target (the
//! tests' PostgreSQL), as a network link between a manager and its database. Cut, it
//! refuses new connections and stalls the open ones (their bytes go nowhere, neither end is
//! told: a partition, as a pulled cable is); healed, it forwards again. Also a plain
//! forwarder from another of this machine's addresses ([`CutLink::from_to`]: the test
//! cluster's API server, which listens on loopback, to its pods on the docker bridge, as
//! kube-proxy would forward the `kubernetes` Service).

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub struct CutLink {
    port: u16,
    cut: Arc<AtomicBool>,
}

impl CutLink {
    /// Forwards a new loopback port to `target`.
    pub fn to(target: SocketAddr) -> CutLink {
        CutLink::from_to(IpAddr::V4(Ipv4Addr::LOCALHOST), target)
    }

    /// Forwards a new port of this machine's address `listen` to `target`.
    pub fn from_to(listen: IpAddr, target: SocketAddr) -> CutLink {
        let listener = TcpListener::bind((listen, 0)).expect("bind the link");
        let at = listener.local_addr().expect("its address");
        let cut = Arc::new(AtomicBool::new(false));
        let flag = cut.clone();
        std::thread::spawn(move || accept(listener, at, target, flag));
        CutLink {
            port: at.port(),
            cut,
        }
    }

    /// The port the link listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// No byte passes from now on; new connections are refused.
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
    }

    pub fn heal(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }
}

impl Drop for CutLink {
    fn drop(&mut self) {
        self.cut();
    }
}

fn accept(mut listener: TcpListener, at: SocketAddr, target: SocketAddr, cut: Arc<AtomicBool>) {
    let _ = listener.set_nonblocking(true);
    loop {
        if cut.load(Ordering::SeqCst) {
            // Refused while cut: the listener is closed, bound again when healed.
            drop(listener);
            while cut.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(50));
            }
            listener = loop {
                match TcpListener::bind(at) {
                    Ok(l) => break l,
                    Err(_) => std::thread::sleep(Duration::from_millis(50)),
                }
            };
            let _ = listener.set_nonblocking(true);
        }
        match listener.accept() {
            Ok((client, _)) => {
                let Ok(server) = TcpStream::connect(target) else {
                    continue;
                };
                let _ = client.set_nonblocking(false);
                for (from, to) in [
                    (client.try_clone(), server.try_clone()),
                    (server.try_clone(), client.try_clone()),
                ] {
                    if let (Ok(from), Ok(to)) = (from, to) {
                        let cut = cut.clone();
                        std::thread::spawn(move || pump(from, to, cut));
                    }
                }
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Copies `from` to `to` while the link is whole; while cut, reads nothing and writes
/// nothing (the bytes wait in the sockets' buffers, as on a dead link).
fn pump(mut from: TcpStream, mut to: TcpStream, cut: Arc<AtomicBool>) {
    let _ = from.set_read_timeout(Some(Duration::from_millis(100)));
    let mut buf = vec![0u8; 64 << 10];
    loop {
        if cut.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(50));
            continue;
        }
        match from.read(&mut buf) {
            Ok(0) => {
                let _ = to.shutdown(std::net::Shutdown::Write);
                return;
            }
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    return;
                }
            }
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => return,
        }
    }
}
