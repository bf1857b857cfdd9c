//! [`Link`]: calls in both directions over one connection. A call opens a stream; its answer
//! is any number of items and an end. One-way events go on stream 0. A writer task owns the
//! write half; a reader task hands each frame to the stream waiting for it. Pings go out
//! every `keepalive`; a link that hears nothing for three of them is closed, and every call
//! still waiting gets [`LinkError::Closed`].

use crate::frame::{self, Frame, Kind};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, watch};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    #[error("the link to the peer is closed")]
    Closed,
    #[error("the peer sent a malformed message: {0}")]
    Malformed(String),
}

/// Which end of the connection this is (decides the parity of stream ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The side that dialed (the agent): odd stream ids.
    Dialer,
    /// The side that accepted (the manager): even stream ids.
    Listener,
}

/// What the peer sends unasked.
#[derive(Debug)]
pub enum Inbound {
    Call { body: Vec<u8>, answer: Answer },
    Event(Vec<u8>),
}

/// The answering end of a call the peer made.
#[derive(Debug)]
pub struct Answer {
    stream: u64,
    out: mpsc::Sender<Frame>,
}

impl Answer {
    /// One item of the answer; false once the link is gone.
    pub async fn item(&self, body: Vec<u8>) -> bool {
        self.out
            .send(Frame {
                stream: self.stream,
                kind: Kind::Item,
                body,
            })
            .await
            .is_ok()
    }

    pub async fn end(self) {
        let _ = self
            .out
            .send(Frame {
                stream: self.stream,
                kind: Kind::End,
                body: Vec::new(),
            })
            .await;
    }
}

type Waiting = Arc<Mutex<HashMap<u64, mpsc::Sender<Vec<u8>>>>>;

/// One end of a link. Cheap to clone.
#[derive(Clone)]
pub struct Link {
    out: mpsc::Sender<Frame>,
    waiting: Waiting,
    next: Arc<AtomicU64>,
    closed: watch::Receiver<bool>,
    closer: Arc<watch::Sender<bool>>,
}

fn lock<T>(lock: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    lock.lock().unwrap_or_else(|p| p.into_inner())
}

