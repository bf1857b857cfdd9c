//! Byte relays that keep the bytes out of this process's memory (Linux).
//!
//! Each direction of a tunnel moves bytes with `splice(2)` from the source socket into a pipe
//! and from the pipe into the destination socket, waiting on tokio's readiness in between: the
//! kernel hands pages over instead of copying them through a user-space buffer. When no pipe
//! can be made (out of file descriptors), a direction falls back to a read/write loop.
#![forbid(unsafe_code)]

use rustix::pipe::{PipeFlags, SpliceFlags};
use std::convert::Infallible;
use std::io;
use std::os::fd::OwnedFd;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, Interest};
use tokio::net::TcpStream;

pub mod dial;
pub mod exchange;
pub mod file;

pub use dial::{DIAL_WAIT, dial, dial_while_starting};
pub use exchange::{Exchange, Waiting, tunnel_watched};

/// The capacity asked for each pipe. Unprivileged processes may grow a pipe up to
/// `/proc/sys/fs/pipe-max-size` (1 MiB by default); a smaller grant is used as it is.
const PIPE_SIZE: usize = 1 << 20;
/// Buffer of the read/write fallback.
const COPY_BUF: usize = 256 * 1024;
/// Neither end of a splice waits: tokio's readiness does the waiting.
const FLAGS: SpliceFlags = SpliceFlags::MOVE.union(SpliceFlags::NONBLOCK);

/// A non-blocking pipe used as the kernel-side buffer of one direction.
#[derive(Debug)]
pub struct Pipe {
    read: OwnedFd,
    write: OwnedFd,
    size: usize,
}

impl Pipe {
    /// A non-blocking pipe (for relays driven by tokio's readiness).
    pub fn new() -> io::Result<Pipe> {
        Pipe::with_flags(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK)
    }

    /// A blocking pipe (for transfers on a thread of their own).
    pub fn blocking() -> io::Result<Pipe> {
        Pipe::with_flags(PipeFlags::CLOEXEC)
    }

    fn with_flags(flags: PipeFlags) -> io::Result<Pipe> {
        let (read, write) = rustix::pipe::pipe_with(flags)?;
        let size = match rustix::pipe::fcntl_setpipe_size(&write, PIPE_SIZE) {
            Ok(n) => n,
            Err(_) => rustix::pipe::fcntl_getpipe_size(&write)?,
        };
        Ok(Pipe {
            read,
            write,
            size: size.max(4096),
        })
    }

    /// How many bytes the pipe holds at most.
    pub fn capacity(&self) -> usize {
        self.size
    }
}

/// Moves bytes from `src` to `dst` through `pipe` until `src` ends; `on_chunk(n)` is called
/// after every chunk handed to `dst`. Returns the number of bytes moved. Shuts nothing down.
pub async fn splice_tcp(
    src: &TcpStream,
    dst: &TcpStream,
    pipe: &Pipe,
    mut on_chunk: impl FnMut(usize),
) -> io::Result<u64> {
    let mut total = 0u64;
    loop {
        let n = src
            .async_io(Interest::READABLE, || {
                rustix::pipe::splice(src, None, &pipe.write, None, pipe.size, FLAGS)
                    .map_err(io::Error::from)
            })
            .await?;
        if n == 0 {
            return Ok(total);
        }
        drain_pipe(pipe, dst, n).await?;
        total += n as u64;
        on_chunk(n);
    }
}

/// Writes the `len` bytes waiting in `pipe` to `dst`.
async fn drain_pipe(pipe: &Pipe, dst: &TcpStream, len: usize) -> io::Result<()> {
    let mut left = len;
    while left > 0 {
        let m = dst
            .async_io(Interest::WRITABLE, || {
                rustix::pipe::splice(&pipe.read, None, dst, None, left, FLAGS)
                    .map_err(io::Error::from)
            })
            .await?;
        if m == 0 {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                "the destination socket took no bytes",
            ));
        }
        left -= m;
    }
    Ok(())
}

