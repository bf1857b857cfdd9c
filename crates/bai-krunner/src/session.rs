//! What runs besides the socket: the bootstrap script and a batch session's startup
//! command, both with the container's own stdout/stderr.

use crate::batch::exit_code;
use crate::server::State;
use std::process::Command;
use std::time::Duration;

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
    let code = match shell(cmd, &state.workdir) {
        Ok(code) => code,
        Err(e) => {
            say!("krunner: cannot run the startup command: {e}");
            127
        }
    };
    std::process::exit(code);
}
