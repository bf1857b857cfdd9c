//! The manager's side of an agent link: [`RemoteAgent`] implements `AgentRpc` by calls
//! over the link, turns the agent's notices into events and heartbeats, and serves app
//! addresses as loopback listeners whose connections travel through tunnels.
//!
//! A call whose link breaks before its answer is complete is sent again, with the same
//! request id, on the agent's next link (if one comes within the retry window): the agent
//! answers a repeat of a call that changes something with its first answer, so nothing is
//! done twice. Files bigger than one message travel in parts.

use crate::conn::{Inbound, Link, LinkError};
use crate::rpc::{CHUNK, Call, File, Notice, Reply, Request, decode, encode, parts};
use crate::tunnel::{DIAL_BACK, Listeners, Tunnels};
use async_trait::async_trait;
use bai_core::agent::{
    AgentError, AgentEvent, AgentInfo, AgentRpc, ExecEvent, ExecRequest, KernelCreated, KernelExit,
    KernelSpec,
};
use bai_core::stats::KernelStats;
use futures::StreamExt;
use futures::stream::BoxStream;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{broadcast, mpsc, watch};
use tokio::time::Instant;
use uuid::Uuid;

fn lost(e: LinkError) -> AgentError {
    AgentError::Unreachable(e.to_string())
}

/// What a [`RemoteAgent`] shares with whoever holds it across reconnects.
#[derive(Clone)]
pub struct RemoteShared {
    /// The agent's id (tunnels are paired only with its connections).
    pub agent_id: String,
    /// Where the agent's events go.
    pub events: broadcast::Sender<AgentEvent>,
    /// Unix milliseconds of the agent's last heartbeat.
    pub heartbeat_ms: Arc<AtomicI64>,
    /// The tunnels the manager's listener pairs.
    pub tunnels: Arc<Tunnels>,
    /// The loopback listeners standing for kernel ports: they outlive a link, so an open
    /// app proxy works again once the agent is back.
    listeners: Listeners,
    /// The agent's current link (the listeners' tunnels go through it; calls cut off by a
    /// broken link are sent again on the next).
    current: Arc<watch::Sender<Option<Link>>>,
    /// How long a call cut off by a broken link waits for the agent's next link.
    retry_window: Duration,
    /// The lease term every call is sent under ([`Request::term`]).
    term: u64,
}

/// The default [`RemoteShared::with_retry_window`].
pub const RETRY_WINDOW: Duration = Duration::from_secs(30);

impl RemoteShared {
    pub fn new(agent_id: &str, tunnels: Arc<Tunnels>) -> RemoteShared {
        let (events, _) = broadcast::channel(1024);
        RemoteShared {
            agent_id: agent_id.to_string(),
            events,
            heartbeat_ms: Arc::new(AtomicI64::new(bai_core::stats::now_ms())),
            tunnels,
            listeners: Listeners::default(),
            current: Arc::new(watch::channel(None).0),
            retry_window: RETRY_WINDOW,
            term: 0,
        }
    }

    /// Sends every call under lease term `term` (the manager leads under it).
    pub fn with_term(mut self, term: u64) -> RemoteShared {
        self.term = term;
        self
    }

    /// How long a call cut off by a broken link waits for the agent to come back.
    pub fn with_retry_window(mut self, window: Duration) -> RemoteShared {
        self.retry_window = window;
        self
    }

    /// Closes every loopback listener of the agent (it was removed, or its sessions ended
    /// while it was away).
    pub fn close_listeners(&self) {
        self.listeners.close_all();
    }

    fn link(&self) -> Option<Link> {
        self.current.borrow().clone().filter(|l| !l.is_closed())
    }

    /// The agent's next open link after `old`, waiting for it until `deadline`.
    async fn next_link(&self, old: &Link, deadline: Instant) -> Option<Link> {
        let mut rx = self.current.subscribe();
        loop {
            if let Some(l) = rx.borrow_and_update().clone()
                && !l.same(old)
                && !l.is_closed()
            {
                return Some(l);
            }
            match tokio::time::timeout_at(deadline, rx.changed()).await {
                Ok(Ok(())) => {}
                _ => return None,
            }
        }
    }
}

