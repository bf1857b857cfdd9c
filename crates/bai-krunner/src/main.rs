//! bai-krunner: the entrypoint of every kernel container (under the engine's init, which
//! reaps zombies and forwards SIGTERM; krunner keeps the default SIGTERM action and dies).
//!
//! It listens on `/opt/bai/run/krunner.sock` (a per-kernel host directory), answers pings
//! (readiness), runs query-mode code in one persistent Python REPL and batch steps with
//! `/bin/sh -c`. For batch sessions it runs the startup command once the agent has seen it
//! ready, and exits with that command's exit code, which ends the container. If the REPL
//! dies (out of memory), krunner exits with 137.
//!
//! A pool kernel's runner (`BAI_POOL`) only waits for the session it is given ([`pool`]).
//!
//! Environment: `BAI_BOOTSTRAP_SCRIPT`, `BAI_SESSION_TYPE`, `BAI_STARTUP_COMMAND`,
//! `BAI_KRUNNER_LISTEN` (also listen on the pod network, [`network`]), and for tests outside
//! a container `BAI_KRUNNER_SOCKET`, `BAI_KRUNNER_WORKDIR`, `BAI_PYTHON`,
//! `BAI_KRUNNER_SECRET` (where the kernel's Secret is, [`unpack`]). `bai-krunner install BIN
//! RUN` is a pod's init container ([`unpack::install`]); so is `bai-krunner accounts DIR`
//! ([`accounts`]), in the kernel's image.
#![forbid(unsafe_code)]

/// One line on stderr in one write. `eprintln!` writes a formatted line piece by piece, and
/// the kernel's other writers to the same log (sshd, the bootstrap script) can land between
/// the pieces.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut line = format!($($arg)*);
        line.push('\n');
        let _ = std::io::stderr().write_all(line.as_bytes());
    }};
}

mod accounts;
mod apps;
mod archive;
mod batch;
mod conn;
mod environ;
mod gate;
mod listing;
mod network;
mod notebook;
mod pool;
mod proto;
mod put;
mod recipe;
mod repl;
mod runtime;
mod scrub;
mod server;
mod session;
mod signal;
mod sshd;
mod stats;
mod terminal;
mod unpack;
mod zygote;

use repl::Repl;
use server::State;
use std::os::unix::net::UnixListener;
use std::sync::Arc;

const SOCKET: &str = "/opt/bai/run/krunner.sock";
const WORKDIR: &str = "/home/work";

fn env_or(key: &str, default: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| default.to_string())
}

/// How many kernels the session has (`BACKENDAI_CLUSTER_SIZE`; 1 when unset).
fn cluster_size() -> u32 {
    std::env::var("BACKENDAI_CLUSTER_SIZE")
        .ok()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(1)
}

/// Batch sessions run their command to its end; inference sessions run their model server
/// in the same way (its exit ends the replica, which the manager replaces).
fn runs_command() -> bool {
    std::env::var("BAI_SESSION_TYPE").is_ok_and(|t| t == "batch" || t == "inference")
}

/// `bai-krunner install BIN RUN` (a kernel pod's init container): exits.
fn install(args: &[std::ffi::OsString]) -> ! {
    let (Some(bin), Some(run)) = (args.get(2), args.get(3)) else {
        say!("usage: bai-krunner install BIN RUN");
        std::process::exit(64);
    };
    let done = std::env::current_exe()
        .map_err(|e| format!("cannot find this binary: {e}"))
        .and_then(|me| unpack::install(&me, std::path::Path::new(bin), std::path::Path::new(run)));
    match done {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            say!("krunner: {e}");
            std::process::exit(70);
        }
    }
}

/// `bai-krunner accounts DIR` (a kernel pod's init container, in the kernel's image): writes
/// the kernel's account files into DIR, says what it found in the termination message, exits.
fn accounts(args: &[std::ffi::OsString]) -> ! {
    let Some(out) = args.get(2) else {
        say!("usage: bai-krunner accounts DIR");
        std::process::exit(64);
    };
    match accounts::write(std::path::Path::new("/etc"), std::path::Path::new(out)) {
        Ok(said) => {
            // Where Kubernetes gave no termination log, the agent only learns nothing.
            let _ = std::fs::write(accounts::TERMINATION_LOG, said);
            say!("krunner: {said}");
            std::process::exit(0);
        }
        Err(e) => {
            say!("krunner: {e}");
            std::process::exit(70);
        }
    }
}

