//! Storage hosts: a configured second host with its folders, mounts and quotas, and bad host
//! configurations that stop `baid`.

use super::{api, ba, folder_id};
use bai_e2e::Server;
use serde_json::json;

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
    // Deleting it for good unmounts it and removes its image from the host.
    s.bai(user, &["vfolder", "delete", "--purge", "small"])
        .expect_ok();
    assert!(!root.join(&small).exists());
    assert!(!root.join(format!("{small}.img")).exists());

    // Restarted without the second host: its folders are listed as unavailable, their API calls
    // answer 503 naming the host, mounting them is refused, and their files stay on disk.
    let data = s.crash();
    let s = Server::start_in(data, &[]);
    let user = &s.user;
    // The log is written behind the server (a non-blocking writer): wait for the line.
    s.wait_for(60, "the warning about the missing storage host", || {
        s.log()
            .contains("storage host that is not configured")
            .then_some(())
    });
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
    // To the trash it goes (nothing on the host is touched); purging needs the host.
    api(&s, false, "DELETE", "/folders", Some(json!({"id": ours}))).expect("to the trash");
    let e = api(
        &s,
        false,
        "POST",
        "/folders/purge",
        Some(json!({"id": ours})),
    )
    .expect_err("host gone");
    assert_eq!(e.0, 503, "{e:?}");
    api(
        &s,
        false,
        "POST",
        "/folders/restore-from-trash-bin",
        Some(json!({"id": ours})),
    )
    .expect("restored");
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
            .env("BAI_AGENT_LISTEN", "off")
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
