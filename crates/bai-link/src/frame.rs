//! Frames on the link: `u32` length (of what follows), `u64` stream id, `u8` kind, body.
//! Streams opened by the dialing side (the agent) are odd, by the listening side even, so
//! both may open streams at once without clashing.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Largest body accepted (file transfers are chunked below it).
pub const MAX_BODY: usize = 64 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Opens a stream with a request.
    Call = 0,
    /// One item of a stream's answer.
    Item = 1,
    /// The answer is complete.
    End = 2,
    /// A one-way message (stream 0).
    Event = 3,
    /// Keepalive; answered by `Pong`.
    Ping = 4,
    Pong = 5,
    /// The caller gave up on the stream (e.g. stopped reading an execution).
    Cancel = 6,
}

impl Kind {
    fn from_u8(b: u8) -> Option<Kind> {
        Some(match b {
            0 => Kind::Call,
            1 => Kind::Item,
            2 => Kind::End,
            3 => Kind::Event,
            4 => Kind::Ping,
            5 => Kind::Pong,
            6 => Kind::Cancel,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub stream: u64,
    pub kind: Kind,
    pub body: Vec<u8>,
}

pub async fn write<W: AsyncWrite + Unpin>(w: &mut W, f: &Frame) -> std::io::Result<()> {
    let len =
        u32::try_from(f.body.len() + 9).map_err(|_| std::io::Error::other("frame too large"))?;
    let mut head = [0u8; 13];
    head[..4].copy_from_slice(&len.to_be_bytes());
    head[4..12].copy_from_slice(&f.stream.to_be_bytes());
    head[12] = f.kind as u8;
    w.write_all(&head).await?;
    w.write_all(&f.body).await
}

/// The next frame; `Ok(None)` at a clean end of the connection.
pub async fn read<R: AsyncRead + Unpin>(r: &mut R) -> std::io::Result<Option<Frame>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_be_bytes(len) as usize;
    if !(9..=MAX_BODY + 9).contains(&len) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("bad frame length {len}"),
        ));
    }
    let mut buf = vec![0u8; len];
    r.read_exact(&mut buf).await?;
    let stream = u64::from_be_bytes(buf[..8].try_into().unwrap_or_default());
    let kind = Kind::from_u8(buf[8]).ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidData, "unknown frame kind")
    })?;
    buf.drain(..9);
    Ok(Some(Frame {
        stream,
        kind,
        body: buf,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frames_round_trip_and_garbage_is_refused() {
        let (mut a, mut b) = tokio::io::duplex(1024);
        let f = Frame {
            stream: 7,
            kind: Kind::Item,
            body: b"hello".to_vec(),
        };
        write(&mut a, &f).await.unwrap();
        assert_eq!(read(&mut b).await.unwrap(), Some(f));
        a.write_all(&[0, 0, 0, 3, 1, 2, 3]).await.unwrap();
        assert!(read(&mut b).await.is_err());
        drop(a);
        let (mut c, mut d) = tokio::io::duplex(64);
        drop(c.shutdown().await);
        drop(c);
        assert_eq!(read(&mut d).await.unwrap(), None);
    }
}