/// An agent reached over a link.
#[derive(Clone)]
pub struct RemoteAgent {
    link: Link,
    shared: RemoteShared,
}

impl RemoteAgent {
    /// Wraps the manager's end of a link; `inbound` carries the agent's notices.
    pub fn new(
        link: Link,
        mut inbound: mpsc::Receiver<Inbound>,
        shared: RemoteShared,
    ) -> RemoteAgent {
        let tx = shared.events.clone();
        let beat = shared.heartbeat_ms.clone();
        shared.current.send_replace(Some(link.clone()));
        tokio::spawn(async move {
            while let Some(msg) = inbound.recv().await {
                match msg {
                    Inbound::Event(b) => match decode::<Notice>(&b) {
                        Ok(Notice::Agent(ev)) => {
                            let _ = tx.send(ev);
                        }
                        Ok(Notice::Heartbeat) => {
                            beat.store(bai_core::stats::now_ms(), Ordering::Relaxed);
                        }
                        Err(e) => tracing::warn!(error = %e, "a malformed notice from an agent"),
                    },
                    // The manager answers no calls from agents.
                    Inbound::Call { answer, .. } => answer.end().await,
                }
            }
        });
        RemoteAgent { link, shared }
    }

    pub fn link(&self) -> &Link {
        &self.link
    }

    /// A loopback listener standing for `port` of `kernel`: each connection to it becomes a
    /// tunnel through the agent's link of the moment.
    async fn listen(&self, kernel: Uuid, port: u16) -> Result<SocketAddr, AgentError> {
        let listeners = &self.shared.listeners;
        if let Some(a) = listeners.get(kernel, port) {
            return Ok(a);
        }
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| AgentError::Runtime(format!("cannot open a tunnel listener: {e}")))?;
        let addr = listener
            .local_addr()
            .map_err(|e| AgentError::Runtime(e.to_string()))?;
        let shared = self.shared.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let shared = shared.clone();
                tokio::spawn(async move {
                    if let Err(e) = tunnel(&shared, kernel, port, tcp).await {
                        tracing::info!(%kernel, port, error = %e, "an app tunnel failed");
                    }
                });
            }
        });
        listeners.insert(kernel, port, addr, task.abort_handle());
        Ok(addr)
    }

    /// A call with one answer, sent again on the next link if this one breaks first.
    async fn ask(&self, call: Call) -> Result<Reply, AgentError> {
        let mut items = self.request(call, false).await?;
        items.pop().ok_or_else(|| lost(LinkError::Closed))?
    }

    /// Every item of `call`'s answer (a streamed answer is complete at `Done` or an error).
    /// While the link breaks before the answer is complete, the same request goes again on
    /// the agent's next link, until the retry window has passed.
    async fn request(
        &self,
        call: Call,
        streamed: bool,
    ) -> Result<Vec<Result<Reply, AgentError>>, AgentError> {
        let body = encode(&Request::new(call, self.shared.term));
        let deadline = Instant::now() + self.shared.retry_window;
        let mut link = self.link.clone();
        let mut tries = 0;
        loop {
            tries += 1;
            let mut items = Vec::new();
            match link.call_stream(body.clone()).await {
                Ok(mut rx) => {
                    while let Some(b) = rx.recv().await {
                        items.push(decode::<Result<Reply, AgentError>>(&b).map_err(lost)?);
                    }
                }
                // Never sent: the agent cannot have it, so this is no retry's business.
                Err(e) if tries == 1 => return Err(lost(e)),
                Err(_) => {}
            }
            let complete = match items.last() {
                None => false,
                Some(Err(_)) | Some(Ok(Reply::Done)) => true,
                Some(_) => !streamed,
            };
            if complete {
                if tries > 1 {
                    tracing::info!(agent = %self.shared.agent_id, tries, "a call cut off by a broken link was answered on the next link");
                }
                return Ok(items);
            }
            tracing::info!(agent = %self.shared.agent_id, "the link broke before a call's answer; waiting for the agent's next link to send it again");
            link = self.shared.next_link(&link, deadline).await.ok_or_else(|| {
                AgentError::Unreachable(format!(
                    "the link to agent {} broke before it answered, and it did not come back within {} s",
                    self.shared.agent_id,
                    self.shared.retry_window.as_secs()
                ))
            })?;
        }
    }
}

