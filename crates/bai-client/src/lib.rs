//! The bai Rust SDK: signed requests to a Backend.AI-compatible manager (REST, GraphQL,
//! server-sent events, the execute WebSocket), configured like the official client.
#![forbid(unsafe_code)]

mod config;
mod error;
mod exec;
mod request;
mod session;
pub mod sse;

pub use config::Config;
pub use error::ClientError;
pub use exec::{ExecResult, Execution};
pub use session::{CreateReply, CreateSession};

/// A client for one manager endpoint and keypair.
#[derive(Clone)]
pub struct Client {
    pub(crate) config: Config,
    pub(crate) http: reqwest::Client,
}

impl Client {
    pub fn new(config: Config) -> Result<Client, ClientError> {
        let http = reqwest::Client::builder()
            .connect_timeout(std::time::Duration::from_secs(10))
            .build()
            .map_err(|e| ClientError::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(Client { config, http })
    }

    pub fn from_env() -> Result<Client, ClientError> {
        Client::new(Config::from_env()?)
    }

    pub fn config(&self) -> &Config {
        &self.config
    }
}

/// Percent-encodes a query value (everything but RFC 3986 unreserved characters), so the
/// URL is sent exactly as it is signed.
pub fn encode_query_value(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Percent-encodes one path segment.
pub fn encode_path_segment(s: &str) -> String {
    encode_query_value(s)
}
