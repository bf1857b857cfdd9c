//! Paths inside a data folder, as users give them: confined to the folder, always.
//!
//! [`confine`] checks the text (no NUL, not absolute, no `..`, bounded lengths) and returns a
//! normalised relative path; the storage layer then refuses to follow symlinks that lead out
//! of the folder (it resolves the deepest existing ancestor and checks it is still inside).

use std::path::{Component, Path, PathBuf};

/// Longest path accepted, in bytes.
pub const MAX_PATH: usize = 4096;
/// Longest single name accepted, in bytes.
pub const MAX_NAME: usize = 255;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("the path contains a NUL byte")]
    Nul,
    #[error("the path {0:?} is absolute: give a path inside the folder, like data/file.txt")]
    Absolute(String),
    #[error("the path {0:?} goes outside the folder ('..' is not allowed)")]
    Escapes(String),
    #[error("the path is longer than {MAX_PATH} bytes")]
    TooLong,
    #[error("the name {0:?} is longer than {MAX_NAME} bytes")]
    NameTooLong(String),
}

/// A user's path made relative to the folder root: `"."`, `""` and `"/"`-free forms mean the
/// root itself (an empty path). `a/./b//c` becomes `a/b/c`.
pub fn confine(p: &str) -> Result<PathBuf, PathError> {
    if p.contains('\0') {
        return Err(PathError::Nul);
    }
    if p.len() > MAX_PATH {
        return Err(PathError::TooLong);
    }
    if p.starts_with('/') || p.starts_with('\\') {
        return Err(PathError::Absolute(p.to_string()));
    }
    let mut out = PathBuf::new();
    for c in Path::new(p).components() {
        match c {
            Component::Normal(n) => {
                let s = n.to_string_lossy();
                if s.len() > MAX_NAME {
                    return Err(PathError::NameTooLong(s.chars().take(32).collect()));
                }
                out.push(n);
            }
            Component::CurDir => {}
            Component::ParentDir => return Err(PathError::Escapes(p.to_string())),
            Component::RootDir | Component::Prefix(_) => {
                return Err(PathError::Absolute(p.to_string()));
            }
        }
    }
    Ok(out)
}

/// A single new name (rename): one component, no separators.
pub fn confine_name(n: &str) -> Result<String, PathError> {
    let p = confine(n)?;
    let mut comps = p.components();
    match (comps.next(), comps.next()) {
        (Some(Component::Normal(x)), None) if !n.contains('/') => Ok(x.to_string_lossy().into()),
        _ => Err(PathError::Escapes(n.to_string())),
    }
}

/// Why `name`, as a folder name or as the first path component of a mount under /home/work,
/// is reserved (it would shadow what the session itself puts in /home/work), or None.
/// Other dot-names are fine: they make automount folders (`.ssh`, `.local`, `.cache`…).
pub fn reserved_name(name: &str) -> Option<&'static str> {
    const FIXED: &[(&str, &str)] = &[
        (".terminfo", "the terminal descriptions of the web terminal"),
        (".jupyter", "the Jupyter configuration of the session"),
        (".tmux.conf", "the tmux configuration of the web terminal"),
        (".bai", "bai's own files in the session"),
        ("id_container", "the session's generated SSH key"),
        ("id_container.pub", "the session's generated SSH key"),
    ];
    if let Some((_, why)) = FIXED.iter().find(|(n, _)| *n == name) {
        return Some(why);
    }
    let word = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    if let Some(stem) = name.strip_prefix('.') {
        if stem.strip_suffix("rc").is_some_and(word) {
            return Some("start-up files such as .bashrc belong to the session");
        }
        if stem.strip_suffix("_profile").is_some_and(word) {
            return Some("login profiles such as .bash_profile belong to the session");
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_paths_are_normalised() {
        assert_eq!(confine("a/./b//c").unwrap(), PathBuf::from("a/b/c"));
        assert_eq!(confine(".").unwrap(), PathBuf::new());
        assert_eq!(confine("").unwrap(), PathBuf::new());
        assert_eq!(confine_name("x.txt").unwrap(), "x.txt");
    }

    #[test]
    fn escapes_are_refused() {
        assert!(matches!(
            confine("../etc/passwd"),
            Err(PathError::Escapes(_))
        ));
        assert!(matches!(confine("a/../../b"), Err(PathError::Escapes(_))));
        assert!(matches!(confine("a/.."), Err(PathError::Escapes(_))));
        assert!(matches!(
            confine("/etc/passwd"),
            Err(PathError::Absolute(_))
        ));
        assert_eq!(confine("a\0b"), Err(PathError::Nul));
        assert_eq!(confine(&"a/".repeat(3000)), Err(PathError::TooLong));
        assert!(matches!(
            confine(&"n".repeat(300)),
            Err(PathError::NameTooLong(_))
        ));
        assert!(confine_name("a/b").is_err());
        assert!(confine_name("..").is_err());
    }

    #[test]
    fn reserved_names_are_the_sessions_own_files() {
        for n in [
            ".bashrc",
            ".vimrc",
            ".zshrc",
            ".bash_profile",
            ".jupyter",
            ".tmux.conf",
            ".terminfo",
            "id_container",
        ] {
            assert!(reserved_name(n).is_some(), "{n} should be reserved");
        }
        for n in [
            ".ssh",
            ".local",
            ".cache",
            "data",
            "rc",
            ".rc",
            ".Bashrc",
            "bashrc",
            "my_profile",
        ] {
            assert!(reserved_name(n).is_none(), "{n} should be allowed");
        }
    }
}
