//! The runner client, the same on both backends: a kernel's krunner listens on a Unix socket
//! in the kernel's run directory on the node (a bind mount on Docker, a hostPath on
//! Kubernetes) and, for an agent that does not share the kernel's node, on the pod network
//! too ([`RunnerAt::Network`]: each connection opens with the kernel's token). The agent
//! speaks [`crate::krunner_proto`] to it: one connection per request, one JSON line out,
//! event lines back until `finished`.
//!
//! Each call takes where the runner answers; the backend checks first that the kernel is its
//! own.

use crate::error::runtime;
use crate::krunner_proto::{
    PING, STATS, TERMINATE, download_line, is_pong, list_files_line, parse_event, start_app_line,
};
use bai_core::agent::{AgentError, ExecEvent, FileEntry};
use bai_core::stats::KernelStats;
use futures::StreamExt;
use futures::stream::BoxStream;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use uuid::Uuid;

/// Where a kernel's runner answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunnerAt {
    /// Its Unix socket in the kernel's run directory on this node.
    Socket(PathBuf),
    /// Its pod's address on the pod network; each connection opens with `token` on a line of
    /// its own (krunner's `BAI_KRUNNER_LISTEN`).
    Network { addr: SocketAddr, token: String },
}

impl From<&Path> for RunnerAt {
    fn from(p: &Path) -> RunnerAt {
        RunnerAt::Socket(p.to_path_buf())
    }
}

impl From<&PathBuf> for RunnerAt {
    fn from(p: &PathBuf) -> RunnerAt {
        RunnerAt::Socket(p.clone())
    }
}

/// A connection to a runner, on either way.
trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}
type Conn = Box<dyn Io>;

/// Opens a connection to the runner at `at` (over the network, its token said first).
async fn connect(at: &RunnerAt) -> std::io::Result<Conn> {
    match at {
        RunnerAt::Socket(path) => Ok(Box::new(UnixStream::connect(path).await?)),
        RunnerAt::Network { addr, token } => {
            // A pod that vanished drops the SYN: give it up within seconds.
            let mut s = bai_relay::dial(*addr, bai_relay::DIAL_WAIT).await?;
            s.write_all(format!("{token}\n").as_bytes()).await?;
            Ok(Box::new(s))
        }
    }
}

/// The longest event line accepted from a kernel (krunner sends at most 64 KiB of output
/// per event; anything far longer is a broken or hostile kernel).
const MAX_LINE: u64 = 16 << 20;
/// Exit code reported when the kernel vanishes mid-execution (as if killed).
const GONE_EXIT_CODE: i32 = 137;

/// How long one ping waits for its answer. A runner that took the connection but does not
/// answer (a frozen or starved kernel) is not ready yet: the caller pings again or gives up
/// at its own deadline, which a ping waiting for ever would never reach.
const PING_WAIT: Duration = Duration::from_secs(5);
/// The longest answer a ping reads: a pong is a few bytes; more is not one.
const MAX_PONG: u64 = 4096;

/// One ping; Ok when krunner answers `pong` within [`PING_WAIT`].
pub async fn ping(at: impl Into<RunnerAt>) -> std::io::Result<()> {
    ping_within(&at.into(), PING_WAIT).await
}

async fn ping_within(at: &RunnerAt, wait: Duration) -> std::io::Result<()> {
    let answer = async {
        let mut s = connect(at).await?;
        s.write_all(PING).await?;
        let mut line = String::new();
        BufReader::new(s.take(MAX_PONG))
            .read_line(&mut line)
            .await?;
        Ok::<_, std::io::Error>(line)
    };
    let line = tokio::time::timeout(wait, answer).await.map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("no answer to a ping within {}s", wait.as_secs_f32()),
        )
    })??;
    if is_pong(&line) {
        Ok(())
    } else {
        Err(std::io::Error::other(format!("unexpected answer {line:?}")))
    }
}

enum Reading {
    Open(BufReader<Conn>),
    /// The connection ended before `Finished` (and that was said): finish now.
    Gone,
    Done,
}

