//! A kernel's home directory before it starts: its owner's dotfiles written into it (tmux's
//! defaults are the system's, `etc.rs`: a user's `.tmux.conf` adds to them).
//!
//! The home is the kernel's fresh scratch directory on this host; every path is joined under
//! it (no `..`, no absolute path: the manager refused those already, this refuses them again)
//! and every file and directory made is the kernel user's.

use super::WORK_UID;
use crate::paths::confined_join;
use bai_core::agent::AgentError;
use bai_core::dotfile::Dotfile;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn fail(what: impl std::fmt::Display, e: impl std::fmt::Display) -> AgentError {
    AgentError::Runtime(format!("{what}: {e}"))
}

fn give(p: &Path) -> Result<(), AgentError> {
    std::os::unix::fs::lchown(p, Some(WORK_UID), Some(WORK_UID)).map_err(|e| {
        fail(
            format_args!("cannot hand {} to the kernel user", p.display()),
            e,
        )
    })
}

/// Writes `dotfiles` into `home`.
pub fn fill(home: &Path, dotfiles: &[Dotfile]) -> Result<(), AgentError> {
    for d in dotfiles {
        let target = confined_join(home, &d.path)
            .map_err(|e| AgentError::BadRequest(format!("dotfile {:?}: {e}", d.path)))?;
        // Its directories, each the kernel user's (none is a link: the home is new).
        let mut dir = home.to_path_buf();
        if let Some(parent) = Path::new(&d.path).parent() {
            for c in parent.components() {
                dir.push(c);
                match std::fs::symlink_metadata(&dir) {
                    Ok(m) if m.is_dir() => {}
                    Ok(_) => {
                        return Err(AgentError::BadRequest(format!(
                            "dotfile {:?}: {} is not a directory",
                            d.path,
                            dir.display()
                        )));
                    }
                    Err(_) => {
                        std::fs::create_dir(&dir).map_err(|e| {
                            fail(format_args!("cannot create {}", dir.display()), e)
                        })?;
                        give(&dir)?;
                    }
                }
            }
        }
        std::fs::write(&target, &d.data)
            .map_err(|e| fail(format_args!("cannot write dotfile {}", d.path), e))?;
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(d.mode & 0o777))
            .map_err(|e| fail(format_args!("cannot set the mode of dotfile {}", d.path), e))?;
        give(&target)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotfiles_land_in_the_home_with_their_modes_and_no_other_file() {
        if !crate::kernel_files::running_as_root() {
            // Handing files to uid 1000 needs root (the agent runs as root).
            return;
        }
        let home = tempfile::tempdir().expect("tempdir");
        let files = vec![
            Dotfile {
                path: ".config/nvim/init.vim".into(),
                mode: 0o600,
                data: "set nu\n".into(),
            },
            Dotfile {
                path: ".bashrc".into(),
                mode: 0o644,
                data: "alias ll='ls -l'\n".into(),
            },
        ];
        fill(home.path(), &files).expect("fill");
        let vim = home.path().join(".config/nvim/init.vim");
        assert_eq!(std::fs::read_to_string(&vim).expect("read"), "set nu\n");
        let meta = std::fs::metadata(&vim).expect("stat");
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        use std::os::unix::fs::MetadataExt;
        assert_eq!(meta.uid(), WORK_UID);
        assert_eq!(
            std::fs::metadata(home.path().join(".config"))
                .expect("stat")
                .uid(),
            WORK_UID
        );
        // tmux's defaults are the system's (etc.rs), not a file in the home.
        assert!(!home.path().join(".tmux.conf").exists());

        // The user's own .tmux.conf is written as it is; a path out of the home is refused.
        let own = tempfile::tempdir().expect("tempdir");
        let mine = Dotfile {
            path: ".tmux.conf".into(),
            mode: 0o644,
            data: "set -g mouse off\n".into(),
        };
        fill(own.path(), std::slice::from_ref(&mine)).expect("fill");
        assert_eq!(
            std::fs::read_to_string(own.path().join(".tmux.conf")).expect("read"),
            mine.data
        );
        let out = Dotfile {
            path: "../escape".into(),
            mode: 0o644,
            data: String::new(),
        };
        assert!(fill(own.path(), &[out]).is_err());
        assert!(!own.path().parent().expect("parent").join("escape").exists());
    }
}
