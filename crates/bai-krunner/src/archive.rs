//! `{"op":"download","path":…}`: one file or folder of the kernel as a tar archive, read as
//! the kernel's user sees it (mounted folders included; links are stored as links, never
//! followed): how both backends read a kernel's files (Docker's own copy out of a container
//! mounts its volumes again from their recorded sources, which a claimed warm-pool kernel's
//! home no longer has; Kubernetes has no such copy). The archive holds the path under its own name, as `docker cp` makes it (`notes.txt`, or
//! `out/` and everything below). It travels as `stdout` events of base64 text, each chunk
//! encoding whole 3-byte groups so their concatenation is one base64 string, then
//! `finished` (1 and a `stderr` line on failure, or when the archive would pass `limit`).

use base64::Engine;
use std::io::Write;
use std::path::Path;

/// Raw bytes per `stdout` event (a multiple of 3: 64 KiB of base64).
pub const CHUNK: usize = 48 << 10;

/// A writer that refuses to grow past a limit.
struct Capped {
    buf: Vec<u8>,
    limit: usize,
}

impl Write for Capped {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if self.buf.len() + data.len() > self.limit {
            return Err(std::io::Error::other(format!(
                "larger than {} MiB; copy it into a data folder or use SFTP",
                self.limit >> 20
            )));
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The tar archive of `path`, at most `limit` bytes.
pub fn tar_of(path: &Path, limit: usize) -> std::io::Result<Vec<u8>> {
    let meta = std::fs::symlink_metadata(path)?;
    let name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| ".".into());
    let mut b = tar::Builder::new(Capped {
        buf: Vec::new(),
        limit,
    });
    b.follow_symlinks(false);
    if meta.is_dir() {
        b.append_dir_all(&name, path)?;
    } else {
        b.append_path_with_name(path, &name)?;
    }
    Ok(b.into_inner()?.buf)
}

/// `data` as base64 chunks of [`CHUNK`] raw bytes each.
pub fn chunks(data: &[u8]) -> impl Iterator<Item = String> + '_ {
    data.chunks(CHUNK)
        .map(|c| base64::engine::general_purpose::STANDARD.encode(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn tmp(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("krunner-archive-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn entries(tar_bytes: &[u8]) -> Vec<(String, String)> {
        let mut a = tar::Archive::new(tar_bytes);
        let mut out = Vec::new();
        for e in a.entries().unwrap() {
            let mut e = e.unwrap();
            let name = e.path().unwrap().display().to_string();
            let mut body = String::new();
            if e.header().entry_type().is_symlink() {
                body = format!("-> {}", e.link_name().unwrap().unwrap().display());
            } else {
                e.read_to_string(&mut body).unwrap();
            }
            out.push((name, body));
        }
        out.sort();
        out
    }

    #[test]
    fn a_file_and_a_folder_under_their_own_names_links_kept() {
        let d = tmp("names");
        std::fs::write(d.join("notes.txt"), "hello").unwrap();
        std::fs::create_dir_all(d.join("out/sub")).unwrap();
        std::fs::write(d.join("out/sub/a.csv"), "1,2").unwrap();
        std::os::unix::fs::symlink("/etc/shadow", d.join("out/leak")).unwrap();

        let file = tar_of(&d.join("notes.txt"), 1 << 20).unwrap();
        assert_eq!(entries(&file), vec![("notes.txt".into(), "hello".into())]);

        let dir = tar_of(&d.join("out"), 1 << 20).unwrap();
        let got = entries(&dir);
        assert!(
            got.contains(&("out/sub/a.csv".into(), "1,2".into())),
            "{got:?}"
        );
        // The link travels as a link: nothing outside is read.
        assert!(
            got.contains(&("out/leak".into(), "-> /etc/shadow".into())),
            "{got:?}"
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn past_the_limit_is_an_error_and_a_missing_path_too() {
        let d = tmp("limit");
        std::fs::write(d.join("big"), vec![7u8; 64 << 10]).unwrap();
        let e = tar_of(&d.join("big"), 16 << 10).unwrap_err();
        assert!(e.to_string().contains("larger than"), "{e}");
        assert!(tar_of(&d.join("nope"), 1 << 20).is_err());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn chunks_concatenate_to_one_base64_string() {
        let data: Vec<u8> = (0..(CHUNK * 2 + 5)).map(|i| (i % 251) as u8).collect();
        let joined: String = chunks(&data).collect();
        let back = base64::engine::general_purpose::STANDARD
            .decode(joined)
            .unwrap();
        assert_eq!(back, data);
    }
}