impl Link {
    /// Starts the link's tasks over `io`; returns the link and what the peer sends unasked.
    pub fn start<IO>(io: IO, side: Side, keepalive: Duration) -> (Link, mpsc::Receiver<Inbound>)
    where
        IO: AsyncRead + AsyncWrite + Send + 'static,
    {
        let (mut rd, mut wr) = tokio::io::split(io);
        let (out, mut out_rx) = mpsc::channel::<Frame>(256);
        let (in_tx, in_rx) = mpsc::channel::<Inbound>(256);
        let (closed_tx, closed) = watch::channel(false);
        let closed_tx = Arc::new(closed_tx);
        let waiting: Waiting = Arc::new(Mutex::new(HashMap::new()));
        let heard = Arc::new(AtomicU64::new(0));
        // Writer, with the keepalive pings. When it stops it shuts the connection down, so
        // the peer's reader sees the end.
        let done = closed_tx.clone();
        let ticks_heard = heard.clone();
        let mut writer_closed = closed.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(keepalive);
            tick.tick().await;
            let mut last_heard = 0;
            let mut silent = 0;
            loop {
                let f = tokio::select! {
                    f = out_rx.recv() => match f { Some(f) => f, None => break },
                    _ = tick.tick() => {
                        let h = ticks_heard.load(Ordering::Relaxed);
                        silent = if h == last_heard { silent + 1 } else { 0 };
                        last_heard = h;
                        if silent >= 3 {
                            tracing::warn!("the peer has been silent for three keepalives; closing the link");
                            break;
                        }
                        Frame { stream: 0, kind: Kind::Ping, body: Vec::new() }
                    }
                    _ = writer_closed.changed() => break,
                };
                if frame::write(&mut wr, &f).await.is_err() {
                    break;
                }
            }
            let _ = done.send(true);
            use tokio::io::AsyncWriteExt;
            let _ = tokio::time::timeout(Duration::from_secs(5), wr.shutdown()).await;
        });
        // Reader.
        let link = Link {
            out: out.clone(),
            waiting: waiting.clone(),
            next: Arc::new(AtomicU64::new(match side {
                Side::Dialer => 1,
                Side::Listener => 2,
            })),
            closed: closed.clone(),
            closer: closed_tx.clone(),
        };
        let done = closed_tx;
        let mut reader_closed = closed.clone();
        tokio::spawn(async move {
            loop {
                let read = tokio::select! {
                    r = frame::read(&mut rd) => r,
                    _ = reader_closed.wait_for(|c| *c) => break,
                };
                let f = match read {
                    Ok(Some(f)) => f,
                    Ok(None) => break,
                    Err(e) => {
                        tracing::debug!(error = %e, "the link broke");
                        break;
                    }
                };
                heard.fetch_add(1, Ordering::Relaxed);
                match f.kind {
                    Kind::Ping => {
                        let _ = out
                            .send(Frame {
                                stream: 0,
                                kind: Kind::Pong,
                                body: Vec::new(),
                            })
                            .await;
                    }
                    Kind::Pong => {}
                    Kind::Event => {
                        if in_tx.send(Inbound::Event(f.body)).await.is_err() {
                            break;
                        }
                    }
                    Kind::Call => {
                        let answer = Answer {
                            stream: f.stream,
                            out: out.clone(),
                        };
                        if in_tx
                            .send(Inbound::Call {
                                body: f.body,
                                answer,
                            })
                            .await
                            .is_err()
                        {
                            break;
                        }
                    }
                    Kind::Item => {
                        let tx = lock(&waiting).get(&f.stream).cloned();
                        if let Some(tx) = tx
                            && tx.send(f.body).await.is_err()
                        {
                            lock(&waiting).remove(&f.stream);
                        }
                    }
                    Kind::End | Kind::Cancel => {
                        lock(&waiting).remove(&f.stream);
                    }
                }
            }
            // Every waiting call ends: dropping its sender closes its receiver.
            lock(&waiting).clear();
            let _ = done.send(true);
        });
        (link, in_rx)
    }

    /// Opens a call; the answer's items arrive on the receiver, which ends with the answer
    /// (or with the link).
    pub async fn call_stream(&self, body: Vec<u8>) -> Result<mpsc::Receiver<Vec<u8>>, LinkError> {
        if self.is_closed() {
            return Err(LinkError::Closed);
        }
        let stream = self.next.fetch_add(2, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel(64);
        lock(&self.waiting).insert(stream, tx);
        let sent = self
            .out
            .send(Frame {
                stream,
                kind: Kind::Call,
                body,
            })
            .await;
        if sent.is_err() {
            lock(&self.waiting).remove(&stream);
            return Err(LinkError::Closed);
        }
        Ok(rx)
    }

    /// A call with one answer.
    pub async fn call(&self, body: Vec<u8>) -> Result<Vec<u8>, LinkError> {
        let mut rx = self.call_stream(body).await?;
        rx.recv().await.ok_or(LinkError::Closed)
    }

    /// A one-way message.
    pub async fn event(&self, body: Vec<u8>) -> Result<(), LinkError> {
        self.out
            .send(Frame {
                stream: 0,
                kind: Kind::Event,
                body,
            })
            .await
            .map_err(|_| LinkError::Closed)
    }

    /// Whether `other` is a handle to this same link.
    pub fn same(&self, other: &Link) -> bool {
        Arc::ptr_eq(&self.next, &other.next)
    }

    pub fn is_closed(&self) -> bool {
        *self.closed.borrow()
    }

    /// Resolves when the link is closed (by either side, a broken connection or silence).
    pub async fn closed(&self) {
        let mut c = self.closed.clone();
        while !*c.borrow() {
            if c.changed().await.is_err() {
                return;
            }
        }
    }

    /// Closes the link: waiting calls end, the connection is shut down.
    pub fn close(&self) {
        let _ = self.closer.send(true);
        lock(&self.waiting).clear();
    }
}
