//! A manager that does not lead: it holds the API's address (and the app proxy's ports) and
//! relays every connection, byte for byte, to the manager that leads (TLS, server-sent
//! events and WebSockets pass unchanged; the leader answers). Nothing is kept here, so a
//! request through a standby sees exactly what the leader holds.
//!
//! A relay never waits on a leader that no longer answers or no longer leads
//! ([`relay`]; the rule is in docs/HA.md, "A standby relays"):
//!
//! - when the lease names another leader (or another term), or this standby stops (it leads
//!   itself now), every connection relayed to the old one is cut;
//! - a connection whose client has waited [`Bounds::silent`] for an answer that has not
//!   begun, while the leader's renewal is late (its lease, as last read, has less than
//!   [`Bounds::late_left`] left), is cut too. Quiet connections (an idle WebSocket, an event
//!   stream between events, a download the client reads slowly) wait for nothing and stay.
//!
//! A cut connection whose client waits for the answer to an HTTP request, and has had none of
//! it yet, is answered `503 no-leader` (`data.relayed`: the request reached the old leader,
//! which may or may not have carried it out); any other is closed. A new connection with no
//! leader to go to (none known, or it does not answer) waits up to [`Bounds::hold`] for one,
//! then a plain HTTP one is answered `503 no-leader` (nothing was sent anywhere).

mod relay;

use std::net::SocketAddr;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::{Duration, Instant};

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
                "this manager stands by and cannot reach a leading manager (one is taking over); nothing was sent to one, try again in a few seconds",
            ),
            Absent::Database => (
                "database-unavailable",
                "The database cannot be reached.",
                "this manager cannot reach its database now, so it neither leads nor knows which manager does, and changed nothing; try again (another manager may answer)",
            ),
        }
    }
}

/// The leader a standby relays to, as the lease names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leader {
    /// Its API's `HOST:PORT`.
    pub address: String,
    /// Its term.
    pub term: i64,
    /// How long its lease has left, as just read (by the database's clock).
    pub left: Duration,
}

impl Leader {
    /// The leader a lease row names.
    pub fn of(lease: &bai_store::LeaseRow) -> Leader {
        Leader {
            address: lease.address.clone(),
            term: lease.term,
            left: Duration::from_millis(u64::try_from(lease.left_ms).unwrap_or(0)),
        }
    }
}

/// The relay's time bounds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    /// How long reaching the leader may take.
    pub dial: Duration,
    /// How long a new connection with no leader to go to waits for one (standing by for a
    /// leader only; one waiting for its database answers at once).
    pub hold: Duration,
    /// How long a client may wait for an answer that has not begun while the leader's
    /// renewal is late, before its connection is given up.
    pub silent: Duration,
    /// The leader's renewal is late once its lease, as last read, has less than this left.
    pub late_left: Duration,
    /// How often a relay looks at where its conversation stands.
    pub tick: Duration,
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds {
            dial: Duration::from_secs(5),
            hold: Duration::from_secs(2),
            silent: Duration::from_secs(3),
            // The leader renews every second for `TTL` (5 s): less than 2.5 s left means no
            // renewal for 2.5 s, two and a half missed.
            late_left: crate::lease::TTL.saturating_sub(Duration::from_millis(2500)),
            tick: Duration::from_millis(250),
        }
    }
}

/// What the relays know of the leader.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct View {
    /// Where new connections go (None: no leader known now).
    pub to: Option<String>,
    /// The lease's term, as last read.
    pub term: i64,
    /// When the lease, as last read, runs out (None: never read).
    pub expires: Option<Instant>,
    /// The standby stopped (it leads itself now): every relay ends.
    pub stopped: bool,
}

impl View {
    /// Whether the leader's renewal is late at `now`.
    pub fn late(&self, now: Instant, b: &Bounds) -> bool {
        self.expires
            .is_none_or(|e| e.saturating_duration_since(now) < b.late_left)
    }

