//! bai-krunner: the entrypoint of every kernel container.
//!
//! It listens on `/opt/bai/run/krunner.sock` (a per-kernel host directory), answers pings
//! (readiness), runs query-mode code in one persistent Python REPL and batch steps with
//! `/bin/sh -c`. For batch sessions it runs the startup command once the agent has seen it
//! ready, and exits with that command's exit code, which ends the container.
#![forbid(unsafe_code)]

mod batch;
mod proto;
mod repl;

use proto::{Event, Request};
use repl::{Outcome, Repl};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

const SOCKET: &str = "/opt/bai/run/krunner.sock";
const WORKDIR: &str = "/home/work";

struct State {
    repl: Option<Repl>,
    /// Set on the first ping: the agent has seen the kernel ready.
    ready: (Mutex<bool>, Condvar),
}

fn main() {
    let socket = std::env::var("BAI_KRUNNER_SOCKET").unwrap_or_else(|_| SOCKET.into());
    if let Ok(script) = std::env::var("BAI_BOOTSTRAP_SCRIPT")
        && !script.trim().is_empty()
    {
        eprintln!("krunner: running the bootstrap script");
        let st = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(&script)
            .current_dir("/home/work")
            .status();
        match st {
            Ok(s) if s.success() => {}
            Ok(s) => eprintln!(
                "krunner: bootstrap script exited with {}",
                batch::exit_code(s)
            ),
            Err(e) => eprintln!("krunner: cannot run the bootstrap script: {e}"),
        }
    }
    let python = std::env::var("BAI_PYTHON").unwrap_or_else(|_| "python3".into());
    let repl = match Repl::start(&python) {
        Ok(r) => Some(r),
        Err(e) => {
            eprintln!("krunner: no Python REPL ({e}); query mode is unavailable");
            None
        }
    };
    let state = Arc::new(State {
        repl,
        ready: (Mutex::new(false), Condvar::new()),
    });
    let _ = std::fs::remove_file(&socket);
    let listener = match UnixListener::bind(&socket) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("krunner: cannot listen on {socket}: {e}");
            std::process::exit(70);
        }
    };
    let is_batch = std::env::var("BAI_SESSION_TYPE").is_ok_and(|t| t == "batch");
    if is_batch && let Ok(cmd) = std::env::var("BAI_STARTUP_COMMAND") {
        let st = state.clone();
        std::thread::spawn(move || run_startup(&st, &cmd));
    }
    for conn in listener.incoming() {
        match conn {
            Ok(stream) => {
                let st = state.clone();
                std::thread::spawn(move || serve(&st, stream));
            }
            Err(e) => eprintln!("krunner: accept failed: {e}"),
        }
    }
}

/// Batch sessions: wait until the agent has seen us ready (at most 30 s), run the command
/// with the container's stdout/stderr, then end the container with its exit code.
fn run_startup(state: &State, cmd: &str) {
    let (lock, cv) = &state.ready;
    let guard = lock.lock().unwrap_or_else(|p| p.into_inner());
    let _ = cv.wait_timeout_while(guard, Duration::from_secs(30), |ready| !*ready);
    let st = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(cmd)
        .current_dir("/home/work")
        .status();
    let code = match st {
        Ok(s) => batch::exit_code(s),
        Err(e) => {
            eprintln!("krunner: cannot run the startup command: {e}");
            127
        }
    };
    std::process::exit(code);
}

fn serve(state: &State, stream: UnixStream) {
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let mut out = stream;
    let mut emit = |ev: &Event| out.write_all(ev.line().as_bytes()).is_ok();
    let req: Request = match serde_json::from_str(line.trim()) {
        Ok(r) => r,
        Err(e) => {
            emit(&Event::Stderr {
                data: format!("krunner: bad request: {e}\n"),
            });
            emit(&Event::Finished { exit_code: 1 });
            return;
        }
    };
    match (req.op.as_str(), req.mode.as_deref()) {
        ("ping", _) => {
            emit(&Event::Pong);
            let (lock, cv) = &state.ready;
            *lock.lock().unwrap_or_else(|p| p.into_inner()) = true;
            cv.notify_all();
        }
        ("exec", Some("query")) => {
            let Some(repl) = &state.repl else {
                emit(&Event::Stderr {
                    data: "this kernel has no Python REPL\n".into(),
                });
                emit(&Event::Finished { exit_code: 1 });
                return;
            };
            if let Outcome::ReplDied = repl.run(req.code.as_deref().unwrap_or(""), &mut emit) {
                emit(&Event::Stderr {
                    data: "krunner: the Python process was killed (most likely it ran out of memory); the kernel stops\n".into(),
                });
                emit(&Event::Finished { exit_code: 137 });
                let _ = out.flush();
                eprintln!("krunner: the REPL died; exiting");
                std::process::exit(137);
            }
        }
        ("exec", Some("input")) => {
            let code = match &state.repl {
                Some(r) if r.input(req.line.as_deref().unwrap_or("")).is_ok() => 0,
                _ => 1,
            };
            emit(&Event::Finished { exit_code: code });
        }
        ("exec", Some("batch")) => {
            let mut code = 0;
            for (step, value) in [
                ("clean", &req.clean),
                ("build", &req.build),
                ("exec", &req.exec),
            ] {
                if let Some(cmd) = batch::resolve_step(step, value.as_deref()) {
                    code = batch::run_command(&cmd, Path::new(WORKDIR), &mut emit);
                    if code != 0 {
                        break;
                    }
                }
            }
            emit(&Event::Finished { exit_code: code });
        }
        (op, mode) => {
            emit(&Event::Stderr {
                data: format!("krunner: unknown request {op:?} mode {mode:?}\n"),
            });
            emit(&Event::Finished { exit_code: 1 });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_serialize_like_bai_core() {
        assert_eq!(
            Event::Finished { exit_code: 2 }.line(),
            "{\"t\":\"finished\",\"exit_code\":2}\n"
        );
        assert_eq!(
            Event::Stdout { data: "x".into() }.line(),
            "{\"t\":\"stdout\",\"data\":\"x\"}\n"
        );
        assert_eq!(
            Event::WaitingInput {
                prompt: "> ".into(),
                password: false
            }
            .line(),
            "{\"t\":\"waiting-input\",\"prompt\":\"> \",\"password\":false}\n"
        );
    }

    #[test]
    fn star_steps_use_kernel_defaults() {
        assert_eq!(batch::resolve_step("clean", Some("*")), None);
        assert_eq!(batch::resolve_step("build", Some("")), None);
        assert_eq!(
            batch::resolve_step("exec", Some("python x.py")).as_deref(),
            Some("python x.py")
        );
    }

    #[test]
    fn batch_commands_stream_output_and_exit_codes() {
        let mut events = Vec::new();
        let code = batch::run_command(
            "echo out && echo err >&2 && exit 4",
            Path::new("/"),
            &mut |e: &Event| {
                events.push(e.clone());
                true
            },
        );
        assert_eq!(code, 4);
        assert!(
            events.contains(&Event::Stdout {
                data: "out\n".into()
            }),
            "{events:?}"
        );
        assert!(
            events.contains(&Event::Stderr {
                data: "err\n".into()
            }),
            "{events:?}"
        );
    }
}
