//! Pending transfers of folder files through unsigned, token-bearing URLs.

use std::path::PathBuf;
use uuid::Uuid;

/// A pending upload or download, reached by an unsigned URL with a token.
#[derive(Debug, Clone)]
pub struct Transfer {
    pub vfolder: Uuid,
    pub path: PathBuf,
    pub size: u64,
    pub upload: bool,
    pub expires: std::time::Instant,
}
