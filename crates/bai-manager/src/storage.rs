//! Storage hosts of data folders. Every server has `local:volume1`, a directory under
//! `$BAI_DATA_DIR/volumes/volume1`; more hosts come from configuration (`baid up
//! --storage-host NAME=PATH`, e.g. an NFS export mounted at the same path on every agent).
//! Each folder lives in `<host root>/<id>` of its own host (the `vfolders.host` column), owned
//! by the kernels' `work` user (uid/gid 1000) so that sessions and the API read and write the
//! same files.
//!
//! Every user path goes through [`bai_core::vpath::confine`] and then [`Storage::resolve`],
//! which refuses to follow any symlink on the way, so nothing outside the folder is reachable.

use bai_core::Problem;
use bai_core::vpath::{confine, confine_name};
use bai_store::VFolderRow;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use uuid::Uuid;

/// The storage host every server has, under the data dir.
pub const LOCAL_HOST: &str = "local:volume1";
/// Owner of folder contents (the kernel image's `work` user).
pub const WORK_UID: u32 = 1000;

/// A pending upload or download, reached by an unsigned URL with a token.
#[derive(Debug, Clone)]
pub struct Transfer {
    pub vfolder: Uuid,
    pub path: PathBuf,
    pub size: u64,
    pub upload: bool,
    pub expires: std::time::Instant,
}

/// One storage host: a name in Backend.AI's `proxy:volume` form and the directory holding its
/// folders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    pub name: String,
    pub root: PathBuf,
    /// The host under the data dir (`local:volume1`), as opposed to a configured one.
    pub builtin: bool,
}

impl Host {
    /// The backend name `GET /folders/_/hosts` reports: `local` for the directory under the
    /// data dir, `vfs` (a plain directory, e.g. an NFS mount) for configured hosts.
    pub fn backend(&self) -> &'static str {
        if self.builtin { "local" } else { "vfs" }
    }
}

/// Storage hosts as configured for `baid up`: the extra hosts and the default one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StorageConfig {
    /// Extra hosts, name → root directory.
    pub hosts: Vec<(String, PathBuf)>,
    /// Where folders go when a request names no host (default `local:volume1`).
    pub default: Option<String>,
}

/// Every storage host of this server, and the default one.
#[derive(Debug, Clone)]
pub struct Storage {
    hosts: Vec<Host>,
    default: String,
}

