//! The agent RPC interface over a [`Link`]: the manager holds a [`RemoteAgent`] (an
//! `AgentRpc` like any other), the agent answers with [`serve`]. Messages are MessagePack
//! (serde, field names kept); file bodies travel as bytes.

use crate::conn::{Answer, Inbound, Link, LinkError};
use async_trait::async_trait;
use bai_core::agent::{
    AgentError, AgentEvent, AgentInfo, AgentRpc, ExecEvent, ExecRequest, KernelCreated, KernelExit,
    KernelSpec,
};
use bai_core::stats::KernelStats;
use futures::StreamExt;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use tokio::sync::{broadcast, mpsc};
use uuid::Uuid;

/// A file's path and bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct File(pub String, #[serde(with = "serde_bytes")] pub Vec<u8>);

/// What the manager asks of an agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Call {
    Info,
    Create(Box<KernelSpec>),
    Destroy(Uuid),
    Execute(Uuid, ExecRequest),
    Upload(Uuid, Vec<File>),
    Download(Uuid, Vec<String>),
    AppAddress(Uuid, u16),
    StartApp(Uuid, String),
    Logs(Uuid),
    Stats(Uuid),
    ListKernels,
}

/// The agent's answers (each item of a call's answer is one `Result<Reply, AgentError>`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Reply {
    Info(Box<AgentInfo>),
    Created(KernelCreated),
    Exit(KernelExit),
    Exec(ExecEvent),
    Done,
    Files(Vec<File>),
    Addr(std::net::SocketAddr),
    Logs(String),
    Stats(Box<KernelStats>),
    Kernels(Vec<Uuid>),
}

pub fn encode<T: Serialize>(v: &T) -> Vec<u8> {
    // Our own types always serialize.
    rmp_serde::to_vec_named(v).unwrap_or_default()
}

pub fn decode<T: for<'de> Deserialize<'de>>(b: &[u8]) -> Result<T, LinkError> {
    rmp_serde::from_slice(b).map_err(|e| LinkError::Malformed(e.to_string()))
}

fn lost(e: LinkError) -> AgentError {
    AgentError::Runtime(format!("agent unreachable: {e}"))
}

/// An agent reached over a link.
#[derive(Clone)]
pub struct RemoteAgent {
    link: Link,
    events: broadcast::Sender<AgentEvent>,
}

impl RemoteAgent {
    /// Wraps the manager's end of a link; `inbound` carries the agent's events.
    pub fn new(link: Link, mut inbound: mpsc::Receiver<Inbound>) -> RemoteAgent {
        let (events, _) = broadcast::channel(1024);
        let tx = events.clone();
        tokio::spawn(async move {
            while let Some(msg) = inbound.recv().await {
                match msg {
                    Inbound::Event(b) => match decode::<AgentEvent>(&b) {
                        Ok(ev) => {
                            let _ = tx.send(ev);
                        }
                        Err(e) => tracing::warn!(error = %e, "a malformed event from an agent"),
                    },
                    // The manager answers no calls from agents.
                    Inbound::Call { answer, .. } => answer.end().await,
                }
            }
        });
        RemoteAgent { link, events }
    }

    pub fn link(&self) -> &Link {
        &self.link
    }

    async fn ask(&self, call: Call) -> Result<Reply, AgentError> {
        let b = self.link.call(encode(&call)).await.map_err(lost)?;
        decode::<Result<Reply, AgentError>>(&b).map_err(lost)?
    }
}

fn unexpected(r: Reply) -> AgentError {
    AgentError::Runtime(format!("the agent answered out of turn: {r:?}"))
}

#[async_trait]
impl AgentRpc for RemoteAgent {
    async fn info(&self) -> Result<AgentInfo, AgentError> {
        match self.ask(Call::Info).await? {
            Reply::Info(i) => Ok(*i),
            r => Err(unexpected(r)),
        }
    }

    async fn create_kernel(&self, spec: KernelSpec) -> Result<KernelCreated, AgentError> {
        match self.ask(Call::Create(Box::new(spec))).await? {
            Reply::Created(c) => Ok(c),
            r => Err(unexpected(r)),
        }
    }

    async fn destroy_kernel(&self, kernel_id: Uuid) -> Result<KernelExit, AgentError> {
        match self.ask(Call::Destroy(kernel_id)).await? {
            Reply::Exit(e) => Ok(e),
            r => Err(unexpected(r)),
        }
    }

