//! A user's dotfiles: small files the platform keeps for them (`.tmux.conf`, `.bashrc`,
//! `.vimrc`, …) and writes into the home directory of every session they start.
//!
//! A dotfile's path is always inside the home directory (`/home/work`): given relative
//! (`.vimrc`), with `~/` or as `/home/work/…`, it is kept relative and normalized. Paths that
//! leave the home, climb with `..`, or name what the platform itself writes there (the SSH
//! keys of a session) are refused. The permission is an octal mode (`644`, `0755`).

use serde::{Deserialize, Serialize};
use std::fmt;

/// The most dotfiles one user keeps.
pub const MAX_DOTFILES: usize = 100;
/// The most bytes of all of one user's dotfiles together (Backend.AI's limit too).
pub const MAX_TOTAL_BYTES: usize = 64 * 1024;
/// The longest path.
pub const MAX_PATH_LEN: usize = 255;
/// The home directory dotfiles are written into.
pub const HOME: &str = "/home/work";
/// The permission of a dotfile stored without one.
pub const DEFAULT_PERMISSION: u32 = 0o644;

/// Paths the platform writes itself (a dotfile there would be overwritten or break SSH).
const RESERVED: &[&str] = &[".ssh/authorized_keys", ".ssh/id_container", ".password"];

/// A dotfile as it is kept and handed to the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dotfile {
    /// Relative to the home directory, normalized (`.config/nvim/init.vim`).
    pub path: String,
    /// The file mode (`0o644`).
    pub mode: u32,
    pub data: String,
}

impl Dotfile {
    /// The permission as the wire writes it (`"644"`).
    pub fn permission(&self) -> String {
        format!("{:o}", self.mode)
    }
}

/// Why a dotfile was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DotfileError(pub String);

impl fmt::Display for DotfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DotfileError {}

fn bad(msg: impl Into<String>) -> DotfileError {
    DotfileError(msg.into())
}

/// The path relative to the home directory, or why it cannot be a dotfile's.
pub fn parse_path(raw: &str) -> Result<String, DotfileError> {
    let p = raw.trim();
    if p.is_empty() {
        return Err(bad("a dotfile needs a path (e.g. .vimrc)"));
    }
    if p.len() > MAX_PATH_LEN {
        return Err(bad(format!(
            "the dotfile path is {} bytes long; at most {MAX_PATH_LEN}",
            p.len()
        )));
    }
    if p.contains('\0') {
        return Err(bad("the dotfile path contains a NUL byte"));
    }
    let rel = if let Some(r) = p.strip_prefix("~/") {
        r
    } else if let Some(r) = p.strip_prefix(HOME) {
        match r.strip_prefix('/') {
            Some(r) => r,
            None if r.is_empty() => "",
            None => return Err(outside(p)),
        }
    } else if p.starts_with('/') || p.starts_with('~') {
        return Err(outside(p));
    } else {
        p
    };
    let mut parts = Vec::new();
    for c in rel.split('/') {
        match c {
            "" | "." => continue,
            ".." => {
                return Err(bad(format!(
                    "dotfile path {p:?} climbs out with '..': give a path inside {HOME}"
                )));
            }
            c => parts.push(c),
        }
    }
    if parts.is_empty() {
        return Err(bad(format!(
            "dotfile path {p:?} names the home directory itself: give a file in it"
        )));
    }
    let norm = parts.join("/");
    if RESERVED.contains(&norm.as_str()) {
        return Err(bad(format!(
            "dotfile path {norm:?} is reserved: the platform writes it for every session"
        )));
    }
    Ok(norm)
}

fn outside(p: &str) -> DotfileError {
    bad(format!(
        "dotfile path {p:?} is outside the home directory: give a path relative to {HOME} (e.g. .vimrc)"
    ))
}

/// An octal file mode (`"644"`, `"0755"`, `"0o600"`); none gives [`DEFAULT_PERMISSION`].
pub fn parse_permission(raw: Option<&str>) -> Result<u32, DotfileError> {
    let Some(raw) = raw.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(DEFAULT_PERMISSION);
    };
    let digits = raw.strip_prefix("0o").unwrap_or(raw);
    let mode = if digits.len() <= 4 && digits.chars().all(|c| ('0'..='7').contains(&c)) {
        u32::from_str_radix(digits, 8).ok()
    } else {
        None
    };
    match mode {
        Some(m) if m <= 0o777 => Ok(m),
        _ => Err(bad(format!(
            "permission {raw:?} is not a file mode: give three octal digits such as 644 or 755"
        ))),
    }
}

