//! The agent's side of joining a manager: dial, pin the manager's certificate, say hello,
//! serve the link, and dial again when it breaks (with backoff), until the manager refuses
//! for good. Given several managers (of one database), it dials the one it last reached
//! first, and the next in turn when that one does not answer (a standby does not listen
//! for agents): it ends up at the leader. The credential the manager gives on the first join
//! is kept in the config's [`CredentialStore`] (a file of mode 0600, or a Secret) and
//! presented from then on.

use crate::credential::CredentialStore;
use crate::hello::{self, Hello, Purpose, Welcome};
use crate::serve::{Serving, TunnelDialer, serve};
use crate::{JoinToken, Link, Side, pin};
use async_trait::async_trait;
use bai_core::agent::{AgentError, AgentRpc};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;
use uuid::Uuid;

/// How long one dial (TCP, TLS and hello) may take.
const DIAL_TIMEOUT: Duration = Duration::from_secs(10);
/// The same with several managers listed: a stopped one accepts the connection (its kernel
/// does) and never answers, and the leader is the next one.
const DIAL_TIMEOUT_OF_MANY: Duration = Duration::from_secs(3);
/// The longest wait between two dials.
const MAX_BACKOFF: Duration = Duration::from_secs(10);

#[derive(Debug, Clone)]
pub struct JoinConfig {
    /// The managers' agent addresses, `HOST:PORT` (one, or every manager of a database).
    pub managers: Vec<String>,
    pub token: JoinToken,
    pub agent_id: String,
    /// The resource group asked for (the token decides; a mismatch is refused).
    pub group: Option<String>,
    /// Where the credential is kept.
    pub credentials: Arc<dyn CredentialStore>,
    pub heartbeat: Duration,
    pub keepalive: Duration,
    pub version: String,
}

#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    /// The manager refused the agent and trying again cannot help.
    #[error("the manager refused this agent: {0}")]
    Refused(String),
    #[error("{0}")]
    Config(String),
}

#[derive(Debug, thiserror::Error)]
enum DialError {
    #[error("{0}")]
    Net(String),
    #[error("refused: {reason}")]
    Refused { reason: String, retry: bool },
}

/// Dials the manager for the control link and for tunnels.
struct Dialer {
    config: JoinConfig,
    connector: TlsConnector,
    credential: Mutex<Option<String>>,
    /// Which of the managers is dialled (the one the control link is with).
    at: std::sync::atomic::AtomicUsize,
}

impl Dialer {
    /// The manager dialled now.
    fn manager(&self) -> &str {
        let n = self.config.managers.len().max(1);
        let i = self.at.load(std::sync::atomic::Ordering::Relaxed) % n;
        self.config.managers.get(i).map_or("", String::as_str)
    }

    /// Dials the next manager from now on; true when that starts a new round of the list.
    fn next_manager(&self) -> bool {
        let n = self.config.managers.len().max(1);
        let i = self.at.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        i.is_multiple_of(n)
    }

