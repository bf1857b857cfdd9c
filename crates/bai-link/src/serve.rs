//! The agent's side of a link: [`serve`] answers the manager's calls with an `AgentRpc`,
//! sends the agent's events and a heartbeat, and opens the tunnels the manager asks for.

use crate::conn::{Answer, Inbound, Link};
use crate::memory::{Memory, Seen, first_answer};
use crate::rpc::{Call, File, Notice, Reply, Request, decode, encode, parts};
use async_trait::async_trait;
use bai_core::agent::{AgentError, AgentEvent, AgentRpc};
use futures::StreamExt;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use uuid::Uuid;

/// Opens the agent's end of a tunnel: dials the manager and joins the connection with the
/// kernel port at `target` (on the agent's own host).
#[async_trait]
pub trait TunnelDialer: Send + Sync + 'static {
    async fn open(&self, tunnel: Uuid, target: std::net::SocketAddr) -> Result<(), AgentError>;
}

/// What one served link needs besides the agent.
pub struct Serving {
    /// The agent's events, kept across links: what could not be sent on one link goes on
    /// the next.
    pub events: mpsc::Receiver<AgentEvent>,
    /// An event taken but not sent when the last link broke.
    pub unsent: Option<AgentEvent>,
    pub heartbeat: Duration,
    pub tunnels: Option<Arc<dyn TunnelDialer>>,
    /// Answers to recent calls and uploads in parts, kept across links.
    pub memory: Arc<Memory>,
    /// The highest lease term a manager's call came under, kept across links: a call of a
    /// lower term (a deposed leader's) is refused.
    pub term: Arc<Term>,
}

/// The highest lease term seen.
#[derive(Debug, Default)]
pub struct Term(std::sync::atomic::AtomicU64);

impl Term {
    /// Whether a call under `term` may be carried out (it is the highest seen, or higher,
    /// which becomes the highest).
    pub fn admit(&self, term: u64) -> Result<(), AgentError> {
        let seen = self.0.fetch_max(term, std::sync::atomic::Ordering::SeqCst);
        if term < seen {
            return Err(AgentError::Unreachable(format!(
                "refused: this call comes under lease term {term}, and a manager of term {seen} leads now"
            )));
        }
        Ok(())
    }

