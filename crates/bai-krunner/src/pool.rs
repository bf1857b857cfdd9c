//! A pool kernel's runner (`BAI_POOL` set): a started container that is nobody's session
//! yet. It answers pings (so the agent knows it is up) and waits for one `bind` request
//! carrying the session's whole environment; it answers that, stops listening and becomes
//! the session's runner by executing itself again with that environment, exactly as if the
//! container had been made for the session (its bootstrap, sshd, terminal, REPL and startup
//! command start then, under the session's variables). Before that it serves only `put`
//! (the owner's dotfiles, written as the kernel's user). A detached pool pod's runner
//! (`BAI_KRUNNER_LISTEN`) serves the same on the pod network, to connections that open with
//! its token ([`crate::network`]). Meanwhile Jupyter's imports may be paid in advance
//! ([`crate::zygote`]).

use crate::conn::Conn;
use crate::proto::{self, Event, Request};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::sync::mpsc;

/// The variable that makes krunner a pool kernel's runner.
pub const POOL_VAR: &str = "BAI_POOL";
/// Longest request line read.
const MAX_REQUEST: u64 = 1 << 20;

/// Serves pings and puts until a `bind` comes, on the socket and, given `tcp` (a listener
/// and its token), on the pod network; then executes krunner again with the bound
/// environment. Returns only when that fails (the caller exits).
pub fn serve_until_bound(
    listener: &UnixListener,
    tcp: Option<(TcpListener, String)>,
    socket: &str,
    workdir: &str,
) -> std::io::Error {
    let run = Path::new(socket)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    // Ready (answering pings) once Jupyter's imports are paid, where it has them.
    let mut zygote = crate::zygote::Zygote::start(&run, Path::new(workdir));
    let (bound, first) = mpsc::channel::<Vec<(String, String)>>();
    let unix = match listener.try_clone() {
        Ok(l) => l,
        Err(e) => return e,
    };
    let (home, dir) = (workdir.to_string(), run.clone());
    let to_main = bound.clone();
    std::thread::spawn(move || {
        for conn in unix.incoming() {
            let Ok(stream) = conn else { continue };
            if let Some(env) = one_request(Conn::Unix(stream), Path::new(&home), &dir) {
                let _ = to_main.send(env);
                return;
            }
        }
    });
    if let Some((tcp, token)) = tcp {
        let (home, dir) = (workdir.to_string(), run.clone());
        std::thread::spawn(move || {
            for conn in tcp.incoming() {
                let Ok(mut stream) = conn else { continue };
                if !crate::network::admitted(&mut stream, &token) {
                    continue;
                }
                let _ = stream.set_read_timeout(None);
                if let Some(env) = one_request(Conn::Tcp(stream), Path::new(&home), &dir) {
                    let _ = bound.send(env);
                    return;
                }
            }
        });
    } else {
        drop(bound);
    }
    let Ok(env) = first.recv() else {
        return std::io::Error::other("the listeners closed");
    };
    // The next runner makes its own socket; nobody may reach this one meanwhile.
    let _ = std::fs::remove_file(socket);
    if let Some(z) = zygote.take() {
        z.hand_over(&env);
    }
    become_session(&env)
}

/// Answers one connection; `Some(env)` when it was a valid bind (already answered). A put
/// writes under the home (`workdir`) or the run directory, as the session's runner would.
fn one_request(mut stream: Conn, workdir: &Path, run: &Path) -> Option<Vec<(String, String)>> {
    let mut line = String::new();
    BufReader::new((&mut stream).take(MAX_REQUEST))
        .read_line(&mut line)
        .ok()?;
    let mut reply = |events: &[Event]| {
        for e in events {
            let _ = stream.write_all(e.line().as_bytes());
        }
        let _ = stream.flush();
    };
    match proto::parse_request(&line) {
        Ok(Request::Ping) => reply(&[Event::Pong]),
        Ok(Request::Exit) => std::process::exit(proto::EXIT_ASKED),
        Ok(Request::Put(req)) => match crate::put::put(workdir, run, &req) {
            Ok(()) => reply(&[Event::Finished { exit_code: 0 }]),
            Err(e) => reply(&[
                Event::stderr(format!("krunner: {e}\n")),
                Event::Finished { exit_code: 1 },
            ]),
        },
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;

    /// `line` asked of [`one_request`]: what it answered, and the env of a bind.
    fn ask(line: &str, home: &Path, run: &Path) -> (String, Option<Vec<(String, String)>>) {
        let (mut ours, theirs) = UnixStream::pair().unwrap();
        ours.write_all(line.as_bytes()).unwrap();
        let env = one_request(Conn::Unix(theirs), home, run);
        ours.shutdown(std::net::Shutdown::Write).unwrap();
        let mut answer = String::new();
        ours.read_to_string(&mut answer).unwrap();
        (answer, env)
    }

    #[test]
    fn before_its_bind_a_pool_runner_takes_puts_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let (home, run) = (dir.path().join("work"), dir.path().join("run"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&run).unwrap();
        // The owner's dotfile, as the agent sends it at the claim.
        let put = r#"{"op":"put","place":"home","path":".vimrc","data":"c2V0IG51bWJlcgo=","mode":384,"append":false}"#;
        let (answer, env) = ask(&format!("{put}\n"), &home, &run);
        assert!(env.is_none());
        assert!(answer.contains(r#""exit_code":0"#), "{answer}");
        assert_eq!(
            std::fs::read_to_string(home.join(".vimrc")).unwrap(),
            "set number\n"
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(home.join(".vimrc"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        // A put that escapes its place is refused, and the runner is still unbound.
        let escape = put.replace(".vimrc", "../escaped");
        let (answer, env) = ask(&format!("{escape}\n"), &home, &run);
        assert!(
            env.is_none() && answer.contains(r#""exit_code":1"#),
            "{answer}"
        );
        assert!(!dir.path().join("escaped").exists());
        // Code before the bind is refused; the bind gives the session's variables.
        let (answer, env) = ask("{\"op\":\"ping\"}\n", &home, &run);
        assert!(env.is_none() && answer.contains("pong"), "{answer}");
        let bind = r#"{"op":"bind","env":["BAI_KERNEL_ID=k1","A=b=c"]}"#;
        let (answer, env) = ask(&format!("{bind}\n"), &home, &run);
        assert!(answer.contains(r#""exit_code":0"#), "{answer}");
        assert_eq!(
            env,
            Some(vec![
                ("BAI_KERNEL_ID".to_string(), "k1".to_string()),
                ("A".to_string(), "b=c".to_string())
            ])
        );
    }
}
