//! Uploads and downloads: a signed request for a ticket, then unsigned requests to the
//! ticket's URL with `?token=…` (a TUS `PATCH` to upload, a `GET` to download).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `POST /folders/{id}/request-upload`: a file to upload. The file is created (empty) at
/// once, so a zero-byte upload needs no `PATCH`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RequestUpload {
    /// Where the file goes, relative to the folder's root; missing directories are made.
    pub path: String,
    /// The file's size in bytes, checked against the folder's quota; 0 when absent. The
    /// token is spent once this many bytes have arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// `POST /folders/{id}/request-download`: a file to download.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RequestDownload {
    /// The file, relative to the folder's root (a regular file, not a directory).
    pub path: String,
}

/// A transfer's ticket: call `url` with `?token=` and the token, unsigned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Ticket {
    /// The transfer's secret token (48 hex digits). An upload's is good for 24 hours, a
    /// download's for one.
    pub token: String,
    /// Where to send the transfer: `http://HOST/storage/upload` or `/storage/download`,
    /// with the host the request was sent to.
    pub url: String,
}
