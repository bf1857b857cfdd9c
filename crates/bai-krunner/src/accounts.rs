//! `bai-krunner accounts DIR`: a Kubernetes kernel pod's init container, run in the
//! kernel's own image as the kernel's user. It reads the image's `/etc/passwd`, `/etc/group`
//! and `/etc/shells` and writes into `DIR` the `passwd` and `group` the kernel's container
//! mounts over the image's: with `work` (uid 1000) added where the image lacks it
//! (`bai_accounts::with_work_user`), else the image's own, unchanged. What it found goes to
//! the container's termination message ([`TERMINATION_LOG`]), from which the agent learns
//! whether the image's later pods need this at all.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Where Kubernetes takes a container's termination message from (the default path).
pub const TERMINATION_LOG: &str = "/dev/termination-log";
pub use bai_accounts::{ADDED, UNCHANGED};

/// Reads the image's account files under `etc`, writes the kernel's under `out`; answers
/// the termination message.
pub fn write(etc: &Path, out: &Path) -> Result<&'static str, String> {
    let read = |name: &str| -> Result<String, String> {
        let p = etc.join(name);
        match std::fs::read(&p) {
            Ok(b) => Ok(String::from_utf8_lossy(&b).into_owned()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
            Err(e) => Err(format!("cannot read {}: {e}", p.display())),
        }
    };
    let (passwd, group, shells) = (read("passwd")?, read("group")?, read("shells")?);
    let (files, said) = match bai_accounts::with_work_user(&passwd, &group, &shells) {
        Some(a) => ((a.passwd, a.group), ADDED),
        None => ((passwd, group), UNCHANGED),
    };
    for (name, text) in [("passwd", files.0), ("group", files.1)] {
        let p = out.join(name);
        std::fs::write(&p, text)
            .and_then(|()| std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)))
            .map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    }
    Ok(said)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_without_the_user_gets_it_and_one_with_it_keeps_its_files() {
        let etc = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        std::fs::write(etc.path().join("passwd"), "root:x:0:0::/root:/bin/sh\n").unwrap();
        std::fs::write(etc.path().join("group"), "root:x:0:\n").unwrap();
        assert_eq!(write(etc.path(), out.path()).unwrap(), ADDED);
        let passwd = std::fs::read_to_string(out.path().join("passwd")).unwrap();
        assert!(
            passwd.ends_with("work:x:1000:1000::/home/work:/bin/sh\n"),
            "{passwd}"
        );
        let group = std::fs::read_to_string(out.path().join("group")).unwrap();
        assert_eq!(group, "root:x:0:\nwork:x:1000:\n");

        // The completed files as an image's own: written back as they are.
        std::fs::write(etc.path().join("passwd"), &passwd).unwrap();
        std::fs::write(etc.path().join("group"), &group).unwrap();
        let again = tempfile::tempdir().unwrap();
        assert_eq!(write(etc.path(), again.path()).unwrap(), UNCHANGED);
        assert_eq!(
            std::fs::read_to_string(again.path().join("passwd")).unwrap(),
            passwd
        );
    }

    #[test]
    fn an_unwritable_place_is_said() {
        let etc = tempfile::tempdir().unwrap();
        let e = write(etc.path(), Path::new("/nonexistent/bai")).unwrap_err();
        assert!(e.contains("cannot write /nonexistent/bai/passwd"), "{e}");
    }
}
