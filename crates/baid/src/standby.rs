//! A manager that does not lead: it holds the API's address (and the app proxy's ports) and
//! relays every connection, byte for byte, to the manager that leads (TLS, server-sent
//! events and WebSockets pass unchanged; the leader answers). Nothing is kept here, so a
//! request through a standby sees exactly what the leader holds. Without a leader (none
//! known, or it does not answer) a plain HTTP connection is answered `503 no-leader`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

/// How long reaching the leader may take before the client is answered without it.
const DIAL: Duration = Duration::from_secs(5);

/// Why a connection cannot go to a leader, as its `503` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Absent {
    /// None is known, or it does not answer (one is taking over).
    Leader,
    /// This manager cannot reach its database, so it cannot know who leads.
    Database,
}

impl Absent {
    fn problem(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Absent::Leader => (
                "no-leader",
                "No manager leads the cluster now.",
                "this manager stands by and cannot reach a leading manager (one is taking over); try again in a few seconds",
            ),
            Absent::Database => (
                "database-unavailable",
                "The database cannot be reached.",
                "this manager cannot reach its database now, so it neither leads nor knows which manager does, and changed nothing; try again (another manager may answer)",
            ),
        }
    }
}

/// The running relay; [`Standby::stop`] gives its addresses back.
pub struct Standby {
    leader: Arc<watch::Sender<Option<String>>>,
    tasks: JoinSet<()>,
}

/// Where one listener sends its connections: the leader's API, or the same app port on
/// the leader's host.
#[derive(Clone, Copy)]
enum Target {
    Api,
    AppPort(u16),
}

impl Standby {
    /// Listens on `api` (and on each free port of `app_ports`) and relays to the leader
    /// named later ([`Standby::lead_by`]). `plain_http`: the API speaks plain HTTP, so a
    /// connection with no leader to go to can be answered in HTTP.
    pub async fn start(
        api: SocketAddr,
        app_ports: (u16, u16),
        plain_http: bool,
        absent: Absent,
    ) -> std::io::Result<Standby> {
        let leader = Arc::new(watch::channel(None).0);
        let mut tasks = JoinSet::new();
        let listener = TcpListener::bind(api).await?;
        let api_answer = plain_http.then_some(absent);
        tasks.spawn(accept(listener, Target::Api, leader.clone(), api_answer));
        for port in app_ports.0..=app_ports.1 {
            // A port taken by something else is left alone (the leader's proxy could not
            // use it on this host either).
            if let Ok(l) = TcpListener::bind(SocketAddr::new(api.ip(), port)).await {
                tasks.spawn(accept(
                    l,
                    Target::AppPort(port),
                    leader.clone(),
                    Some(absent),
                ));
            }
        }
        Ok(Standby { leader, tasks })
    }

    /// Relays to the manager at `address` (its API's `HOST:PORT`) from now on; `None`: no
    /// leader is known.
    pub fn lead_by(&self, address: Option<String>) {
        self.leader.send_if_modified(|cur| {
            let changed = *cur != address;
            *cur = address.clone();
            changed
        });
    }

    /// Stops listening (the addresses are free when this returns); relayed connections
    /// in flight end with their leader.
    pub async fn stop(mut self) {
        self.tasks.abort_all();
        while self.tasks.join_next().await.is_some() {}
    }
}

/// `answer`: how a connection with no leader to go to is answered in HTTP (`None`: it is
/// not HTTP, it is closed).
async fn accept(
    listener: TcpListener,
    target: Target,
    leader: Arc<watch::Sender<Option<String>>>,
    answer: Option<Absent>,
) {
    loop {
        let Ok((client, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let _ = client.set_nodelay(true);
        let to = leader.borrow().clone().map(|a| match target {
            Target::Api => a,
            Target::AppPort(p) => format!("{}:{p}", host_of(&a)),
        });
        tokio::spawn(relay(client, to, answer));
    }
}

/// The host part of `HOST:PORT` (brackets of an IPv6 address kept).
fn host_of(address: &str) -> &str {
    address.rsplit_once(':').map_or(address, |(h, _)| h)
}

async fn relay(client: TcpStream, to: Option<String>, answer: Option<Absent>) {
    let upstream = match &to {
        Some(addr) => match tokio::time::timeout(DIAL, TcpStream::connect(addr)).await {
            Ok(Ok(s)) => Some(s),
            Ok(Err(e)) => {
                tracing::debug!(leader = %addr, error = %e, "the leading manager does not answer");
                None
            }
            Err(_) => {
                tracing::debug!(leader = %addr, "the leading manager did not answer in time");
                None
            }
        },
        None => None,
    };
    match upstream {
        Some(up) => {
            let _ = up.set_nodelay(true);
            let _ = bai_relay::tunnel(&client, &up, |_| {}, |_| {}).await;
        }
        None => {
            if let Some(absent) = answer {
                unavailable(client, absent).await
            }
        }
    }
}

/// `503`, as a problem saying why, after reading the request's head (so the client reads
/// the answer rather than a reset).
async fn unavailable(mut client: TcpStream, absent: Absent) {
    let mut buf = vec![0u8; 16 << 10];
    let mut seen = 0;
    let read_head = async {
        while seen < buf.len() {
            match client.read(&mut buf[seen..]).await {
                Ok(0) | Err(_) => break,
                Ok(n) => seen += n,
            }
            if buf[..seen].windows(4).any(|w| w == b"\r\n\r\n") {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(DIAL, read_head).await;
    let (kind, title, msg) = absent.problem();
    let body = serde_json::json!({
        "type": format!("https://api.backend.ai/probs/{kind}"),
        "title": title,
        "msg": msg,
    })
    .to_string();
    let head = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/problem+json\r\ncontent-length: {}\r\nretry-after: 2\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = client.write_all(head.as_bytes()).await;
    let _ = client.write_all(body.as_bytes()).await;
    let _ = client.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_app_port_goes_to_the_leaders_host() {
        assert_eq!(host_of("10.0.0.2:8090"), "10.0.0.2");
        assert_eq!(host_of("[fd00::2]:8090"), "[fd00::2]");
    }

    /// With no leader a plain HTTP client gets a 503 problem; once a leader is named, its
    /// bytes come through.
    #[tokio::test]
    async fn connections_go_to_the_leader_or_get_503() {
        let probe = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let api = probe.local_addr().unwrap();
        drop(probe);
        let standby = Standby::start(api, (1, 0), true, Absent::Leader)
            .await
            .unwrap();
        let ask = || async {
            let mut c = TcpStream::connect(api).await.unwrap();
            c.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
                .await
                .unwrap();
            let mut out = String::new();
            c.read_to_string(&mut out).await.unwrap();
            out
        };
        let answer = ask().await;
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
        assert!(answer.contains("no-leader"), "{answer}");
        // A "leader" that answers every connection with its name.
        let leader = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let at = leader.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut c, _)) = leader.accept().await {
                let mut head = [0u8; 64];
                let _ = c.read(&mut head).await;
                let _ = c
                    .write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-length: 6\r\nconnection: close\r\n\r\nleader",
                    )
                    .await;
                let _ = c.shutdown().await;
            }
        });
        standby.lead_by(Some(at.to_string()));
        let answer = ask().await;
        assert!(answer.ends_with("leader"), "{answer}");
        standby.stop().await;
        // The address is free again for the manager that takes over here.
        TcpListener::bind(api).await.unwrap();
    }
}