    /// The highest term seen.
    pub fn highest(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Serving {
    /// Collects `agent`'s events from now on (up to `backlog` while no link is up).
    pub fn new(
        agent: &dyn AgentRpc,
        heartbeat: Duration,
        tunnels: Option<Arc<dyn TunnelDialer>>,
    ) -> Serving {
        let (tx, events) = mpsc::channel(10_000);
        let mut stream = agent.events();
        tokio::spawn(async move {
            while let Some(ev) = stream.next().await {
                if tx.send(ev).await.is_err() {
                    return;
                }
            }
        });
        Serving {
            events,
            unsent: None,
            heartbeat,
            tunnels,
            memory: Arc::default(),
            term: Arc::default(),
        }
    }
}

/// Answers the manager's calls with `agent`, sends its events and heartbeats, until the link
/// ends.
pub async fn serve(
    agent: Arc<dyn AgentRpc>,
    link: Link,
    mut inbound: mpsc::Receiver<Inbound>,
    serving: &mut Serving,
) {
    if let Some(ev) = serving.unsent.take()
        && link
            .event(encode(&Notice::Agent(ev.clone())))
            .await
            .is_err()
    {
        serving.unsent = Some(ev);
        return;
    }
    let mut beat = tokio::time::interval(serving.heartbeat);
    loop {
        tokio::select! {
            msg = inbound.recv() => match msg {
                None => break,
                Some(Inbound::Event(_)) => {}
                Some(Inbound::Call { body, answer }) => {
                    let agent = agent.clone();
                    let tunnels = serving.tunnels.clone();
                    let memory = serving.memory.clone();
                    let term = serving.term.clone();
                    tokio::spawn(async move {
                        match decode::<Request>(&body) {
                            Ok(req) => {
                                if let Err(e) = term.admit(req.term) {
                                    tracing::warn!(term = req.term, highest = term.highest(), "refused a call of a deposed manager");
                                    answer.item(one(Err(e))).await;
                                    answer.end().await;
                                    return;
                                }
                                answer_request(agent.as_ref(), tunnels, &memory, req, answer).await
                            }
                            Err(e) => {
                                let r: Result<Reply, AgentError> =
                                    Err(AgentError::BadRequest(e.to_string()));
                                answer.item(encode(&r)).await;
                                answer.end().await;
                            }
                        }
                    });
                }
            },
            ev = serving.events.recv() => {
                let Some(ev) = ev else { break };
                if link.event(encode(&Notice::Agent(ev.clone()))).await.is_err() {
                    serving.unsent = Some(ev);
                    break;
                }
            }
            _ = beat.tick() => {
                if link.event(encode(&Notice::Heartbeat)).await.is_err() {
                    break;
                }
            }
            _ = link.closed() => break,
        }
    }
}

fn one(r: Result<Reply, AgentError>) -> Vec<u8> {
    encode(&r)
}

/// Answers one request: a call that changes something and was asked before gets the first
/// answer; the rest are carried out.
async fn answer_request(
    agent: &dyn AgentRpc,
    tunnels: Option<Arc<dyn TunnelDialer>>,
    memory: &Memory,
    req: Request,
    answer: Answer,
) {
    match req.call {
        Call::Execute(k, exec) => return execute(agent, k, exec, answer).await,
        Call::Download(k, paths) => return download(agent, k, paths, answer).await,
        _ => {}
    }
    let body = if req.call.changes() {
        match memory.seen(req.id) {
            Seen::Again(first) => first_answer(first).await.unwrap_or_else(|| {
                one(Err(AgentError::Runtime(
                    "the first try of this call ended without an answer".into(),
                )))
            }),
            Seen::New(pending) => {
                let body = one(reply(agent, tunnels, memory, req.call).await);
                pending.done(body.clone());
                body
            }
        }
    } else {
        one(reply(agent, tunnels, memory, req.call).await)
    };
    answer.item(body).await;
    answer.end().await;
}

/// An execution's answer: `Done` once it started, then its events.
async fn execute(agent: &dyn AgentRpc, k: Uuid, req: bai_core::agent::ExecRequest, answer: Answer) {
    match agent.execute(k, req).await {
        Ok(mut s) => {
            if answer.item(one(Ok(Reply::Done))).await {
                while let Some(ev) = s.next().await {
                    if !answer.item(one(Ok(Reply::Exec(ev)))).await {
                        break;
                    }
                }
            }
        }
        Err(e) => {
            answer.item(one(Err(e))).await;
        }
    }
    answer.end().await;
}

/// A download's answer: each file in parts ([`parts`]), then `Done`.
async fn download(agent: &dyn AgentRpc, k: Uuid, paths: Vec<String>, answer: Answer) {
    match agent.download_files(k, paths).await {
        Ok(files) => {
            'files: for (path, bytes) in files {
                for (i, part) in parts(&bytes).enumerate() {
                    let file = File(path.clone(), part.to_vec());
                    let first = i == 0;
                    if !answer.item(one(Ok(Reply::Part { first, file }))).await {
                        break 'files;
                    }
                }
            }
            answer.item(one(Ok(Reply::Done))).await;
        }
        Err(e) => {
            answer.item(one(Err(e))).await;
        }
    }
    answer.end().await;
}

/// The one answer of every other call.
async fn reply(
    agent: &dyn AgentRpc,
    tunnels: Option<Arc<dyn TunnelDialer>>,
    memory: &Memory,
    call: Call,
) -> Result<Reply, AgentError> {
    let bytes = |files: Vec<(String, Vec<u8>)>| {
        files
            .into_iter()
            .map(|(p, b)| (p, bytes::Bytes::from(b)))
            .collect()
    };
    match call {
        Call::Info => agent.info().await.map(|i| Reply::Info(Box::new(i))),
        Call::Create(spec) => agent.create_kernel(*spec).await.map(Reply::Created),
        Call::WarmPool(t) => agent.warm_pool(t).await.map(|r| Reply::Pools(Box::new(r))),
        Call::Destroy(k) => agent.destroy_kernel(k).await.map(Reply::Exit),
        Call::Terminate(k) => agent.terminate_processes(k).await.map(|()| Reply::Done),
        Call::ClusterHosts(session, hosts) => agent
            .cluster_hosts(session, hosts)
            .await
            .map(|()| Reply::Done),
        Call::Upload(k, files) => agent
            .upload_files(
                k,
                bytes(files.into_iter().map(|File(p, b)| (p, b)).collect()),
            )
            .await
            .map(|()| Reply::Done),
        Call::Stage(upload, index, File(path, part)) => {
            memory.stage(upload, index, path, &part);
            Ok(Reply::Done)
        }
        Call::UploadStaged(k, upload, sizes) => {
            let files = memory
                .take_staged(upload, &sizes)
                .map_err(AgentError::BadRequest)?;
            agent
                .upload_files(k, bytes(files))
                .await
                .map(|()| Reply::Done)
        }
        Call::AppAddress(k, port) => agent.app_address(k, port).await.map(Reply::Addr),
        Call::StartApp(k, name) => agent.start_app(k, &name).await.map(|()| Reply::Done),
        Call::Logs(k) => agent.logs(k).await.map(Reply::Logs),
        Call::ListFiles(k, path) => agent.list_files(k, path).await.map(Reply::Listing),
        Call::Stats(k) => agent
            .kernel_stats(k)
            .await
            .map(|s| Reply::Stats(Box::new(s))),
        Call::ListKernels => agent.list_kernels().await.map(Reply::Kernels),
        Call::Commit(req) => agent
            .commit_kernel(*req)
            .await
            .map(|i| Reply::Image(Box::new(i))),
        Call::RemoveImage(r) => agent.remove_image(r).await.map(|()| Reply::Done),
        Call::TagImage(src, dst) => agent.tag_image(src, dst).await.map(|()| Reply::Done),
        Call::PullImage(r) => agent.pull_image(r).await.map(|i| Reply::Image(Box::new(i))),
        Call::PushImage(r) => agent.push_image(r).await.map(|()| Reply::Done),
        Call::Tunnel(id, k, port) => match (tunnels, agent.app_address(k, port).await) {
            (Some(t), Ok(target)) => t.open(id, target).await.map(|()| Reply::Done),
            (None, Ok(_)) => Err(AgentError::Runtime("this agent cannot open tunnels".into())),
            (_, Err(e)) => Err(e),
        },
        // Streams, answered above.
        Call::Execute(..) | Call::Download(..) => Err(AgentError::BadRequest(
            "a streamed call reached the one-answer path".into(),
        )),
    }
}
