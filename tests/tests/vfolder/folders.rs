//! Folder commands of the official client and of `bai`, isolation between users, paths that
//! stay inside their folder, project folders, automount folders and reserved names.

use super::{api, ba, folder_id};
use bai_e2e::Server;
use serde_json::json;

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
    // mkdir without -p of an existing dir fails, saying why (the official client printed a
    // traceback when the 400 was not a problem with a title); with -e it is fine.
    let r = ba(&s, false, &["vfolder", "mkdir", "mydata", "a"]);
    assert!(!r.stdout.contains("Successfully created"), "{r:#?}");
    r.expect_fail("a already exists");
    assert!(!r.stderr.contains("Traceback"), "{r:#?}");
    let r = s.bai(&s.user, &["vfolder", "mkdir", "mydata", "a", "../up"]);
    r.expect_fail("a already exists");
    assert!(r.stderr.contains("goes outside the folder"), "{r:#?}");
    assert_eq!(r.stderr.trim().lines().count(), 1, "{r:#?}");
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
    // Deleting moves the folder to the trash, whole: not listed, not usable, restorable;
    // the official client and bai alike.
    ba(&s, false, &["vfolder", "delete", "mydata2"]).expect_ok();
    let user = &s.user;
    assert!(!s.bai(user, &["vfolder", "list"]).stdout.contains("mydata2"));
    assert!(
        s.bai(user, &["vfolder", "trash"])
            .stdout
            .contains("mydata2")
    );
    s.bai(user, &["vfolder", "ls", "mydata2"])
        .expect_fail("is in the trash");
    s.bai(user, &["vfolder", "create", "mydata2"])
        .expect_fail("in the trash");
    ba(&s, false, &["vfolder", "restore", "mydata2"]).expect_ok();
    s.bai(user, &["vfolder", "ls", "mydata2"]).expect_ok();
    s.bai(user, &["vfolder", "purge", "mydata2"])
        .expect_fail("not in the trash");
    let r = s.bai(user, &["vfolder", "delete", "mydata2"]);
    r.expect_ok();
    assert!(r.stdout.contains("trash"), "{r:#?}");
    s.bai(user, &["vfolder", "purge", "mydata2"]).expect_ok();
    assert!(
        !s.bai(user, &["vfolder", "trash"])
            .stdout
            .contains("mydata2")
    );
    s.bai(user, &["vfolder", "info", "mydata2"])
        .expect_fail("no data folder");
    assert!(!dir.exists(), "the folder's directory is removed");
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
        .expect_fail("project folder \"teamrefs\" is read-only for you");
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
