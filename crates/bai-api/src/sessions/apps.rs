//! A session's apps: the list, and `start-service`, which opens the HTTP app proxy.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How an app is spoken to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AppProtocol {
    /// Raw TCP (e.g. `sshd`): reached through a tunnel only.
    Tcp,
    /// A web app (e.g. `ttyd`): a tunnel or the HTTP app proxy.
    Http,
    /// A terminal app declared by the image.
    Pty,
    /// A port the user opened at creation (`config.preopen_ports`), named by its number.
    Preopen,
}

/// One app of a session (`GET /stream/session/{reference}/apps`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct App {
    /// The app's name (`sshd`, `ttyd`, an image's app, or a preopen port's number).
    pub name: String,
    /// How it is spoken to.
    pub protocol: AppProtocol,
    /// The port it listens on inside the container (one).
    pub ports: Vec<u16>,
}

/// Where the HTTP app proxy serves an app.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProxyMode {
    /// On a host port of its own (the default).
    Port,
    /// Under `/app/{session id}/{app}/` of the manager's address.
    Path,
}

/// The body of `POST /session/{reference}/start-service`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StartServiceRequest {
    /// The web app to open (not a TCP app).
    pub app: String,
    /// Where to serve it (default `port`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ProxyMode>,
    /// Port mode: the host port wanted (1024–65535); another one when it is taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1024))]
    pub port: Option<u16>,
    /// Let anyone with the URL in, without the permit (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_to_public: Option<bool>,
    /// The app's arguments (Backend.AI's SDK sends them); accepted and not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<serde_json::Value>,
    /// The app's environment (Backend.AI's SDK sends it); accepted and not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub envs: Option<serde_json::Value>,
}

/// The answer of `POST /session/{reference}/start-service`: where the app is open.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StartServiceReply {
    /// The app's name.
    pub app: String,
    /// Where it is served.
    pub mode: ProxyMode,
    /// The URL to open, with the one-time permit (`?permit=TOKEN`) that sets the cookie.
    pub url: String,
    /// The permit.
    pub token: String,
    /// Port mode: the host port; null in path mode.
    pub port: Option<u16>,
    /// Anyone with the URL gets in.
    pub public: bool,
    /// The port asked for is the one given.
    pub preferred_port_used: bool,
}
