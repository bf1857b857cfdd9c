//! A service's endpoint: one listener per service, on a host port of its own that outlives
//! every replica. Requests need a service token unless the service is public; each goes to
//! the healthy route with the fewest requests in flight, and a request whose route fails
//! before answering (refused, reset) is sent once more to another route. Every request is
//! logged and counted per route (requests, errors, latency).

use super::token;
use axum::body::Body;
use axum::http::{HeaderValue, Request, Response, StatusCode, header};
use bai_core::Problem;
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;
use uuid::Uuid;

/// Request bodies are kept whole (so a failed attempt can be sent again) up to this size.
const BODY_LIMIT: usize = 64 << 20;

/// What the endpoint counted for one route.
#[derive(Debug, Default)]
pub struct RouteCounters {
    pub requests: AtomicU64,
    pub errors: AtomicU64,
    pub latency_us: AtomicU64,
    /// Requests on their way now.
    pub inflight: AtomicUsize,
}

/// A route in rotation.
#[derive(Debug, Clone)]
pub struct Backend {
    pub route_id: Uuid,
    pub target: SocketAddr,
    pub weight: f64,
    pub counters: Arc<RouteCounters>,
}

/// One service's endpoint.
#[derive(Debug)]
pub struct Gateway {
    pub endpoint_id: Uuid,
    secret: String,
    public: AtomicBool,
    backends: RwLock<Vec<Backend>>,
    counters: Mutex<HashMap<Uuid, Arc<RouteCounters>>>,
    /// Requests answered 401 (no or bad token).
    pub refused: AtomicU64,
    next: AtomicUsize,
    /// The port it listens on, once it does ([`Gateway::port`]).
    port: Mutex<Option<u16>>,
    listener: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Woken when a request ends (drains wait on it).
    pub finished: tokio::sync::Notify,
    /// Woken when a route enters the rotation (requests that found none wait on it).
    admitted: tokio::sync::Notify,
    /// Replicas the service wants; while it wants some, a request that finds no healthy
    /// route waits for one (up to [`WARMUP_WAIT`]) instead of failing.
    wanted: std::sync::atomic::AtomicU32,
}

/// How long a request waits for a first healthy route of a service that wants replicas.
const WARMUP_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

impl Gateway {
    /// The port the endpoint listens on (None until it does).
    pub fn port(&self) -> Option<u16> {
        *self.port.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn new(endpoint_id: Uuid, secret: &str, public: bool) -> Gateway {
        Gateway {
            endpoint_id,
            secret: secret.to_string(),
            public: AtomicBool::new(public),
            backends: RwLock::new(Vec::new()),
            counters: Mutex::new(HashMap::new()),
            refused: AtomicU64::new(0),
            next: AtomicUsize::new(0),
            port: Mutex::new(None),
            listener: Mutex::new(None),
            finished: tokio::sync::Notify::new(),
            admitted: tokio::sync::Notify::new(),
            wanted: std::sync::atomic::AtomicU32::new(0),
        }
    }

    /// The counters of a route (made on first use, kept while the service lives).
    pub fn counters(&self, route: Uuid) -> Arc<RouteCounters> {
        self.counters
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(route)
            .or_default()
            .clone()
    }

    /// Puts a route into rotation (or updates its target and weight).
    pub fn admit(&self, route: Uuid, target: SocketAddr, weight: f64) {
        let counters = self.counters(route);
        let mut b = self.backends.write().unwrap_or_else(|p| p.into_inner());
        b.retain(|x| x.route_id != route);
        b.push(Backend {
            route_id: route,
            target,
            weight,
            counters,
        });
        drop(b);
        self.admitted.notify_waiters();
    }

    /// How many replicas requests may wait for (0: none will come; waiting requests fail
    /// now).
    pub fn set_wanted(&self, n: u32) {
        if self.wanted.swap(n, Ordering::Relaxed) != 0 && n == 0 {
            self.admitted.notify_waiters();
        }
    }

    /// A route to send to: at once, or, while the service wants replicas and none is
    /// healthy yet (it is starting, or replacing its last one), the first that becomes so.
    async fn pick_or_wait(&self, except: Option<Uuid>) -> Option<Backend> {
        let deadline = tokio::time::Instant::now() + WARMUP_WAIT;
        loop {
            let admitted = self.admitted.notified();
            if let Some(b) = self.pick(except) {
                return Some(b);
            }
            if self.wanted.load(Ordering::Relaxed) == 0 {
                return None;
            }
            if tokio::time::timeout_at(deadline, admitted).await.is_err() {
                return None;
            }
        }
    }

    /// Takes a route out of rotation; requests on their way finish.
    pub fn retire(&self, route: Uuid) -> bool {
        let mut b = self.backends.write().unwrap_or_else(|p| p.into_inner());
        let before = b.len();
        b.retain(|x| x.route_id != route);
        before != b.len()
    }

    /// Routes in rotation.
    pub fn in_rotation(&self) -> Vec<Uuid> {
        self.backends
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|b| b.route_id)
            .collect()
    }