/// A dotfile from what a user sent.
pub fn parse(path: &str, permission: Option<&str>, data: &str) -> Result<Dotfile, DotfileError> {
    let path = parse_path(path)?;
    let mode = parse_permission(permission)?;
    if data.contains('\0') {
        return Err(bad(format!("dotfile {path:?} contains a NUL byte")));
    }
    Ok(Dotfile {
        path,
        mode,
        data: data.to_string(),
    })
}

/// Whether one user's dotfiles together stay within the limits (count and total size).
pub fn check_set(all: &[Dotfile]) -> Result<(), DotfileError> {
    if all.len() > MAX_DOTFILES {
        return Err(bad(format!(
            "at most {MAX_DOTFILES} dotfiles are kept per user; delete one first"
        )));
    }
    let total: usize = all.iter().map(|d| d.data.len() + d.path.len()).sum();
    if total > MAX_TOTAL_BYTES {
        return Err(bad(format!(
            "dotfiles may hold at most {} KiB together; these would hold {} bytes",
            MAX_TOTAL_BYTES / 1024,
            total
        )));
    }
    // A file cannot also be the directory of another.
    for a in all {
        let dir = format!("{}/", a.path);
        if let Some(b) = all.iter().find(|b| b.path.starts_with(&dir)) {
            return Err(bad(format!(
                "dotfile {:?} would be a directory of dotfile {:?}",
                a.path, b.path
            )));
        }
    }
    Ok(())
}

/// The dotfile (if any) that lies at or under a data folder's mount point in the home
/// directory (`rel`: the folder's path relative to it).
pub fn under_mount<'a>(all: &'a [Dotfile], rel: &str) -> Option<&'a Dotfile> {
    let dir = format!("{rel}/");
    all.iter()
        .find(|d| d.path == rel || d.path.starts_with(&dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_kept_inside_the_home() {
        assert_eq!(parse_path(".vimrc").unwrap(), ".vimrc");
        assert_eq!(parse_path("~/.bashrc").unwrap(), ".bashrc");
        assert_eq!(parse_path("/home/work/.tmux.conf").unwrap(), ".tmux.conf");
        assert_eq!(
            parse_path("./.config//nvim/init.vim").unwrap(),
            ".config/nvim/init.vim"
        );
        for p in [
            "/etc/passwd",
            "/home/workx/a",
            "~root/.bashrc",
            "../x",
            ".config/../../x",
            "",
            "/home/work",
            "/home/work/",
            ".ssh/authorized_keys",
            "~/.ssh//id_container",
        ] {
            assert!(parse_path(p).is_err(), "{p:?} was accepted");
        }
        assert!(parse_path(&"a".repeat(MAX_PATH_LEN + 1)).is_err());
        assert!(parse_path("a\0b").is_err());
    }

    #[test]
    fn permissions_are_octal_modes() {
        assert_eq!(parse_permission(None).unwrap(), 0o644);
        assert_eq!(parse_permission(Some("755")).unwrap(), 0o755);
        assert_eq!(parse_permission(Some("0600")).unwrap(), 0o600);
        assert_eq!(parse_permission(Some("0o700")).unwrap(), 0o700);
        for p in ["888", "rwx", "7777", "1000", "-1", "12345"] {
            assert!(parse_permission(Some(p)).is_err(), "{p:?} was accepted");
        }
        let d = parse(".vimrc", Some("600"), "set nu\n").unwrap();
        assert_eq!(d.permission(), "600");
    }

    #[test]
    fn a_users_set_has_limits() {
        let f = |p: &str, n: usize| Dotfile {
            path: p.into(),
            mode: 0o644,
            data: "x".repeat(n),
        };
        assert!(check_set(&[f(".a", 10), f(".b", 10)]).is_ok());
        assert!(check_set(&[f(".a", MAX_TOTAL_BYTES)]).is_err());
        let many: Vec<_> = (0..=MAX_DOTFILES)
            .map(|i| f(&format!(".f{i}"), 1))
            .collect();
        assert!(check_set(&many).is_err());
        assert!(check_set(&[f(".config", 1), f(".config/x", 1)]).is_err());
        let set = [f(".vimrc", 1), f("data/x", 1)];
        assert_eq!(
            under_mount(&set, "data").map(|d| d.path.as_str()),
            Some("data/x")
        );
        assert!(under_mount(&set, "dat").is_none());
    }
}