fn listen(socket: &str) -> UnixListener {
    // A stale socket from an earlier run of this kernel would make bind fail.
    let _ = std::fs::remove_file(socket);
    match UnixListener::bind(socket) {
        Ok(l) => l,
        Err(e) => {
            say!("krunner: cannot listen on {socket}: {e}");
            std::process::exit(70);
        }
    }
}

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == "install") {
        install(&args);
    }
    if args.get(1).is_some_and(|a| a == "accounts") {
        accounts(&args);
    }
    // Under the agent's own egress rules (Kubernetes, `--network-policies node`): nothing
    // before they are in.
    if let Some(file) = std::env::var_os(gate::VAR) {
        gate::wait(std::path::Path::new(&file));
    }
    let socket = env_or("BAI_KRUNNER_SOCKET", SOCKET);
    let workdir = env_or("BAI_KRUNNER_WORKDIR", WORKDIR);
    let cleared = scrub::cleared(std::env::vars_os());
    if !cleared.is_empty() {
        let e = scrub::exec_without(&cleared);
        say!("krunner: cannot drop the variables the agent cleared: {e}");
        std::process::exit(70);
    }
    // The runner's own directory: its socket's.
    let run = std::path::Path::new(&socket)
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_else(|| "/opt/bai/run".into());
    // What an agent elsewhere handed over in the kernel's Secret (dotfiles, the token).
    let secret = env_or("BAI_KRUNNER_SECRET", unpack::SECRET_DIR);
    for e in unpack::unpack(
        std::path::Path::new(&secret),
        std::path::Path::new(&workdir),
        &run,
    ) {
        say!("krunner: {e}");
    }
    if std::env::var_os(pool::POOL_VAR).is_some_and(|v| v == "1") {
        // A detached pool pod is claimed over the pod network, with its token.
        let tcp = std::env::var(network::LISTEN_VAR).ok().map(|addr| {
            match network::listen(&addr, &run) {
                Ok(l) => l,
                Err(e) => {
                    say!("krunner: {e}");
                    std::process::exit(70);
                }
            }
        });
        let e = pool::serve_until_bound(&listen(&socket), tcp, &socket, &workdir);
        say!("krunner: cannot become the session's runner: {e}");
        std::process::exit(70);
    }
    // What every shell of the kernel keeps (login shells and sshd set their own otherwise).
    let env = environ::kept(
        std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
    );
    if let Some(run) = std::path::Path::new(&socket).parent()
        && let Err(e) = environ::write(run, &env)
    {
        say!("krunner: cannot keep the environment for login shells: {e}");
    }
    if let Ok(script) = std::env::var("BAI_BOOTSTRAP_SCRIPT")
        && !script.trim().is_empty()
    {
        session::bootstrap(&script, &workdir);
    }
    // Intrinsic apps (in an image that has them); the manager's proxy retries until they answer.
    if let Some(run) = std::path::Path::new(&socket).parent()
        && std::env::var_os("BAI_KERNEL_ID").is_some()
    {
        match sshd::start_sshd(std::path::Path::new(&workdir), run, &env) {
            // A cluster's kernels reach each other over SSH from their first moment
            // (`ssh sub1`): the runner answers once sshd listens.
            Ok(()) if cluster_size() > 1 => sshd::wait_sshd(),
            Ok(()) => {}
            Err(e) => say!("krunner: {e}"),
        }
    }
    // A system session (SFTP) runs sshd alone.
    let system = std::env::var("BAI_SESSION_TYPE").is_ok_and(|t| t == "system");
    if std::env::var_os("BAI_KERNEL_ID").is_some()
        && !system
        && let Err(e) = terminal::start(terminal::TERMINAL_PORT, workdir.clone())
    {
        say!("krunner: no web terminal: {e}");
    }
    let repl = match Repl::start(&runtime::python(), &workdir) {
        Ok(r) => Some(r),
        Err(e) => {
            say!("krunner: no Python REPL ({e}); query mode is unavailable");
            None
        }
    };
    let state = Arc::new(State::new(repl, workdir, run));
    if std::env::var_os("BAI_KERNEL_ID").is_some() && !system && !runs_command() {
        apps::prepare_notebook();
    }
    let listener = listen(&socket);
    // An agent elsewhere reaches the runner over the pod network (`network`), from the
    // same moment as the socket.
    if let Ok(addr) = std::env::var(network::LISTEN_VAR)
        && let Some(run) = std::path::Path::new(&socket).parent()
    {
        match network::listen(&addr, run) {
            Ok((tcp, token)) => {
                let st = state.clone();
                std::thread::spawn(move || network::serve_all(&tcp, &token, &st));
            }
            Err(e) => {
                say!("krunner: {e}");
                std::process::exit(70);
            }
        }
    }
    // The container's log holds this line, written before the runner answers (so before the
    // session is RUNNING; sshd's own lines may come first): a session's logs are never empty.
    say!(
        "krunner: kernel {} ready ({})",
        std::env::var("BAI_KERNEL_ID").unwrap_or_default(),
        std::env::var("BAI_SESSION_TYPE").unwrap_or_else(|_| "interactive".into())
    );
    // Jupyter pre-started in the pool kernel this was: opening it sends it the session.
    if let Some(run) = std::path::Path::new(&socket).parent()
        && let Some((pid, waits_on)) = zygote::adopt(run)
    {
        say!("krunner: {} is pre-started (pid {pid})", zygote::APP);
        state.apps.adopt(pid, waits_on);
    }
    if runs_command()
        && let Ok(cmd) = std::env::var("BAI_STARTUP_COMMAND")
        && !cmd.trim().is_empty()
    {
        let st = state.clone();
        std::thread::spawn(move || session::run_startup(&st, &cmd));
    }
    for conn in listener.incoming() {
        match conn {
            Ok(stream) => {
                let st = state.clone();
                std::thread::spawn(move || server::serve(&st, conn::Conn::Unix(stream)));
            }
            Err(e) => say!("krunner: accept failed: {e}"),
        }
    }
}

#[cfg(test)]
mod tests;