    pub fn set_weight(&self, route: Uuid, weight: f64) {
        for b in self
            .backends
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .iter_mut()
        {
            if b.route_id == route {
                b.weight = weight;
            }
        }
    }

    /// Requests in flight over all routes.
    pub fn inflight(&self) -> usize {
        self.counters
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .map(|c| c.inflight.load(Ordering::Relaxed))
            .sum()
    }

    /// The route with the fewest requests in flight (ties: in turn), other than `except`.
    fn pick(&self, except: Option<Uuid>) -> Option<Backend> {
        let b = self.backends.read().unwrap_or_else(|p| p.into_inner());
        let n = b.len();
        if n == 0 {
            return None;
        }
        let start = self.next.fetch_add(1, Ordering::Relaxed) % n;
        (0..n)
            .map(|i| &b[(start + i) % n])
            .filter(|x| x.weight > 0.0 && Some(x.route_id) != except)
            .min_by(|x, y| {
                let lx = x.counters.inflight.load(Ordering::Relaxed) as f64 / x.weight;
                let ly = y.counters.inflight.load(Ordering::Relaxed) as f64 / y.weight;
                lx.total_cmp(&ly)
            })
            .cloned()
    }

    /// Listens on `preferred` when it is free, else on the first free port of the pool.
    pub async fn listen(
        self: &Arc<Self>,
        pool: (u16, u16),
        preferred: Option<u16>,
    ) -> Result<u16, String> {
        let (lo, hi) = pool;
        for port in preferred.into_iter().chain(lo..=hi) {
            if let Ok(l) = tokio::net::TcpListener::bind(("0.0.0.0", port)).await {
                let gw = self.clone();
                let router = axum::Router::new().fallback(move |req: Request<Body>| {
                    let gw = gw.clone();
                    async move { gw.serve(req).await }
                });
                let task = tokio::spawn(async move {
                    let _ = axum::serve(l, router).await;
                });
                *self.port.lock().unwrap_or_else(|p| p.into_inner()) = Some(port);
                if let Some(old) = self
                    .listener
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .replace(task)
                {
                    old.abort();
                }
                return Ok(port);
            }
        }
        Err(format!(
            "no free port in the app port pool {lo}-{hi} for the service endpoint; widen BAI_APP_PORTS"
        ))
    }

    pub fn listening(&self) -> bool {
        self.listener
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(|t| !t.is_finished())
    }