    /// Whether a connection relayed to the leader at `address` under `term` must end: this
    /// standby stopped, or the lease names another leader or term. A lease that cannot be
    /// read now (`to` None) ends nothing by itself.
    pub fn moved_from(&self, address: &str, term: i64) -> bool {
        self.stopped
            || self
                .to
                .as_deref()
                .is_some_and(|to| to != address || self.term != term)
    }
}

/// The running relay; [`Standby::stop`] gives its addresses back.
pub struct Standby {
    view: watch::Sender<View>,
    tasks: JoinSet<()>,
}

/// Where one listener sends its connections: the leader's API, or the same app port on
/// the leader's host.
#[derive(Clone, Copy)]
pub(crate) enum Target {
    Api,
    AppPort(u16),
}

impl Target {
    /// Where a connection goes for the leader at `leader` (its API's `HOST:PORT`).
    fn address(self, leader: &str) -> String {
        match self {
            Target::Api => leader.to_string(),
            Target::AppPort(p) => format!("{}:{p}", host_of(leader)),
        }
    }
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
        Standby::start_with(api, app_ports, plain_http, absent, Bounds::default()).await
    }

    pub(crate) async fn start_with(
        api: SocketAddr,
        app_ports: (u16, u16),
        plain_http: bool,
        absent: Absent,
        bounds: Bounds,
    ) -> std::io::Result<Standby> {
        let (view, _) = watch::channel(View::default());
        let mut tasks = JoinSet::new();
        let listener = TcpListener::bind(api).await?;
        let how = relay::How {
            http: plain_http,
            absent,
            bounds,
        };
        tasks.spawn(accept(listener, Target::Api, view.subscribe(), how));
        for port in app_ports.0..=app_ports.1 {
            // A port taken by something else is left alone (the leader's proxy could not
            // use it on this host either). The app proxy's ports speak plain HTTP.
            if let Ok(l) = TcpListener::bind(SocketAddr::new(api.ip(), port)).await {
                let how = relay::How { http: true, ..how };
                tasks.spawn(accept(l, Target::AppPort(port), view.subscribe(), how));
            }
        }
        Ok(Standby { view, tasks })
    }

    /// Relays to `leader` from now on; `None`: the lease cannot be read now (no new
    /// connection goes anywhere; those relayed go on unless the leader falls silent).
    pub fn lead_by(&self, leader: Option<Leader>) {
        let now = Instant::now();
        self.view.send_if_modified(|v| {
            let before = v.clone();
            match leader {
                Some(l) => {
                    v.to = Some(l.address);
                    v.term = l.term;
                    v.expires = Some(now + l.left);
                }
                None => v.to = None,
            }
            *v != before
        });
    }

    /// Stops listening (the addresses are free when this returns) and cuts every relayed
    /// connection: this manager leads now, or stops. Connections that arrived and were not
    /// taken yet are taken and answered (503) rather than reset.
    pub async fn stop(mut self) {
        self.view.send_modify(|v| v.stopped = true);
        while self.tasks.join_next().await.is_some() {}
    }
}

async fn accept(
    listener: TcpListener,
    target: Target,
    mut view: watch::Receiver<View>,
    how: relay::How,
) {
    let take = |client: tokio::net::TcpStream, view: &watch::Receiver<View>| {
        let _ = client.set_nodelay(true);
        tokio::spawn(relay::relay(client, target, view.clone(), how));
    };
    loop {
        tokio::select! {
            taken = listener.accept() => match taken {
                Ok((client, _)) => take(client, &view),
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            },
            () = stopped(&mut view) => break,
        }
    }
    // What waits in the backlog is answered as every relay is now.
    while let Ok(Ok((client, _))) = tokio::time::timeout(Duration::ZERO, listener.accept()).await {
        take(client, &view);
    }
}

/// Until the standby stops (or is dropped).
async fn stopped(view: &mut watch::Receiver<View>) {
    loop {
        if view.borrow_and_update().stopped {
            return;
        }
        if view.changed().await.is_err() {
            return;
        }
    }
}

/// The host part of `HOST:PORT` (brackets of an IPv6 address kept).
fn host_of(address: &str) -> &str {
    address.rsplit_once(':').map_or(address, |(h, _)| h)
}

#[cfg(test)]
mod tests;
