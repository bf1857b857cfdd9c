//! Session apps through the manager (wire contract §5.4, §5.5):
//! `GET /stream/session/{ref}/apps` lists them; `GET /stream/session/{ref}/tcpproxy?app=…`
//! is a WebSocket carrying one raw TCP connection to the app (binary frames both ways), or for
//! bai's own client (`Upgrade: bai-tcp`) the connection itself, relayed with splice(2); and
//! `POST /session/{ref}/download?files=…` returns each file as a tar part of a
//! `multipart/mixed` reply; `POST /session/{ref}/start-service` opens an HTTP app proxy
//! (see `bai_control::proxy`), served in path mode by `GET /app/{session id}/{app}/…`. Only the session's owner (or an administrator) gets through:
//! anyone else is told the session does not exist.

use super::raw::Switched;
use super::session::safe_relative_path;
use super::visible_session;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::Extension;
use axum::Json;
use axum::body::Body;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{FromRequestParts, Path, RawQuery, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use bai_api::sessions::{ProxyMode, StartServiceReply, StartServiceRequest};
use bai_core::Problem;
use bai_core::status::SessionStatus;
use bai_ground::apps::{App, SERVICE_PORTS_LABEL, Traffic, session_apps};
use bai_store::SessionRow;
use futures::{SinkExt, StreamExt};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use uuid::Uuid;

/// How long a proxy waits for an app that is still starting to accept connections.
const APP_START_WAIT: Duration = Duration::from_secs(15);
/// Read size of a tunnel.
const TUNNEL_BUF: usize = 1 << 20;

fn running(row: &SessionRow, what: &str) -> Result<(), Problem> {
    match (row.state.status, row.state.status_info.as_deref()) {
        (SessionStatus::Running, _) => Ok(()),
        // Its agent is unreachable: say so at once, with the reason.
        (SessionStatus::RunningDegraded, Some(info)) if info.starts_with("agent-lost") => {
            Err(Problem::new(
                503,
                "agent-lost",
                "Agent unreachable",
                format!(
                    "session {:?} is RUNNING_DEGRADED ({info}); {what} once its agent is back",
                    row.name
                ),
            ))
        }
        _ => Err(Problem::invalid(format!(
            "session {:?} is {}; {what} only while it runs",
            row.name, row.state.status
        ))),
    }
}

/// The apps of a session, from its image's label and its preopen ports.
fn apps_of(m: &Manager, row: &SessionRow) -> Result<Vec<App>, Problem> {
    let agent = m.agents.holding(row)?;
    let label = agent
        .with_image(&row.spec.image, |i| {
            i.labels.get(SERVICE_PORTS_LABEL).cloned()
        })
        .flatten();
    let mut apps = session_apps(label.as_deref(), &row.spec.preopen_ports);
    // A system session (SFTP) serves sshd alone.
    if row.spec.session_type == bai_core::SessionType::System {
        apps.retain(|a| a.name == "sshd");
    }
    Ok(apps)
}

/// Where the app can be reached, once it answers: web apps are started on demand first.
async fn reach(m: &Manager, row: &SessionRow, app: &App) -> Result<SocketAddr, Problem> {
    let agent = m.agents.holding(row)?;
    if app.protocol == "http" {
        agent.rpc.start_app(row.main_kernel_id, &app.name).await?;
    }
    agent
        .rpc
        .app_address(row.main_kernel_id, app.port)
        .await
        .map_err(|e| Problem::from(e).context(format!("app {:?} cannot be reached", app.name)))
}

/// `GET /stream/session/{ref}/apps`.
pub async fn list(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(reference): Path<String>,
) -> ApiResult<Json<Vec<bai_api::sessions::App>>> {
    let row = visible_session(&m, &caller, &reference)?;
    running(&row, "its apps can be listed")?;
    let apps = apps_of(&m, &row)?;
    Ok(Json(apps.iter().map(super::views::apps::app).collect()))
}

/// `GET /stream/session/{ref}/tcpproxy?app=NAME` (WebSocket, or a raw tunnel for bai's own
/// client): any app.
pub async fn tcpproxy(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(reference): Path<String>,
    RawQuery(query): RawQuery,
    req: Request,
) -> Response {
    open_tunnel(m, caller, reference, query, req, false).await
}

/// `GET /stream/session/{ref}/httpproxy?app=NAME` (WebSocket or raw): the same tunnel, for
/// web apps only (a local HTTP listener such as Backend.AI's wsproxy speaks HTTP through it).
pub async fn httpproxy(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(reference): Path<String>,
    RawQuery(query): RawQuery,
    req: Request,
) -> Response {
    open_tunnel(m, caller, reference, query, req, true).await
}

/// The app a tunnel leads to, checked.
struct Target {
    session: Uuid,
    app: String,
    addr: SocketAddr,
}

/// Two kinds of tunnel share one endpoint: the WebSocket of the wire contract (binary
/// frames, for every client), and for bai's own client a raw one (`Upgrade: bai-tcp`,
/// answered `101` once the app accepted the connection) that carries the bytes unframed and
/// is relayed with splice(2). Both are checked and counted alike and close with the session.
async fn open_tunnel(
    m: Arc<Manager>,
    caller: Caller,
    reference: String,
    query: Option<String>,
    req: Request,
    http_only: bool,
) -> Response {
    if super::raw::wants(req.headers(), bai_core::RAW_TUNNEL_UPGRADE) {
        let mut resp = open_raw_tunnel(&m, &caller, &reference, query, req, http_only)
            .await
            .unwrap_or_else(IntoResponse::into_response);
        resp.headers_mut().insert(
            bai_core::RAW_TUNNEL_HEADER,
            header::HeaderValue::from_static("raw"),
        );
        return resp;
    }
    let (mut parts, _) = req.into_parts();
    let ws = match WebSocketUpgrade::from_request_parts(&mut parts, &()).await {
        Ok(ws) => ws,
        Err(rejection) => return rejection.into_response(),
    };
    let t = match target(&m, &caller, &reference, query, http_only).await {
        Ok(t) => t,
        Err(e) => return e.into_response(),
    };
    let traffic = m.traffic.of(t.session);
    let ended = bai_control::proxy::session_end(&m.bus, t.session);
    tracing::info!(session = %t.session, app = %t.app, addr = %t.addr, mode = "websocket", "tcp tunnel opened");
    ws.on_upgrade(move |socket| tunnel(socket, t.addr, traffic, ended))
}

/// Checks the session and the app, and finds where the app is reached.
async fn target(
    m: &Manager,
    caller: &Caller,
    reference: &str,
    query: Option<String>,
    http_only: bool,
) -> ApiResult<Target> {
    let row = visible_session(m, caller, reference)?;
    running(&row, "its apps can be opened")?;
    let wanted = query_values(query.as_deref().unwrap_or(""), "app")
        .into_iter()
        .next()
        .ok_or_else(|| Problem::invalid("app is required: ?app=NAME"))?;
    let apps = apps_of(m, &row)?;
    let app = apps.iter().find(|a| a.name == wanted).ok_or_else(|| {
        let names: Vec<&str> = apps.iter().map(|a| a.name.as_str()).collect();
        Problem::not_found(
            "app",
            format!(
                "session {:?} has no app {wanted:?}; its apps: {}",
                row.name,
                names.join(", ")
            ),
        )
    })?;
    if http_only && app.protocol == "tcp" {
        return Err(Problem::invalid(format!("{wanted} is a TCP app; use tcpproxy for it")).into());
    }
    let addr = reach(m, &row, app).await?;
    Ok(Target {
        session: row.id,
        app: app.name.clone(),
        addr,
    })
}

/// A raw tunnel: the app is connected first (a refusal is still an HTTP answer), then the
/// connection switches protocols and is relayed as it is.
async fn open_raw_tunnel(
    m: &Manager,
    caller: &Caller,
    reference: &str,
    query: Option<String>,
    mut req: Request,
    http_only: bool,
) -> ApiResult<Response> {
    let on_upgrade = hyper::upgrade::on(&mut req);
    let t = target(m, caller, reference, query, http_only).await?;
    let app = connect(t.addr).await.map_err(|e| {
        Problem::new(
            502,
            "app-not-answering",
            "The app does not answer.",
            format!("the app {:?} does not answer: {e}", t.app),
        )
    })?;
    let traffic = m.traffic.of(t.session);
    let ended = bai_control::proxy::session_end(&m.bus, t.session);
    tracing::info!(session = %t.session, app = %t.app, addr = %t.addr, mode = "raw", "tcp tunnel opened");
    tokio::spawn(raw_tunnel(on_upgrade, app, t.addr, traffic, ended));
    super::raw::switching(bai_core::RAW_TUNNEL_UPGRADE, &[])
}

/// Connects to the app, retrying while it starts; a silent app is given up within
/// [`bai_relay::DIAL_WAIT`] a try, [`APP_START_WAIT`] in all.
async fn connect(addr: SocketAddr) -> std::io::Result<tokio::net::TcpStream> {
    bai_relay::dial_while_starting(addr, APP_START_WAIT).await
}

async fn close(ws: &mut futures::stream::SplitSink<WebSocket, Message>, code: u16, why: String) {
    let _ = ws
        .send(Message::Close(Some(CloseFrame {
            code,
            reason: why.into(),
        })))
        .await;
}

/// Pumps bytes between the WebSocket and the app until either side ends or the session
/// terminates.
async fn tunnel(
    socket: WebSocket,
    addr: SocketAddr,
    traffic: Arc<Traffic>,
    ended: impl std::future::Future<Output = ()> + Send + 'static,
) {
    let (mut ws_tx, mut ws_rx) = socket.split();
    let tcp = match connect(addr).await {
        Ok(s) => s,
        Err(e) => {
            close(&mut ws_tx, 1011, format!("the app does not answer: {e}")).await;
            return;
        }
    };
    let (mut tcp_rx, mut tcp_tx) = tcp.into_split();
    let t_up = traffic.clone();
    let upstream = async move {
        while let Some(msg) = ws_rx.next().await {
            let data = match msg {
                Ok(Message::Binary(b)) => b,
                Ok(Message::Text(t)) => axum::body::Bytes::from(t.as_str().to_owned()),
                Ok(Message::Close(_)) | Err(_) => break,
                Ok(_) => continue,
            };
            if tcp_tx.write_all(&data).await.is_err() {
                break;
            }
            t_up.add(data.len() as u64, 0);
        }
        let _ = tcp_tx.shutdown().await;
    };
    let downstream = async move {
        let mut buf = vec![0u8; TUNNEL_BUF];
        loop {
            match tcp_rx.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if ws_tx
                        .send(Message::Binary(axum::body::Bytes::copy_from_slice(
                            &buf[..n],
                        )))
                        .await
                        .is_err()
                    {
                        return;
                    }
                    traffic.add(0, n as u64);
                }
            }
        }
        close(&mut ws_tx, 1000, String::new()).await;
    };
    tokio::pin!(upstream, downstream, ended);
    // The tunnel lives while the app sends (the client may half-close its side), and ends
    // with the session.
    tokio::select! {
        _ = &mut downstream => {}
        _ = &mut ended => { tracing::info!(%addr, "tcp tunnel closed: the session ended"); }
        _ = async { (&mut upstream).await; std::future::pending::<()>().await } => {}
    }
}

