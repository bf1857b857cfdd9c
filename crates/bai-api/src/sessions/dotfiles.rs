//! A user's dotfiles (`/user-config/dotfiles`, Backend.AI's user-config API): small files kept
//! by the platform and written into the home directory of every session the user starts.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One dotfile as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DotfileItem {
    /// Where it is written, relative to the home directory `/home/work` (`.vimrc`).
    pub path: String,
    /// Its file mode in octal (`644`).
    pub permission: String,
    /// Its text.
    pub data: String,
}

/// `POST` and `PATCH /user-config/dotfiles`: a dotfile to store or replace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DotfileBody {
    /// Relative to `/home/work`, or under it (`~/.bashrc`, `/home/work/.bashrc`); never
    /// outside it.
    pub path: String,
    /// The file's text (at most 64 KiB for all of a user's dotfiles together).
    pub data: String,
    /// Octal file mode (`644`, `755`); `644` when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission: Option<String>,
    /// Administrators only: the keypair whose user's dotfiles to change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_access_key: Option<String>,
}

/// `GET /user-config/dotfiles`: one dotfile when `path` is given, else all of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum DotfileAnswer {
    One(DotfileItem),
    All(Vec<DotfileItem>),
}

/// The answer of storing or replacing a dotfile (an empty object, as Backend.AI's).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct DotfileStored {}

/// The answer of deleting a dotfile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DotfileDeleted {
    /// Always true.
    pub success: bool,
}
