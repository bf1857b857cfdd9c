//! One connection: read the request line, answer it, close.

use crate::conn::Conn;
use crate::listing;
use crate::proto::{self, Event, ExecRequest, Request};
use crate::repl::{Outcome, Repl};
use crate::{archive, batch, signal, stats};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::Shutdown;
use std::path::Path;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};

/// The longest request line accepted (code snippets included).
const MAX_REQUEST: u64 = 64 << 20;
/// The largest archive one download makes (built in memory);
/// bigger files travel through data folders or SFTP.
const DOWNLOAD_LIMIT: usize = 256 << 20;

pub struct State {
    pub repl: Option<Repl>,
    /// Apps started on demand.
    pub apps: crate::apps::Running,
    pub workdir: String,
    /// The runner's own directory (its socket's, `/opt/bai/run`): a put's `run` place.
    pub run: std::path::PathBuf,
    /// Set on the first ping: the agent has seen the kernel ready.
    ready: (Mutex<bool>, Condvar),
    /// Set by the first `terminate` (a preemption), which holds it while it signals; a batch
    /// session's startup command is started under it, so the command is either among the
    /// processes signalled or never started.
    pub terminating: Mutex<bool>,
}

impl State {
    pub fn new(repl: Option<Repl>, workdir: String, run: std::path::PathBuf) -> State {
        State {
            repl,
            apps: Default::default(),
            workdir,
            run,
            ready: (Mutex::new(false), Condvar::new()),
            terminating: Mutex::new(false),
        }
    }

    fn mark_ready(&self) {
        let (lock, cv) = &self.ready;
        *lock.lock().unwrap_or_else(|p| p.into_inner()) = true;
        cv.notify_all();
    }

    /// Waits until the first ping, at most `timeout`.
    pub fn wait_ready(&self, timeout: std::time::Duration) {
        let (lock, cv) = &self.ready;
        let guard = lock.lock().unwrap_or_else(|p| p.into_inner());
        let _ = cv.wait_timeout_while(guard, timeout, |ready| !*ready);
    }
}