/// Relays a raw tunnel once the connection has switched protocols: splice(2) between the
/// two sockets when the upgraded connection is the plain TCP socket `axum::serve` accepted,
/// buffers otherwise. Bytes are counted per chunk for the idle checker.
async fn raw_tunnel(
    on_upgrade: hyper::upgrade::OnUpgrade,
    app: tokio::net::TcpStream,
    addr: SocketAddr,
    traffic: Arc<Traffic>,
    ended: impl std::future::Future<Output = ()> + Send + 'static,
) {
    let switched = match super::raw::switched(on_upgrade).await {
        Ok(s) => s,
        Err(e) => {
            tracing::info!(%addr, error = %e, "raw tunnel: the connection did not switch protocols");
            return;
        }
    };
    let up = |n: usize| traffic.add(n as u64, 0);
    let down = |n: usize| traffic.add(0, n as u64);
    let relay = async {
        match switched {
            Switched::Tcp {
                stream: user,
                early,
            } => {
                // Bytes the client sent right after its request belong to the app.
                if !early.is_empty() {
                    bai_relay::write_all_tcp(&app, &early).await?;
                    up(early.len());
                }
                bai_relay::tunnel(&user, &app, up, down).await
            }
            Switched::Other(user) => {
                tracing::debug!(%addr, "raw tunnel through buffers: not a plain TCP connection");
                bai_relay::tunnel_io(user, app, up, down).await
            }
        }
    };
    tokio::pin!(ended);
    tokio::select! {
        r = relay => {
            if let Err(e) = r {
                tracing::debug!(%addr, error = %e, "raw tunnel ended");
            }
        }
        _ = &mut ended => { tracing::info!(%addr, "tcp tunnel closed: the session ended"); }
    }
}