    /// Stops listening.
    pub fn close(&self) {
        if let Some(t) = self
            .listener
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            t.abort();
        }
    }

    fn authorized(&self, req: &Request<Body>) -> Result<(), &'static str> {
        if self.public.load(Ordering::Relaxed) || req.method() == axum::http::Method::OPTIONS {
            return Ok(());
        }
        let value = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .ok_or("this service needs a token: Authorization: Bearer <token>")?;
        let t = token::from_header(value)
            .ok_or("use Authorization: Bearer <token> (or BackendAI <token>)")?;
        token::verify(
            &self.secret,
            self.endpoint_id,
            t,
            chrono::Utc::now().timestamp(),
        )
        .map(|_| ())
        .map_err(|e| match e {
            token::TokenError::Expired => "the token has expired",
            token::TokenError::OtherService => "the token is for another service",
            _ => "the token is not valid for this service",
        })
    }

    /// Answers one request of the endpoint.
    pub async fn serve(&self, req: Request<Body>) -> Response<Body> {
        if let Err(msg) = self.authorized(&req) {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return problem(StatusCode::UNAUTHORIZED, "invalid-credentials", msg);
        }
        let (parts, body) = req.into_parts();
        let body = match axum::body::to_bytes(body, BODY_LIMIT).await {
            Ok(b) => b,
            Err(_) => {
                return problem(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "request-too-large",
                    "the request body is larger than 64 MiB",
                );
            }
        };
        let mut tried = None;
        for attempt in 0..2 {
            let Some(b) = self.pick_or_wait(tried).await else {
                return problem(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "no-healthy-route",
                    if attempt == 0 {
                        "no replica of this service is healthy yet"
                    } else {
                        "the replica failed and no other replica is healthy"
                    },
                );
            };
            let mut r = Request::from_parts(parts.clone(), Body::from(body.clone()));
            *r.headers_mut() = parts.headers.clone();
            let started = Instant::now();
            b.counters.inflight.fetch_add(1, Ordering::Relaxed);
            let answer = send(b.target, r).await;
            b.counters.inflight.fetch_sub(1, Ordering::Relaxed);
            self.finished.notify_waiters();
            let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
            b.counters.requests.fetch_add(1, Ordering::Relaxed);
            b.counters.latency_us.fetch_add(micros, Ordering::Relaxed);
            match answer {
                Ok(resp) => {
                    if resp.status().is_server_error() {
                        b.counters.errors.fetch_add(1, Ordering::Relaxed);
                    }
                    tracing::info!(
                        target: "bai::serving::access",
                        endpoint = %self.endpoint_id, route = %b.route_id,
                        method = %parts.method, path = parts.uri.path(),
                        status = resp.status().as_u16(), micros, retried = attempt > 0,
                    );
                    return resp;
                }
                Err(e) => {
                    b.counters.errors.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(
                        target: "bai::serving::access",
                        endpoint = %self.endpoint_id, route = %b.route_id,
                        method = %parts.method, path = parts.uri.path(), error = %e,
                        "route failed; trying another"
                    );
                    tried = Some(b.route_id);
                }
            }
        }
        problem(
            StatusCode::BAD_GATEWAY,
            "route-failed",
            "the replicas did not answer",
        )
    }
}

/// Sends one request to a replica; an error means it never answered.
async fn send(target: SocketAddr, req: Request<Body>) -> Result<Response<Body>, String> {
    let stream = bai_relay::dial(target, bai_relay::DIAL_WAIT)
        .await
        .map_err(|e| e.to_string())?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let resp = sender.send_request(req).await.map_err(|e| e.to_string())?;
    let (parts, body) = resp.into_parts();
    Ok(Response::from_parts(parts, Body::new(body)))
}

fn problem(status: StatusCode, kind: &str, msg: &str) -> Response<Body> {
    let body = Problem::new(
        status.as_u16(),
        kind,
        status.canonical_reason().unwrap_or("Error"),
        msg,
    );
    let mut r = Response::new(Body::from(serde_json::to_string(&body).unwrap_or_default()));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/problem+json"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_busy_route_is_picked_and_zero_weight_never() {
        let g = Gateway::new(Uuid::new_v4(), "k", true);
        let (a, b, c) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let addr: SocketAddr = "127.0.0.1:1".parse().unwrap();
        g.admit(a, addr, 1.0);
        g.admit(b, addr, 1.0);
        g.admit(c, addr, 0.0);
        g.counters(a).inflight.store(3, Ordering::Relaxed);
        for _ in 0..5 {
            assert_eq!(g.pick(None).unwrap().route_id, b);
        }
        assert_eq!(g.pick(Some(b)).unwrap().route_id, a);
        assert!(g.retire(b));
        assert!(!g.retire(b));
        assert_eq!(g.in_rotation(), vec![a, c]);
        assert!(g.retire(a));
        assert!(g.pick(None).is_none(), "a zero weight takes no traffic");
    }
}
