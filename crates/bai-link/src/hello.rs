//! The first words on a new connection, before anything else: the agent says who it is and
//! what the connection is for ([`Hello`]), the manager admits or refuses it ([`Welcome`]).
//! A control connection then carries a [`crate::Link`]; a tunnel connection carries the raw
//! bytes of one app connection.

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use uuid::Uuid;

/// Version of this handshake and of the messages after it.
pub const PROTOCOL: u32 = 1;

/// Largest hello or welcome accepted.
const MAX_MSG: usize = 64 << 10;

/// What a connection is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Purpose {
    /// The agent's one long-lived connection: calls, events, heartbeats.
    Control,
    /// The bytes of one app connection the manager asked for, by its tunnel id.
    Tunnel(Uuid),
}

/// The agent introduces itself.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    pub protocol: u32,
    /// The join token's id and secret (the manager keeps only the secret's hash).
    pub token_id: String,
    pub token_secret: String,
    pub agent_id: String,
    /// The resource group the agent means to join (the token decides; a different one is
    /// refused).
    pub group: Option<String>,
    /// The credential the manager gave this agent when it first joined; none on the first join.
    pub credential: Option<String>,
    /// The agent's own version (`baid --version`).
    pub version: String,
    /// How often the agent sends a heartbeat, in milliseconds.
    pub heartbeat_ms: u64,
    pub purpose: Purpose,
}

impl std::fmt::Debug for Hello {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret or the credential.
        f.debug_struct("Hello")
            .field("protocol", &self.protocol)
            .field("token_id", &self.token_id)
            .field("agent_id", &self.agent_id)
            .field("has_credential", &self.credential.is_some())
            .field("version", &self.version)
            .field("purpose", &self.purpose)
            .finish_non_exhaustive()
    }
}

/// The manager's answer.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub enum Welcome {
    /// Admitted. On a first join, the credential to present from now on.
    Admitted { credential: Option<String> },
    /// Refused, with the reason in words. `retry` is false when trying again cannot help
    /// (revoked token, forged id) and the agent should stop.
    Refused { reason: String, retry: bool },
}

impl std::fmt::Debug for Welcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Welcome::Admitted { credential } => f
                .debug_struct("Admitted")
                .field("new_credential", &credential.is_some())
                .finish(),
            Welcome::Refused { reason, retry } => f
                .debug_struct("Refused")
                .field("reason", reason)
                .field("retry", retry)
                .finish(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum HelloError {
    #[error("connection: {0}")]
    Io(#[from] std::io::Error),
    #[error("the peer sent a malformed handshake: {0}")]
    Malformed(String),
}

/// Writes one handshake message (`u32` length, MessagePack body).
pub async fn write<W, T>(w: &mut W, msg: &T) -> Result<(), HelloError>
where
    W: AsyncWrite + Unpin,
    T: Serialize,
{
    let body = rmp_serde::to_vec_named(msg).map_err(|e| HelloError::Malformed(e.to_string()))?;
    w.write_u32(body.len() as u32).await?;
    w.write_all(&body).await?;
    w.flush().await?;
    Ok(())
}

/// Reads one handshake message.
pub async fn read<R, T>(r: &mut R) -> Result<T, HelloError>
where
    R: AsyncRead + Unpin,
    T: for<'de> Deserialize<'de>,
{
    let len = r.read_u32().await? as usize;
    if len > MAX_MSG {
        return Err(HelloError::Malformed(format!("{len} bytes is too long")));
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).await?;
    rmp_serde::from_slice(&body).map_err(|e| HelloError::Malformed(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_hello_round_trips_and_hides_its_secrets() {
        let hello = Hello {
            protocol: PROTOCOL,
            token_id: "0badcafe".into(),
            token_secret: "s3cret-token".into(),
            agent_id: "node-1".into(),
            group: None,
            credential: Some("s3cret-credential".into()),
            version: "0.1.0".into(),
            heartbeat_ms: 10_000,
            purpose: Purpose::Tunnel(Uuid::new_v4()),
        };
        let (mut a, mut b) = tokio::io::duplex(1024);
        write(&mut a, &hello).await.unwrap();
        let got: Hello = read(&mut b).await.unwrap();
        assert_eq!(got, hello);
        let shown = format!("{hello:?}");
        assert!(!shown.contains("s3cret"), "{shown}");
        // A length past the limit is refused without reading it.
        a.write_u32(1 << 30).await.unwrap();
        assert!(matches!(
            read::<_, Hello>(&mut b).await,
            Err(HelloError::Malformed(_))
        ));
    }
}
