//! The egress gate (the Kubernetes backend's `--network-policies node`): a kernel pod has
//! no rules until the agent loads its nftables table into the pod's network namespace, so
//! the runner, the pod's first process, starts nothing (no listener, no app, no code of the
//! image's) until the agent says they are in, by creating the file `BAI_EGRESS_GATE` names.

use std::path::Path;
use std::time::Duration;

/// The variable naming the file that opens the gate; unset: no gate.
pub const VAR: &str = "BAI_EGRESS_GATE";
const LOOK_EVERY: Duration = Duration::from_millis(20);

/// Waits until `file` exists (the agent writes it once the rules are in). No limit: an agent
/// that gives up on the kernel deletes its pod.
pub fn wait(file: &Path) {
    while !file.exists() {
        std::thread::sleep(LOOK_EVERY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_opens_when_its_file_appears() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("egress-ready");
        let waiting = {
            let file = file.clone();
            std::thread::spawn(move || wait(&file))
        };
        std::thread::sleep(Duration::from_millis(100));
        assert!(!waiting.is_finished(), "the gate opened without its file");
        std::fs::write(&file, b"").unwrap();
        waiting.join().unwrap();
    }
}
