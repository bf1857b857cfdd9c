//! `POST /folders/{id}/sftp`: SFTP (and scp, rsync over ssh) to a data folder, through a
//! system session the platform starts with the folder mounted and only sshd running.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where and how to connect; the private key is shown only in this answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SftpAccess {
    /// The system session serving it (listed with `bai ps --system`; it ends when no
    /// connection has been open for the manager's SFTP idle time).
    pub session_id: String,
    pub session_name: String,
    /// The host and port to connect to (a port of the manager's app port pool).
    pub host: String,
    pub port: u16,
    /// The user to log in as.
    pub user: String,
    /// Where the folder is, in the session (`/home/work/NAME`).
    pub path: String,
    /// An OpenSSH private key (ed25519) made for this session alone.
    pub private_key: String,
    /// A command line that connects (`sftp -i KEY -P PORT work@HOST`).
    pub command: String,
}
