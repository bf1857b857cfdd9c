//! The start of a preemption's grace: SIGTERM to every process of the kernel except the
//! container's init and krunner itself (and krunner's ancestors), so the user's work (a
//! batch command, a notebook, a terminal) can save and exit while the runner still answers.
//! The end of the grace is the agent's ordinary destroy.

use std::path::Path;
use std::process::Command;

/// The processes to signal among `procs` (pid, parent pid), krunner being `me`: all but
/// pid 1, `me` and `me`'s ancestors.
pub fn targets(procs: &[(u32, u32)], me: u32) -> Vec<u32> {
    let parent = |pid: u32| procs.iter().find(|(p, _)| *p == pid).map(|(_, pp)| *pp);
    let mut keep = vec![1, me];
    let mut at = me;
    while let Some(pp) = parent(at) {
        if pp == 0 || keep.contains(&pp) {
            break;
        }
        keep.push(pp);
        at = pp;
    }
    let mut out: Vec<u32> = procs
        .iter()
        .map(|(p, _)| *p)
        .filter(|p| !keep.contains(p))
        .collect();
    out.sort_unstable();
    out
}

/// The parent pid in a `/proc/PID/stat` line (the field after the state, past the command
/// name in parentheses, which may itself hold spaces and parentheses).
pub fn parent_of(stat: &str) -> Option<u32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Every process visible under `proc` with its parent.
fn processes(proc: &Path) -> Vec<(u32, u32)> {
    let Ok(dir) = std::fs::read_dir(proc) else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
        Some((pid, parent_of(&stat)?))
    })
    .collect()
}

/// Sends SIGTERM to the kernel's other processes; returns how many were signalled.
pub fn terminate_others() -> std::io::Result<usize> {
    let pids = targets(&processes(Path::new("/proc")), std::process::id());
    if pids.is_empty() {
        return Ok(0);
    }
    // The shell's own `kill`: no signal call of our own (krunner has no unsafe code), and
    // the shell, started after the listing, is not among the targets.
    let status = Command::new("/bin/sh")
        .arg("-c")
        .arg("kill -TERM \"$@\" 2>/dev/null; exit 0")
        .arg("sh")
        .args(pids.iter().map(u32::to_string))
        .status()?;
    if !status.success() {
        return Err(std::io::Error::other(format!("kill ended with {status}")));
    }
    Ok(pids.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_krunner_and_its_ancestors_are_spared() {
        // 1 init → 7 krunner → 20 sh → 21 python; 8 sshd under init; 30 a shell of 8.
        let procs = [(1, 0), (7, 1), (20, 7), (21, 20), (8, 1), (30, 8)];
        assert_eq!(targets(&procs, 7), vec![8, 20, 21, 30]);
        // krunner under a wrapper (1 → 5 → 7): the wrapper stays too.
        let procs = [(1, 0), (5, 1), (7, 5), (9, 7)];
        assert_eq!(targets(&procs, 7), vec![9]);
        assert!(targets(&[(1, 0), (7, 1)], 7).is_empty());
    }

    #[test]
    fn the_parent_is_read_past_a_command_name_with_spaces_and_parentheses() {
        assert_eq!(parent_of("21 (python3) S 20 21 7 0"), Some(20));
        assert_eq!(parent_of("22 (a b) (c)) R 7 22 7 0"), Some(7));
        assert_eq!(parent_of("garbage"), None);
    }

    #[test]
    fn this_process_is_never_a_target_of_itself() {
        let procs = processes(Path::new("/proc"));
        let me = std::process::id();
        assert!(procs.iter().any(|(p, _)| *p == me));
        assert!(!targets(&procs, me).contains(&me));
    }
}
