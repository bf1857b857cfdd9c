//! The agent's side of a link: [`serve`] answers the manager's calls with an `AgentRpc`,
//! sends the agent's events and a heartbeat, and opens the tunnels the manager asks for.

use crate::conn::{Answer, Inbound, Link};
use crate::rpc::{Call, File, Notice, Reply, decode, encode};
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
                    tokio::spawn(async move {
                        match decode::<Call>(&body) {
                            Ok(call) => answer_call(agent.as_ref(), tunnels, call, answer).await,
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

async fn answer_call(
    agent: &dyn AgentRpc,
    tunnels: Option<Arc<dyn TunnelDialer>>,
    call: Call,
    answer: Answer,
) {
    let one = |r: Result<Reply, AgentError>| encode(&r);
    let reply = match call {
        Call::Info => agent.info().await.map(|i| Reply::Info(Box::new(i))),
        Call::Create(spec) => agent.create_kernel(*spec).await.map(Reply::Created),
        Call::Destroy(k) => agent.destroy_kernel(k).await.map(Reply::Exit),
        Call::Execute(k, req) => {
            match agent.execute(k, req).await {
                Ok(mut s) => {
                    if answer.item(one(Ok(Reply::Done))).await {
                        while let Some(ev) = s.next().await {
                            if !answer.item(one(Ok(Reply::Exec(ev)))).await {
                                break;
                            }
                        }
                    }
                    answer.end().await;
                }
                Err(e) => {
                    answer.item(one(Err(e))).await;
                    answer.end().await;
                }
            }
            return;
        }
        Call::Upload(k, files) => agent
            .upload_files(
                k,
                files
                    .into_iter()
                    .map(|File(p, b)| (p, bytes::Bytes::from(b)))
                    .collect(),
            )
            .await
            .map(|()| Reply::Done),
        Call::Download(k, paths) => agent
            .download_files(k, paths)
            .await
            .map(|f| Reply::Files(f.into_iter().map(|(p, b)| File(p, b.to_vec())).collect())),
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
    };
    answer.item(one(reply)).await;
    answer.end().await;
}