/// Every value of `key` in a raw query string (`files=a&files=b`), percent-decoded.
fn query_values(query: &str, key: &str) -> Vec<String> {
    form_urlencoded::parse(query.as_bytes())
        .filter(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
        .collect()
}

/// `POST /session/{ref}/download?files=F&files=G`: one tar archive per file or directory, as
/// the parts of a `multipart/mixed` reply.
pub async fn download(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(reference): Path<String>,
    RawQuery(query): RawQuery,
) -> ApiResult<Response> {
    let row = visible_session(&m, &caller, &reference)?;
    running(&row, "files can be downloaded")?;
    let files = query_values(query.as_deref().unwrap_or(""), "files");
    if files.is_empty() {
        return Err(Problem::invalid("files is required: ?files=PATH (repeatable)").into());
    }
    if files.len() > 64 {
        return Err(Problem::invalid("at most 64 files may be downloaded at once").into());
    }
    let paths = files
        .iter()
        .map(|f| safe_relative_path(f.strip_prefix("/home/work/").unwrap_or(f)))
        .collect::<Result<Vec<_>, _>>()?;
    let agent = m.agents.holding(&row)?;
    let parts = agent
        .rpc
        .download_files(row.main_kernel_id, paths)
        .await
        .map_err(|e| Problem::from(e).context("download failed"))?;
    let boundary = format!("bai-{}", hex::encode(rand::random::<[u8; 12]>()));
    let mut body: Vec<u8> = Vec::new();
    for (name, tar) in &parts {
        let file = name.rsplit('/').next().unwrap_or(name).replace('"', "");
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Type: application/x-tar\r\nContent-Disposition: attachment; filename=\"{file}.tar\"\r\nContent-Length: {}\r\n\r\n",
                tar.len()
            )
            .as_bytes(),
        );
        body.extend_from_slice(tar);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    m.traffic.of(row.id).add(0, body.len() as u64);
    let resp = Response::builder()
        .status(StatusCode::OK)
        .header(
            header::CONTENT_TYPE,
            format!("multipart/mixed; boundary={boundary}"),
        )
        .body(Body::from(body))?;
    Ok(resp)
}

