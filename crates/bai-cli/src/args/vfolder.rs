//! Data folder commands: `bai vfolder …`.

use clap::Subcommand;
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum VfolderCmd {
    /// Create a data folder.
    Create {
        name: String,
        /// Storage host, e.g. nfs:shared (default: the server's default; see `bai vfolder hosts`).
        host: Option<String>,
        /// rw or ro (read-only inside sessions).
        #[arg(short, long, default_value = "rw", value_parser = parse_perm)]
        permission: bai_core::FolderPermission,
        /// Size limit, e.g. 10g (the folder becomes a filesystem of that size).
        #[arg(long)]
        quota: Option<String>,
        /// Make it a project folder, shared with the project's members (administrators only).
        #[arg(short = 'g', long = "project")]
        project: Option<String>,
        /// general, model (a model store a service can serve) or data.
        #[arg(short = 'm', long = "usage-mode", default_value = "general", value_parser = parse_usage_mode)]
        usage_mode: bai_api::folders::UsageMode,
    },
    /// Your data folders and your projects' folders.
    List,
    /// The storage hosts folders can be created on, and the default one.
    #[command(visible_alias = "list-hosts")]
    Hosts,
    /// A folder's details.
    Info { name: String },
    /// Rename a folder.
    Rename { name: String, new_name: String },
    /// Open SFTP (scp, rsync over ssh) to a folder: starts a system session with the folder
    /// mounted and only sshd, saves its key, and prints how to connect. The session ends when
    /// no connection has been open for a while (or with `bai rm NAME`; see `bai ps --system`).
    Sftp {
        name: String,
        /// Where to save the private key (default: ./sftp-NAME.key).
        #[arg(short = 'o', long = "key-file", value_name = "FILE")]
        key_file: Option<std::path::PathBuf>,
    },
    /// Move a folder to the trash (restore it, or purge it for good, from there).
    #[command(visible_alias = "rm-folder")]
    Delete {
        name: String,
        /// Delete it with its files now, without the trash.
        #[arg(long)]
        purge: bool,
    },
    /// Folders in your trash.
    Trash,
    /// Bring a folder back from the trash.
    Restore { name: String },
    /// Delete a folder in the trash, with its files, for good.
    Purge { name: String },
    /// Files in a folder's directory.
    Ls {
        name: String,
        #[arg(default_value = ".")]
        path: String,
    },
    /// Create directories.
    Mkdir {
        name: String,
        #[arg(required = true)]
        paths: Vec<String>,
        /// Create parents as needed.
        #[arg(short, long)]
        parents: bool,
        /// No error when it exists.
        #[arg(short, long)]
        exist_ok: bool,
    },
    /// Upload files (paths relative to --base-dir keep their directories).
    Upload {
        name: String,
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[arg(long, default_value = ".")]
        base_dir: PathBuf,
        /// No progress bar.
        #[arg(short, long)]
        quiet: bool,
    },
    /// Download files into --base-dir.
    Download {
        name: String,
        #[arg(required = true)]
        files: Vec<String>,
        #[arg(long, default_value = ".")]
        base_dir: PathBuf,
        /// No progress bar.
        #[arg(short, long)]
        quiet: bool,
    },
    /// Rename a file or directory in place.
    RenameFile {
        name: String,
        path: String,
        new_name: String,
    },
    /// Move a file or directory inside the folder.
    Mv {
        name: String,
        src: String,
        dst: String,
    },
    /// Delete files (-r for directories).
    Rm {
        name: String,
        #[arg(required = true)]
        files: Vec<String>,
        #[arg(short, long)]
        recursive: bool,
    },
    /// Invite users (by email) to a folder of yours; they accept with `bai vfolder accept`.
    Invite {
        name: String,
        #[arg(required = true)]
        emails: Vec<String>,
        /// What they may do: ro (read only), rw or wd.
        #[arg(short = 'p', long = "perm", default_value = "rw", value_parser = parse_perm)]
        perm: bai_core::FolderPermission,
    },
    /// Pending invitations to you (`--sent`: the ones you sent).
    Invitations {
        #[arg(long)]
        sent: bool,
    },
    /// Accept an invitation: the folder is shared with you.
    Accept { invitation_id: String },
    /// Reject an invitation to you, or cancel one you sent.
    Reject { invitation_id: String },
    /// Give project members their own permission on a project folder (administrators).
    Share {
        name: String,
        #[arg(required = true)]
        emails: Vec<String>,
        #[arg(short = 'p', long = "perm", default_value = "ro", value_parser = parse_perm)]
        perm: bai_core::FolderPermission,
    },
    /// End shares: members get the project folder's own permission back; invitees of your
    /// folder lose it.
    Unshare {
        name: String,
        #[arg(required = true)]
        emails: Vec<String>,
    },
    /// Leave a folder another user shared with you.
    Leave { name: String },
    /// Who the folders you manage are shared with (one folder's when named).
    Shared { name: Option<String> },
    /// Copy a folder you may read into a new folder of yours.
    Clone {
        name: String,
        new_name: String,
        /// Storage host of the copy (default: the source's).
        #[arg(long)]
        host: Option<String>,
        /// No progress output.
        #[arg(short, long)]
        quiet: bool,
    },
}

fn parse_perm(s: &str) -> Result<bai_core::FolderPermission, String> {
    bai_core::FolderPermission::parse(s)
        .ok_or_else(|| format!("permission {s:?} is unknown: use ro, rw or wd"))
}

fn parse_usage_mode(s: &str) -> Result<bai_api::folders::UsageMode, String> {
    serde_json::from_value(serde_json::Value::String(s.to_string()))
        .map_err(|_| format!("usage mode {s:?} is unknown: use general, model or data"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Cmd};
    use clap::Parser;

    #[test]
    fn vfolder_create_takes_the_host_second_and_hosts_lists_them() {
        let vf = |args: &[&str]| {
            let mut v = vec!["bai", "vfolder"];
            v.extend_from_slice(args);
            match Cli::try_parse_from(v).unwrap().cmd {
                Cmd::Vfolder(c) => c,
                other => panic!("{other:?}"),
            }
        };
        let VfolderCmd::Create {
            name,
            host,
            permission,
            quota,
            ..
        } = vf(&["create", "data", "nfs:shared", "-p", "ro", "--quota", "1g"])
        else {
            panic!()
        };
        assert_eq!(
            (name.as_str(), host.as_deref(), permission.as_str()),
            ("data", Some("nfs:shared"), "ro")
        );
        assert_eq!(quota.as_deref(), Some("1g"));
        assert!(matches!(
            vf(&["create", "data"]),
            VfolderCmd::Create { host: None, .. }
        ));
        assert!(matches!(vf(&["hosts"]), VfolderCmd::Hosts));
        assert!(matches!(vf(&["list-hosts"]), VfolderCmd::Hosts));
    }
}
