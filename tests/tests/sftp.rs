//! SFTP to a data folder end to end on `baid up` with its Docker engine: `bai vfolder sftp`
//! starts a system session (the folder mounted, only sshd) and saves its key; the real `sftp`,
//! as the printed command goes (no `cd`), starts in the folder and uploads 100 MiB into it
//! through the manager's port, and `bai vfolder ls` finds it; the scratch home around the
//! folder takes no upload.
//! The session is listed only with `--system`, the policy's `max_concurrent_sftp_sessions`
//! (1 by default) refuses a second one, `POST /session` cannot make a system session, another
//! key is refused, and the session ends by itself once no connection is open, or when the
//! manager that served it is killed and started again.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::Server;
use std::process::Command;

/// The value after `label` in the CLI's `host: H  port: P  user: U  folder: F` line.
fn field<'a>(out: &'a str, label: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with("host: "))
        .and_then(|l| l.split(label).nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no {label:?} in {out}"))
}

#[test]
fn a_folder_takes_a_100_mib_upload_over_sftp() {
    let s = Server::start_with(&[("BAI_SFTP_IDLE", "30s")]);
    let w = s.work.path();
    s.bai(&s.user, &["vfolder", "create", "sftpdata"])
        .expect_ok();
    s.bai(&s.user, &["vfolder", "create", "other"]).expect_ok();

    let r = s.bai(&s.user, &["vfolder", "sftp", "sftpdata"]);
    r.expect_ok();
    let port = field(&r.stdout, "port: ").to_string();
    let user = field(&r.stdout, "user: ").to_string();
    let folder = field(&r.stdout, "folder: ").to_string();
    let name = session_name(&r.stdout);
    assert_eq!(folder, "/home/work/sftpdata", "{r:#?}");
    let key = w.join("sftp-sftpdata.key");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&key)
        .expect("the key file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "the key is the user's alone");

    // A system session: listed only when asked for, and not makeable by POST /session.
    let ps = s.bai(&s.user, &["ps"]);
    assert!(!ps.stdout.contains(&name), "{ps:#?}");
    let ps = s.bai(&s.user, &["ps", "--system"]);
    assert!(
        ps.stdout.contains(&name) && ps.stdout.contains("system"),
        "{ps:#?}"
    );
    s.bai(&s.user, &["start", "--type", "system", "python"])
        .expect_fail("system sessions are made by the platform");
    // Its policy allows one at a time.
    s.bai(&s.user, &["vfolder", "sftp", "other"])
        .expect_fail("your resource policy allows 1");

    // One that cannot be placed now (its owner's quota is half a CPU) is cancelled at once,
    // with the scheduler's reason, instead of keeping its caller waiting.
    s.bai(
        &s.admin,
        &["admin", "policy", "create", "halfcpu", "-r", "cpu=0.5"],
    )
    .expect_ok();
    let ak2 = s.user2.get("BACKEND_ACCESS_KEY").to_string();
    s.bai(&s.admin, &["admin", "policy", "assign", &ak2, "halfcpu"])
        .expect_ok();
    s.bai(&s.user2, &["vfolder", "create", "u2data"])
        .expect_ok();
    s.bai(&s.user2, &["vfolder", "sftp", "u2data"])
        .expect_fail("cannot start now (resource-quota)");
    let theirs = s.bai(&s.user2, &["ps", "--system", "--all"]);
    assert!(theirs.stdout.contains("CANCELLED"), "{theirs:#?}");

    // 100 MiB up with the real sftp, through the manager's port.
    let big = w.join("big.bin");
    let f = std::fs::File::create(&big).expect("create");
    f.set_len(100 * 1024 * 1024).expect("size the file");
    drop(f);
    let batch = w.join("batch");
    // As the printed command goes, with no `cd`: SFTP starts in the folder.
    std::fs::write(&batch, format!("put {}\npwd\nls -l\n", big.display()))
        .expect("write the batch");
    let mut args = bai_e2e::apps::ssh_opts(&key, "-P", port.parse().expect("a port"));
    args.extend(["-b".to_string(), batch.display().to_string()]);
    args.push(format!("{user}@127.0.0.1"));
    let out = Command::new("sftp").args(&args).output().expect("run sftp");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains(&format!("Remote working directory: {folder}")),
        "{text}"
    );
    let ls = s.bai(&s.user, &["vfolder", "ls", "sftpdata"]);
    ls.expect_ok();
    assert!(
        ls.stdout.contains("big.bin") && ls.stdout.contains("104857600"),
        "{ls:#?}"
    );

    // Nothing lands in the scratch home around the folder (it would go with the session).
    let outside = w.join("outside");
    std::fs::write(
        &outside,
        format!("put {} /home/work/lost.bin\n", big.display()),
    )
    .expect("write the batch");
    let mut args = bai_e2e::apps::ssh_opts(&key, "-P", port.parse().expect("a port"));
    args.extend(["-b".to_string(), outside.display().to_string()]);
    args.push(format!("{user}@127.0.0.1"));
    let out = Command::new("sftp").args(&args).output().expect("run sftp");
    assert!(
        !out.status.success(),
        "an upload outside the folder was taken: {out:?}"
    );

    // Another key does not open it.
    let stranger = w.join("stranger");
    let made = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&stranger)
        .status()
        .expect("ssh-keygen");
    assert!(made.success());
    let mut args = bai_e2e::apps::ssh_opts(&stranger, "-P", port.parse().expect("a port"));
    args.extend(["-b".to_string(), batch.display().to_string()]);
    args.push(format!("{user}@127.0.0.1"));
    let out = Command::new("sftp").args(&args).output().expect("run sftp");
    assert!(!out.status.success(), "a stranger's key was let in");

    // No connection open: it ends by itself, and the folder may have another one.
    let info = s.wait_terminated(&s.user, &name, 600);
    assert_eq!(info["type"], "system", "{info:#}");
    assert!(
        info["status_info"]
            .as_str()
            .unwrap_or("")
            .contains("idle-timeout"),
        "{info:#}"
    );
    let r = s.bai(&s.user, &["vfolder", "sftp", "other"]);
    r.expect_ok();
    let second = session_name(&r.stdout);

    // A manager killed and started again has no listener for it any more: it ends it.
    let s = Server::start_in(s.crash(), &[("BAI_SFTP_IDLE", "30s")]);
    s.wait_terminated(&s.user, &second, 600);
}

/// The session's name in `bai vfolder sftp`'s first line.
fn session_name(out: &str) -> String {
    out.lines()
        .next()
        .and_then(|l| l.strip_prefix("SFTP session "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no session name in {out}"))
        .to_string()
}
