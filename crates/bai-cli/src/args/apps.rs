//! Apps of a session: `bai app` (a local port forward) and `bai open` (a web app's URL).

use clap::Args;

#[derive(Args, Debug, Clone)]
pub struct AppArgs {
    /// Session name or id.
    pub reference: String,
    /// The app, e.g. sshd, or a preopen port number.
    pub app: String,
    /// Where to listen: PORT or HOST:PORT.
    #[arg(short = 'b', long = "bind", default_value = "127.0.0.1:8080")]
    pub bind: String,
}

#[derive(Args, Debug, Clone)]
pub struct OpenArgs {
    /// Session name or id.
    pub reference: String,
    /// The app, e.g. jupyter, jupyterlab, ttyd, or a preopen port number.
    pub app: String,
    /// Serve it under the API's own address instead of a port of its own.
    #[arg(long)]
    pub path: bool,
    /// Try this host port first (port mode).
    #[arg(long, value_name = "PORT")]
    pub port: Option<u16>,
    /// Anyone with the URL may open it, no permit needed.
    #[arg(long)]
    pub public: bool,
}
