//! Session apps: what a session offers (built-in apps, the image's declared service ports,
//! the user's preopen ports) and where each listens inside the container; and the traffic
//! that passes through the proxies, per session, for the idle checker.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use uuid::Uuid;

/// The image label that declares apps: `name:protocol:port` items separated by commas.
pub const SERVICE_PORTS_LABEL: &str = "ai.backend.service-ports";

/// A built-in app of every session (present when the image carries its program).
#[derive(Debug, Clone, Copy)]
pub struct Intrinsic {
    pub name: &'static str,
    pub protocol: &'static str,
    pub port: u16,
}

/// sshd (port 2200, started by krunner with keys made for the session) and the web
/// terminal `ttyd` (port 7681, krunner's xterm.js page and tmux over a WebSocket).
/// Where sshd listens in a kernel.
pub const SSHD_PORT: u16 = 2200;

pub const INTRINSIC: &[Intrinsic] = &[
    Intrinsic {
        name: "sshd",
        protocol: "tcp",
        port: 2200,
    },
    Intrinsic {
        name: "ttyd",
        protocol: "http",
        port: 7681,
    },
];

/// One app of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct App {
    pub name: String,
    /// `tcp`, `http` or `preopen`.
    pub protocol: String,
    /// The port inside the container.
    pub port: u16,
}

/// Parses the service-ports label; an empty label declares nothing.
pub fn parse_service_ports(label: &str) -> Result<Vec<App>, String> {
    let mut out = Vec::new();
    for item in label.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let parts: Vec<&str> = item.split(':').collect();
        let [name, protocol, port] = parts.as_slice() else {
            return Err(format!("{item:?} is not name:protocol:port"));
        };
        let port: u16 = port
            .parse()
            .map_err(|_| format!("{item:?} has a bad port"))?;
        if !matches!(*protocol, "tcp" | "http" | "pty") || name.is_empty() {
            return Err(format!("{item:?} has an unknown protocol or no name"));
        }
        out.push(App {
            name: name.to_string(),
            protocol: protocol.to_string(),
            port,
        });
    }
    Ok(out)
}

/// A session's apps: built-in ones, then the image's, then preopen ports (named by number).
/// An image app that reuses a built-in name or port is left out; a bad label is ignored
/// (logged by the caller), so the built-in apps still work.
pub fn session_apps(label: Option<&str>, preopen: &[u16]) -> Vec<App> {
    let mut apps: Vec<App> = INTRINSIC
        .iter()
        .map(|i| App {
            name: i.name.into(),
            protocol: i.protocol.into(),
            port: i.port,
        })
        .collect();
    for a in label
        .and_then(|l| parse_service_ports(l).ok())
        .unwrap_or_default()
    {
        if !apps.iter().any(|x| x.name == a.name || x.port == a.port) {
            apps.push(a);
        }
    }
    for p in preopen {
        if !apps.iter().any(|x| x.port == *p) {
            apps.push(App {
                name: p.to_string(),
                protocol: "preopen".into(),
                port: *p,
            });
        }
    }
    apps
}

/// The image label naming its interpreter (Backend.AI's), `{runtime_path}` in app recipes.
pub const RUNTIME_PATH_LABEL: &str = "ai.backend.runtime-path";

/// What a kernel's runner reads of its image to start the apps the image brings recipes
/// for (`bai-krunner/src/recipe.rs`): the service-ports label as `BAI_SERVICE_PORTS` and the
/// runtime path as `BAI_RUNTIME_PATH`, where the image has them.
pub fn image_vars(labels: &std::collections::BTreeMap<String, String>) -> Vec<(String, String)> {
    [
        (SERVICE_PORTS_LABEL, "BAI_SERVICE_PORTS"),
        (RUNTIME_PATH_LABEL, "BAI_RUNTIME_PATH"),
    ]
    .into_iter()
    .filter_map(|(label, var)| {
        labels
            .get(label)
            .filter(|v| !v.trim().is_empty())
            .map(|v| (var.to_string(), v.clone()))
    })
    .collect()
}

/// Bytes through a session's proxies and when they last moved.
#[derive(Debug, Default)]
pub struct Traffic {
    /// From the user to the session.
    pub rx_bytes: AtomicU64,
    /// From the session to the user.
    pub tx_bytes: AtomicU64,
    /// Unix milliseconds of the last byte either way (0: never).
    pub last_activity_ms: AtomicI64,
}

impl Traffic {
    pub fn add(&self, to_session: u64, to_user: u64) {
        self.rx_bytes.fetch_add(to_session, Ordering::Relaxed);
        self.tx_bytes.fetch_add(to_user, Ordering::Relaxed);
        self.last_activity_ms
            .store(bai_core::stats::now_ms(), Ordering::Relaxed);
    }

