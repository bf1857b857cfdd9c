//! What runs besides the socket: the bootstrap script and a batch session's startup
//! command, both with the container's own stdout/stderr.

use crate::batch::exit_code;
use crate::server::State;
use std::process::Command;
use std::time::Duration;

/// A command ended by SIGTERM, as a shell reports it (128 + 15).
const SIGTERM_EXIT: i32 = 143;
/// How long a batch session waits for the agent's first ping before starting anyway.
const READY_WAIT: Duration = Duration::from_secs(30);

fn shell(script: &str, workdir: &str) -> std::io::Result<i32> {
    Command::new("/bin/sh")
        .arg("-c")
        .arg(script)
        .current_dir(workdir)
        .status()
        .map(exit_code)
}

/// Runs `BAI_BOOTSTRAP_SCRIPT` once, before the kernel is ready. A failure is logged, not
/// fatal: the user can still look at the kernel.
pub fn bootstrap(script: &str, workdir: &str) {
    say!("krunner: running the bootstrap script");
    match shell(script, workdir) {
        Ok(0) => {}
        Ok(code) => say!("krunner: the bootstrap script exited with {code}"),
        Err(e) => say!("krunner: cannot run the bootstrap script: {e}"),
    }
}

/// Batch sessions: once the agent has seen the kernel ready (so it cannot miss a fast
/// command's end), runs the startup command and ends krunner, and with it the container,
/// with the command's exit code (128+n for a signal).
pub fn run_startup(state: &State, cmd: &str) -> ! {
    state.wait_ready(READY_WAIT);
    // Started under the terminate lock: a preemption that came first leaves it unstarted
    // (ended as by SIGTERM), one that comes after signals it with the rest.
    let started = {
        let terminating = state.terminating.lock().unwrap_or_else(|p| p.into_inner());
        if *terminating {
            say!("krunner: preempted before the startup command started");
            std::process::exit(SIGTERM_EXIT);
        }
        Command::new("/bin/sh")
            .arg("-c")
            .arg(cmd)
            .current_dir(&state.workdir)
            .spawn()
    };
    let code = match started.and_then(|mut c| c.wait()) {
        Ok(status) => exit_code(status),
        Err(e) => {
            say!("krunner: cannot run the startup command: {e}");
            127
        }
    };
    std::process::exit(code);
}
