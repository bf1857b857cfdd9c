//! A pool kernel's runner (`BAI_POOL` set): a started container that is nobody's session
//! yet. It answers pings (so the agent knows it is up) and waits for one `bind` request
//! carrying the session's whole environment; it answers that, stops listening and becomes
//! the session's runner by executing itself again with that environment, exactly as if the
//! container had been made for the session (its bootstrap, sshd, terminal, REPL and startup
//! command start then, under the session's variables). Nothing else is served before.
//! Meanwhile Jupyter's imports may be paid in advance ([`crate::zygote`]).

use crate::proto::{self, Event, Request};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::CommandExt;
use std::path::Path;

/// The variable that makes krunner a pool kernel's runner.
pub const POOL_VAR: &str = "BAI_POOL";
/// Longest request line read.
const MAX_REQUEST: u64 = 1 << 20;

/// Serves pings until a `bind` comes; then executes krunner again with the bound
/// environment. Returns only when that fails (the caller exits).
pub fn serve_until_bound(listener: &UnixListener, socket: &str, workdir: &str) -> std::io::Error {
    // Ready (answering pings) once Jupyter's imports are paid, where it has them.
    let mut zygote = Path::new(socket)
        .parent()
        .and_then(|run| crate::zygote::Zygote::start(run, Path::new(workdir)));
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        if let Some(env) = one_request(stream) {
            // The next runner makes its own socket; nobody may reach this one meanwhile.
            let _ = std::fs::remove_file(socket);
            if let Some(z) = zygote.take() {
                z.hand_over(&env);
            }
            return become_session(&env);
        }
    }
    std::io::Error::other("the socket closed")
}

/// Answers one connection; `Some(env)` when it was a valid bind (already answered).
fn one_request(stream: UnixStream) -> Option<Vec<(String, String)>> {
    let mut out = stream.try_clone().ok()?;
    let mut line = String::new();
    BufReader::new(stream.take(MAX_REQUEST))
        .read_line(&mut line)
        .ok()?;
    let mut reply = |events: &[Event]| {
        for e in events {
            let _ = out.write_all(e.line().as_bytes());
        }
        let _ = out.flush();
    };
    match proto::parse_request(&line) {
        Ok(Request::Ping) => reply(&[Event::Pong]),
        Ok(Request::Exit) => std::process::exit(proto::EXIT_ASKED),
        Ok(Request::Bind { env }) => match parse_env(&env) {
            Ok(vars) => {
                reply(&[Event::Finished { exit_code: 0 }]);
                return Some(vars);
            }
            Err(why) => reply(&[Event::stderr(why), Event::Finished { exit_code: 2 }]),
        },
        Ok(_) => reply(&[
            Event::stderr("krunner: this kernel is not bound to a session yet\n"),
            Event::Finished { exit_code: 1 },
        ]),
        Err(e) => reply(&[
            Event::stderr(format!("krunner: bad request: {e}\n")),
            Event::Finished { exit_code: 1 },
        ]),
    }
    None
}

/// `NAME=value` lines as pairs; a name that is empty or holds `=` or NUL is refused.
pub fn parse_env(env: &[String]) -> Result<Vec<(String, String)>, String> {
    env.iter()
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) if !k.is_empty() && !kv.contains('\0') => Ok((k.into(), v.into())),
            _ => Err(format!("krunner: not a NAME=value variable: {kv:?}\n")),
        })
        .collect()
}

/// Executes krunner again: this process's environment (the image's and the pool's) without
/// the pool marker, the session's variables over it. That is the container's environment
/// had it been made for the session: the pool's own variables are a subset of the session's.
fn become_session(env: &[(String, String)]) -> std::io::Error {
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => return e,
    };
    std::process::Command::new(exe)
        .env_remove(POOL_VAR)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .exec()
}
