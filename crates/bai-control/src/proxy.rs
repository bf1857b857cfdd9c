//! The HTTP app proxy: a reverse proxy (HTTP and WebSocket) from the user's browser to an
//! app inside a session, e.g. Jupyter or the web terminal.
//!
//! `POST /session/{ref}/start-service` (signed, owner only) starts the app and opens a proxy
//! for it in one of two modes:
//! * **path mode**: `http://<manager>/app/<session id>/<app>/` on the API's own address;
//! * **port mode**: a host port of its own from the configured pool (a preferred port when
//!   it is free), serving the same `/app/<session id>/<app>/` paths.
//!
//! Paths reach the app unchanged (apps serve under that prefix). Nobody but the owner gets
//! in: the URL handed out carries a one-time-use-per-browser `permit` that is swapped for an
//! HttpOnly cookie (then a redirect drops it from the address bar); requests without the
//! cookie are refused with 403, unless the owner opened the app to the public. Proxies close
//! when their session terminates.

use axum::body::Body;
use axum::http::{HeaderValue, Request, Response, StatusCode, header};
use bai_ground::apps::Traffic;
use futures::StreamExt;
use http_body_util::BodyExt;
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use uuid::Uuid;

/// One open app proxy.
#[derive(Debug)]
pub struct AppProxy {
    pub session_id: Uuid,
    pub app: String,
    /// The app inside the container.
    pub target: SocketAddr,
    /// The permit; also the cookie's value.
    pub token: String,
    pub public: bool,
    /// Whether the app expects paths without the `/app/<session>/<app>` prefix: every app
    /// but the runner's own (`bai_core::apps::serves_under_prefix`), as preopen ports run the
    /// user's own servers and an image's apps serve at their root.
    pub strip_prefix: bool,
    /// Port mode: the host port serving this proxy.
    pub host_port: Option<u16>,
    pub traffic: Arc<Traffic>,
    listener: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl AppProxy {
    pub fn new(
        session_id: Uuid,
        app: &str,
        target: SocketAddr,
        public: bool,
        strip_prefix: bool,
        traffic: Arc<Traffic>,
    ) -> AppProxy {
        AppProxy {
            session_id,
            app: app.to_string(),
            target,
            token: hex::encode(rand::random::<[u8; 24]>()),
            public,
            strip_prefix,
            host_port: None,
            traffic,
            listener: Mutex::new(None),
        }
    }

    /// The path prefix the app is served under.
    pub fn prefix(&self) -> String {
        format!("/app/{}/{}/", self.session_id, self.app)
    }

    /// The permit cookie's name, one per session and app (cookies are not per port).
    pub fn cookie_name(&self) -> String {
        format!("bai_permit_{}_{}", self.session_id.simple(), self.app)
    }

    fn close(&self) {
        if let Some(h) = self
            .listener
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            h.abort();
        }
    }
}

/// The open proxies, and the host ports port mode may use.
#[derive(Debug)]
pub struct Proxies {
    map: Mutex<HashMap<(Uuid, String), Arc<AppProxy>>>,
    pub port_pool: (u16, u16),
}

impl Proxies {
    pub fn new(port_pool: (u16, u16)) -> Proxies {
        Proxies {
            map: Mutex::new(HashMap::new()),
            port_pool,
        }
    }

    pub fn get(&self, session: Uuid, app: &str) -> Option<Arc<AppProxy>> {
        self.map
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(session, app.to_string()))
            .cloned()
    }

    /// Registers a proxy (replacing and closing an older one for the same app).
    pub fn insert(&self, p: Arc<AppProxy>) {
        let old = self
            .map
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((p.session_id, p.app.clone()), p);
        if let Some(old) = old {
            old.close();
        }
    }

    /// Closes every proxy of a session.
    pub fn close_session(&self, session: Uuid) -> usize {
        let gone: Vec<Arc<AppProxy>> = {
            let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
            let keys: Vec<_> = map.keys().filter(|(s, _)| *s == session).cloned().collect();
            keys.iter().filter_map(|k| map.remove(k)).collect()
        };
        for p in &gone {
            p.close();
        }
        gone.len()
    }

    /// Port mode: listens on the preferred port when it is free (and in the pool), else on
    /// the first free port of the pool, and serves the proxy there.
    pub async fn listen(
        &self,
        proxy: &mut AppProxy,
        preferred: Option<u16>,
    ) -> Result<u16, String> {
        let (lo, hi) = self.port_pool;
        let start = rand::random::<u16>();
        for port in candidates(preferred, (lo, hi), start) {
            if let Ok(l) = tokio::net::TcpListener::bind(("0.0.0.0", port)).await {
                proxy.host_port = Some(port);
                let shared = Arc::new(ProxyTarget::from(&*proxy));
                let router = axum::Router::new().fallback(move |req: Request<Body>| {
                    let t = shared.clone();
                    async move { forward(&t, req).await }
                });
                let task = tokio::spawn(async move {
                    let _ = axum::serve(l, router).await;
                });
                *proxy.listener.lock().unwrap_or_else(|p| p.into_inner()) = Some(task);
                return Ok(port);
            }
        }
        Err(format!(
            "no free port in the app port pool {lo}-{hi}; close other apps or widen BAI_APP_PORTS"
        ))
    }
}

