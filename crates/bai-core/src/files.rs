//! The files of a data folder as the server reports them: a directory's entries and what
//! became of each directory a mkdir asked for.

use serde::{Deserialize, Serialize};

/// `GET /folders/{id}/files?path=…`: a directory's entries, sorted by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Listing {
    /// The entries.
    pub items: Vec<FileEntry>,
}

/// One entry of a directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FileEntry {
    /// The entry's name (not its path).
    pub name: String,
    /// What it is.
    #[serde(rename = "type")]
    pub kind: FileType,
    /// Its size in bytes (a directory's own size, not its contents').
    pub size: u64,
    /// Its permission bits in octal digits, e.g. `644` or `755`.
    pub mode: String,
    /// When it was created (RFC 3339, UTC; its modification time where the filesystem keeps
    /// no creation time; empty when neither can be read).
    pub created: String,
    /// When it was last modified (RFC 3339, UTC; empty when it cannot be read).
    pub modified: String,
}

/// What a directory entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "UPPERCASE")]
pub enum FileType {
    /// A regular file (or anything else that is neither a directory nor a link).
    File,
    /// A directory.
    Directory,
    /// A symbolic link (never followed).
    Symlink,
}

impl FileType {
    /// The wire spelling (`FILE`, `DIRECTORY`, `SYMLINK`).
    pub fn as_str(self) -> &'static str {
        match self {
            FileType::File => "FILE",
            FileType::Directory => "DIRECTORY",
            FileType::Symlink => "SYMLINK",
        }
    }
}

/// `POST /folders/{id}/mkdir`: what became of each path. The answer is 201 when at least one
/// directory was made (or none was asked for), else 400 ([`MkdirRefused`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MkdirAnswer {
    /// The paths, split by outcome.
    pub results: MkdirResults,
}

/// `POST /folders/{id}/mkdir` when every path failed (400): a problem, which clients print
/// (its `msg` says why each path failed, `; ` between them), with the answer's `results`
/// beside its fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MkdirRefused {
    #[serde(flatten)]
    pub problem: crate::Problem,
    /// The paths, split by outcome (none made).
    pub results: MkdirResults,
}

impl MkdirRefused {
    pub fn new(results: MkdirResults) -> MkdirRefused {
        let why: Vec<String> = results
            .failed
            .iter()
            .map(|f| {
                let why = f.msg.as_deref().unwrap_or("not made");
                // Most reasons name their path already: `a already exists`, `a: …`,
                // `the path "../a" goes outside the folder`.
                let item = f.item.as_str();
                let named = why
                    .strip_prefix(item)
                    .is_some_and(|rest| rest.starts_with([' ', ':']))
                    || why.contains(&format!("\"{item}\""));
                if item.is_empty() || named {
                    why.to_string()
                } else {
                    format!("{}: {why}", f.item)
                }
            })
            .collect();
        MkdirRefused {
            problem: crate::Problem::invalid(why.join("; ")),
            results,
        }
    }
}

/// The paths of a mkdir, split by outcome, each in the order asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MkdirResults {
    /// The directories made (or already there, with `exist_ok`).
    pub success: Vec<MkdirItem>,
    /// The directories that could not be made.
    pub failed: Vec<MkdirItem>,
}

/// One path of a mkdir.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MkdirItem {
    /// The path as asked.
    pub item: String,
    /// Why it failed, for a person; `null` on success.
    pub msg: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(item: &str, msg: Option<&str>) -> MkdirItem {
        MkdirItem {
            item: item.into(),
            msg: msg.map(str::to_string),
        }
    }

    #[test]
    fn a_refused_mkdir_says_why_each_path_failed_naming_it_once() {
        let r = MkdirRefused::new(MkdirResults {
            success: vec![],
            failed: vec![
                failed("a", Some("a already exists")),
                failed("b/c", Some("permission denied")),
                failed("d", None),
                failed("../e", Some("the path \"../e\" goes outside the folder")),
                failed("f", Some("f: no such file or directory")),
            ],
        });
        assert_eq!(
            r.problem.msg,
            "a already exists; b/c: permission denied; d: not made; \
             the path \"../e\" goes outside the folder; f: no such file or directory"
        );
        assert_eq!(r.problem.status, 400);
        assert!(r.problem.kind.ends_with("/invalid-api-params"));
        assert_eq!(r.results.failed.len(), 5);
    }
}
