//! Data folders end to end: the unmodified official client's vfolder commands and mounts in
//! real containers, against `baid up` and the real Docker engine.

use bai_e2e::{Run, Server, sha256};
use serde_json::{Value, json};
use std::path::PathBuf;

fn official() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv-official/bin/backend.ai")
}

fn ba(s: &Server, admin: bool, args: &[&str]) -> Run {
    let acct = if admin { &s.admin } else { &s.user };
    s.run_as(official(), acct, args)
}

fn client(s: &Server, admin: bool) -> bai_client::Client {
    s.client(if admin { &s.admin } else { &s.user })
}

/// A signed request through the SDK; Ok(reply) or Err((status, problem msg)).
fn api(
    s: &Server,
    admin: bool,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> Result<Value, (u16, String)> {
    let c = client(s, admin);
    let m = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(c.send_json(m, path, body.as_ref()))
        .map_err(|e| (e.status().unwrap_or(0), e.to_string()))
}

#[test]
fn official_client_vfolder_commands_and_isolation() {
    let s = Server::start();
    let w = s.work.path();
    ba(&s, false, &["vfolder", "create", "mydata", "local:volume1"]).expect_ok();
    let r = ba(&s, false, &["vfolder", "list"]);
    r.expect_ok();
    assert!(
        r.stdout.contains("mydata") && r.stdout.contains("rw"),
        "{r:#?}"
    );
    std::fs::write(w.join("hello.txt"), "hello data\n").unwrap();
    ba(&s, false, &["vfolder", "upload", "mydata", "hello.txt"]).expect_ok();
    ba(&s, false, &["vfolder", "mkdir", "-p", "mydata", "a/b"]).expect_ok();
    // mkdir without -p of an existing dir fails; with -e it is fine.
    assert!(
        !ba(&s, false, &["vfolder", "mkdir", "mydata", "a"])
            .stdout
            .contains("Successfully created")
    );
    ba(&s, false, &["vfolder", "mkdir", "-e", "mydata", "a"]).expect_ok();
    ba(
        &s,
        false,
        &["vfolder", "mv", "mydata", "hello.txt", "a/b/moved.txt"],
    )
    .expect_ok();
    ba(
        &s,
        false,
        &[
            "vfolder",
            "rename-file",
            "mydata",
            "a/b/moved.txt",
            "renamed.txt",
        ],
    )
    .expect_ok();
    let r = ba(&s, false, &["vfolder", "ls", "mydata", "a/b"]);
    assert!(r.stdout.contains("renamed.txt"), "{r:#?}");
    std::fs::create_dir_all(w.join("a/b")).unwrap();
    ba(
        &s,
        false,
        &["vfolder", "download", "mydata", "a/b/renamed.txt"],
    )
    .expect_ok();
    assert_eq!(
        std::fs::read_to_string(w.join("a/b/renamed.txt")).unwrap(),
        "hello data\n"
    );
    ba(&s, false, &["vfolder", "rename", "mydata", "mydata2"]).expect_ok();
    let r = ba(&s, false, &["vfolder", "info", "mydata2"]);
    assert!(r.stdout.contains("Number of files: 1"), "{r:#?}");

    // Another user cannot see or touch it (404 as if it did not exist), and may own the
    // same name.
    let id = folder_id(&s, false, "mydata2");
    for (m, p) in [
        ("GET", format!("/folders/{id}")),
        ("GET", format!("/folders/{id}/files?path=.")),
    ] {
        let e = api(&s, true, m, &p, None).expect_err("admin must not see it");
        assert_eq!(e.0, 404, "{e:?}");
    }
    assert!(
        api(
            &s,
            true,
            "GET",
            "/folders/_/id",
            Some(json!({"name": "mydata2"}))
        )
        .is_err()
    );
    ba(&s, true, &["vfolder", "create", "mydata2", "local:volume1"]).expect_ok();

    // Every path stays inside the folder.
    let bad = ["../..", "/etc", "a/../../x", "x\u{0}y"];
    for p in bad {
        let e = api(
            &s,
            false,
            "POST",
            &format!("/folders/{id}/request-upload"),
            Some(json!({"path": p, "size": 1})),
        )
        .expect_err(p);
        assert_eq!(e.0, 400, "{p:?}: {e:?}");
    }
    let long = "n".repeat(300);
    assert_eq!(
        api(
            &s,
            false,
            "POST",
            &format!("/folders/{id}/mkdir"),
            Some(json!({"path": [long]}))
        )
        .expect_err("long")
        .0,
        400
    );
    let e = api(
        &s,
        false,
        "GET",
        &format!("/folders/{id}/files?path=..%2F.."),
        None,
    )
    .expect_err("ls ..");
    assert_eq!(e.0, 400, "{e:?}");
    // A symlink planted in the folder (e.g. by a session) is never followed.
    let dir = s.data_dir.path().join("volumes/volume1").join(&id);
    std::os::unix::fs::symlink("/etc", dir.join("escape")).unwrap();
    let e = api(
        &s,
        false,
        "GET",
        &format!("/folders/{id}/files?path=escape"),
        None,
    )
    .expect_err("symlink");
    assert_eq!(e.0, 400, "{e:?}");
    let e = api(
        &s,
        false,
        "POST",
        &format!("/folders/{id}/request-download"),
        Some(json!({"path": "escape/passwd"})),
    )
    .expect_err("symlink");
    assert_eq!(e.0, 400, "{e:?}");

    // Deleting files, then the folder.
    let r = ba(&s, false, &["vfolder", "delete", "mydata2"]);
    r.expect_ok();
    assert!(
        !ba(&s, false, &["vfolder", "list"])
            .stdout
            .contains("mydata2")
    );
    assert!(!dir.exists(), "the folder's directory is removed");
}

#[test]
fn mounted_folders_survive_sessions_and_ro_is_read_only() {
    let s = Server::start();
    let w = s.work.path();
    ba(&s, false, &["vfolder", "create", "shared", "local:volume1"]).expect_ok();
    ba(
        &s,
        false,
        &["vfolder", "create", "refs", "local:volume1", "-p", "ro"],
    )
    .expect_ok();
    // 200 MB through the API, into a session, changed there, and back.
    let big = w.join("big.bin");
    let st = std::process::Command::new("dd")
        .args([
            "if=/dev/urandom",
            &format!("of={}", big.display()),
            "bs=1M",
            "count=200",
            "status=none",
        ])
        .status()
        .expect("dd");
    assert!(st.success());
    let sum = sha256(&big);
    ba(&s, false, &["vfolder", "upload", "shared", "big.bin"]).expect_ok();
    std::fs::remove_file(&big).unwrap();
    let code = "import hashlib, os\n\
                d = open('/home/work/shared/big.bin','rb').read()\n\
                print('sum', hashlib.sha256(d).hexdigest())\n\
                open('/home/work/shared/big.bin','ab').write(b'tail')\n\
                open('/home/work/scratch.txt','w').write('gone soon')\n\
                try:\n    open('/home/work/refs/x','w')\nexcept OSError as e:\n    print('ro', e.errno)\n";
    let r = ba(
        &s,
        false,
        &[
            "run", "--rm", "-m", "shared", "-m", "refs", "-c", code, "python",
        ],
    );
    r.expect_ok();
    assert!(r.stdout.contains(&format!("sum {sum}")), "{r:#?}");
    assert!(r.stdout.contains("ro 30"), "read-only mount: {r:#?}");
    // The change made in the session is there after it ended; scratch files are not.
    ba(&s, false, &["vfolder", "download", "shared", "big.bin"]).expect_ok();
    let got = std::fs::read(&big).unwrap();
    assert_eq!(got.len(), 200 * 1024 * 1024 + 4);
    assert_eq!(&got[got.len() - 4..], b"tail");
    // A new session sees the folder (mounted at a chosen path), not the old scratch file.
    let r = ba(
        &s,
        false,
        &[
            "run",
            "--rm",
            "-m",
            "shared:/home/work/data",
            "-c",
            "import os; print(os.path.getsize('/home/work/data/big.bin'), os.path.exists('/home/work/scratch.txt'))",
            "python",
        ],
    );
    r.expect_ok();
    assert!(
        r.stdout
            .contains(&format!("{} False", 200 * 1024 * 1024 + 4)),
        "{r:#?}"
    );
    let e = api(
        &s,
        true,
        "POST",
        "/session",
        Some(json!({"image": "python", "config": {"mounts": ["shared"]}})),
    )
    .expect_err("mount");
    assert_eq!(e.0, 404, "{e:?}");
    // Someone else's folder, or an unknown one, cannot be mounted (the official client's
    // `run` reports the error but exits 0).
    let r = ba(
        &s,
        true,
        &["run", "--rm", "-m", "shared", "-c", "1", "python"],
    );
    assert!(
        format!("{}{}", r.stdout, r.stderr).contains("no data folder named"),
        "{r:#?}"
    );
}

#[test]
fn a_folder_quota_holds_in_uploads_and_in_sessions() {
    let s = Server::start();
    let v = api(
        &s,
        false,
        "POST",
        "/folders",
        Some(json!({"name": "small", "host": "local:volume1", "quota": "20m"})),
    )
    .expect("create with quota");
    assert_eq!(v["quota"], 20 * 1024 * 1024, "{v:#}");
    let id = v["id"].as_str().unwrap_or_default().to_string();
    let e = api(
        &s,
        false,
        "POST",
        "/folders",
        Some(json!({"name": "tiny", "quota": "1m"})),
    )
    .expect_err("tiny");
    assert_eq!(e.0, 400, "{e:?}");
    // An upload that cannot fit is refused before a byte is sent.
    let e = api(
        &s,
        false,
        "POST",
        &format!("/folders/{id}/request-upload"),
        Some(json!({"path": "big.bin", "size": 30 * 1024 * 1024})),
    )
    .expect_err("over quota");
    assert_eq!(e.0, 413, "{e:?}");
    assert!(e.1.contains("quota"), "{e:?}");
    // One that fits goes through.
    let w = s.work.path();
    std::fs::write(w.join("fits.bin"), vec![7u8; 8 * 1024 * 1024]).unwrap();
    ba(&s, false, &["vfolder", "upload", "small", "fits.bin"]).expect_ok();
    // Inside a session, writing past the quota fails with "no space left on device".
    let code = "import os\n\
                try:\n    f = open('/home/work/small/fill.bin', 'wb')\n    f.write(b'x' * (30 * 1024 * 1024))\n    f.close()\n    print('wrote')\n\
                except OSError as e:\n    print('errno', e.errno)\n";
    let r = ba(
        &s,
        false,
        &["run", "--rm", "-m", "small", "-c", code, "python"],
    );
    r.expect_ok();
    assert!(r.stdout.contains("errno 28"), "{r:#?}");
    // Deleting the folder unmounts and removes its filesystem.
    ba(&s, false, &["vfolder", "delete", "small"]).expect_ok();
    let dir = s.data_dir.path().join("volumes/volume1").join(&id);
    assert!(!dir.exists());
    assert!(
        !s.data_dir
            .path()
            .join(format!("volumes/volume1/{id}.img"))
            .exists()
    );
}

#[test]
fn bai_cli_vfolder_commands_and_mounts() {
    let s = Server::start();
    let w = s.work.path();
    s.bai(&s.user, &["vfolder", "create", "notes"]).expect_ok();
    std::fs::create_dir_all(w.join("d")).unwrap();
    std::fs::write(w.join("d/x.txt"), "from the cli\n").unwrap();
    s.bai(&s.user, &["vfolder", "upload", "-q", "notes", "d/x.txt"])
        .expect_ok();
    let r = s.bai(&s.user, &["vfolder", "ls", "notes", "d"]);
    assert!(r.stdout.contains("x.txt"), "{r:#?}");
    let r = s.bai(
        &s.user,
        &["run", "--rm", "-m", "notes:/home/work/n", "-c",
          "print(open('/home/work/n/d/x.txt').read().strip()); _ = open('/home/work/n/y.txt','w').write('back')",
          "python"],
    );
    r.expect_ok();
    assert_eq!(r.stdout, "from the cli\n", "{r:#?}");
    // By id too, mounted at /home/work/NAME.
    let info = s.bai(&s.user, &["vfolder", "info", "notes"]);
    let id = info
        .expect_ok()
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("id: "))
        .expect("the folder's id")
        .to_string();
    let r = s.bai(
        &s.user,
        &[
            "run",
            "--rm",
            "-m",
            &id,
            "-c",
            "print(open('/home/work/notes/d/x.txt').read().strip())",
            "python",
        ],
    );
    assert_eq!(r.expect_ok().stdout, "from the cli\n", "{r:#?}");
    s.bai(
        &s.user,
        &[
            "vfolder",
            "download",
            "-q",
            "notes",
            "y.txt",
            "--base-dir",
            "out",
        ],
    )
    .expect_ok();
    assert_eq!(
        std::fs::read_to_string(w.join("out/y.txt")).unwrap(),
        "back"
    );
    // A second download does not overwrite; errors are one line and non-zero.
    let r = s.bai(
        &s.user,
        &[
            "vfolder",
            "download",
            "-q",
            "notes",
            "y.txt",
            "--base-dir",
            "out",
        ],
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("exists already"), "{r:#?}");
    let r = s.bai(&s.user, &["vfolder", "rm", "notes", "d"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("recursive"), "{r:#?}");
    s.bai(&s.user, &["vfolder", "rm", "-r", "notes", "d"])
        .expect_ok();
    let r = s.bai(&s.admin, &["vfolder", "info", "notes"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("no data folder \"notes\""), "{r:#?}");
    s.bai(&s.user, &["vfolder", "delete", "notes"]).expect_ok();
    assert!(
        !s.bai(&s.user, &["vfolder", "list"])
            .stdout
            .contains("notes")
    );
}

#[test]
fn project_folders_automount_folders_and_reserved_names() {
    let s = Server::start();
    let (user, admin) = (&s.user, &s.admin);
    let w = s.work.path();
    s.bai(admin, &["admin", "project", "create", "team"])
        .expect_ok();
    s.bai(
        admin,
        &["admin", "project", "add-member", "team", "user@bai.local"],
    )
    .expect_ok();
    // Only administrators create project folders.
    s.bai(user, &["vfolder", "create", "-g", "team", "mine"])
        .expect_fail("only administrators create project folders");
    s.bai(admin, &["vfolder", "create", "-g", "team", "teamdata"])
        .expect_ok();
    s.bai(
        admin,
        &["vfolder", "create", "-g", "team", "-p", "ro", "teamrefs"],
    )
    .expect_ok();
    s.bai(admin, &["vfolder", "create", "-g", "nosuch", "x"])
        .expect_fail("project \"nosuch\" does not exist");
    // A project the user is not in: its folder is invisible to them.
    s.bai(admin, &["admin", "project", "create", "other"])
        .expect_ok();
    s.bai(admin, &["vfolder", "create", "-g", "other", "secret"])
        .expect_ok();
    let list = s.bai(user, &["vfolder", "list"]);
    list.expect_ok();
    assert!(
        list.stdout.contains("teamdata") && list.stdout.contains("project team"),
        "{list:#?}"
    );
    assert!(!list.stdout.contains("secret"), "{list:#?}");
    s.bai(user, &["vfolder", "info", "secret"])
        .expect_fail("no data folder");
    // Members use the files; a ro project folder is read-only for them; only admins manage.
    std::fs::write(w.join("note.txt"), "from the user").unwrap();
    s.bai(user, &["vfolder", "upload", "teamdata", "note.txt"])
        .expect_ok();
    s.bai(user, &["vfolder", "upload", "teamrefs", "note.txt"])
        .expect_fail("read-only for project members");
    s.bai(user, &["vfolder", "delete", "teamdata"])
        .expect_fail("managed by administrators");
    s.bai(admin, &["admin", "project", "delete", "team"])
        .expect_fail("owns 2 data folder(s)");
    // Reserved names, as folders and as mount paths.
    s.bai(user, &["vfolder", "create", ".bashrc"])
        .expect_fail("is reserved");
    s.bai(user, &["vfolder", "create", ".jupyter"])
        .expect_fail("is reserved");
    s.bai(
        user,
        &[
            "run",
            "--rm",
            "-m",
            "teamdata:/home/work/.bashrc",
            "-c",
            "1",
            "python",
        ],
    )
    .expect_fail("is reserved");
    // A dot-named folder is mounted in every session of its owner; the project folder is
    // mounted on request, with the member's file in it.
    s.bai(user, &["vfolder", "create", ".config"]).expect_ok();
    std::fs::write(w.join("settings.ini"), "answer=42").unwrap();
    s.bai(user, &["vfolder", "upload", ".config", "settings.ini"])
        .expect_ok();
    let r = s.bai(
        user,
        &[
            "run",
            "--rm",
            "-m",
            "teamdata",
            "-c",
            "print(open('/home/work/.config/settings.ini').read(), open('/home/work/teamdata/note.txt').read())",
            "python",
        ],
    );
    r.expect_ok();
    assert!(r.stdout.contains("answer=42 from the user"), "{r:#?}");
    // Someone outside the project cannot mount its folder, by name or by id.
    let id = folder_id(&s, true, "secret");
    let e = api(
        &s,
        false,
        "POST",
        "/session",
        Some(json!({"image": "python", "config": {"mount_ids": [id]}})),
    )
    .expect_err("mount by id");
    assert_eq!(e.0, 404, "{e:?}");
}

/// The id (hex) of the user's folder `name`.
fn folder_id(s: &Server, admin: bool, name: &str) -> String {
    api(
        s,
        admin,
        "GET",
        "/folders/_/id",
        Some(json!({ "name": name })),
    )
    .unwrap_or_else(|e| panic!("id of {name}: {e:?}"))["id"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_configured_second_storage_host_holds_folders_mounts_and_quotas() {
    // The host's directory does not exist yet: baid creates it.
    let nfs = tempfile::Builder::new()
        .prefix("bai-e2e-nfs-")
        .tempdir()
        .expect("tempdir");
    let root = nfs.path().join("exports/bai");
    let spec = format!("nfs:shared={}", root.display());
    let s = Server::start_with(&[("BAI_STORAGE_HOSTS", &spec)]);
    let (user, w) = (&s.user, s.work.path());
    assert!(root.is_dir(), "the host's root is created at start");

    // Both hosts are listed, with the default, by our CLI, the official client and the API.
    let r = s.bai(user, &["vfolder", "hosts"]);
    r.expect_ok();
    assert_eq!(
        r.stdout, "default: local:volume1\nallowed: local:volume1, nfs:shared\n",
        "{r:#?}"
    );
    let r = ba(&s, false, &["vfolder", "list-hosts"]);
    r.expect_ok();
    assert!(
        r.stdout.contains("Default vfolder host: local:volume1")
            && r.stdout.contains("Usable hosts: local:volume1, nfs:shared"),
        "{r:#?}"
    );
    let h = api(&s, false, "GET", "/folders/_/hosts", None).expect("hosts");
    assert_eq!(h["volume_info"]["nfs:shared"]["backend"], "vfs", "{h:#}");
    assert_eq!(
        h["volume_info"]["local:volume1"]["backend"], "local",
        "{h:#}"
    );
    assert_eq!(
        h["volume_info"]["nfs:shared"]["capabilities"],
        json!(["vfolder"])
    );
    let usage = &h["volume_info"]["nfs:shared"]["usage"];
    assert!(
        usage["total_bytes"].as_u64().unwrap_or(0) > 0
            && usage["used_bytes"].as_u64().unwrap_or(u64::MAX)
                <= usage["total_bytes"].as_u64().unwrap_or(0),
        "{h:#}"
    );

    // Folders on the second host, by our CLI and by the official client; one on the default.
    s.bai(user, &["vfolder", "create", "ours", "nfs:shared"])
        .expect_ok();
    let r = ba(&s, false, &["vfolder", "create", "theirs", "nfs:shared"]);
    r.expect_ok();
    assert!(
        r.stdout.contains("Virtual folder \"theirs\" is created"),
        "{r:#?}"
    );
    s.bai(user, &["vfolder", "create", "plain"]).expect_ok();
    let r = s.bai(user, &["vfolder", "info", "ours"]);
    assert!(r.stdout.contains("host: nfs:shared"), "{r:#?}");
    let r = s.bai(user, &["vfolder", "info", "plain"]);
    assert!(r.stdout.contains("host: local:volume1"), "{r:#?}");
    let r = ba(&s, false, &["vfolder", "list"]);
    assert!(
        r.stdout.contains("theirs") && r.stdout.contains("nfs:shared"),
        "{r:#?}"
    );

    // Uploads land under the configured host path.
    std::fs::write(w.join("x.txt"), "on the second host\n").unwrap();
    s.bai(user, &["vfolder", "upload", "-q", "ours", "x.txt"])
        .expect_ok();
    std::fs::write(w.join("y.txt"), "uploaded by the official client\n").unwrap();
    ba(&s, false, &["vfolder", "upload", "theirs", "y.txt"]).expect_ok();
    let (ours, theirs, plain) = (
        folder_id(&s, false, "ours"),
        folder_id(&s, false, "theirs"),
        folder_id(&s, false, "plain"),
    );
    assert_eq!(
        std::fs::read_to_string(root.join(&ours).join("x.txt")).unwrap_or_default(),
        "on the second host\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join(&theirs).join("y.txt")).unwrap_or_default(),
        "uploaded by the official client\n"
    );
    assert!(
        s.data_dir
            .path()
            .join("volumes/volume1")
            .join(&plain)
            .is_dir()
    );
    assert!(!root.join(&plain).exists());

    // Mounted in a session: the files are there, and what the session writes lands on the host.
    let r = s.bai(
        user,
        &[
            "run",
            "--rm",
            "-m",
            "ours",
            "-m",
            "theirs:/home/work/t",
            "-c",
            "print(open('/home/work/ours/x.txt').read().strip(), '|', open('/home/work/t/y.txt').read().strip())\n\
             _ = open('/home/work/ours/from-session.txt', 'w').write('written inside')",
            "python",
        ],
    );
    r.expect_ok();
    assert_eq!(
        r.stdout, "on the second host | uploaded by the official client\n",
        "{r:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join(&ours).join("from-session.txt")).unwrap_or_default(),
        "written inside"
    );
    let r = ba(
        &s,
        false,
        &[
            "run",
            "--rm",
            "-m",
            "theirs",
            "-c",
            "print(sorted(__import__('os').listdir('/home/work/theirs')))",
            "python",
        ],
    );
    assert!(r.stdout.contains("['y.txt']"), "{r:#?}");

    // An unknown host is refused with the configured ones named, and nothing is created.
    s.bai(user, &["vfolder", "create", "nope", "nosuch:vol"])
        .expect_fail("storage host \"nosuch:vol\" does not exist; configured hosts: local:volume1, nfs:shared");
    let r = ba(&s, false, &["vfolder", "create", "nope2", "nosuch:vol"]);
    assert!(
        format!("{}{}", r.stdout, r.stderr).contains("does not exist"),
        "{r:#?}"
    );
    let r = s.bai(user, &["vfolder", "list"]);
    assert!(!r.stdout.contains("nope"), "{r:#?}");
    assert_eq!(
        std::fs::read_dir(&root).map(|d| d.count()).unwrap_or(0),
        2,
        "only ours and theirs on the host"
    );
    let e = api(
        &s,
        false,
        "POST",
        "/folders",
        Some(json!({"name": "bad", "host": "nosuch:vol"})),
    )
    .expect_err("unknown host");
    assert_eq!(e.0, 400, "{e:?}");

    // A quota folder on the second host: its image and mount are on that host, and the quota
    // holds for uploads.
    let v = api(
        &s,
        false,
        "POST",
        "/folders",
        Some(json!({"name": "small", "host": "nfs:shared", "quota": "20m"})),
    )
    .expect("quota folder");
    assert_eq!(v["host"], "nfs:shared", "{v:#}");
    let small = v["id"].as_str().unwrap_or_default().to_string();
    assert!(root.join(format!("{small}.img")).is_file());
    std::fs::write(w.join("fits.bin"), vec![7u8; 8 * 1024 * 1024]).unwrap();
    s.bai(user, &["vfolder", "upload", "-q", "small", "fits.bin"])
        .expect_ok();
    assert_eq!(
        std::fs::metadata(root.join(&small).join("fits.bin"))
            .map(|m| m.len())
            .unwrap_or(0),
        8 * 1024 * 1024
    );
    std::fs::write(w.join("over.bin"), vec![9u8; 16 * 1024 * 1024]).unwrap();
    s.bai(user, &["vfolder", "upload", "-q", "small", "over.bin"])
        .expect_fail("quota");
    let r = ba(&s, false, &["vfolder", "upload", "small", "over.bin"]);
    assert!(
        format!("{}{}", r.stdout, r.stderr).contains("quota"),
        "{r:#?}"
    );
    assert!(
        !root.join(&small).join("over.bin").exists() || {
            std::fs::metadata(root.join(&small).join("over.bin"))
                .map(|m| m.len())
                .unwrap_or(0)
                == 0
        }
    );
    // Writing past it in a session fails with "no space left on device".
    let code = "try:\n    f = open('/home/work/small/fill.bin', 'wb')\n    f.write(b'x' * (30 * 1024 * 1024))\n    f.close()\n    print('wrote')\n\
                except OSError as e:\n    print('errno', e.errno)\n";
    let r = s.bai(user, &["run", "--rm", "-m", "small", "-c", code, "python"]);
    assert!(r.stdout.contains("errno 28"), "{r:#?}");
    // Deleting it unmounts it and removes its image from the host.
    s.bai(user, &["vfolder", "delete", "small"]).expect_ok();
    assert!(!root.join(&small).exists());
    assert!(!root.join(format!("{small}.img")).exists());

    // Restarted without the second host: its folders are listed as unavailable, their API calls
    // answer 503 naming the host, mounting them is refused, and their files stay on disk.
    let data = s.crash();
    let s = Server::start_in(data, &[]);
    let user = &s.user;
    assert!(
        s.log().contains("storage host that is not configured"),
        "{}",
        s.log()
    );
    let r = s.bai(user, &["vfolder", "hosts"]);
    assert_eq!(r.stdout, "default: local:volume1\nallowed: local:volume1\n");
    let r = s.bai(user, &["vfolder", "list"]);
    r.expect_ok();
    assert!(
        r.stdout.contains("ours") && r.stdout.contains("unavailable"),
        "{r:#?}"
    );
    s.bai(user, &["vfolder", "ls", "ours"])
        .expect_fail("storage host \"nfs:shared\" is not configured");
    let e = api(
        &s,
        false,
        "GET",
        &format!("/folders/{ours}/files?path=."),
        None,
    )
    .expect_err("host gone");
    assert_eq!(e.0, 503, "{e:?}");
    let e = api(&s, false, "DELETE", "/folders", Some(json!({"id": ours}))).expect_err("host gone");
    assert_eq!(e.0, 503, "{e:?}");
    s.bai(
        user,
        &["run", "--rm", "-m", "ours", "-c", "print(1)", "python"],
    )
    .expect_fail("cannot be mounted");
    let e = api(
        &s,
        false,
        "POST",
        "/session",
        Some(json!({"image": "python", "config": {"mounts": ["theirs"]}})),
    )
    .expect_err("mount");
    assert_eq!(e.0, 400, "{e:?}");
    // The folder on the default host is untouched.
    s.bai(user, &["vfolder", "ls", "plain"]).expect_ok();
    assert!(root.join(&ours).join("x.txt").is_file());
}

#[test]
fn bad_storage_host_configuration_stops_baid_with_one_line() {
    let data = tempfile::tempdir().expect("tempdir");
    let file = data.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let cases: Vec<(Vec<(&str, String)>, &str)> = vec![
        (
            vec![("BAI_STORAGE_HOSTS", "nfs=/tmp/x".into())],
            "is invalid: use PROXY:VOLUME",
        ),
        (
            vec![("BAI_STORAGE_HOSTS", "nfs:shared=relative".into())],
            "must be absolute",
        ),
        (
            vec![(
                "BAI_STORAGE_HOSTS",
                format!("nfs:shared={}", file.display()),
            )],
            "nfs:shared",
        ),
        (
            vec![("BAI_DEFAULT_STORAGE_HOST", "nfs:shared".into())],
            "the default storage host \"nfs:shared\" is not configured; configured hosts: local:volume1",
        ),
    ];
    for (env, needle) in cases {
        let mut cmd = std::process::Command::new(bai_e2e::bin("baid"));
        cmd.arg("up")
            .env("BAI_DATA_DIR", data.path())
            .env("BAI_LISTEN", "127.0.0.1:1")
            .env("BAI_NO_DOCKER", "true")
            .env_remove("BAI_STORAGE_HOSTS")
            .env_remove("BAI_DEFAULT_STORAGE_HOST");
        for (k, v) in &env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run baid");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{env:?}: {err}");
        assert!(err.contains(needle), "{env:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(err.contains("bad storage host configuration"), "{err}");
    }
    // Flags work as well as the environment.
    let out = std::process::Command::new(bai_e2e::bin("baid"))
        .args(["up", "--storage-host", "bad"])
        .env("BAI_DATA_DIR", data.path())
        .env_remove("BAI_STORAGE_HOSTS")
        .output()
        .expect("run baid");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("must be NAME=PATH"));
}

#[test]
fn bai_moves_files_raw_and_intact() {
    let s = Server::start_dummy(1, "cpu=2,mem=4g");
    let w = s.work.path();
    s.bai(&s.user, &["vfolder", "create", "big"]).expect_ok();
    // 40 MiB and a bit, not a multiple of any chunk size; and an empty file.
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let data: Vec<u8> = (0..(40 << 20) + 4093)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect();
    std::fs::write(w.join("big.bin"), &data).unwrap();
    std::fs::write(w.join("empty.bin"), b"").unwrap();
    for f in ["big.bin", "empty.bin"] {
        s.bai(&s.user, &["vfolder", "upload", "-q", "big", f])
            .expect_ok();
        s.bai(
            &s.user,
            &["vfolder", "download", "-q", "big", f, "--base-dir", "out"],
        )
        .expect_ok();
        assert_eq!(
            sha256(&w.join("out").join(f)),
            sha256(&w.join(f)),
            "{f} came back changed"
        );
    }
    // Our client took the raw paths (sendfile up, splice down), not the standard ones.
    let seen = |what: &str, mode: &str| {
        s.log()
            .lines()
            .any(|l| l.contains(what) && l.contains(&format!("\"{mode}\"")))
    };
    s.wait_for(10, "the raw transfers in the log", || {
        (seen("upload received", "raw") && seen("download started", "raw")).then_some(())
    });
    assert!(!seen("upload received", "http"), "{}", s.log());
    assert!(!seen("download started", "http"), "{}", s.log());
}
