//! A full disk (issue 18): baid's data dir on a small loop-mounted ext4 filesystem, filled
//! up. Uploads are refused with 507, creates either go through or are refused with a clear
//! reason, the database passes `PRAGMA integrity_check` after every fault, and once space is
//! freed everything works again.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::Server;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

const DUMMY: [(&str, &str); 4] = [
    ("BAI_NO_DOCKER", "true"),
    ("BAI_DUMMY_AGENTS", "1"),
    ("BAI_DUMMY_CAPACITY", "cpu=64,mem=64g"),
    ("BAI_SCHEDULE_TICK_MS", "200"),
];

/// A 48 MiB ext4 filesystem mounted at `<tmp>/mnt`; unmounted when dropped.
struct SmallDisk {
    mnt: PathBuf,
    _tmp: tempfile::TempDir,
}

impl SmallDisk {
    fn new() -> SmallDisk {
        let tmp = tempfile::tempdir().expect("tempdir");
        let img = tmp.path().join("disk.img");
        let mnt = tmp.path().join("mnt");
        std::fs::create_dir(&mnt).expect("mount point");
        std::fs::File::create(&img)
            .and_then(|f| f.set_len(48 << 20))
            .expect("image");
        let run = |cmd: &mut Command| {
            let out = cmd.output().expect("run");
            assert!(
                out.status.success(),
                "{cmd:?}: {} (this test needs root: it mounts a loop device)",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        run(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&img));
        run(Command::new("mount")
            .args(["-o", "loop"])
            .arg(&img)
            .arg(&mnt));
        SmallDisk { mnt, _tmp: tmp }
    }

    /// Writes a file until the disk is full.
    fn fill(&self) -> PathBuf {
        let path = self.mnt.join("filler");
        let mut f = std::fs::File::create(&path).expect("filler");
        let chunk = vec![0x5au8; 64 * 1024];
        while f.write_all(&chunk).and_then(|()| f.sync_data()).is_ok() {}
        // Smaller pieces for the last blocks.
        while f
            .write_all(&chunk[..512])
            .and_then(|()| f.sync_data())
            .is_ok()
        {}
        path
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.mnt).status();
    }
}

fn integrity(db: &Path) -> String {
    let out = Command::new("python3")
        .arg("-c")
        .arg("import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('pragma integrity_check').fetchone()[0])")
        .arg(db)
        .output()
        .expect("python3");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn create(s: &Server, name: &str) -> bai_e2e::Run {
    s.bai(
        &s.user,
        &[
            "start",
            "--enqueue-only",
            "--type",
            "batch",
            "-c",
            "sleep 1",
            "-t",
            name,
            "python",
        ],
    )
}

#[test]
fn a_full_disk_refuses_clearly_corrupts_nothing_and_recovers_when_freed() {
    let disk = SmallDisk::new();
    let data = tempfile::Builder::new()
        .prefix("bai-e2e-")
        .tempdir_in(&disk.mnt)
        .expect("data dir on the small disk");
    let db = data.path().join("bai.db");
    let s = Server::start_in(data, &DUMMY);
    s.bai(&s.user, &["vfolder", "create", "f"]).expect_ok();
    std::fs::write(s.work.path().join("big.bin"), vec![1u8; 4 << 20]).expect("upload file");
    create(&s, "before").expect_ok();
    assert_eq!(integrity(&db), "ok");

    let filler = disk.fill();
    // An upload has nowhere to go: 507, said plainly.
    let up = s.bai(&s.user, &["vfolder", "upload", "f", "big.bin"]);
    assert!(!up.ok(), "an upload to a full disk went through: {up:?}");
    assert!(up.stderr.contains("no space left"), "{up:?}");
    assert_eq!(integrity(&db), "ok");
    // Creates go through while the database still has room in its log, and are refused
    // with the reason once it has none; nothing else happens to them.
    let (mut made, mut refused) = (0, 0);
    for i in 0..100 {
        let r = create(&s, &format!("full-{i}"));
        if r.ok() {
            made += 1;
        } else {
            assert!(
                r.stderr.contains("disk holding bai's data is full"),
                "{r:?}"
            );
            refused += 1;
        }
    }
    assert_eq!(integrity(&db), "ok");
    println!("DISKFULL creates made={made} refused={refused}");

    // Space comes back: everything works again, and what was made is there.
    std::fs::remove_file(&filler).expect("free the disk");
    s.bai(&s.user, &["vfolder", "upload", "f", "big.bin"])
        .expect_ok();
    create(&s, "after").expect_ok();
    for name in ["before", "after"] {
        let i = s.wait_for(120, &format!("{name} to finish"), || {
            let i = s.info(&s.user, name);
            (i["status"] == "TERMINATED").then_some(i)
        });
        assert_eq!(i["result"], "SUCCESS", "{i:#}");
    }
    assert_eq!(integrity(&db), "ok");
    drop(s);
}