/// `POST /session/{ref}/start-service` `{"app", "mode"?: "port"|"path", "port"?: preferred
/// host port, "open_to_public"?: bool}` → `{"app", "mode", "url", "token", "port"?, "public"}`.
/// Starts the app when needed and waits until it answers.
pub async fn start_service(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(reference): Path<String>,
    headers: axum::http::HeaderMap,
    body: axum::body::Bytes,
) -> ApiResult<Json<StartServiceReply>> {
    let row = visible_session(&m, &caller, &reference)?;
    running(&row, "its apps can be opened")?;
    let req: StartServiceRequest = super::typed_body(&body)?;
    let name = req.app.as_str();
    let apps = apps_of(&m, &row)?;
    let app = apps.iter().find(|a| a.name == name).ok_or_else(|| {
        Problem::not_found("app", format!("session {:?} has no app {name:?}", row.name))
    })?;
    if app.protocol == "tcp" {
        return Err(Problem::invalid(format!(
            "{name} is a TCP app: reach it through a tunnel (`bai app {} {name} -b PORT`)",
            row.name
        ))
        .into());
    }
    let mode = req.mode.unwrap_or(ProxyMode::Port);
    let preferred = match req.port {
        Some(p) if p < 1024 => {
            return Err(Problem::invalid(format!(
                "preferred port {p} is not a port from 1024 to 65535"
            ))
            .into());
        }
        p => p,
    };
    let public = req.open_to_public.unwrap_or(false);
    let target = reach(&m, &row, app).await?;
    let mut proxy = bai_control::proxy::AppProxy::new(
        row.id,
        &app.name,
        target,
        public,
        // Served at their root: every app but the runner's own (preopen ports, named by
        // number, and the image's apps).
        !bai_core::apps::serves_under_prefix(&app.name),
        m.traffic.of(row.id),
    );
    let host_header = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1")
        .to_string();
    let host_only = host_header
        .rsplit_once(':')
        .filter(|(_, p)| p.chars().all(|c| c.is_ascii_digit()))
        .map(|(h, _)| h.to_string())
        .unwrap_or_else(|| host_header.clone());
    let port =
        if mode == ProxyMode::Port {
            Some(m.proxies.listen(&mut proxy, preferred).await.map_err(|e| {
                Problem::new(503, "app-port-pool-exhausted", "No app port is free.", e)
            })?)
        } else {
            None
        };
    // Port mode has listeners of its own (plain HTTP); path mode is on the API's.
    let origin = match port {
        Some(p) => format!("http://{host_only}:{p}"),
        None => format!("{}://{host_header}", m.config.api_scheme()),
    };
    let url = format!("{origin}{}?permit={}", proxy.prefix(), proxy.token);
    let reply = StartServiceReply {
        app: app.name.clone(),
        mode,
        url,
        token: proxy.token.clone(),
        port,
        public,
        preferred_port_used: preferred.is_some() && port == preferred,
    };
    tracing::info!(session = %row.id, app = %app.name, ?mode, ?port, public, "app proxy opened");
    m.proxies.insert(Arc::new(proxy));
    Ok(Json(reply))
}

/// Path mode: `GET|POST|… /app/{session id}/{app}/…` (unsigned: the permit cookie decides).
pub async fn path_proxy(
    State(m): State<Arc<Manager>>,
    Path(params): Path<Vec<(String, String)>>,
    req: axum::http::Request<Body>,
) -> Response {
    let get = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let proxy = get("session")
        .and_then(|s| Uuid::parse_str(&s).ok())
        .zip(get("app"))
        .and_then(|(s, a)| m.proxies.get(s, &a));
    match proxy {
        Some(p) if p.host_port.is_none() => {
            bai_control::proxy::forward(&bai_control::proxy::ProxyTarget::from(&*p), req).await
        }
        _ => bai_control::proxy::page(
            StatusCode::NOT_FOUND,
            "No such app is open: start it again from bai.",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_query_keys_are_all_read() {
        assert_eq!(
            query_values("files=a&files=dir%2Fb&other=1", "files"),
            ["a", "dir/b"]
        );
        assert_eq!(query_values("app=sshd", "app"), ["sshd"]);
        assert!(query_values("", "app").is_empty());
    }
}