/// Checks a storage host name: `proxy:volume`, exactly one colon, each side 1 to 64 letters,
/// digits, '-', '_' or '.'.
pub fn check_host_name(name: &str) -> Result<(), String> {
    let side = |s: &str| {
        (1..=64).contains(&s.len())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    match name.split_once(':') {
        Some((proxy, volume)) if side(proxy) && side(volume) => Ok(()),
        _ => Err(format!(
            "storage host name {name:?} is invalid: use PROXY:VOLUME (one colon; letters, digits, '-', '_' or '.' on each side), e.g. nfs:shared"
        )),
    }
}

/// `NAME=PATH` items, each possibly a comma-separated list (`BAI_STORAGE_HOSTS="a:b=/x,c:d=/y"`),
/// into (name, path) pairs. The names and paths are checked by [`Storage::open`].
pub fn parse_host_specs(items: &[String]) -> Result<Vec<(String, PathBuf)>, String> {
    items
        .iter()
        .flat_map(|i| i.split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|spec| {
            let (name, path) = spec.split_once('=').ok_or_else(|| {
                format!("storage host {spec:?} must be NAME=PATH, e.g. nfs:shared=/mnt/nfs/bai")
            })?;
            Ok((name.trim().to_string(), PathBuf::from(path.trim())))
        })
        .collect()
}

/// The problem of a folder whose host is not configured (any more) on this server.
pub fn host_unavailable(host: &str, configured: &[&str]) -> Problem {
    Problem::new(
        503,
        "storage-host-unavailable",
        "Storage host unavailable.",
        format!(
            "the folder's storage host {host:?} is not configured on this server (configured: {}); its files are out of reach until an administrator adds it again (baid up --storage-host {host}=PATH)",
            configured.join(", ")
        ),
    )
}

fn bad(e: impl std::fmt::Display) -> Problem {
    Problem::invalid(e.to_string())
}

fn io(what: &str, e: std::io::Error) -> Problem {
    match e.kind() {
        std::io::ErrorKind::NotFound => {
            Problem::not_found("file", format!("{what}: no such file or directory"))
        }
        std::io::ErrorKind::AlreadyExists => Problem::conflict(
            "file-exists",
            "The file exists.",
            format!("{what} already exists"),
        ),
        _ => Problem::internal(format!("{what}: {e}")),
    }
}

fn iso(t: std::io::Result<SystemTime>) -> String {
    t.ok()
        .map(|t| chrono::DateTime::<chrono::Utc>::from(t).to_rfc3339())
        .unwrap_or_default()
}

/// Creates `root` if missing and checks that it is a directory this process can write.
fn prepare_root(name: &str, root: &Path) -> Result<(), String> {
    std::fs::create_dir_all(root)
        .map_err(|e| format!("storage host {name}: cannot create {}: {e}", root.display()))?;
    let md = std::fs::metadata(root)
        .map_err(|e| format!("storage host {name}: {}: {e}", root.display()))?;
    if !md.is_dir() {
        return Err(format!(
            "storage host {name}: {} is not a directory",
            root.display()
        ));
    }
    let probe = root.join(format!(".bai-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| {
        format!(
            "storage host {name}: cannot write in {}: {e}",
            root.display()
        )
    })?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

impl Storage {
    /// Only the built-in host `local:volume1` under `data_dir` (nothing is checked or created).
    pub fn local(data_dir: &Path) -> Storage {
        Storage {
            hosts: vec![Host {
                name: LOCAL_HOST.into(),
                root: data_dir.join("volumes").join("volume1"),
                builtin: true,
            }],
            default: LOCAL_HOST.into(),
        }
    }

    /// The built-in host plus the configured ones; every root is created if missing and must
    /// be a writable directory, and the default must be one of the hosts. The error is one
    /// line saying what to fix.
    pub fn open(data_dir: &Path, config: &StorageConfig) -> Result<Storage, String> {
        let mut s = Storage::local(data_dir);
        for (name, root) in &config.hosts {
            check_host_name(name)?;
            if name == LOCAL_HOST {
                return Err(format!(
                    "storage host {LOCAL_HOST} is built in (under the data dir); give the other host another name"
                ));
            }
            if s.host(name).is_some() {
                return Err(format!("storage host {name} is configured twice"));
            }
            if !root.is_absolute() {
                return Err(format!(
                    "storage host {name}: the path {:?} must be absolute",
                    root.display().to_string()
                ));
            }
            s.hosts.push(Host {
                name: name.clone(),
                root: root.clone(),
                builtin: false,
            });
        }
        if let Some(d) = &config.default {
            let d = d.trim();
            if s.host(d).is_none() {
                return Err(format!(
                    "the default storage host {d:?} is not configured; configured hosts: {}",
                    s.names().join(", ")
                ));
            }
            s.default = d.to_string();
        }
        for h in &s.hosts {
            prepare_root(&h.name, &h.root)?;
        }
        Ok(s)
    }

    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    pub fn names(&self) -> Vec<&str> {
        self.hosts.iter().map(|h| h.name.as_str()).collect()
    }

    pub fn default_host(&self) -> &str {
        &self.default
    }

    pub fn host(&self, name: &str) -> Option<&Host> {
        self.hosts.iter().find(|h| h.name == name)
    }

    /// The root of the folder's host, or 503 `storage-host-unavailable`.
    fn root_of(&self, v: &VFolderRow) -> Result<&Path, Problem> {
        self.host(&v.host)
            .map(|h| h.root.as_path())
            .ok_or_else(|| host_unavailable(&v.host, &self.names()))
    }

    /// The folder's directory on its own host (503 when that host is not configured).
    pub fn folder_dir(&self, v: &VFolderRow) -> Result<PathBuf, Problem> {
        Ok(self.root_of(v)?.join(v.id.simple().to_string()))
    }

    /// The image file holding a folder with a quota.
    fn image(&self, v: &VFolderRow) -> Result<PathBuf, Problem> {
        Ok(self.root_of(v)?.join(format!("{}.img", v.id.simple())))
    }

    /// Total and used bytes of the filesystem holding a host's root.
    pub fn host_usage(root: &Path) -> Option<(u64, u64)> {
        let st = rustix::fs::statvfs(root).ok()?;
        let frsize = st.f_frsize;
        Some((
            st.f_blocks.saturating_mul(frsize),
            st.f_blocks
                .saturating_sub(st.f_bfree)
                .saturating_mul(frsize),
        ))
    }

    /// Creates the folder's directory on its host. With a quota, the folder is a filesystem of
    /// exactly that size (an ext4 image, loop-mounted), so writes past it fail everywhere —
    /// in sessions and in uploads — with "no space left on device".
    pub fn create(&self, v: &VFolderRow) -> Result<PathBuf, Problem> {
        let dir = self.folder_dir(v)?;
        std::fs::create_dir_all(&dir).map_err(|e| io("the folder", e))?;
        if let Some(q) = v.quota_bytes {
            let img = self.image(v)?;
            let f = std::fs::File::create(&img).map_err(|e| io("the quota image", e))?;
            f.set_len(q).map_err(|e| io("the quota image", e))?;
            drop(f);
            run(
                "mkfs.ext4",
                &[
                    "-q",
                    "-F",
                    "-m",
                    "0",
                    "-O",
                    "^has_journal",
                    &img.to_string_lossy(),
                ],
            )?;
            self.mount_quota(v)?;
            let _ = std::fs::remove_dir(dir.join("lost+found"));
        }
        own(&dir);
        Ok(dir)
    }

    /// Mounts a quota folder's filesystem (at creation and when baid starts).
    pub fn mount_quota(&self, v: &VFolderRow) -> Result<(), Problem> {
        let dir = self.folder_dir(v)?;
        if is_mountpoint(&dir) {
            return Ok(());
        }
        std::fs::create_dir_all(&dir).map_err(|e| io("the folder", e))?;
        run(
            "mount",
            &[
                "-o",
                "loop",
                &self.image(v)?.to_string_lossy(),
                &dir.to_string_lossy(),
            ],
        )
    }

    pub fn remove(&self, v: &VFolderRow) -> Result<(), Problem> {
        let dir = self.folder_dir(v)?;
        if is_mountpoint(&dir) {
            run("umount", &["-l", &dir.to_string_lossy()])?;
        }
        let _ = std::fs::remove_file(self.image(v)?);
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io("the folder", e)),
        }
    }

    /// The absolute path of `rel` inside folder `v`; no symlink is followed on the way.
    pub fn resolve(&self, v: &VFolderRow, rel: &str) -> Result<PathBuf, Problem> {
        let base = self.folder_dir(v)?;
        let rel = confine(rel).map_err(bad)?;
        let mut cur = base;
        for c in rel.components() {
            cur.push(c);
            if let Ok(md) = std::fs::symlink_metadata(&cur)
                && md.file_type().is_symlink()
            {
                return Err(Problem::invalid(format!(
                    "{} is a symbolic link; links are not followed in data folders",
                    rel.display()
                )));
            }
        }
        Ok(cur)
    }

    /// `{"items": [{name, type, size, mode, created, modified}]}` of a directory.
    pub fn list(&self, v: &VFolderRow, rel: &str) -> Result<Value, Problem> {
        let dir = self.resolve(v, rel)?;
        let mut items = Vec::new();
        let rd = std::fs::read_dir(&dir).map_err(|e| io(rel, e))?;
        for entry in rd.flatten() {
            let Ok(md) = entry.metadata() else { continue };
            let ty = if md.file_type().is_symlink() {
                "SYMLINK"
            } else if md.is_dir() {
                "DIRECTORY"
            } else {
                "FILE"
            };
            use std::os::unix::fs::PermissionsExt;
            items.push(json!({
                "name": entry.file_name().to_string_lossy(),
                "type": ty,
                "size": md.len(),
                "mode": format!("{:o}", md.permissions().mode() & 0o7777),
                "created": iso(md.created().or_else(|_| md.modified())),
                "modified": iso(md.modified()),
            }));
        }
        items.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
        Ok(json!({ "items": items }))
    }

    /// Creates directories; answers the official client's `{results: {success, failed}}`.
    pub fn mkdir(
        &self,
        v: &VFolderRow,
        paths: &[String],
        parents: bool,
        exist_ok: bool,
    ) -> Result<Value, Problem> {
        let base = self.folder_dir(v)?;
        let mut ok = Vec::new();
        let mut failed = Vec::new();
        for p in paths {
            let r = self.resolve(v, p).and_then(|abs| {
                let res = if parents {
                    std::fs::create_dir_all(&abs)
                } else {
                    std::fs::create_dir(&abs)
                };
                match res {
                    Ok(()) => {
                        own_tree(&base, &abs);
                        Ok(())
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && exist_ok => Ok(()),
                    Err(e) => Err(io(p, e)),
                }
            });
            match r {
                Ok(()) => ok.push(json!({"item": p, "msg": null})),
                Err(e) => failed.push(json!({"item": p, "msg": e.msg})),
            }
        }
        Ok(json!({"results": {"success": ok, "failed": failed}}))
    }

    pub fn rename_file(&self, v: &VFolderRow, target: &str, new_name: &str) -> Result<(), Problem> {
        let from = self.resolve(v, target)?;
        let name = confine_name(new_name).map_err(bad)?;
        let to = from
            .parent()
            .map(|p| p.join(&name))
            .ok_or_else(|| Problem::invalid("the folder itself cannot be renamed here"))?;
        if from == self.folder_dir(v)? {
            return Err(Problem::invalid(
                "give a file or directory inside the folder",
            ));
        }
        if to.exists() {
            return Err(io(new_name, std::io::ErrorKind::AlreadyExists.into()));
        }
        std::fs::rename(&from, &to).map_err(|e| io(target, e))
    }

    pub fn move_file(&self, v: &VFolderRow, src: &str, dst: &str) -> Result<(), Problem> {
        let from = self.resolve(v, src)?;
        let mut to = self.resolve(v, dst)?;
        if from == self.folder_dir(v)? {
            return Err(Problem::invalid(
                "give a file or directory inside the folder",
            ));
        }
        if to.is_dir()
            && let Some(n) = from.file_name()
        {
            to = to.join(n);
        }
        if to.starts_with(&from) {
            return Err(Problem::invalid(format!("cannot move {src} into itself")));
        }
        std::fs::rename(&from, &to).map_err(|e| io(src, e))
    }

    pub fn delete_files(
        &self,
        v: &VFolderRow,
        files: &[String],
        recursive: bool,
    ) -> Result<(), Problem> {
        let base = self.folder_dir(v)?;
        // Check everything before removing anything.
        let mut paths = Vec::new();
        for f in files {
            let p = self.resolve(v, f)?;
            if p == base {
                return Err(Problem::invalid(
                    "the folder itself cannot be deleted this way",
                ));
            }
            let md = std::fs::symlink_metadata(&p).map_err(|e| io(f, e))?;
            if md.is_dir() && !recursive {
                return Err(Problem::invalid(format!(
                    "{f} is a directory: delete it with recursive (rm -r)"
                )));
            }
            paths.push((p, md.is_dir()));
        }
        for (p, dir) in paths {
            let r = if dir {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
            r.map_err(|e| io(&p.to_string_lossy(), e))?;
        }
        Ok(())
    }

    /// Number of files and bytes in a folder (for info).
    pub fn usage(&self, v: &VFolderRow) -> Result<(u64, u64), Problem> {
        fn walk(p: &Path, n: &mut u64, b: &mut u64) {
            let Ok(rd) = std::fs::read_dir(p) else { return };
            for e in rd.flatten() {
                let Ok(md) = e.metadata() else { continue };
                if md.is_dir() {
                    walk(&e.path(), n, b);
                } else {
                    *n += 1;
                    *b += md.len();
                }
            }
        }
        let (mut n, mut b) = (0, 0);
        walk(&self.folder_dir(v)?, &mut n, &mut b);
        Ok((n, b))
    }
}

/// Runs a system tool; its stderr becomes the error.
fn run(cmd: &str, args: &[&str]) -> Result<(), Problem> {
    let out = std::process::Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| Problem::internal(format!("cannot run {cmd}: {e}")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(Problem::internal(format!(
            "{cmd} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

/// Whether `p` is a mount point (its device differs from its parent's).
fn is_mountpoint(p: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(p), p.parent().map(std::fs::metadata)) {
        (Ok(a), Some(Ok(b))) => a.dev() != b.dev(),
        _ => false,
    }
}

/// Hands a path to the kernels' `work` user (best effort: needs root).
pub fn own(p: &Path) {
    let _ = std::os::unix::fs::lchown(p, Some(WORK_UID), Some(WORK_UID));
}

/// [`own`] for `p` and every directory between the folder root and it.
pub fn own_tree(root: &Path, p: &Path) {
    let mut cur = p.to_path_buf();
    while cur.starts_with(root) && cur != root {
        own(&cur);
        if !cur.pop() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(host: &str) -> VFolderRow {
        VFolderRow {
            id: Uuid::new_v4(),
            name: "f".into(),
            host: host.into(),
            user_id: "u".into(),
            project: None,
            permission: "rw".into(),
            usage_mode: "general".into(),
            status: "ready".into(),
            quota_bytes: None,
            created_at: String::new(),
        }
    }

    #[test]
    fn host_names_are_proxy_colon_volume() {
        for ok in ["local:volume1", "nfs:shared", "a.b-c_d:E.9", "x:y"] {
            assert_eq!(check_host_name(ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "nfs",
            ":vol",
            "nfs:",
            "a:b:c",
            "nfs:sh ared",
            "nfs/x:y",
            "nfs:ü",
            &format!("a:{}", "v".repeat(65)),
        ] {
            let e = check_host_name(bad).expect_err(bad);
            assert!(e.contains("PROXY:VOLUME"), "{e}");
        }
    }

    #[test]
    fn host_specs_parse_from_flags_and_a_comma_list() {
        let got = parse_host_specs(&[
            "nfs:shared=/mnt/nfs".into(),
            " fast:ssd = /ssd/bai , other:v=/o ".into(),
            "".into(),
        ])
        .expect("valid");
        assert_eq!(
            got,
            vec![
                ("nfs:shared".to_string(), PathBuf::from("/mnt/nfs")),
                ("fast:ssd".to_string(), PathBuf::from("/ssd/bai")),
                ("other:v".to_string(), PathBuf::from("/o")),
            ]
        );
        assert_eq!(parse_host_specs(&[]), Ok(vec![]));
        let e = parse_host_specs(&["nfs:shared".into()]).expect_err("no path");
        assert!(e.contains("NAME=PATH") && !e.contains('\n'), "{e}");
        // What the specs say is checked where the hosts are opened.
        let data = tempfile::tempdir().expect("tempdir");
        let err = |items: &[&str]| {
            let hosts = parse_host_specs(&items.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .expect("parses");
            let config = StorageConfig {
                hosts,
                default: None,
            };
            Storage::open(data.path(), &config).expect_err("must fail")
        };
        assert!(err(&["nfs:shared=relative/dir"]).contains("must be absolute"));
        assert!(err(&["nfs=/x"]).contains("is invalid"));
        assert!(err(&["a:b=/x,a:b=/y"]).contains("configured twice"));
        assert!(err(&["local:volume1=/x"]).contains("built in"));
        for e in [err(&["nfs=/x"]), err(&["a:b=/x,a:b=/y"])] {
            assert!(!e.contains('\n'), "one line: {e}");
        }
    }

    #[test]
    fn open_creates_roots_checks_the_default_and_resolves_by_host() {
        let data = tempfile::tempdir().expect("tempdir");
        let extra = tempfile::tempdir().expect("tempdir");
        let nfs = extra.path().join("nfs/bai");
        let cfg = StorageConfig {
            hosts: vec![("nfs:shared".into(), nfs.clone())],
            default: Some("nfs:shared".into()),
        };
        let s = Storage::open(data.path(), &cfg).expect("open");
        assert!(nfs.is_dir(), "the host's root is created");
        assert!(data.path().join("volumes/volume1").is_dir());
        assert_eq!(s.default_host(), "nfs:shared");
        assert_eq!(s.names(), vec!["local:volume1", "nfs:shared"]);
        assert_eq!(s.host("local:volume1").map(Host::backend), Some("local"));
        assert_eq!(s.host("nfs:shared").map(Host::backend), Some("vfs"));

        let v = row("nfs:shared");
        let dir = s.create(&v).expect("create");
        assert_eq!(dir, nfs.join(v.id.simple().to_string()));
        std::fs::write(dir.join("a.txt"), "abc").expect("write");
        assert_eq!(s.usage(&v), Ok((1, 3)));
        assert_eq!(s.resolve(&v, "a.txt"), Ok(dir.join("a.txt")));
        s.remove(&v).expect("remove");
        assert!(!dir.exists());
        let local = row("local:volume1");
        assert!(
            s.folder_dir(&local)
                .expect("local")
                .starts_with(data.path().join("volumes/volume1"))
        );

        // A folder whose host is gone: a clear 503, nothing panics.
        let gone = row("old:vol");
        for e in [
            s.folder_dir(&gone).expect_err("gone"),
            s.create(&gone).expect_err("gone"),
            s.list(&gone, ".").expect_err("gone"),
            s.usage(&gone).expect_err("gone"),
            s.remove(&gone).expect_err("gone"),
        ] {
            assert_eq!(e.status, 503);
            assert!(e.kind.ends_with("storage-host-unavailable"), "{e:?}");
            assert!(e.msg.contains("\"old:vol\""), "{e:?}");
        }
        assert!(Storage::host_usage(&nfs).is_some_and(|(t, u)| t > 0 && u <= t));
    }

    #[test]
    fn open_refuses_bad_configuration() {
        let data = tempfile::tempdir().expect("tempdir");
        let open = |hosts: Vec<(&str, PathBuf)>, default: Option<&str>| {
            Storage::open(
                data.path(),
                &StorageConfig {
                    hosts: hosts.into_iter().map(|(n, p)| (n.to_string(), p)).collect(),
                    default: default.map(str::to_string),
                },
            )
        };
        let e = open(vec![], Some("nfs:shared")).expect_err("unknown default");
        assert!(
            e.contains("default storage host \"nfs:shared\" is not configured")
                && e.contains("local:volume1"),
            "{e}"
        );
        let file = data.path().join("plain-file");
        std::fs::write(&file, "x").expect("write");
        let e = open(vec![("a:b", file)], None).expect_err("a file");
        assert!(e.contains("a:b"), "{e}");
        let e = open(vec![("a:b", PathBuf::from("rel"))], None).expect_err("relative");
        assert!(e.contains("absolute"), "{e}");
        let e = open(
            vec![
                ("a:b", data.path().join("x")),
                ("a:b", data.path().join("y")),
            ],
            None,
        )
        .expect_err("twice");
        assert!(e.contains("twice"), "{e}");
        let e = open(vec![("bad", data.path().join("x"))], None).expect_err("name");
        assert!(e.contains("PROXY:VOLUME"), "{e}");
        let s = open(vec![], None).expect("only the built-in host");
        assert_eq!(s.default_host(), LOCAL_HOST);
    }
}
