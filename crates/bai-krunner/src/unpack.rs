//! What an agent that shares no disk with the kernel hands it before it starts (Kubernetes
//! with `--runner-reach network`), and the init container's step that brings the runner in.
//!
//! - [`unpack`]: the kernel's Secret is mounted at [`SECRET_DIR`]; its `files.json` lists which
//!   of its keys go where: the owner's dotfiles into the home, the runner's token and a
//!   cluster session's authorized key into the run directory, each with its mode. krunner
//!   writes them as the kernel's user (so they are the user's, with the modes the user gave,
//!   which a Secret's own files cannot be: the kubelet makes them group-readable) before
//!   anything else starts: the network listener reads the token, sshd the key, a bootstrap
//!   script may read the dotfiles.
//! - [`install`]: `bai-krunner install BIN RUN` in the pod's init container (the agent's
//!   image) copies this binary to `BIN` in a volume the kernel's container mounts, and makes
//!   the empty host table `RUN/hosts`, which the container mounts at `/etc/hosts`.

use crate::put::{self, Place};
use serde::Deserialize;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Where the kernel's Secret is mounted.
pub const SECRET_DIR: &str = "/opt/bai/secret";
/// The Secret's list of what goes where.
pub const MANIFEST: &str = "files.json";

/// One entry of the manifest.
#[derive(Debug, Deserialize)]
struct Entry {
    /// The Secret's key (a file of [`SECRET_DIR`]).
    key: String,
    place: Place,
    path: String,
    mode: u32,
}

/// Writes every file the manifest under `secret` lists into `home` or `run`; answers what
/// failed, one line each (nothing when there is no manifest).
pub fn unpack(secret: &Path, home: &Path, run: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(secret.join(MANIFEST)) else {
        return Vec::new();
    };
    let entries: Vec<Entry> = match serde_json::from_str(&text) {
        Ok(e) => e,
        Err(e) => return vec![format!("the kernel's {MANIFEST} is not readable: {e}")],
    };
    let mut failed = Vec::new();
    for e in entries {
        // A key is one file name of the Secret's volume.
        if e.key.contains('/') || e.key.starts_with('.') {
            failed.push(format!("{:?} is not a key of the kernel's Secret", e.key));
            continue;
        }
        let data = match std::fs::read(secret.join(&e.key)) {
            Ok(d) => d,
            Err(err) => {
                failed.push(format!("cannot read {}: {err}", e.key));
                continue;
            }
        };
        let base = match e.place {
            Place::Home => home,
            Place::Run => run,
        };
        if let Err(err) = put::write(base, e.place, &e.path, &data, e.mode, false) {
            failed.push(err);
        }
    }
    failed
}

/// The SSH server for images without one, where it is beside the runner (the agent's image),
/// and its name beside the installed runner.
const BESIDE: [(&str, &str); 2] = [
    ("bai-dropbear", "dropbear"),
    ("bai-sftp-server", "sftp-server"),
];

/// `bai-krunner install BIN RUN`: this binary copied to `BIN` (a new file renamed over, mode
/// 0755), with the SSH server beside it where it is beside this one, and an empty
/// `RUN/hosts`.
pub fn install(me: &Path, bin: &Path, run: &Path) -> Result<(), String> {
    copy_program(me, bin)?;
    for (name, installed) in BESIDE {
        let from = me.with_file_name(name);
        if from.is_file() {
            copy_program(&from, &bin.with_file_name(installed))?;
        }
    }
    put::write(run, Place::Run, "hosts", b"", 0o644, false)
}

fn copy_program(from: &Path, to: &Path) -> Result<(), String> {
    let tmp = to.with_extension("new");
    std::fs::copy(from, &tmp)
        .and_then(|_| std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)))
        .and_then(|()| std::fs::rename(&tmp, to))
        .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn the_secrets_files_go_where_its_manifest_says_with_their_modes() {
        let (secret, home, run) = (
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
        );
        let s = secret.path();
        std::fs::write(s.join("dotfile-0"), "set number\n").unwrap();
        std::fs::write(s.join("dotfile-1"), "[user]\n").unwrap();
        std::fs::write(s.join("krunner.token"), "t0k3n\n").unwrap();
        // As the kubelet makes a Secret's files: group-readable whatever the mode asked.
        std::fs::set_permissions(s.join("dotfile-0"), std::fs::Permissions::from_mode(0o640))
            .unwrap();
        std::fs::write(
            s.join(MANIFEST),
            r#"[{"key":"dotfile-0","place":"home","path":".vimrc","mode":384},
                {"key":"dotfile-1","place":"home","path":".config/git/config","mode":420},
                {"key":"krunner.token","place":"run","path":"krunner.token","mode":384},
                {"key":"../escape","place":"home","path":"x","mode":420},
                {"key":"missing","place":"home","path":"y","mode":420},
                {"key":"dotfile-0","place":"home","path":"../z","mode":420}]"#,
        )
        .unwrap();
        let failed = unpack(s, home.path(), run.path());
        assert_eq!(failed.len(), 3, "{failed:?}");
        assert!(failed[0].contains("not a key"), "{failed:?}");
        assert!(failed[1].contains("cannot read missing"), "{failed:?}");
        assert!(failed[2].contains("relative"), "{failed:?}");
        let vimrc = home.path().join(".vimrc");
        assert_eq!(std::fs::read_to_string(&vimrc).unwrap(), "set number\n");
        assert_eq!(std::fs::metadata(&vimrc).unwrap().mode() & 0o777, 0o600);
        assert_eq!(
            std::fs::read_to_string(home.path().join(".config/git/config")).unwrap(),
            "[user]\n"
        );
        let token = run.path().join("krunner.token");
        assert_eq!(std::fs::read_to_string(&token).unwrap(), "t0k3n\n");
        assert_eq!(std::fs::metadata(&token).unwrap().mode() & 0o777, 0o600);
        assert!(!home.path().join("x").exists() && !home.path().join("y").exists());
    }

    #[test]
    fn no_manifest_nothing_to_do() {
        let d = tempfile::tempdir().unwrap();
        assert!(unpack(d.path(), d.path(), d.path()).is_empty());
    }

    #[test]
    fn install_copies_the_runner_and_makes_the_host_table() {
        let (from, bin, run) = (
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
        );
        let me = from.path().join("bai-krunner");
        std::fs::write(&me, "#!binary").unwrap();
        let dest = bin.path().join("krunner");
        install(&me, &dest, run.path()).unwrap();
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "#!binary");
        assert_eq!(std::fs::metadata(&dest).unwrap().mode() & 0o777, 0o755);
        assert_eq!(
            std::fs::read_to_string(run.path().join("hosts")).unwrap(),
            ""
        );
        // No SSH server beside it: none installed.
        assert!(!bin.path().join("dropbear").exists());
        // With one: it goes beside the runner under its inside name.
        std::fs::write(from.path().join("bai-dropbear"), "#!dropbear").unwrap();
        install(&me, &dest, run.path()).unwrap();
        let db = bin.path().join("dropbear");
        assert_eq!(std::fs::read_to_string(&db).unwrap(), "#!dropbear");
        assert_eq!(std::fs::metadata(&db).unwrap().mode() & 0o777, 0o755);
        assert!(!bin.path().join("sftp-server").exists());
    }
}
