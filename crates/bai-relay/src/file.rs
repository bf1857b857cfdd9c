//! Socket ↔ file transfers for data-folder uploads and downloads, on a thread of their own
//! with the socket in blocking mode (its timeouts bound every wait): a file is sent with
//! `sendfile(2)` and received with `splice(2)` through a pipe, so the only copy left is the
//! kernel's into the page cache. When the kernel refuses (a file system without splice
//! support), plain reads and writes take over.

use crate::Pipe;
use rustix::pipe::SpliceFlags;
use std::fs::File;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::FileExt;

/// The most bytes one `sendfile` call is asked for (progress is reported per call).
const SEND_CHUNK: usize = 8 << 20;
/// Buffer of the read/write fallback.
const COPY_BUF: usize = 1 << 20;
/// Received bytes are handed to the disk in steps of this size (see [`WriteBehind`]).
const WRITE_BEHIND_STEP: u64 = 16 << 20;

/// Write-behind for large received files: every [`WRITE_BEHIND_STEP`] the written range is
/// handed to the disk (`posix_fadvise(DONTNEED)` starts its writeback without waiting), and
/// the range a few steps back, written out by then, leaves the page cache. A transfer then
/// neither ends with gigabytes of dirty pages for a later `sync` to write (the disk works
/// while the bytes arrive), nor fills the page cache with a file nobody is reading.
struct WriteBehind<'a> {
    file: &'a File,
    /// Up to where writeback was started.
    started: u64,
    /// Up to where the file is written.
    end: u64,
}

impl<'a> WriteBehind<'a> {
    fn new(file: &'a File, offset: u64) -> WriteBehind<'a> {
        WriteBehind {
            file,
            started: offset,
            end: offset,
        }
    }

    /// Bytes up to `end` are written.
    fn written(&mut self, end: u64) {
        self.end = end;
        if end >= self.started + WRITE_BEHIND_STEP {
            self.advise(self.started, end);
            // Pages whose writeback finished leave the cache; others stay (no harm).
            let old = self.started.saturating_sub(4 * WRITE_BEHIND_STEP);
            if old > 0 {
                self.advise(0, old);
            }
            self.started = end;
        }
    }

    /// The transfer ended: the rest goes to the disk too.
    fn finish(&mut self) {
        if self.end > self.started {
            self.advise(self.started, self.end);
            self.started = self.end;
        }
    }

    fn advise(&self, from: u64, to: u64) {
        // Advice only: a file system that ignores it loses nothing.
        let _ = rustix::fs::fadvise(
            self.file,
            from,
            std::num::NonZeroU64::new(to - from),
            rustix::fs::Advice::DontNeed,
        );
    }
}

/// Timeouts turn into errors that say what happened.
fn timed_out(e: io::Error, what: &str) -> io::Error {
    if matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    ) {
        io::Error::new(io::ErrorKind::TimedOut, format!("{what} timed out"))
    } else {
        e
    }
}

/// Sends `len` bytes of `file` from `offset` to the blocking `sock`; `on_chunk(n)` after each
/// chunk. Fails with `UnexpectedEof` when the file is shorter.
pub fn send_file(
    sock: &TcpStream,
    file: &File,
    offset: u64,
    len: u64,
    mut on_chunk: impl FnMut(usize),
) -> io::Result<u64> {
    let mut off = offset;
    let mut left = len;
    while left > 0 {
        let want = usize::try_from(left).unwrap_or(usize::MAX).min(SEND_CHUNK);
        let n = match rustix::fs::sendfile(sock, file, Some(&mut off), want) {
            Ok(n) => n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) if off == offset => {
                return copy_file_to_socket(sock, file, offset, len, on_chunk);
            }
            Err(e) => return Err(timed_out(e.into(), "sending")),
        };
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("the file ended after {} of {len} bytes", len - left),
            ));
        }
        left -= n as u64;
        on_chunk(n);
    }
    Ok(len)
}

fn copy_file_to_socket(
    mut sock: &TcpStream,
    file: &File,
    offset: u64,
    len: u64,
    mut on_chunk: impl FnMut(usize),
) -> io::Result<u64> {
    let mut buf = vec![0u8; COPY_BUF];
    let mut done = 0u64;
    while done < len {
        let want = usize::try_from(len - done)
            .unwrap_or(usize::MAX)
            .min(buf.len());
        let slot = buf.get_mut(..want).unwrap_or_default();
        let n = file.read_at(slot, offset + done)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("the file ended after {done} of {len} bytes"),
            ));
        }
        sock.write_all(slot.get(..n).unwrap_or_default())
            .map_err(|e| timed_out(e, "sending"))?;
        done += n as u64;
        on_chunk(n);
    }
    Ok(done)
}