/// A call with one answer on `link`, sent once.
async fn ask_once(link: &Link, call: Call, term: u64) -> Result<Reply, AgentError> {
    let b = link
        .call(encode(&Request::new(call, term)))
        .await
        .map_err(lost)?;
    decode::<Result<Reply, AgentError>>(&b).map_err(lost)?
}

/// Asks the agent for a tunnel and joins `tcp` with it until either side ends.
async fn tunnel(
    shared: &RemoteShared,
    kernel: Uuid,
    port: u16,
    mut tcp: tokio::net::TcpStream,
) -> Result<(), AgentError> {
    let link = shared.link().ok_or_else(|| {
        AgentError::Unreachable(format!("agent {} is not connected", shared.agent_id))
    })?;
    let tunnels = &shared.tunnels;
    let (id, rx) = tunnels.expect(&shared.agent_id);
    let io = match ask_once(&link, Call::Tunnel(id, kernel, port), shared.term).await {
        Ok(Reply::Done) => tokio::time::timeout(DIAL_BACK, rx).await,
        Ok(r) => {
            tunnels.forget(id);
            return Err(unexpected(r));
        }
        Err(e) => {
            tunnels.forget(id);
            return Err(e);
        }
    };
    let mut io = match io {
        Ok(Ok(io)) => io,
        _ => {
            tunnels.forget(id);
            return Err(AgentError::Unreachable(
                "the agent did not dial the tunnel back".into(),
            ));
        }
    };
    let _ = tokio::io::copy_bidirectional(&mut tcp, &mut io).await;
    Ok(())
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

    async fn warm_pool(
        &self,
        targets: Option<Vec<bai_core::pool::PoolTarget>>,
    ) -> Result<bai_core::pool::PoolReport, AgentError> {
        match self.ask(Call::WarmPool(targets)).await? {
            Reply::Pools(r) => Ok(*r),
            r => Err(unexpected(r)),
        }
    }

    async fn destroy_kernel(&self, kernel_id: Uuid) -> Result<KernelExit, AgentError> {
        self.shared.listeners.close_kernel(kernel_id);
        match self.ask(Call::Destroy(kernel_id)).await? {
            Reply::Exit(e) => Ok(e),
            r => Err(unexpected(r)),
        }
    }

    async fn terminate_processes(&self, kernel_id: Uuid) -> Result<(), AgentError> {
        match self.ask(Call::Terminate(kernel_id)).await? {
            Reply::Done => Ok(()),
            r => Err(unexpected(r)),
        }
    }

    async fn cluster_hosts(
        &self,
        session_id: Uuid,
        hosts: Vec<(String, std::net::IpAddr)>,
    ) -> Result<(), AgentError> {
        match self.ask(Call::ClusterHosts(session_id, hosts)).await? {
            Reply::Done => Ok(()),
            r => Err(unexpected(r)),
        }
    }

    async fn execute(
        &self,
        kernel_id: Uuid,
        req: ExecRequest,
    ) -> Result<BoxStream<'static, ExecEvent>, AgentError> {
        // An execution is not sent again: its output streams as it runs.
        let req = Request::new(Call::Execute(kernel_id, req), self.shared.term);
        let mut rx = self.link.call_stream(encode(&req)).await.map_err(lost)?;
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
        let total: usize = files.iter().map(|(_, b)| b.len()).sum();
        let call = if total <= CHUNK {
            let files = files
                .into_iter()
                .map(|(p, b)| File(p, b.to_vec()))
                .collect();
            Call::Upload(kernel_id, files)
        } else {
            // In parts, each its own call (and each safe to send again).
            let upload = Uuid::new_v4();
            for (i, (path, bytes)) in files.iter().enumerate() {
                let index = u32::try_from(i)
                    .map_err(|_| AgentError::BadRequest("too many files in one upload".into()))?;
                for part in parts(bytes) {
                    let part = File(path.clone(), part.to_vec());
                    match self.ask(Call::Stage(upload, index, part)).await? {
                        Reply::Done => {}
                        r => return Err(unexpected(r)),
                    }
                }
            }
            let sizes = files.iter().map(|(_, b)| b.len() as u64).collect();
            Call::UploadStaged(kernel_id, upload, sizes)
        };
        match self.ask(call).await? {
            Reply::Done => Ok(()),
            r => Err(unexpected(r)),
        }
    }

    async fn download_files(
        &self,
        kernel_id: Uuid,
        paths: Vec<String>,
    ) -> Result<Vec<(String, bytes::Bytes)>, AgentError> {
        let items = self.request(Call::Download(kernel_id, paths), true).await?;
        let mut files: Vec<(String, Vec<u8>)> = Vec::new();
        for item in items {
            match item? {
                Reply::Part { first: true, file } => files.push((file.0, file.1)),
                Reply::Part { first: false, file } => match files.last_mut() {
                    Some((path, bytes)) if *path == file.0 => bytes.extend_from_slice(&file.1),
                    _ => {
                        return Err(AgentError::Runtime(
                            "the agent sent a file's part out of order".into(),
                        ));
                    }
                },
                Reply::Done => {}
                r => return Err(unexpected(r)),
            }
        }
        Ok(files
            .into_iter()
            .map(|(p, b)| (p, bytes::Bytes::from(b)))
            .collect())
    }

    async fn app_address(
        &self,
        kernel_id: Uuid,
        port: u16,
    ) -> Result<std::net::SocketAddr, AgentError> {
        // The agent checks the kernel and port; the manager reaches them only through it.
        match self.ask(Call::AppAddress(kernel_id, port)).await? {
            Reply::Addr(_) => self.listen(kernel_id, port).await,
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

    async fn list_files(
        &self,
        kernel_id: Uuid,
        path: String,
    ) -> Result<Vec<bai_core::agent::FileEntry>, AgentError> {
        match self.ask(Call::ListFiles(kernel_id, path)).await? {
            Reply::Listing(l) => Ok(l),
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

    async fn commit_kernel(
        &self,
        req: bai_core::agent::CommitRequest,
    ) -> Result<bai_core::agent::ImageInfo, AgentError> {
        match self.ask(Call::Commit(Box::new(req))).await? {
            Reply::Image(i) => Ok(*i),
            r => Err(unexpected(r)),
        }
    }

    async fn remove_image(&self, reference: String) -> Result<(), AgentError> {
        match self.ask(Call::RemoveImage(reference)).await? {
            Reply::Done => Ok(()),
            r => Err(unexpected(r)),
        }
    }

    async fn tag_image(&self, source: String, target: String) -> Result<(), AgentError> {
        match self.ask(Call::TagImage(source, target)).await? {
            Reply::Done => Ok(()),
            r => Err(unexpected(r)),
        }
    }

    async fn pull_image(
        &self,
        reference: String,
    ) -> Result<bai_core::agent::ImageInfo, AgentError> {
        match self.ask(Call::PullImage(reference)).await? {
            Reply::Image(i) => Ok(*i),
            r => Err(unexpected(r)),
        }
    }

    async fn push_image(&self, reference: String) -> Result<(), AgentError> {
        match self.ask(Call::PushImage(reference)).await? {
            Reply::Done => Ok(()),
            r => Err(unexpected(r)),
        }
    }

    fn events(&self) -> BoxStream<'static, AgentEvent> {
        tokio_stream::wrappers::BroadcastStream::new(self.shared.events.subscribe())
            .filter_map(|r| futures::future::ready(r.ok()))
            .boxed()
    }
}
