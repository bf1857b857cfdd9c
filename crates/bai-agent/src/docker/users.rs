//! The kernel's user in a container of an image that lacks it
//! (`bai_accounts`): after the container is made and before it starts, the
//! agent reads the image's `/etc/passwd`, `/etc/group` and `/etc/shells` through the engine
//! and, where they do not name `work`, writes the completed files into the container's own
//! layer (the image is untouched; a commit of the session keeps them). What each image needs
//! is worked out once per image id and kept, so a kernel of an image with the user (bai's
//! own) costs nothing, and one of another image two small engine calls.

use super::Inner;
use crate::error::{is_not_found, runtime};
use bai_accounts::{Accounts, with_work_user};
use bai_core::agent::AgentError;
use bollard::query_parameters::{DownloadFromContainerOptions, UploadToContainerOptions};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Largest account file read (a passwd of many thousand users is still far below).
const MAX_FILE: usize = 4 << 20;

/// What each image's containers need, by image id: `None` when it names the user already.
#[derive(Default)]
pub struct Known(Mutex<HashMap<String, Option<Arc<Accounts>>>>);

impl Known {
    fn get(&self, image_id: &str) -> Option<Option<Arc<Accounts>>> {
        super::lock(&self.0).get(image_id).cloned()
    }

    fn put(&self, image_id: &str, need: Option<Arc<Accounts>>) {
        super::lock(&self.0).insert(image_id.to_string(), need);
    }
}

/// Gives the made, not yet started, `container` of image `image_id` the kernel's user.
pub async fn ensure(inner: &Inner, container: &str, image_id: &str) -> Result<(), AgentError> {
    let need = match inner.users.get(image_id) {
        Some(n) => n,
        None => {
            let passwd = read(inner, container, "/etc/passwd").await?;
            let group = read(inner, container, "/etc/group").await?;
            let shells = read(inner, container, "/etc/shells").await?;
            // A link or another odd file is the image's own arrangement: left alone.
            let need = match (passwd, group) {
                (Some(p), Some(g)) => {
                    with_work_user(&p, &g, shells.as_deref().unwrap_or_default()).map(Arc::new)
                }
                _ => None,
            };
            inner.users.put(image_id, need.clone());
            need
        }
    };
    let Some(accounts) = need else {
        return Ok(());
    };
    let tar = archive(&accounts).map_err(|e| {
        runtime(
            format_args!("cannot pack the account files for {container}"),
            e,
        )
    })?;
    let opts = UploadToContainerOptions {
        path: "/".into(),
        ..Default::default()
    };
    inner
        .docker
        .upload_to_container(container, Some(opts), bollard::body_full(tar.into()))
        .await
        .map_err(|e| {
            runtime(
                format_args!("cannot write the account files into {container}"),
                e,
            )
        })
}

/// A file of the container as text: empty where the image has none, `None` where it is not
/// a regular file of text.
async fn read(inner: &Inner, container: &str, path: &str) -> Result<Option<String>, AgentError> {
    use futures::StreamExt;
    let opts = DownloadFromContainerOptions { path: path.into() };
    let mut stream = inner.docker.download_from_container(container, Some(opts));
    let mut buf = Vec::new();
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(c) => {
                buf.extend_from_slice(&c);
                if buf.len() > MAX_FILE {
                    return Err(AgentError::Runtime(format!(
                        "{path} of {container} is larger than {} MiB",
                        MAX_FILE >> 20
                    )));
                }
            }
            Err(e) if is_not_found(&e) => return Ok(Some(String::new())),
            Err(e) => {
                return Err(runtime(
                    format_args!("cannot read {path} of {container}"),
                    e,
                ));
            }
        }
    }
    Ok(first_file(&buf))
}

/// The text of the archive's first entry (the engine answers one path as an archive of
/// it) when that is a regular file of text.
fn first_file(tar: &[u8]) -> Option<String> {
    use std::io::Read;
    let mut archive = tar::Archive::new(tar);
    let mut e = archive.entries().ok()?.next()?.ok()?;
    if e.header().entry_type() != tar::EntryType::Regular {
        return None;
    }
    let mut text = String::new();
    e.read_to_string(&mut text).ok()?;
    Some(text)
}

/// `etc/passwd` and `etc/group`, root's, readable by all.
fn archive(a: &Accounts) -> std::io::Result<Vec<u8>> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, text) in [("etc/passwd", &a.passwd), ("etc/group", &a.group)] {
        let mut h = tar::Header::new_gnu();
        h.set_size(text.len() as u64);
        h.set_mode(0o644);
        h.set_uid(0);
        h.set_gid(0);
        h.set_entry_type(tar::EntryType::Regular);
        b.append_data(&mut h, name, text.as_bytes())?;
    }
    b.into_inner()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_travel_as_a_tar_the_reader_reads_back() {
        let a = Accounts {
            passwd: "work:x:1000:1000::/home/work:/bin/sh\n".into(),
            group: "work:x:1000:\n".into(),
        };
        let tar = archive(&a).unwrap();
        assert_eq!(first_file(&tar), Some(a.passwd.clone()));
        let mut ar = tar::Archive::new(&tar[..]);
        let names: Vec<String> = ar
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().display().to_string())
            .collect();
        assert_eq!(names, ["etc/passwd", "etc/group"]);
        assert_eq!(first_file(b"not a tar"), None);
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Symlink);
        h.set_size(0);
        b.append_link(&mut h, "passwd", "/elsewhere/passwd")
            .unwrap();
        assert_eq!(first_file(&b.into_inner().unwrap()), None);
    }
}
