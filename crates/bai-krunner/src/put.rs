//! `{"op":"put","place":"home","path":"a/b.txt","data":"<base64>","mode":420}`: one file
//! written into the kernel by its runner, as the kernel's user, for an agent that shares no
//! disk with the kernel (Kubernetes with `--runner-reach network`): dotfiles and uploads into
//! the home (`place: home`, a relative path under the working directory, its missing folders
//! made), the session's host table into the run directory (`place: run`, one file name).
//!
//! Nothing is followed: a path with `..`, an absolute one, a folder on the way that is a link
//! or a file, or a target that is a link is refused, so a put lands where the path says, as
//! the agent's own upload does on Docker. The file is written in place (opened, truncated,
//! written; never renamed over), so a file mounted elsewhere (the host table at `/etc/hosts`)
//! shows the new text. `append` adds to the file instead (the second and later chunks of a
//! large upload).

pub use crate::proto::{Place, Put};
use base64::Engine;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// The folders from `base` to the target and the target itself, checked: relative, no `..`,
/// and one name only for the run directory.
fn target(base: &Path, place: Place, path: &str) -> Result<(Vec<PathBuf>, PathBuf), String> {
    let p = Path::new(path);
    if path.is_empty() || path.contains('\0') {
        return Err("an empty path".into());
    }
    let mut names = Vec::new();
    for c in p.components() {
        match c {
            Component::Normal(n) => names.push(n.to_os_string()),
            Component::CurDir => {}
            _ => return Err(format!("{path:?} must be a relative path without \"..\"")),
        }
    }
    let Some(last) = names.pop() else {
        return Err(format!("{path:?} names no file"));
    };
    if place == Place::Run && !names.is_empty() {
        return Err(format!("{path:?}: the run directory takes one file name"));
    }
    let mut dirs = Vec::new();
    let mut at = base.to_path_buf();
    for n in names {
        at.push(n);
        dirs.push(at.clone());
    }
    at.push(last);
    Ok((dirs, at))
}

/// Makes each missing folder (0755); refuses one that is a link or not a folder.
fn make_folders(base: &Path, dirs: &[PathBuf]) -> Result<(), String> {
    for d in dirs {
        let shown = d.strip_prefix(base).unwrap_or(d).display();
        match std::fs::symlink_metadata(d) {
            Ok(m) if m.is_dir() => {}
            Ok(m) if m.file_type().is_symlink() => {
                return Err(format!("{shown} is a link, which is not followed"));
            }
            Ok(_) => return Err(format!("{shown} is not a folder")),
            Err(_) => std::fs::create_dir(d)
                .map_err(|e| format!("cannot make the folder {shown}: {e}"))?,
        }
    }
    Ok(())
}

/// Writes the put under `home` or `run`; the error is one line for the agent.
pub fn put(home: &Path, run: &Path, req: &Put) -> Result<(), String> {
    let data = base64::engine::general_purpose::STANDARD
        .decode(req.data.as_bytes())
        .map_err(|e| format!("{}: the data is not base64: {e}", req.path))?;
    let base = match req.place {
        Place::Home => home,
        Place::Run => run,
    };
    write(base, req.place, &req.path, &data, req.mode, req.append)
}

/// Writes `data` at `path` under `base` (the home or the run directory, as `place` says).
pub fn write(
    base: &Path,
    place: Place,
    path: &str,
    data: &[u8],
    mode: u32,
    append: bool,
) -> Result<(), String> {
    let (dirs, file) = target(base, place, path)?;
    make_folders(base, &dirs)?;
    let mode = mode & 0o777;
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .append(append)
        .truncate(!append)
        .mode(mode)
        // A link at the target is refused (ELOOP), never followed.
        .custom_flags(libc::O_NOFOLLOW)
        .open(&file)
        .map_err(|e| format!("cannot write {path}: {e}"))?;
    f.write_all(data)
        .map_err(|e| format!("cannot write {path}: {e}"))?;
    if !append {
        f.set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(|e| format!("cannot set the mode of {path}: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn req(place: Place, path: &str, data: &[u8], mode: u32, append: bool) -> Put {
        Put {
            place,
            path: path.into(),
            data: base64::engine::general_purpose::STANDARD.encode(data),
            mode,
            append,
        }
    }

    #[test]
    fn a_put_lands_under_the_home_with_its_folders_and_mode() {
        let (home, run) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        put(
            home.path(),
            run.path(),
            &req(Place::Home, "a/b/c.txt", b"hello", 0o600, false),
        )
        .unwrap();
        let f = home.path().join("a/b/c.txt");
        assert_eq!(std::fs::read(&f).unwrap(), b"hello");
        assert_eq!(std::fs::metadata(&f).unwrap().mode() & 0o777, 0o600);
        assert!(home.path().join("a/b").is_dir());
        // Again: replaced; then a chunk added.
        put(
            home.path(),
            run.path(),
            &req(Place::Home, "./a/b/c.txt", b"he", 0o644, false),
        )
        .unwrap();
        put(
            home.path(),
            run.path(),
            &req(Place::Home, "a/b/c.txt", b"llo!", 0o644, true),
        )
        .unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"hello!");
        assert_eq!(std::fs::metadata(&f).unwrap().mode() & 0o777, 0o644);
    }

    #[test]
    fn nothing_escapes_and_no_link_is_followed() {
        let (home, run) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let outside = tempfile::tempdir().unwrap();
        let refused = |place, path: &str| {
            put(
                home.path(),
                run.path(),
                &req(place, path, b"x", 0o644, false),
            )
            .unwrap_err()
        };
        assert!(refused(Place::Home, "../x").contains("relative"));
        assert!(refused(Place::Home, "/etc/x").contains("relative"));
        assert!(refused(Place::Home, "a/../../x").contains("relative"));
        assert!(refused(Place::Home, "").contains("empty"));
        assert!(refused(Place::Run, "a/hosts").contains("one file name"));
        // A folder on the way that is a link, and a target that is one.
        std::os::unix::fs::symlink(outside.path(), home.path().join("out")).unwrap();
        assert!(refused(Place::Home, "out/x").contains("link"));
        let victim = outside.path().join("victim");
        std::fs::write(&victim, "kept").unwrap();
        std::os::unix::fs::symlink(&victim, home.path().join("v")).unwrap();
        assert!(refused(Place::Home, "v").contains("cannot write"));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "kept");
        std::fs::write(home.path().join("file"), "f").unwrap();
        assert!(refused(Place::Home, "file/x").contains("not a folder"));
        let bad = Put {
            data: "not base64!".into(),
            ..req(Place::Home, "y", b"", 0o644, false)
        };
        assert!(
            put(home.path(), run.path(), &bad)
                .unwrap_err()
                .contains("base64")
        );
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1);
    }

    #[test]
    fn the_host_table_is_rewritten_in_place() {
        let (home, run) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let hosts = run.path().join("hosts");
        std::fs::write(&hosts, "").unwrap();
        let inode = std::fs::metadata(&hosts).unwrap().ino();
        put(
            home.path(),
            run.path(),
            &req(Place::Run, "hosts", b"10.0.0.2\tsub1\n", 0o644, false),
        )
        .unwrap();
        assert_eq!(std::fs::read_to_string(&hosts).unwrap(), "10.0.0.2\tsub1\n");
        assert_eq!(
            std::fs::metadata(&hosts).unwrap().ino(),
            inode,
            "the same file (a mount of it sees the text)"
        );
    }
}