/// The ports tried in turn: the preferred one (when it is in the pool), then every port of
/// the pool from a random one on, wrapping around (a taken preferred port falls back to a
/// random free port, as the product says).
pub fn candidates(preferred: Option<u16>, (lo, hi): (u16, u16), start: u16) -> Vec<u16> {
    if lo > hi {
        return Vec::new();
    }
    let n = u32::from(hi - lo) + 1;
    let first = u32::from(start) % n;
    let pool = (0..n).map(move |i| lo + ((first + i) % n) as u16);
    preferred
        .filter(|p| (lo..=hi).contains(p))
        .into_iter()
        .chain(pool.filter(move |p| Some(*p) != preferred))
        .collect()
}

/// What [`forward`] needs of a proxy.
#[derive(Debug, Clone)]
pub struct ProxyTarget {
    pub session_id: Uuid,
    pub app: String,
    pub target: SocketAddr,
    pub token: String,
    pub public: bool,
    pub strip_prefix: bool,
    pub traffic: Arc<Traffic>,
}

impl From<&AppProxy> for ProxyTarget {
    fn from(p: &AppProxy) -> ProxyTarget {
        ProxyTarget {
            session_id: p.session_id,
            app: p.app.clone(),
            target: p.target,
            token: p.token.clone(),
            public: p.public,
            strip_prefix: p.strip_prefix,
            traffic: p.traffic.clone(),
        }
    }
}

pub fn page(status: StatusCode, text: &str) -> Response<Body> {
    let mut r = Response::new(Body::from(format!(
        "<!doctype html><title>bai app proxy</title><p>{text}</p>\n"
    )));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    r
}

/// The `permit` query value, and the query without it.
fn split_permit(query: &str) -> (Option<String>, String) {
    let mut permit = None;
    let mut rest = Vec::new();
    for (k, v) in form_urlencoded::parse(query.as_bytes()) {
        if k == "permit" {
            permit = Some(v.into_owned());
        } else {
            rest.push((k.into_owned(), v.into_owned()));
        }
    }
    let rest = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(rest)
        .finish();
    (permit, rest)
}

fn cookie_value(req: &Request<Body>, name: &str) -> Option<String> {
    bai_ground::browsers::cookie(req.headers(), name)
}