/// Moves bytes from `src` to `dst` with a buffer in user space (the fallback).
pub async fn copy_tcp(
    src: &TcpStream,
    dst: &TcpStream,
    mut on_chunk: impl FnMut(usize),
) -> io::Result<u64> {
    let mut buf = vec![0u8; COPY_BUF];
    let mut total = 0u64;
    loop {
        let n = src
            .async_io(Interest::READABLE, || src.try_read(&mut buf))
            .await?;
        if n == 0 {
            return Ok(total);
        }
        write_all_tcp(dst, buf.get(..n).unwrap_or_default()).await?;
        total += n as u64;
        on_chunk(n);
    }
}

/// Moves bytes from `src` to `dst` until `src` ends: [`splice_tcp`] through a pipe of its
/// own, or [`copy_tcp`] when no pipe can be made.
pub async fn pump(
    src: &TcpStream,
    dst: &TcpStream,
    on_chunk: impl FnMut(usize),
) -> io::Result<u64> {
    match Pipe::new() {
        Ok(pipe) => splice_tcp(src, dst, &pipe, on_chunk).await,
        Err(_) => copy_tcp(src, dst, on_chunk).await,
    }
}

/// Writes all of `buf` to `dst`.
pub async fn write_all_tcp(dst: &TcpStream, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        let n = dst
            .async_io(Interest::WRITABLE, || dst.try_write(buf))
            .await?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                "the socket took no bytes",
            ));
        }
        buf = buf.get(n..).unwrap_or_default();
    }
    Ok(())
}