/// Sends one request line to kernel `kernel_id`'s runner; its event lines become a stream
/// that always ends with `Finished` (a broken connection is said on stderr first).
pub async fn request(
    at: impl Into<RunnerAt>,
    kernel_id: Uuid,
    line: String,
) -> Result<BoxStream<'static, ExecEvent>, AgentError> {
    let mut stream = connect(&at.into())
        .await
        .map_err(|e| runtime("cannot reach the kernel's runner", e))?;
    stream
        .write_all(line.as_bytes())
        .await
        .map_err(|e| runtime("cannot send the request to the kernel's runner", e))?;
    let start = Reading::Open(BufReader::new(stream));
    let events = futures::stream::unfold(start, move |st| async move {
        match st {
            Reading::Open(reader) => Some(next_event(reader, kernel_id).await),
            Reading::Gone => Some((
                ExecEvent::Finished {
                    exit_code: GONE_EXIT_CODE,
                },
                Reading::Done,
            )),
            Reading::Done => None,
        }
    });
    Ok(events.boxed())
}

/// Reads the next event; a broken connection becomes a stderr explanation.
async fn next_event(mut reader: BufReader<Conn>, kernel_id: Uuid) -> (ExecEvent, Reading) {
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let read = (&mut reader)
            .take(MAX_LINE)
            .read_until(b'\n', &mut buf)
            .await;
        let why = match read {
            Ok(0) => "the kernel went away during the execution (its runner closed the connection)"
                .to_string(),
            Ok(_) if buf.last() != Some(&b'\n') => {
                if buf.len() as u64 >= MAX_LINE {
                    "the kernel sent an oversized message; the execution is abandoned".to_string()
                } else {
                    "the kernel went away during the execution (its runner closed the connection)"
                        .to_string()
                }
            }
            Ok(_) => match parse_event(&buf) {
                Some(ev) => {
                    let next = if matches!(ev, ExecEvent::Finished { .. }) {
                        Reading::Done
                    } else {
                        Reading::Open(reader)
                    };
                    return (ev, next);
                }
                None => {
                    tracing::warn!(kernel = %kernel_id, line = %String::from_utf8_lossy(&buf).trim_end(), "ignoring an unknown line from krunner");
                    continue;
                }
            },
            Err(e) => format!("the connection to the kernel broke during the execution: {e}"),
        };
        tracing::warn!(kernel = %kernel_id, %why, "execution ended without finishing");
        return (
            ExecEvent::Stderr {
                data: format!("bai: {why}\n"),
            },
            Reading::Gone,
        );
    }
}

/// The output of a request that must succeed (exit 0): its stdout, or its stderr (else its
/// stdout) as the error.
async fn collect(
    at: impl Into<RunnerAt>,
    kernel_id: Uuid,
    line: String,
) -> Result<Result<String, String>, AgentError> {
    let mut events = request(at, kernel_id, line).await?;
    let (mut out, mut err) = (String::new(), String::new());
    while let Some(ev) = events.next().await {
        match ev {
            ExecEvent::Stdout { data } => out.push_str(&data),
            ExecEvent::Stderr { data } => err.push_str(&data),
            ExecEvent::Finished { exit_code: 0 } => return Ok(Ok(out)),
            ExecEvent::Finished { .. } => break,
            ExecEvent::WaitingInput { .. } => {}
        }
    }
    Ok(Err(if err.trim().is_empty() { out } else { err }))
}

/// Writes one file into the kernel as its user (`place`: `home` or `run`; `append` adds
/// to it), for an agent that shares no disk with the kernel.
pub async fn put(
    at: impl Into<RunnerAt>,
    kernel_id: Uuid,
    place: &str,
    path: &str,
    data: &[u8],
    mode: u32,
    append: bool,
) -> Result<(), AgentError> {
    let line = crate::krunner_proto::put_line(place, path, data, mode, append);
    match collect(at, kernel_id, line).await? {
        Ok(_) => Ok(()),
        Err(why) => Err(AgentError::BadRequest(format!(
            "cannot write {path} into the kernel: {}",
            why.trim().trim_start_matches("krunner: ")
        ))),
    }
}