/// Receives from the blocking `sock` into `file` at `offset`: `len` bytes, or everything up
/// to the end of the stream when `len` is None; `on_chunk(n)` after each chunk written.
/// Returns how many bytes were written (fewer than `len` when the peer ended early). The
/// file is written behind (see [`WriteBehind`]).
pub fn recv_file(
    sock: &TcpStream,
    file: &File,
    offset: u64,
    len: Option<u64>,
    on_chunk: impl FnMut(usize),
) -> io::Result<u64> {
    let pipe = match Pipe::blocking() {
        Ok(p) => p,
        Err(_) => return copy_socket_to_file(sock, file, offset, len, on_chunk),
    };
    let mut behind = WriteBehind::new(file, offset);
    let r = splice_socket_to_file(sock, file, &pipe, offset, len, &mut behind, on_chunk);
    behind.finish();
    r
}

/// [`recv_file`] of `len` bytes at `offset` of which the first few already came in `early`
/// (read together with the reply or request head): those are written first, then the rest is
/// received. `on_chunk` counts both. Returns how many bytes were written in all.
pub fn recv_file_after(
    sock: &TcpStream,
    file: &File,
    offset: u64,
    early: &[u8],
    len: u64,
    mut on_chunk: impl FnMut(usize),
) -> io::Result<u64> {
    let first = early.len().min(usize::try_from(len).unwrap_or(usize::MAX));
    let head = early.get(..first).unwrap_or_default();
    file.write_all_at(head, offset)?;
    on_chunk(first);
    let first = first as u64;
    let rest = recv_file(sock, file, offset + first, Some(len - first), on_chunk)?;
    Ok(first + rest)
}

/// A connection handed from tokio to a transfer thread: blocking, every read and write
/// bounded by `wait`.
pub fn into_blocking(
    stream: tokio::net::TcpStream,
    wait: std::time::Duration,
) -> io::Result<TcpStream> {
    let s = stream.into_std()?;
    s.set_nonblocking(false)?;
    s.set_read_timeout(Some(wait))?;
    s.set_write_timeout(Some(wait))?;
    Ok(s)
}

fn splice_socket_to_file(
    sock: &TcpStream,
    file: &File,
    pipe: &Pipe,
    offset: u64,
    len: Option<u64>,
    behind: &mut WriteBehind<'_>,
    mut on_chunk: impl FnMut(usize),
) -> io::Result<u64> {
    let mut off = offset;
    let mut done = 0u64;
    loop {
        let Some(want) = next_chunk(len, done, pipe.size) else {
            return Ok(done);
        };
        let n = match rustix::pipe::splice(sock, None, &pipe.write, None, want, SpliceFlags::MOVE) {
            Ok(n) => n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(timed_out(e.into(), "receiving")),
        };
        if n == 0 {
            return Ok(done);
        }
        let mut left = n;
        while left > 0 {
            match rustix::pipe::splice(
                &pipe.read,
                None,
                file,
                Some(&mut off),
                left,
                SpliceFlags::MOVE,
            ) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::WriteZero,
                        "the file took no bytes",
                    ));
                }
                Ok(m) => left -= m,
                Err(rustix::io::Errno::INTR) => {}
                Err(rustix::io::Errno::INVAL) if done == 0 && left == n => {
                    // This file system cannot splice: move what the pipe holds by hand, then
                    // go on with reads and writes.
                    let mut buf = vec![0u8; n];
                    let mut got = 0;
                    while got < n {
                        let k =
                            rustix::io::read(&pipe.read, buf.get_mut(got..).unwrap_or_default())?;
                        if k == 0 {
                            break;
                        }
                        got += k;
                    }
                    file.write_all_at(buf.get(..got).unwrap_or_default(), off)?;
                    on_chunk(got);
                    let rest = len.map(|l| l - got as u64);
                    let more = copy_socket_to_file(sock, file, off + got as u64, rest, on_chunk)?;
                    return Ok(got as u64 + more);
                }
                Err(e) => return Err(e.into()),
            }
        }
        done += n as u64;
        behind.written(off);
        on_chunk(n);
    }
}

