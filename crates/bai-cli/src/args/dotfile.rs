//! `bai dotfile …`: the user's dotfiles, written into the home of every new session.

use clap::Subcommand;
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum DotfileCmd {
    /// Store a dotfile (its text from -f FILE, or standard input).
    Create {
        /// Where it goes in every session, relative to /home/work (e.g. .vimrc).
        path: String,
        #[arg(short = 'f', long = "file", value_name = "FILE")]
        file: Option<PathBuf>,
        /// Octal file mode (default 644).
        #[arg(short = 'p', long = "permission", visible_alias = "perm")]
        permission: Option<String>,
    },
    /// Your dotfiles.
    #[command(visible_alias = "ls")]
    List,
    /// Print a dotfile's text.
    Get { path: String },
    /// Replace a dotfile's text (from -f FILE, or standard input) and permission.
    Update {
        path: String,
        #[arg(short = 'f', long = "file", value_name = "FILE")]
        file: Option<PathBuf>,
        #[arg(short = 'p', long = "permission", visible_alias = "perm")]
        permission: Option<String>,
    },
    /// Delete a dotfile.
    #[command(visible_alias = "rm")]
    Delete { path: String },
}