/// Ends the sending side of `sock` (the peer reads its end); the socket stays open for reading.
pub fn shutdown_write(sock: &TcpStream) -> io::Result<()> {
    match rustix::net::shutdown(sock, rustix::net::Shutdown::Write) {
        Ok(()) | Err(rustix::io::Errno::NOTCONN) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Joins the user's connection and the app's: bytes flow both ways until the app's side
/// ends (then the user's side reads its end). The user's side ending (or failing) only ends
/// the app's input, so the app can still answer. `on_up(n)` counts bytes that reached the
/// app, `on_down(n)` bytes that reached the user. Returns how the app-to-user direction ended.
pub async fn tunnel(
    user: &TcpStream,
    app: &TcpStream,
    on_up: impl FnMut(usize),
    on_down: impl FnMut(usize),
) -> io::Result<u64> {
    let up = async {
        let _ = pump(user, app, on_up).await;
        let _ = shutdown_write(app);
        std::future::pending::<Infallible>().await
    };
    let down = async {
        let r = pump(app, user, on_down).await;
        let _ = shutdown_write(user);
        r
    };
    tokio::select! {
        r = down => r,
        never = up => match never {},
    }
}

/// [`tunnel`] for any byte streams (buffers in user space): the fallback when the user's
/// connection is not a plain TCP socket.
pub async fn tunnel_io<U, A>(
    user: U,
    app: A,
    on_up: impl FnMut(usize),
    on_down: impl FnMut(usize),
) -> io::Result<u64>
where
    U: AsyncRead + AsyncWrite,
    A: AsyncRead + AsyncWrite,
{
    let (mut ur, mut uw) = tokio::io::split(user);
    let (mut ar, mut aw) = tokio::io::split(app);
    let up = async {
        let _ = copy_io(&mut ur, &mut aw, on_up).await;
        let _ = aw.shutdown().await;
        std::future::pending::<Infallible>().await
    };
    let down = async {
        let r = copy_io(&mut ar, &mut uw, on_down).await;
        let _ = uw.shutdown().await;
        r
    };
    tokio::select! {
        r = down => r,
        never = up => match never {},
    }
}

/// Copies `src` into `dst` until `src` ends, calling `on_chunk` per chunk written.
pub async fn copy_io<R, W>(
    src: &mut R,
    dst: &mut W,
    mut on_chunk: impl FnMut(usize),
) -> io::Result<u64>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf = vec![0u8; COPY_BUF];
    let mut total = 0u64;
    loop {
        let n = src.read(&mut buf).await?;
        if n == 0 {
            dst.flush().await?;
            return Ok(total);
        }
        dst.write_all(buf.get(..n).unwrap_or_default()).await?;
        total += n as u64;
        on_chunk(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    use tokio::net::TcpListener;

    /// A connected pair of sockets.
    async fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
        let (b, _) = l.accept().await.unwrap();
        (a, b)
    }

    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + i / 4093) as u8).collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_tunnel_carries_both_ways_and_ends_with_the_app() {
        // user_end <-> [user | relay | app] <-> app_end
        let (mut user_end, user) = pair().await;
        let (app, mut app_end) = pair().await;
        let up = Arc::new(AtomicU64::new(0));
        let down = Arc::new(AtomicU64::new(0));
        let (u2, d2) = (up.clone(), down.clone());
        let relay = tokio::spawn(async move {
            tunnel(
                &user,
                &app,
                |n| {
                    u2.fetch_add(n as u64, Ordering::Relaxed);
                },
                |n| {
                    d2.fetch_add(n as u64, Ordering::Relaxed);
                },
            )
            .await
        });
        let to_app = pattern(24 << 20);
        let to_user: Vec<u8> = pattern(40 << 20).into_iter().rev().collect();
        let sent = to_app.clone();
        let user_side = tokio::spawn(async move {
            let (mut r, mut w) = user_end.split();
            let write = async {
                w.write_all(&sent).await.unwrap();
                // Half-close: the app still answers after the user's side ends.
                w.shutdown().await.unwrap();
            };
            let mut got = Vec::new();
            let read = r.read_to_end(&mut got);
            let (_, n) = tokio::join!(write, read);
            n.unwrap();
            got
        });
        let mut got = Vec::new();
        app_end.read_to_end(&mut got).await.unwrap();
        assert!(got == to_app, "the app got the user's bytes intact");
        app_end.write_all(&to_user).await.unwrap();
        app_end.shutdown().await.unwrap();
        let back = user_side.await.unwrap();
        assert!(back == to_user, "the user got the app's bytes intact");
        assert_eq!(relay.await.unwrap().unwrap(), to_user.len() as u64);
        assert_eq!(up.load(Ordering::Relaxed), to_app.len() as u64);
        assert_eq!(down.load(Ordering::Relaxed), to_user.len() as u64);
    }

    #[tokio::test]
    async fn the_app_ending_ends_the_tunnel_while_the_user_keeps_its_side_open() {
        let (mut user_end, user) = pair().await;
        let (app, mut app_end) = pair().await;
        let relay = tokio::spawn(async move { tunnel(&user, &app, |_| {}, |_| {}).await });
        app_end.write_all(b"bye").await.unwrap();
        drop(app_end);
        assert_eq!(relay.await.unwrap().unwrap(), 3);
        let mut got = Vec::new();
        user_end.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, b"bye");
    }

    #[tokio::test]
    async fn the_fallbacks_carry_bytes_intact() {
        let (mut a, b) = pair().await;
        let (c, mut d) = pair().await;
        let data = pattern(3 << 20);
        let sent = data.clone();
        let writer = tokio::spawn(async move {
            a.write_all(&sent).await.unwrap();
            a.shutdown().await.unwrap();
        });
        let copy = tokio::spawn(async move {
            let n = copy_tcp(&b, &c, |_| {}).await.unwrap();
            shutdown_write(&c).unwrap();
            n
        });
        let mut got = Vec::new();
        d.read_to_end(&mut got).await.unwrap();
        writer.await.unwrap();
        assert_eq!(copy.await.unwrap(), data.len() as u64);
        assert!(got == data);

        let (mut user_end, user) = pair().await;
        let (app, mut app_end) = pair().await;
        let relay = tokio::spawn(async move { tunnel_io(user, app, |_| {}, |_| {}).await });
        user_end.write_all(b"ping").await.unwrap();
        let mut four = [0u8; 4];
        app_end.read_exact(&mut four).await.unwrap();
        assert_eq!(&four, b"ping");
        app_end.write_all(b"pong").await.unwrap();
        drop(app_end);
        let mut got = Vec::new();
        user_end.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, b"pong");
        assert_eq!(relay.await.unwrap().unwrap(), 4);
    }
}