pub fn serve(state: &Arc<State>, stream: Conn) {
    let read_half = match stream.try_clone() {
        Ok(s) => s,
        Err(e) => {
            say!("krunner: cannot use a connection: {e}");
            return;
        }
    };
    let mut reader = BufReader::new(read_half.take(MAX_REQUEST));
    let mut line = String::new();
    if let Err(e) = reader.read_line(&mut line) {
        say!("krunner: cannot read a request: {e}");
        return;
    }
    let mut out = stream;
    let req = match proto::parse_request(&line) {
        Ok(r) => r,
        Err(e) => {
            let mut emit = emitter(&mut out);
            emit(&Event::stderr(format!("krunner: bad request: {e}\n")));
            emit(&Event::Finished { exit_code: 1 });
            return;
        }
    };
    match req {
        Request::Ping => {
            let _ = out.write_all(Event::Pong.line().as_bytes());
            state.mark_ready();
        }
        Request::Exec(ExecRequest::Query { code }) => query(state, &code, out, reader),
        Request::Exit => std::process::exit(proto::EXIT_ASKED),
        Request::Bind { .. } => {
            let mut emit = emitter(&mut out);
            emit(&Event::stderr("krunner: this kernel is bound already\n"));
            emit(&Event::Finished { exit_code: 1 });
        }
        Request::StartApp { name } => {
            let mut emit = emitter(&mut out);
            match state.apps.start(&name, Path::new(&state.workdir)) {
                Ok(()) => emit(&Event::Finished { exit_code: 0 }),
                Err(e) => {
                    emit(&Event::stderr(format!("{e}\n")));
                    emit(&Event::Finished { exit_code: 1 })
                }
            };
        }
        Request::ListFiles { path } => {
            let mut emit = emitter(&mut out);
            let dir = listing::resolve(Path::new(&state.workdir), &path);
            match listing::list(&dir) {
                Ok(entries) => {
                    let json = serde_json::to_string(&entries).unwrap_or_else(|_| "[]".into());
                    emit(&Event::Stdout { data: json });
                    emit(&Event::Finished { exit_code: 0 });
                }
                Err(e) => {
                    emit(&Event::stderr(format!("{}: {e}\n", dir.display())));
                    emit(&Event::Finished { exit_code: 1 });
                }
            }
        }
        Request::Stats => {
            let mut emit = emitter(&mut out);
            match stats::read(Path::new("/sys/fs/cgroup"), Path::new("/proc/net/dev")) {
                Ok(c) => {
                    let json = serde_json::to_string(&c).unwrap_or_else(|_| "{}".into());
                    emit(&Event::Stdout { data: json });
                    emit(&Event::Finished { exit_code: 0 });
                }
                Err(e) => {
                    emit(&Event::stderr(format!("krunner: {e}\n")));
                    emit(&Event::Finished { exit_code: 1 });
                }
            }
        }
        Request::Terminate => {
            let mut emit = emitter(&mut out);
            let mut terminating = state.terminating.lock().unwrap_or_else(|p| p.into_inner());
            *terminating = true;
            let signalled = signal::terminate_others();
            drop(terminating);
            match signalled {
                Ok(n) => {
                    say!("krunner: preempted: SIGTERM sent to {n} process(es)");
                    emit(&Event::Finished { exit_code: 0 });
                }
                Err(e) => {
                    emit(&Event::stderr(format!("krunner: cannot signal: {e}\n")));
                    emit(&Event::Finished { exit_code: 1 });
                }
            }
        }
        Request::Download { path } => {
            let mut emit = emitter(&mut out);
            let at = listing::resolve(Path::new(&state.workdir), &path);
            match archive::tar_of(&at, DOWNLOAD_LIMIT) {
                Ok(tar) => {
                    for data in archive::chunks(&tar) {
                        if !emit(&Event::Stdout { data }) {
                            return;
                        }
                    }
                    emit(&Event::Finished { exit_code: 0 });
                }
                Err(e) => {
                    emit(&Event::stderr(format!("{path}: {e}\n")));
                    emit(&Event::Finished { exit_code: 1 });
                }
            }
        }
        Request::Put(req) => {
            let mut emit = emitter(&mut out);
            match crate::put::put(Path::new(&state.workdir), &state.run, &req) {
                Ok(()) => emit(&Event::Finished { exit_code: 0 }),
                Err(e) => {
                    emit(&Event::stderr(format!("krunner: {e}\n")));
                    emit(&Event::Finished { exit_code: 1 })
                }
            };
        }
        Request::Exec(ExecRequest::Input { line }) => {
            let mut emit = emitter(&mut out);
            let code = match state.repl.as_ref().map(|r| r.input(&line)) {
                Some(Ok(())) => 0,
                Some(Err(e)) => {
                    emit(&Event::stderr(format!("krunner: {e}\n")));
                    1
                }
                None => {
                    emit(&Event::stderr("krunner: this kernel has no Python REPL\n"));
                    1
                }
            };
            emit(&Event::Finished { exit_code: code });
        }
        Request::Exec(ExecRequest::Batch { clean, build, exec }) => {
            let mut emit = emitter(&mut out);
            let workdir = Path::new(&state.workdir);
            let mut code = 0;
            for (step, value) in [("clean", clean), ("build", build), ("exec", exec)] {
                // The default exec says what it runs (or why it runs nothing).
                if step == "exec" && value.as_deref().map(str::trim) == Some("*") {
                    match batch::default_exec(workdir) {
                        Ok(cmd) => {
                            emit(&Event::stderr(format!("(running: {cmd})\n")));
                        }
                        Err(why) => {
                            emit(&Event::stderr(format!("{why}\n")));
                            code = 2;
                            break;
                        }
                    }
                }
                if let Some(cmd) = batch::resolve_step(step, value.as_deref(), workdir) {
                    code = batch::run_command(&cmd, workdir, &mut emit);
                    if code != 0 {
                        break;
                    }
                }
            }
            emit(&Event::Finished { exit_code: code });
        }
    }
}

fn emitter(out: &mut Conn) -> impl FnMut(&Event) -> bool + '_ {
    move |ev: &Event| out.write_all(ev.line().as_bytes()).is_ok()
}

/// Query mode. While it runs, a second thread watches the connection: when the client
/// goes away, an `input()` waiting for it gets EOF instead of blocking the REPL forever.
fn query<R: Read + Send + 'static>(
    state: &Arc<State>,
    code: &str,
    mut out: Conn,
    mut reader: BufReader<R>,
) {
    let Some(repl) = &state.repl else {
        let mut emit = emitter(&mut out);
        emit(&Event::stderr("krunner: this kernel has no Python REPL\n"));
        emit(&Event::Finished { exit_code: 1 });
        return;
    };
    let (gen_tx, gen_rx) = mpsc::channel::<u64>();
    let watcher_state = state.clone();
    std::thread::spawn(move || {
        let mut sink = Vec::new();
        // Returns at EOF: the client closed, or we shut the connection down after Finished.
        let _ = reader.read_to_end(&mut sink);
        if let (Ok(generation), Some(repl)) = (gen_rx.recv(), &watcher_state.repl) {
            repl.cancel_input(generation);
        }
    });
    let outcome = {
        let mut emit = emitter(&mut out);
        repl.run(
            code,
            &mut |generation| {
                let _ = gen_tx.send(generation);
            },
            &mut emit,
        )
    };
    if let Outcome::ReplDied = outcome {
        {
            let mut emit = emitter(&mut out);
            emit(&Event::stderr(
                "krunner: the Python process was killed (most likely it ran out of memory); \
                 the kernel stops\n",
            ));
            emit(&Event::Finished { exit_code: 137 });
        }
        let _ = out.flush();
        let _ = out.shutdown(Shutdown::Both);
        say!("krunner: the Python REPL died; exiting with 137");
        std::process::exit(137);
    }
    let _ = out.shutdown(Shutdown::Both);
}