    /// The counts as the API shows them (`network` of a session).
    pub fn network(&self) -> bai_core::stats::Network {
        let last = self.last_activity_ms.load(Ordering::Relaxed);
        bai_core::stats::Network {
            rx_bytes: self.rx_bytes.load(Ordering::Relaxed),
            tx_bytes: self.tx_bytes.load(Ordering::Relaxed),
            last_activity: (last > 0)
                .then(|| chrono::DateTime::from_timestamp_millis(last).map(|t| t.to_rfc3339()))
                .flatten(),
        }
    }
}

/// Traffic per session.
#[derive(Debug, Default)]
pub struct TrafficBook {
    by_session: Mutex<HashMap<Uuid, std::sync::Arc<Traffic>>>,
    /// What sessions that were forgotten had moved (so the totals only grow).
    retired: Traffic,
}

impl TrafficBook {
    pub fn of(&self, session: Uuid) -> std::sync::Arc<Traffic> {
        self.by_session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(session)
            .or_default()
            .clone()
    }

    pub fn get(&self, session: Uuid) -> Option<std::sync::Arc<Traffic>> {
        self.by_session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&session)
            .cloned()
    }

    /// The sessions with counters.
    pub fn sessions(&self) -> Vec<Uuid> {
        self.by_session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .keys()
            .copied()
            .collect()
    }

    pub fn forget(&self, session: Uuid) {
        let gone = self
            .by_session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&session);
        if let Some(t) = gone {
            self.retired
                .rx_bytes
                .fetch_add(t.rx_bytes.load(Ordering::Relaxed), Ordering::Relaxed);
            self.retired
                .tx_bytes
                .fetch_add(t.tx_bytes.load(Ordering::Relaxed), Ordering::Relaxed);
        }
    }

    /// Bytes moved since the manager started: (to sessions, to users).
    pub fn totals(&self) -> (u64, u64) {
        let live = self.by_session.lock().unwrap_or_else(|p| p.into_inner());
        live.values().fold(
            (
                self.retired.rx_bytes.load(Ordering::Relaxed),
                self.retired.tx_bytes.load(Ordering::Relaxed),
            ),
            |(rx, tx), t| {
                (
                    rx + t.rx_bytes.load(Ordering::Relaxed),
                    tx + t.tx_bytes.load(Ordering::Relaxed),
                )
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_ports_label_parses_and_rejects_garbage() {
        let apps = parse_service_ports("jupyter:http:8091, jupyterlab:http:8092").unwrap();
        assert_eq!(apps.len(), 2);
        assert_eq!(apps[1].name, "jupyterlab");
        assert_eq!(apps[1].port, 8092);
        assert!(parse_service_ports("").unwrap().is_empty());
        assert!(parse_service_ports("jupyter:http").is_err());
        assert!(parse_service_ports("jupyter:http:99999").is_err());
        assert!(parse_service_ports("x:gopher:80").is_err());
    }

    #[test]
    fn session_apps_are_builtin_then_image_then_preopen() {
        let apps = session_apps(Some("jupyter:http:8091,evil:tcp:2200"), &[8080, 2200]);
        let names: Vec<&str> = apps.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["sshd", "ttyd", "jupyter", "8080"]);
        assert_eq!(apps[3].protocol, "preopen");
        assert_eq!(apps[0].protocol, "tcp");
        assert_eq!(apps[0].port, 2200);
        // A broken label leaves the built-in apps.
        assert_eq!(session_apps(Some("nonsense"), &[]).len(), INTRINSIC.len());
    }

    #[test]
    fn traffic_counts_both_ways_and_stamps_activity() {
        let book = TrafficBook::default();
        let id = Uuid::new_v4();
        assert!(book.get(id).is_none());
        book.of(id).add(10, 32);
        book.of(id).add(5, 0);
        let t = book.get(id).unwrap().network();
        assert_eq!(t.rx_bytes, 15);
        assert_eq!(t.tx_bytes, 32);
        assert!(t.last_activity.is_some());
    }

    #[test]
    fn the_image_vars_are_its_labels_where_it_has_them() {
        let labels = std::collections::BTreeMap::from([
            (SERVICE_PORTS_LABEL.to_string(), "web:http:8180".to_string()),
            (RUNTIME_PATH_LABEL.to_string(), " ".to_string()),
            ("other".to_string(), "x".to_string()),
        ]);
        assert_eq!(
            image_vars(&labels),
            [("BAI_SERVICE_PORTS".to_string(), "web:http:8180".to_string())]
        );
    }
}
