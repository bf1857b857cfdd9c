//! The bytes in folders: mounts that outlive their sessions, read-only mounts, quotas in
//! uploads and in sessions, `bai`'s raw transfers and the names its uploads get.

use super::{api, ba};
use bai_e2e::{Server, sha256};
use serde_json::{Value, json};
use std::path::PathBuf;

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
    // Deleting moves it to the trash whole; purging it unmounts and removes its filesystem.
    ba(&s, false, &["vfolder", "delete", "small"]).expect_ok();
    assert!(s.data_dir.path().join("volumes/volume1").join(&id).exists());
    ba(&s, false, &["vfolder", "purge", "small"]).expect_ok();
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

/// `bai vfolder upload` names a file by its path under the base directory (the working
/// directory unless `--base-dir`), whether it was given relative or absolute; a file outside
/// it keeps its file name alone. `vfolder ls --output json` lists what is there.
#[test]
fn uploads_are_named_by_their_path_under_the_base_directory() {
    let s = Server::start_dummy(1, "cpu=2,mem=4g");
    let w = s.work.path();
    s.bai(&s.user, &["vfolder", "create", "names"]).expect_ok();
    std::fs::create_dir_all(w.join("sub/deep")).unwrap();
    std::fs::write(w.join("top.txt"), "t").unwrap();
    std::fs::write(w.join("sub/deep/a.txt"), "a").unwrap();
    std::fs::write(w.join("sub/deep/b.txt"), "b").unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("far.txt"), "f").unwrap();
    let abs = |p: PathBuf| p.to_string_lossy().into_owned();
    let up = |extra: &[&str]| {
        let mut args = vec!["vfolder", "upload", "-q", "names"];
        args.extend(extra);
        s.bai(&s.user, &args).expect_ok();
    };
    up(&["top.txt"]);
    up(&[&abs(w.join("sub/deep/a.txt"))]);
    up(&["--base-dir", "sub", "deep/b.txt"]);
    up(&[&abs(elsewhere.path().join("far.txt"))]);
    let names = |dir: &str| -> Vec<String> {
        let r = s.bai(
            &s.user,
            &["--output", "json", "vfolder", "ls", "names", dir],
        );
        r.expect_ok();
        let v: Value = serde_json::from_str(&r.stdout).expect("json listing");
        let mut n: Vec<String> = v["items"]
            .as_array()
            .expect("items")
            .iter()
            .filter_map(|e| e["name"].as_str().map(String::from))
            .collect();
        n.sort();
        n
    };
    assert_eq!(names("."), ["deep", "far.txt", "sub", "top.txt"]);
    assert_eq!(names("sub/deep"), ["a.txt"]);
    assert_eq!(names("deep"), ["b.txt"]);
    // A file that is not there: one line, nothing uploaded.
    let bad = s.bai(&s.user, &["vfolder", "upload", "names", "missing.txt"]);
    bad.expect_fail("missing.txt");
    assert_eq!(names("."), ["deep", "far.txt", "sub", "top.txt"]);
}
