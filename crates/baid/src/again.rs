//! Executing this very build again in this process (same pid, same arguments), as a manager
//! that lost the lead does ([`crate::lead`]).
//!
//! Two things `std::process::Command::exec` gets wrong for a busy, many-threaded process:
//! - It sets SIGPIPE back to its default action, for the whole process, before it calls
//!   `execve`. Every other thread still runs until the kernel ends them; one that writes
//!   to a socket whose peer went (an agent's link, a client) in that moment kills the
//!   process with SIGPIPE. Found by the nemesis test: a fenced manager died of signal 13
//!   instead of standing by. `execve` is called here directly, and SIGPIPE stays ignored.
//! - The program is found by its path, which names another file (or none) once the binary
//!   was replaced since this process started (a package upgrade, a rebuild). The running
//!   build is executed instead, by the kernel's link to it when its path no longer names it.

use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The kernel's link to the running program.
const RUNNING: &str = "/proc/self/exe";

/// The file to execute: the path this process started from while it still names the running
/// build (so `ps` shows its name), otherwise the kernel's link to that build.
fn program() -> PathBuf {
    use std::os::unix::fs::MetadataExt;
    let same = |p: &Path| match (std::fs::metadata(p), std::fs::metadata(RUNNING)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    };
    std::env::current_exe()
        .ok()
        .filter(|p| same(p))
        .unwrap_or_else(|| PathBuf::from(RUNNING))
}

fn c(s: &OsStr) -> Result<CString, String> {
    CString::new(s.as_bytes()).map_err(|_| format!("{s:?} holds a NUL byte"))
}

/// Executes the running build again with this process's arguments and environment, `set`
/// added; returns only when that failed, with why.
pub fn exec_again(set: (&str, &str)) -> String {
    let run = || -> Result<std::convert::Infallible, String> {
        let path = c(program().as_os_str())?;
        let args = std::env::args_os()
            .map(|a| c(&a))
            .collect::<Result<Vec<_>, _>>()?;
        let mut env = std::env::vars_os()
            .filter(|(k, _)| k != set.0)
            .map(|(k, v)| {
                let mut kv = k.into_encoded_bytes();
                kv.push(b'=');
                kv.extend(v.into_encoded_bytes());
                CString::new(kv).map_err(|_| "a variable holds a NUL byte".to_string())
            })
            .collect::<Result<Vec<_>, _>>()?;
        env.push(c(OsStr::new(&format!("{}={}", set.0, set.1)))?);
        nix::unistd::execve(&path, &args, &env).map_err(|e| e.to_string())
    };
    match run() {
        Ok(never) => match never {},
        Err(e) => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_running_build_is_found_by_its_path_while_the_path_names_it() {
        // A test binary is not replaced while it runs: its own path names it.
        let p = program();
        assert_eq!(p, std::env::current_exe().unwrap());
        assert_ne!(p, PathBuf::from(RUNNING));
    }
}