fn copy_socket_to_file(
    mut sock: &TcpStream,
    file: &File,
    offset: u64,
    len: Option<u64>,
    mut on_chunk: impl FnMut(usize),
) -> io::Result<u64> {
    let mut buf = vec![0u8; COPY_BUF];
    let mut done = 0u64;
    loop {
        let Some(want) = next_chunk(len, done, buf.len()) else {
            return Ok(done);
        };
        let slot = buf.get_mut(..want).unwrap_or_default();
        let n = sock.read(slot).map_err(|e| timed_out(e, "receiving"))?;
        if n == 0 {
            return Ok(done);
        }
        file.write_all_at(slot.get(..n).unwrap_or_default(), offset + done)?;
        done += n as u64;
        on_chunk(n);
    }
}

/// How much to move next: at most `cap`, and no more than what is left of `len` bytes when
/// the length is known; None once `done` reached it.
fn next_chunk(len: Option<u64>, done: u64, cap: usize) -> Option<usize> {
    match len {
        Some(l) if l <= done => None,
        Some(l) => Some(usize::try_from(l - done).unwrap_or(usize::MAX).min(cap)),
        None => Some(cap),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        (a, b)
    }

    #[test]
    fn chunks_stop_at_the_known_length() {
        assert_eq!(next_chunk(None, 10, 64), Some(64));
        assert_eq!(next_chunk(Some(100), 90, 64), Some(10));
        assert_eq!(next_chunk(Some(100), 0, 64), Some(64));
        assert_eq!(next_chunk(Some(100), 100, 64), None);
        assert_eq!(next_chunk(Some(0), 0, 64), None);
    }

    #[test]
    fn files_go_through_sockets_intact() {
        let dir = std::env::temp_dir().join(format!("bai-relay-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src_path = dir.join("src");
        let data: Vec<u8> = (0..(5 << 20) + 123)
            .map(|i: usize| (i * 31 + i / 777) as u8)
            .collect();
        std::fs::write(&src_path, &data).unwrap();
        let src = File::open(&src_path).unwrap();
        let dst_path = dir.join("dst");
        let dst = File::create(&dst_path).unwrap();
        dst.write_all_at(b"HEAD", 0).unwrap();
        let (a, b) = pair();
        let sent = std::thread::spawn(move || {
            let n = send_file(&a, &src, 10, (data.len() - 10) as u64, |_| {}).unwrap();
            drop(a);
            n
        });
        let mut chunks = 0u64;
        // Up to the end of the stream, written after the 4 bytes already there.
        let got = recv_file(&b, &dst, 4, None, |n| chunks += n as u64).unwrap();
        assert_eq!(sent.join().unwrap(), got);
        assert_eq!(chunks, got);
        let back = std::fs::read(&dst_path).unwrap();
        let data = std::fs::read(&src_path).unwrap();
        assert_eq!(&back[..4], b"HEAD");
        assert!(back[4..] == data[10..]);

        // An exact length stops there, even though more follows.
        let (mut a, b) = pair();
        a.write_all(b"0123456789").unwrap();
        let dst2 = File::create(dir.join("dst2")).unwrap();
        assert_eq!(recv_file(&b, &dst2, 0, Some(6), |_| {}).unwrap(), 6);
        assert_eq!(std::fs::read(dir.join("dst2")).unwrap(), b"012345");
        // A file shorter than promised is an error.
        let short = File::open(dir.join("dst2")).unwrap();
        let e = send_file(&a, &short, 0, 100, |_| {}).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);

        // Bytes that came early are written first and counted; the rest is received; more
        // early bytes than the length are left alone.
        let (mut a, b) = pair();
        a.write_all(b"cdefXYZ").unwrap();
        let dst3 = File::create(dir.join("dst3")).unwrap();
        let mut counted = 0;
        let got = recv_file_after(&b, &dst3, 2, b"ab", 6, |n| counted += n).unwrap();
        assert_eq!((got, counted), (6, 6));
        assert_eq!(&std::fs::read(dir.join("dst3")).unwrap()[2..], b"abcdef");
        let got = recv_file_after(&b, &dst3, 0, b"0123456789", 4, |_| {}).unwrap();
        assert_eq!(got, 4);
        assert_eq!(&std::fs::read(dir.join("dst3")).unwrap()[..4], b"0123");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