    fn credential(&self) -> Option<String> {
        self.credential
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    async fn connect(
        &self,
        purpose: Purpose,
    ) -> Result<(TlsStream<TcpStream>, Option<String>), DialError> {
        let manager = self.manager().to_string();
        let net = |what: &str, e: &dyn std::fmt::Display| {
            DialError::Net(format!("{what} {manager}: {e}"))
        };
        let dial = async {
            let tcp = TcpStream::connect(&manager)
                .await
                .map_err(|e| net("cannot reach the manager at", &e))?;
            let _ = tcp.set_nodelay(true);
            let mut tls = match self.connector.connect(pin::server_name(), tcp).await {
                Ok(t) => t,
                Err(e) if pin_refused(&e) => {
                    return Err(DialError::Refused {
                        reason: format!(
                            "the certificate of {manager} is not the one the join token names (a wrong token, or another server at that address)"
                        ),
                        retry: false,
                    });
                }
                Err(e) => return Err(net("TLS with the manager failed at", &e)),
            };
            let hello = Hello {
                protocol: hello::PROTOCOL,
                token_id: self.config.token.id.clone(),
                token_secret: self.config.token.secret.clone(),
                agent_id: self.config.agent_id.clone(),
                group: self.config.group.clone(),
                credential: self.credential(),
                version: self.config.version.clone(),
                heartbeat_ms: self.config.heartbeat.as_millis() as u64,
                purpose,
            };
            hello::write(&mut tls, &hello)
                .await
                .map_err(|e| net("hello failed at", &e))?;
            match hello::read::<_, Welcome>(&mut tls).await {
                Ok(Welcome::Admitted { credential }) => Ok((tls, credential)),
                Ok(Welcome::Refused { reason, retry }) => Err(DialError::Refused { reason, retry }),
                Err(e) => Err(net("no welcome from", &e)),
            }
        };
        let limit = if self.config.managers.len() > 1 {
            DIAL_TIMEOUT_OF_MANY
        } else {
            DIAL_TIMEOUT
        };
        match tokio::time::timeout(limit, dial).await {
            Ok(r) => r,
            Err(_) => Err(DialError::Net(format!(
                "the manager at {manager} did not answer in time"
            ))),
        }
    }

    async fn keep_credential(&self, credential: String) -> Result<(), JoinError> {
        self.config
            .credentials
            .keep(&self.config.agent_id, &credential)
            .await
            .map_err(|e| JoinError::Config(format!("cannot keep the agent's credential: {e}")))?;
        *self.credential.lock().unwrap_or_else(|p| p.into_inner()) = Some(credential);
        Ok(())
    }
}

#[async_trait]
impl TunnelDialer for Dialer {
    async fn open(&self, tunnel: Uuid, target: std::net::SocketAddr) -> Result<(), AgentError> {
        let mut kernel =
            bai_relay::dial(target, DIAL_TIMEOUT)
                .await
                .map_err(|e| match e.kind() {
                    std::io::ErrorKind::TimedOut => {
                        AgentError::Runtime(format!("the app at {target} does not answer"))
                    }
                    _ => AgentError::Runtime(format!("the app at {target} refused: {e}")),
                })?;
        let (mut tls, _) = self
            .connect(Purpose::Tunnel(tunnel))
            .await
            .map_err(|e| AgentError::Unreachable(e.to_string()))?;
        tokio::spawn(async move {
            let _ = tokio::io::copy_bidirectional(&mut kernel, &mut tls).await;
        });
        Ok(())
    }
}

/// Whether a TLS failure is the pin refusing the manager's certificate (trying again cannot
/// help).
fn pin_refused(e: &std::io::Error) -> bool {
    matches!(
        e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()),
        Some(rustls::Error::General(_) | rustls::Error::InvalidCertificate(_))
    )
}

/// The credential kept for this agent; a store that cannot be read now is asked again (with
/// backoff) rather than joined without: the manager would refuse the agent's id for good.
async fn load_credential(config: &JoinConfig) -> Option<String> {
    let mut pause = Duration::from_millis(500);
    loop {
        match config.credentials.load(&config.agent_id).await {
            Ok(c) => return c,
            Err(e) => {
                tracing::warn!(agent = %config.agent_id, error = %e, "cannot read the agent's credential; trying again");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(MAX_BACKOFF);
            }
        }
    }
}

/// Joins the manager and serves `agent` over the link for as long as the manager accepts
/// it. Returns only when the manager refuses for good (or the configuration is unusable).
pub async fn run(config: JoinConfig, agent: Arc<dyn AgentRpc>) -> Result<(), JoinError> {
    let client = pin::client_config(&config.token.ca_hash).map_err(JoinError::Config)?;
    let credential = load_credential(&config).await;
    let dialer = Arc::new(Dialer {
        connector: TlsConnector::from(client),
        credential: Mutex::new(credential),
        config,
        at: Default::default(),
    });
    let tunnels: Arc<dyn TunnelDialer> = dialer.clone();
    let mut serving = Serving::new(agent.as_ref(), dialer.config.heartbeat, Some(tunnels));
    let mut backoff = Duration::from_millis(500);
    // With several managers a takeover is the usual reason to dial again: keep it quick.
    let max_backoff = if dialer.config.managers.len() > 1 {
        Duration::from_secs(2)
    } else {
        MAX_BACKOFF
    };
    loop {
        match dialer.connect(Purpose::Control).await {
            Ok((tls, credential)) => {
                if let Some(c) = credential {
                    dialer.keep_credential(c).await?;
                }
                tracing::info!(
                    manager = %dialer.manager(),
                    agent = %dialer.config.agent_id,
                    "joined the manager"
                );
                backoff = Duration::from_millis(500);
                let (link, inbound) = Link::start(tls, Side::Dialer, dialer.config.keepalive);
                serve(agent.clone(), link.clone(), inbound, &mut serving).await;
                link.close();
                tracing::warn!(manager = %dialer.manager(), "the link to the manager broke; dialing again");
            }
            Err(DialError::Refused {
                reason,
                retry: false,
            }) => return Err(JoinError::Refused(reason)),
            Err(e) => {
                tracing::warn!(error = %e, "cannot join the manager; trying again");
                // The next manager at once; after a whole round of them, a pause.
                if dialer.next_manager() {
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(max_backoff);
                }
            }
        }
    }
}