/// Constant-time comparison of permits.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// Checks the permit, then relays the request (and a WebSocket upgrade) to the app.
pub async fn forward(p: &ProxyTarget, mut req: Request<Body>) -> Response<Body> {
    let prefix = format!("/app/{}/{}/", p.session_id, p.app);
    let path = req.uri().path().to_string();
    if !path.starts_with(&prefix) {
        if format!("{path}/") == prefix || path == "/" {
            let mut r = page(StatusCode::FOUND, "moved");
            if let Ok(v) = HeaderValue::from_str(&format!(
                "{prefix}{}",
                req.uri()
                    .query()
                    .map(|q| format!("?{q}"))
                    .unwrap_or_default()
            )) {
                r.headers_mut().insert(header::LOCATION, v);
            }
            return r;
        }
        return page(
            StatusCode::NOT_FOUND,
            "This app is served under its own path.",
        );
    }
    let cookie = format!("bai_permit_{}_{}", p.session_id.simple(), p.app);
    let (permit, rest) = split_permit(req.uri().query().unwrap_or(""));
    if let Some(permit) = permit {
        if !same(&permit, &p.token) {
            return page(
                StatusCode::FORBIDDEN,
                "This permit is not valid for this app.",
            );
        }
        // Swap the permit for a cookie and drop it from the address bar.
        let location = if rest.is_empty() {
            path.clone()
        } else {
            format!("{path}?{rest}")
        };
        let mut r = page(StatusCode::FOUND, "Opening the app…");
        let set = format!(
            "{cookie}={}; Path={prefix}; HttpOnly; SameSite=Lax",
            p.token
        );
        if let (Ok(loc), Ok(set)) = (
            HeaderValue::from_str(&location),
            HeaderValue::from_str(&set),
        ) {
            r.headers_mut().insert(header::LOCATION, loc);
            r.headers_mut().insert(header::SET_COOKIE, set);
        }
        return r;
    }
    let allowed = p.public || cookie_value(&req, &cookie).is_some_and(|c| same(&c, &p.token));
    if !allowed {
        return page(
            StatusCode::FORBIDDEN,
            "This app is private to its owner: open it from bai (web UI or start-service).",
        );
    }
    if p.strip_prefix {
        let tail = &path[prefix.len() - 1..];
        let uri = match req.uri().query() {
            Some(q) => format!("{tail}?{q}"),
            None => tail.to_string(),
        };
        match uri.parse() {
            Ok(u) => *req.uri_mut() = u,
            Err(_) => return page(StatusCode::BAD_REQUEST, "The path is not valid."),
        }
    }
    let upgrade = req.headers().contains_key(header::UPGRADE);
    let client_upgrade = upgrade.then(|| hyper::upgrade::on(&mut req));
    let stream = match bai_relay::dial(p.target, bai_relay::DIAL_WAIT).await {
        Ok(s) => s,
        Err(e) => {
            return page(
                StatusCode::BAD_GATEWAY,
                &format!("The app does not answer ({e}); it may still be starting."),
            );
        }
    };
    let (mut sender, conn) = match hyper::client::conn::http1::handshake(TokioIo::new(stream)).await
    {
        Ok(x) => x,
        Err(e) => return page(StatusCode::BAD_GATEWAY, &format!("The app failed: {e}")),
    };
    tokio::spawn(async move {
        let _ = conn.with_upgrades().await;
    });
    let sent = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    p.traffic.add(sent, 0);
    let mut resp = match sender.send_request(req).await {
        Ok(r) => r,
        Err(e) => return page(StatusCode::BAD_GATEWAY, &format!("The app failed: {e}")),
    };
    if resp.status() == StatusCode::SWITCHING_PROTOCOLS
        && let Some(client_upgrade) = client_upgrade
    {
        let app_upgrade = hyper::upgrade::on(&mut resp);
        let traffic = p.traffic.clone();
        tokio::spawn(async move {
            if let (Ok(client), Ok(app)) = (client_upgrade.await, app_upgrade.await) {
                let (mut c, mut a) = (TokioIo::new(client), TokioIo::new(app));
                if let Ok((up, down)) = tokio::io::copy_bidirectional(&mut c, &mut a).await {
                    traffic.add(up, down);
                }
            }
        });
        let (parts, _) = resp.into_parts();
        return Response::from_parts(parts, Body::empty());
    }
    let traffic = p.traffic.clone();
    let (parts, body) = resp.into_parts();
    let counted = body.into_data_stream().map(move |chunk| {
        if let Ok(c) = &chunk {
            traffic.add(0, c.len() as u64);
        }
        chunk
    });
    Response::from_parts(parts, Body::from_stream(counted))
}

/// Whether an event ends a session's apps (it starts terminating, or was cancelled).
/// Resolves when `session` starts terminating (its proxies, tunnels and SFTP port close then).
pub fn session_end(
    bus: &bai_ground::bus::Bus,
    session: Uuid,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    let mut rx = bus.subscribe();
    async move {
        loop {
            match rx.recv().await {
                Ok(ev) if ev.session_id == session && ends_session(ev.kind) => return,
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    }
}

pub fn ends_session(kind: bai_core::event::EventKind) -> bool {
    use bai_core::event::EventKind::*;
    matches!(
        kind,
        SessionTerminating | SessionTerminated | SessionCancelled
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permits_leave_the_query_and_compare_exactly() {
        let (p, rest) = split_permit("a=1&permit=abc&b=2");
        assert_eq!(p.as_deref(), Some("abc"));
        assert_eq!(rest, "a=1&b=2");
        assert_eq!(split_permit("").0, None);
        assert!(same("abc", "abc"));
        assert!(!same("abc", "abd"));
        assert!(!same("abc", "ab"));
    }

    #[test]
    fn cookies_are_found_by_name() {
        let req = Request::builder()
            .header(header::COOKIE, "x=1; bai_permit_s_jupyter=tok; y=2")
            .body(Body::empty())
            .unwrap();
        assert_eq!(
            cookie_value(&req, "bai_permit_s_jupyter").as_deref(),
            Some("tok")
        );
        assert_eq!(cookie_value(&req, "bai_permit_s_ttyd"), None);
    }

    #[test]
    fn the_preferred_port_first_then_the_whole_pool_from_a_random_one() {
        let c = candidates(Some(30005), (30000, 30009), 7);
        assert_eq!(c[0], 30005);
        assert_eq!(&c[1..4], &[30007, 30008, 30009]);
        let mut all = c.clone();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all, (30000..=30009).collect::<Vec<_>>(), "every port once");
        assert_eq!(c.len(), 10);
        // Another start, another order after the preferred port; outside the pool it is not tried.
        assert_ne!(
            candidates(None, (30000, 30009), 3),
            candidates(None, (30000, 30009), 4)
        );
        assert!(!candidates(Some(80), (30000, 30009), 0).contains(&80));
        assert_eq!(candidates(None, (5, 5), 999), vec![5]);
    }
}