/// Asks krunner to start an app and waits until it is ready (or refused).
pub async fn start_app(
    at: impl Into<RunnerAt>,
    kernel_id: Uuid,
    name: &str,
) -> Result<(), AgentError> {
    match collect(at, kernel_id, start_app_line(name)?).await? {
        Ok(_) => Ok(()),
        Err(why) => Err(AgentError::BadRequest(format!(
            "the app {name:?} did not start: {}",
            why.trim()
        ))),
    }
}

/// One directory's entries, listed by krunner as the kernel's user inside the kernel, so
/// mounted folders are seen and nothing of the node is.
pub async fn list_files(
    at: impl Into<RunnerAt>,
    kernel_id: Uuid,
    path: &str,
) -> Result<Vec<FileEntry>, AgentError> {
    match collect(at, kernel_id, list_files_line(path)).await? {
        Ok(out) => serde_json::from_str(&out).map_err(|e| {
            AgentError::Runtime(format!("the kernel's runner sent a bad listing: {e}"))
        }),
        Err(why) => Err(AgentError::BadRequest(format!(
            "cannot list {path:?}: {}",
            why.trim()
        ))),
    }
}

/// The tar archive of one path (`{"op":"download"}`), made by krunner as the kernel's user
/// (mounted folders included, no link followed to the node): the base64 chunks decoded as
/// they come, so the archive is held once. A bad path or an archive past krunner's limit is
/// the runner's error text.
pub async fn download(
    at: impl Into<RunnerAt>,
    kernel_id: Uuid,
    path: &str,
) -> Result<Vec<u8>, AgentError> {
    use base64::Engine;
    let mut events = request(at, kernel_id, download_line(path)).await?;
    let (mut out, mut err) = (Vec::new(), String::new());
    while let Some(ev) = events.next().await {
        match ev {
            ExecEvent::Stdout { data } => base64::engine::general_purpose::STANDARD
                .decode_vec(data.as_bytes(), &mut out)
                .map_err(|e| {
                    AgentError::Runtime(format!("the kernel's runner sent a bad archive: {e}"))
                })?,
            ExecEvent::Stderr { data } => err.push_str(&data),
            ExecEvent::Finished { exit_code: 0 } => return Ok(out),
            ExecEvent::Finished { .. } => break,
            ExecEvent::WaitingInput { .. } => {}
        }
    }
    Err(AgentError::BadRequest(format!(
        "cannot download {path:?}: {}",
        err.trim()
    )))
}

/// Each path (relative to /home/work) as its own archive, by [`download`]: how both
/// backends read a kernel's files, as the kernel sees them. The engine's copy of a
/// container's files (Docker's archive API) mounts the container's volumes again from their
/// recorded sources, which a warm-pool kernel's home no longer has once claimed (its
/// directory was renamed to the kernel's), so it is not used.
pub async fn download_all(
    at: impl Into<RunnerAt>,
    kernel_id: Uuid,
    paths: Vec<String>,
) -> Result<Vec<(String, bytes::Bytes)>, AgentError> {
    let at = at.into();
    let mut out = Vec::with_capacity(paths.len());
    for rel in paths {
        let tar = download(at.clone(), kernel_id, &rel).await?;
        out.push((rel, bytes::Bytes::from(tar)));
    }
    Ok(out)
}

/// SIGTERM to the kernel's processes but its runner (`{"op":"terminate"}`): the start of a
/// preemption's grace.
pub async fn terminate(at: impl Into<RunnerAt>, kernel_id: Uuid) -> Result<(), AgentError> {
    collect(at, kernel_id, TERMINATE.to_string())
        .await?
        .map(drop)
        .map_err(|why| AgentError::Runtime(format!("cannot signal the kernel: {}", why.trim())))
}

