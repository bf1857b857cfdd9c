//! The bai Rust SDK: signed requests to a Backend.AI-compatible manager (REST, GraphQL,
//! server-sent events, the execute WebSocket), configured like the official client.
//!
//! ```no_run
//! # async fn demo() -> Result<(), bai_client::ClientError> {
//! let client = bai_client::Client::from_env()?;
//! let logs = client.logs("mysess").await?;
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]

pub mod apps;
mod config;
mod create;
mod dotfiles;
pub mod encode;
mod error;
mod exec;
mod fairshare;
mod gql;
mod images;
mod operations;
mod raw;
mod request;
mod resources;
mod retry;
mod services;
mod session;
pub mod sse;
mod templates;
mod tls;
mod user_policies;
pub mod vfolder;

pub use config::{Config, REQUEST_IDLE};
pub use create::{CreateReply, CreateSession};
pub use error::ClientError;
pub use exec::{ExecResult, Execution, Mode};
pub use gql::{KeypairInfo, SessionList, SessionListQuery};
pub use request::Signed;
pub use reqwest::Method;
pub use retry::{FAILOVER_WAIT, notice_line};
pub use session::upload_name;
pub use sse::{Event, EventStream};
pub use user_policies::UserPolicy;

/// A client for one manager endpoint and keypair.
#[derive(Clone, Debug)]
pub struct Client {
    pub(crate) config: Config,
    pub(crate) http: reqwest::Client,
    /// Where the line saying that the platform switches managers goes.
    pub(crate) notice: retry::Notice,
}

impl Client {
    pub fn new(config: Config) -> Result<Client, ClientError> {
        let mut b = reqwest::Client::builder().connect_timeout(config.connect_timeout);
        if let Some(t) = config.read_timeout {
            b = b.read_timeout(t);
        }
        if config.is_https() {
            let tls = tls::client_config(&config.ca_files, config.skip_tls_verify)?;
            b = b.use_preconfigured_tls((*tls).clone());
        }
        let http = b
            .build()
            .map_err(|e| ClientError::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(Client {
            config,
            http,
            notice: retry::Notice::default(),
        })
    }

    /// Says, in one line and once per switch, when requests wait while the platform
    /// switches managers ([`notice_line`]); `bai` prints it on stderr. Without it the wait
    /// is silent.
    pub fn with_notice(mut self, sink: impl Fn(&str) + Send + Sync + 'static) -> Client {
        self.notice = retry::Notice::to(std::sync::Arc::new(sink));
        self
    }

    /// Reads [`Config::from_env`].
    pub fn from_env() -> Result<Client, ClientError> {
        Client::new(Config::from_env()?)
    }

    pub fn config(&self) -> &Config {
        &self.config
    }
}
