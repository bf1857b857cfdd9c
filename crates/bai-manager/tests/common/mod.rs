//! A manager with an in-memory store serving its API on a loopback port, and a small HTTP
//! client that signs requests like the official client. Shared by the API tests.
#![allow(dead_code)]

use bai_agent::{DummyAgent, DummyAgentConfig};
use bai_core::resources::ResourceSlots;
use bai_core::sign::{SignInput, media_type_of, sign};
use bai_ground::config::ManagerConfig;
use bai_manager::Manager;
use bai_store::{Store, UserRow};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::HeaderValue;
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// The image the dummy agent claims to have.
pub const IMAGE: &str = "bai/python:3.11-bookworm";

/// A keypair the tests sign with.
#[derive(Debug, Clone, Copy)]
pub struct Keypair {
    pub access_key: &'static str,
    pub secret_key: &'static str,
}

pub const ADMIN: Keypair = Keypair {
    access_key: "AKADMINTEST",
    secret_key: "admin-secret",
};

pub const USER: Keypair = Keypair {
    access_key: "AKUSERTEST",
    secret_key: "user-secret",
};

/// How long [`poll`] asks at most: a bound for a test that would hang, far above what a busy
/// machine needs (no test times anything with it).
pub const POLL_CEILING: Duration = Duration::from_secs(120);

/// Asks `f` every 100 ms until it answers Some, and returns that; None once
/// [`POLL_CEILING`] has passed. The one wait of these tests: the caller says what it waited
/// for when it fails.
pub async fn poll<T>(mut f: impl AsyncFnMut() -> Option<T>) -> Option<T> {
    let deadline = tokio::time::Instant::now() + POLL_CEILING;
    loop {
        if let Some(v) = f().await {
            return Some(v);
        }
        if tokio::time::Instant::now() > deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One answer.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: hyper::HeaderMap,
    pub body: Bytes,
}

impl Reply {
    /// The body as JSON (`null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    pub fn content_type(&self) -> &str {
        self.headers
            .get(hyper::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

/// A running API.
pub struct Api {
    pub m: Arc<Manager>,
    pub addr: SocketAddr,
    /// Seconds added to the Date of signed requests (a client with a wrong clock).
    pub clock_offset_secs: std::sync::atomic::AtomicI64,
    _data: tempfile::TempDir,
}

impl Api {
    /// A manager with an administrator and a user, no agent, serving on 127.0.0.1.
    pub async fn start() -> Api {
        Self::start_configured(|_| {}).await
    }

    /// [`Api::start`] with `configure` applied to the manager's configuration.
    pub async fn start_configured(configure: impl FnOnce(&mut ManagerConfig)) -> Api {
        let data = tempfile::tempdir().expect("tempdir");
        let store = Arc::new(Store::open_for_tests().expect("in-memory store"));
        for (kp, id, email, role, admin) in [
            (ADMIN, "u-admin", "admin@test", "superadmin", true),
            (USER, "u-user", "user@test", "user", false),
        ] {
            store
                .create_user_with_keypair(
                    &UserRow {
                        id: id.into(),
                        email: email.into(),
                        role: role.into(),
                    },
                    kp.access_key,
                    kp.secret_key,
                    admin,
                )
                .expect("create user");
        }
        let mut config = ManagerConfig {
            data_dir: data.path().to_path_buf(),
            schedule_tick_ms: 50,
            ..Default::default()
        };
        configure(&mut config);
        let m = Manager::new(store, config);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("address");
        let app = bai_manager::api::router(m.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Api {
            m,
            addr,
            clock_offset_secs: Default::default(),
            _data: data,
        }
    }

    /// [`Api::start`] with one dummy agent in the default group, its watcher and the
    /// scheduler running, so that sessions start.
    pub async fn start_with_agent() -> Api {
        let api = Api::start().await;
        let agent = DummyAgent::new(DummyAgentConfig {
            id: "dummy-test".into(),
            scaling_group: "default".into(),
            capacity: ResourceSlots {
                cpu_milli: 8_000,
                mem: 16 << 30,
                accel: Default::default(),
            },
            start_delay: Duration::ZERO,
            images: vec![IMAGE.into()],
        });
        let handle = api
            .m
            .agents
            .register(&api.m.store, Arc::new(agent))
            .await
            .expect("register the dummy agent");
        bai_control::lifecycle::watch::spawn(api.m.lifecycle.clone(), handle);
        bai_control::scheduler::spawn(api.m.scheduler.clone());
        api
    }

    /// Sends one request; `who` signs it (unsigned when None).
    pub async fn send(
        &self,
        method: &str,
        path_and_query: &str,
        who: Option<Keypair>,
        content_type: &str,
        extra_headers: &[(&str, String)],
        body: impl Into<Bytes>,
    ) -> Reply {
        let host = self.addr.to_string();
        let mut req = hyper::Request::builder()
            .method(method)
            .uri(path_and_query)
            .header("host", &host);
        if !content_type.is_empty() {
            req = req.header("content-type", content_type);
        }
        for (k, v) in extra_headers {
            req = req.header(*k, v);
        }
        if let Some(kp) = who {
            let now = chrono::Utc::now()
                + chrono::Duration::seconds(
                    self.clock_offset_secs
                        .load(std::sync::atomic::Ordering::Relaxed),
                );
            let date = now.to_rfc3339_opts(chrono::SecondsFormat::Micros, false);
            let ymd = now.format("%Y%m%d").to_string();
            let media = media_type_of((!content_type.is_empty()).then_some(content_type));
            let signature = sign(
                kp.secret_key,
                &SignInput {
                    method,
                    path_and_query,
                    date: &date,
                    date_ymd: &ymd,
                    host: &host,
                    media_type: &media,
                    api_version: bai_core::API_VERSION,
                },
            );
            req = req
                .header("date", &date)
                .header("x-backendai-version", bai_core::API_VERSION)
                .header(
                    "authorization",
                    HeaderValue::from_str(&format!(
                        "BackendAI signMethod=HMAC-SHA256, credential={}:{signature}",
                        kp.access_key
                    ))
                    .expect("header value"),
                );
        }
        let req = req.body(Full::new(body.into())).expect("request");
        let stream = tokio::net::TcpStream::connect(self.addr)
            .await
            .expect("connect");
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .expect("handshake");
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let resp = sender.send_request(req).await.expect("response");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let body = resp
            .into_body()
            .collect()
            .await
            .expect("response body")
            .to_bytes();
        Reply {
            status,
            headers,
            body,
        }
    }

    /// A GraphQL request to `/admin/gql` (it must answer 200); its whole answer.
    pub async fn gql(&self, who: Keypair, query: &str, variables: Value) -> Value {
        let r = self
            .call(
                "POST",
                "/admin/gql",
                who,
                &serde_json::json!({"query": query, "variables": variables}),
            )
            .await;
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        r.json()
    }

    /// A signed JSON request.
    pub async fn call(&self, method: &str, path: &str, who: Keypair, body: &Value) -> Reply {
        let bytes = serde_json::to_vec(body).expect("JSON");
        self.send(method, path, Some(who), "application/json", &[], bytes)
            .await
    }
}