/// The kernel's counters (`{"op":"stats"}`), read by its runner from its own cgroup and
/// network namespace.
pub async fn stats(at: impl Into<RunnerAt>, kernel_id: Uuid) -> Result<KernelStats, AgentError> {
    #[derive(serde::Deserialize)]
    struct Counters {
        cpu_used_ns: u64,
        mem_bytes: u64,
        net_rx_bytes: u64,
        net_tx_bytes: u64,
        io_read_bytes: u64,
        io_write_bytes: u64,
    }
    let out = collect(at, kernel_id, STATS.to_string())
        .await?
        .map_err(|why| AgentError::Runtime(format!("the kernel's counters: {}", why.trim())))?;
    let c: Counters = serde_json::from_str(&out)
        .map_err(|e| AgentError::Runtime(format!("the kernel's runner sent bad counters: {e}")))?;
    Ok(KernelStats {
        kernel_id,
        at_ms: bai_core::stats::now_ms(),
        cpu_used_ns: c.cpu_used_ns,
        mem_bytes: c.mem_bytes,
        net_rx_bytes: c.net_rx_bytes,
        net_tx_bytes: c.net_tx_bytes,
        io_read_bytes: c.io_read_bytes,
        io_write_bytes: c.io_write_bytes,
        devices: Vec::new(),
    })
}

/// Binds a pool kernel's runner to its session: the bind request with the session's whole
/// environment over the runner's socket; its answer must be `finished` 0.
pub async fn bind(at: impl Into<RunnerAt>, env: &[String]) -> Result<(), AgentError> {
    let line = crate::krunner_proto::bind_line(env);
    let io = |e: std::io::Error| AgentError::Runtime(format!("cannot bind the pool kernel: {e}"));
    let mut s = connect(&at.into()).await.map_err(io)?;
    s.write_all(line.as_bytes()).await.map_err(io)?;
    let mut lines = BufReader::new(s).lines();
    while let Some(l) = lines.next_line().await.map_err(io)? {
        if let Some(bai_core::agent::ExecEvent::Finished { exit_code }) =
            crate::krunner_proto::parse_event(l.as_bytes())
        {
            return if exit_code == 0 {
                Ok(())
            } else {
                Err(AgentError::Runtime(format!(
                    "the pool kernel's runner refused the binding ({exit_code})"
                )))
            };
        }
    }
    Err(AgentError::Runtime(
        "the pool kernel's runner closed without an answer".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::UnixListener;

    /// A peer on a socket in a fresh directory that answers each connection with `answer`
    /// (or, with `None`, takes it and never answers).
    fn peer(answer: Option<Vec<u8>>) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("krunner.sock");
        let listener = UnixListener::bind(&path).unwrap();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((mut s, _)) = listener.accept().await {
                match &answer {
                    Some(a) => {
                        let _ = s.write_all(a).await;
                    }
                    None => held.push(s),
                }
            }
        });
        (dir, path)
    }

    #[tokio::test]
    async fn a_pong_is_an_answer() {
        let (_dir, path) = peer(Some(b"{\"t\":\"pong\"}\n".to_vec()));
        ping(&path).await.unwrap();
    }

    #[tokio::test]
    async fn a_runner_that_never_answers_fails_the_ping_instead_of_holding_it() {
        let (_dir, path) = peer(None);
        let e = ping_within(&RunnerAt::from(&path), Duration::from_millis(50))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut, "{e}");
    }

    #[tokio::test]
    async fn over_the_network_a_connection_opens_with_the_token() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = tokio::spawn(async move {
            let (s, _) = listener.accept().await.unwrap();
            let mut lines = BufReader::new(s);
            let (mut token, mut request) = (String::new(), String::new());
            lines.read_line(&mut token).await.unwrap();
            lines.read_line(&mut request).await.unwrap();
            lines
                .into_inner()
                .write_all(b"{\"t\":\"pong\"}\n")
                .await
                .unwrap();
            (token, request)
        });
        let at = RunnerAt::Network {
            addr,
            token: "t0k3n".into(),
        };
        ping(at).await.unwrap();
        let (token, request) = seen.await.unwrap();
        assert_eq!(token, "t0k3n\n");
        assert_eq!(request.as_bytes(), PING);
    }

    #[tokio::test]
    async fn an_endless_answer_is_not_a_pong_and_is_not_read_whole() {
        let (_dir, path) = peer(Some(vec![b'x'; 1 << 20]));
        let e = ping(&path).await.unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("unexpected answer"), "{text}");
        assert!(
            text.len() < 2 * MAX_PONG as usize,
            "read past the limit: {} bytes",
            text.len()
        );
    }
}