    async fn execute(
        &self,
        kernel_id: Uuid,
        req: ExecRequest,
    ) -> Result<BoxStream<'static, ExecEvent>, AgentError> {
        let mut rx = self
            .link
            .call_stream(encode(&Call::Execute(kernel_id, req)))
            .await
            .map_err(lost)?;
        // The first item says whether the execution started.
        let first = rx.recv().await.ok_or_else(|| lost(LinkError::Closed))?;
        decode::<Result<Reply, AgentError>>(&first).map_err(lost)??;
        let s = futures::stream::unfold(rx, |mut rx| async move {
            let b = rx.recv().await?;
            match decode::<Result<Reply, AgentError>>(&b) {
                Ok(Ok(Reply::Exec(ev))) => Some((ev, rx)),
                _ => None,
            }
        });
        Ok(s.boxed())
    }

    async fn upload_files(
        &self,
        kernel_id: Uuid,
        files: Vec<(String, bytes::Bytes)>,
    ) -> Result<(), AgentError> {
        let files = files
            .into_iter()
            .map(|(p, b)| File(p, b.to_vec()))
            .collect();
        match self.ask(Call::Upload(kernel_id, files)).await? {
            Reply::Done => Ok(()),
            r => Err(unexpected(r)),
        }
    }

    async fn download_files(
        &self,
        kernel_id: Uuid,
        paths: Vec<String>,
    ) -> Result<Vec<(String, bytes::Bytes)>, AgentError> {
        match self.ask(Call::Download(kernel_id, paths)).await? {
            Reply::Files(f) => Ok(f
                .into_iter()
                .map(|File(p, b)| (p, bytes::Bytes::from(b)))
                .collect()),
            r => Err(unexpected(r)),
        }
    }

    async fn app_address(
        &self,
        kernel_id: Uuid,
        port: u16,
    ) -> Result<std::net::SocketAddr, AgentError> {
        match self.ask(Call::AppAddress(kernel_id, port)).await? {
            Reply::Addr(a) => Ok(a),
            r => Err(unexpected(r)),
        }
    }

    async fn start_app(&self, kernel_id: Uuid, name: &str) -> Result<(), AgentError> {
        match self
            .ask(Call::StartApp(kernel_id, name.to_string()))
            .await?
        {
            Reply::Done => Ok(()),
            r => Err(unexpected(r)),
        }
    }

    async fn logs(&self, kernel_id: Uuid) -> Result<String, AgentError> {
        match self.ask(Call::Logs(kernel_id)).await? {
            Reply::Logs(l) => Ok(l),
            r => Err(unexpected(r)),
        }
    }

    async fn kernel_stats(&self, kernel_id: Uuid) -> Result<KernelStats, AgentError> {
        match self.ask(Call::Stats(kernel_id)).await? {
            Reply::Stats(s) => Ok(*s),
            r => Err(unexpected(r)),
        }
    }

    async fn list_kernels(&self) -> Result<Vec<Uuid>, AgentError> {
        match self.ask(Call::ListKernels).await? {
            Reply::Kernels(k) => Ok(k),
            r => Err(unexpected(r)),
        }
    }

    fn events(&self) -> BoxStream<'static, AgentEvent> {
        let rx = self.events.subscribe();
        futures::stream::unfold(rx, |mut rx| async move {
            loop {
                match rx.recv().await {
                    Ok(ev) => return Some((ev, rx)),
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        })
        .boxed()
    }
}

/// Answers the manager's calls with `agent` and forwards its events, until the link ends.
pub async fn serve(agent: Arc<dyn AgentRpc>, link: Link, mut inbound: mpsc::Receiver<Inbound>) {
    let forward = {
        let link = link.clone();
        let mut events = agent.events();
        tokio::spawn(async move {
            while let Some(ev) = events.next().await {
                if link.event(encode(&ev)).await.is_err() {
                    break;
                }
            }
        })
    };
    while let Some(msg) = inbound.recv().await {
        match msg {
            Inbound::Event(_) => {}
            Inbound::Call { body, answer } => {
                let agent = agent.clone();
                tokio::spawn(async move {
                    match decode::<Call>(&body) {
                        Ok(call) => answer_call(agent.as_ref(), call, answer).await,
                        Err(e) => {
                            let r: Result<Reply, AgentError> =
                                Err(AgentError::BadRequest(e.to_string()));
                            answer.item(encode(&r)).await;
                            answer.end().await;
                        }
                    }
                });
            }
        }
    }
    forward.abort();
}

async fn answer_call(agent: &dyn AgentRpc, call: Call, answer: Answer) {
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
        Call::Stats(k) => agent
            .kernel_stats(k)
            .await
            .map(|s| Reply::Stats(Box::new(s))),
        Call::ListKernels => agent.list_kernels().await.map(Reply::Kernels),
    };
    answer.item(one(reply)).await;
    answer.end().await;
}
