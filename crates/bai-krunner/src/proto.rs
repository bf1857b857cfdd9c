//! The socket protocol: one JSON line in, JSON lines out, one request per connection.
//!
//! In: `{"op":"ping"}`, `{"op":"exit"}`, `{"op":"bind","env":[…]}` (a pool kernel's) or
//! `{"op":"exec","mode":…}` where the rest is a
//! `bai_core::agent::ExecRequest`. Out: `{"t":"pong"}`, or `bai_core::agent::ExecEvent`
//! lines ending with `{"t":"finished",…}`. The shapes are duplicated here so krunner stays
//! free of bai-core (its one bai dependency is `bai-sshkey`); bai-agent's tests check that
//! both sides stay byte-compatible.

use serde::{Deserialize, Serialize};

/// A request line.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum Request {
    Ping,
    Exec(ExecRequest),
    /// Start an app (if it is not running) and answer once it accepts connections:
    /// `{"op":"start-app","name":"jupyter"}`; the reply ends with `finished` (0: ready).
    #[serde(rename = "start-app")]
    StartApp {
        name: String,
    },
    /// List a directory: `{"op":"list-files","path":"."}`; the reply is one `stdout` event
    /// holding the JSON array of entries, then `finished` (1 and a `stderr` on failure).
    #[serde(rename = "list-files")]
    ListFiles {
        path: String,
    },
    /// The kernel's resource counters: `{"op":"stats"}`; the reply is one `stdout` event
    /// holding them as JSON (`crate::stats`), then `finished`.
    Stats,
    /// One file or folder as a tar archive: `{"op":"download","path":"out"}`; the reply is
    /// `stdout` events of base64 text (`crate::archive`), then `finished`.
    Download {
        path: String,
    },
    /// Write one file into the kernel, as its user (`crate::put`): an agent that shares no
    /// disk with the kernel sends dotfiles, uploads and the session's host table this way;
    /// answered with `finished` (1 and a `stderr` line when refused).
    Put(Put),
    /// A pool kernel becomes a session's: `{"op":"bind","env":["NAME=value",…]}`, the
    /// session's whole environment; answered with `finished` (0: krunner starts again
    /// under it). Only a pool kernel's runner takes it (`crate::pool`).
    Bind {
        env: Vec<String>,
    },
    /// A preemption's grace begins: `{"op":"terminate"}` sends SIGTERM to every process
    /// of the kernel but the container's init and krunner (`crate::signal`); answered with
    /// `finished` (0: sent).
    Terminate,
    /// The kernel is being destroyed: `{"op":"exit"}` ends krunner at once, as SIGTERM
    /// does, without the engine's round of signalling (the agent's stop follows
    /// regardless). Nothing is answered.
    Exit,
}

/// Where a put goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Place {
    /// Under the kernel's working directory (`/home/work`).
    #[default]
    Home,
    /// The runner's own directory (`/opt/bai/run`): one file name.
    Run,
}

/// A put request's fields.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Put {
    #[serde(default)]
    pub place: Place,
    pub path: String,
    pub data: String,
    #[serde(default = "default_mode")]
    pub mode: u32,
    #[serde(default)]
    pub append: bool,
}

fn default_mode() -> u32 {
    0o644
}

/// krunner's exit status when asked to exit: SIGTERM's (128 + 15).
pub const EXIT_ASKED: i32 = 143;

/// Same shape as `bai_core::agent::ExecRequest`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "lowercase")]
pub enum ExecRequest {
    Query {
        code: String,
    },
    Batch {
        #[serde(default)]
        clean: Option<String>,
        #[serde(default)]
        build: Option<String>,
        #[serde(default)]
        exec: Option<String>,
    },
    Input {
        line: String,
    },
}

/// A reply line: `Pong`, or the same shape as `bai_core::agent::ExecEvent`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "kebab-case")]
pub enum Event {
    Pong,
    Stdout { data: String },
    Stderr { data: String },
    WaitingInput { prompt: String, password: bool },
    Finished { exit_code: i32 },
}

impl Event {
    /// The event as one JSON line, newline included.
    pub fn line(&self) -> String {
        let mut s = serde_json::to_string(self)
            .unwrap_or_else(|_| "{\"t\":\"finished\",\"exit_code\":1}".into());
        s.push('\n');
        s
    }

    pub fn stderr(data: impl Into<String>) -> Event {
        Event::Stderr { data: data.into() }
    }
}

/// Parses one request line.
pub fn parse_request(line: &str) -> Result<Request, serde_json::Error> {
    serde_json::from_str(line.trim())
}
