//! Sharing folders through `bai`: a user folder shared by invitation (read only, then left),
//! an invitation rejected, a project folder's member given their own permission, and a clone.

use bai_e2e::Server;

#[test]
fn an_invited_user_reads_a_shared_folder_but_cannot_change_or_manage_it() {
    let s = Server::start();
    std::fs::write(s.work.path().join("notes.txt"), "shared notes\n").expect("write");
    s.bai(&s.user, &["vfolder", "create", "team-data"])
        .expect_ok();
    s.bai(&s.user, &["vfolder", "upload", "team-data", "notes.txt"])
        .expect_ok();

    // Not shared yet: user2 does not see it.
    s.bai(&s.user2, &["vfolder", "ls", "team-data"])
        .expect_fail("team-data");

    let r = s.bai(
        &s.user,
        &[
            "vfolder",
            "invite",
            "team-data",
            "user2@bai.local",
            "-p",
            "ro",
        ],
    );
    r.expect_ok();
    assert!(r.stdout.contains("Invited 1 user"), "{r:#?}");
    // A second invitation while one is pending is skipped, with the reason.
    let again = s.bai(
        &s.user,
        &["vfolder", "invite", "team-data", "user2@bai.local"],
    );
    assert!(again.stdout.contains("already invited"), "{again:#?}");
    s.bai(
        &s.user,
        &["vfolder", "invite", "team-data", "nobody@bai.local"],
    )
    .expect_fail("no user has the email");

    let list = s.bai(&s.user2, &["--output", "json", "vfolder", "invitations"]);
    list.expect_ok();
    let v: serde_json::Value = serde_json::from_str(&list.stdout).expect("json");
    let inv = &v["items"][0];
    assert_eq!(inv["vfolder_name"], "team-data", "{v:#}");
    assert_eq!(inv["inviter_user_email"], "user@bai.local", "{v:#}");
    assert_eq!(inv["mount_permission"], "ro", "{v:#}");
    let inv_id = inv["id"].as_str().expect("invitation id").to_string();
    // Only the invitee accepts it.
    s.bai(&s.admin, &["vfolder", "accept", &inv_id])
        .expect_fail("no pending invitation");
    s.bai(&s.user2, &["vfolder", "accept", &inv_id]).expect_ok();
    s.bai(&s.user2, &["vfolder", "accept", &inv_id])
        .expect_fail("no pending invitation");

    // user2 reads it, read only.
    let ls = s.bai(&s.user2, &["vfolder", "ls", "team-data"]);
    ls.expect_ok();
    assert!(ls.stdout.contains("notes.txt"), "{ls:#?}");
    let info = s.bai(&s.user2, &["vfolder", "info", "team-data"]);
    assert!(info.stdout.contains("ro"), "{info:#?}");
    s.bai(&s.user2, &["vfolder", "upload", "team-data", "notes.txt"])
        .expect_fail("read-only");
    s.bai(&s.user2, &["vfolder", "mkdir", "team-data", "x"])
        .expect_fail("read-only");
    // Managing it stays its owner's.
    s.bai(&s.user2, &["vfolder", "rename", "team-data", "mine-now"])
        .expect_fail("only its owner");
    s.bai(&s.user2, &["vfolder", "delete", "team-data"])
        .expect_fail("only its owner");
    s.bai(
        &s.user2,
        &["vfolder", "invite", "team-data", "admin@bai.local"],
    )
    .expect_fail("not yours");
    // In a session it is mounted read only.
    let run = s.bai(
        &s.user2,
        &[
            "run",
            "--rm",
            "-m",
            "team-data",
            "-c",
            "print(open('/home/work/team-data/notes.txt').read().strip())\nopen('/home/work/team-data/new.txt', 'w')",
            "python",
        ],
    );
    assert!(run.stdout.contains("shared notes"), "{run:#?}");
    assert!(
        !run.ok() && run.stderr.contains("Read-only file system"),
        "{run:#?}"
    );

    // The owner sees who has it; user2 leaves and no longer sees it.
    let shared = s.bai(&s.user, &["vfolder", "shared", "team-data"]);
    assert!(
        shared.stdout.contains("user2@bai.local") && shared.stdout.contains("ro"),
        "{shared:#?}"
    );
    s.bai(&s.user2, &["vfolder", "leave", "team-data"])
        .expect_ok();
    s.bai(&s.user2, &["vfolder", "ls", "team-data"])
        .expect_fail("team-data");

    // A rejected invitation shares nothing.
    s.bai(
        &s.user,
        &[
            "vfolder",
            "invite",
            "team-data",
            "user2@bai.local",
            "-p",
            "rw",
        ],
    )
    .expect_ok();
    let list = s.bai(&s.user2, &["--output", "json", "vfolder", "invitations"]);
    let v: serde_json::Value = serde_json::from_str(&list.stdout).expect("json");
    let inv_id = v["items"][0]["id"].as_str().expect("id").to_string();
    s.bai(&s.user2, &["vfolder", "reject", &inv_id]).expect_ok();
    s.bai(&s.user2, &["vfolder", "ls", "team-data"])
        .expect_fail("team-data");
    let none = s.bai(&s.user2, &["vfolder", "invitations"]);
    assert!(none.stdout.contains("No pending invitations"), "{none:#?}");
}

#[test]
fn a_project_members_own_permission_overrides_the_folders_and_clones_copy_files() {
    let s = Server::start();
    std::fs::write(s.work.path().join("data.csv"), "a,b\n1,2\n").expect("write");
    s.bai(
        &s.admin,
        &["vfolder", "create", "proj-data", "--project", "default"],
    )
    .expect_ok();
    s.bai(&s.admin, &["vfolder", "upload", "proj-data", "data.csv"])
        .expect_ok();
    // Members write it (rw) until one is given ro of their own.
    s.bai(&s.user2, &["vfolder", "mkdir", "proj-data", "before"])
        .expect_ok();
    s.bai(
        &s.user,
        &["vfolder", "share", "proj-data", "user2@bai.local"],
    )
    .expect_fail("administrators");
    let r = s.bai(
        &s.admin,
        &[
            "vfolder",
            "share",
            "proj-data",
            "user2@bai.local",
            "-p",
            "ro",
        ],
    );
    r.expect_ok();
    s.bai(&s.user2, &["vfolder", "mkdir", "proj-data", "after"])
        .expect_fail("read-only");
    s.bai(&s.user, &["vfolder", "mkdir", "proj-data", "other-member"])
        .expect_ok();
    let info = |who| {
        let r = s.bai(who, &["--output", "json", "vfolder", "list"]);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
        v["items"]
            .as_array()
            .and_then(|a| a.iter().find(|f| f["name"] == "proj-data").cloned())
            .expect("proj-data listed")
    };
    assert_eq!(info(&s.user2)["permission"], "ro");
    assert_eq!(info(&s.user)["permission"], "rw");
    s.bai(
        &s.admin,
        &["vfolder", "unshare", "proj-data", "user2@bai.local"],
    )
    .expect_ok();
    assert_eq!(info(&s.user2)["permission"], "rw");

    // A member clones it into a folder of their own, files and all.
    let c = s.bai(
        &s.user2,
        &["vfolder", "clone", "proj-data", "my-copy", "-q"],
    );
    c.expect_ok();
    let ls = s.bai(&s.user2, &["vfolder", "ls", "my-copy"]);
    assert!(
        ls.stdout.contains("data.csv") && ls.stdout.contains("before"),
        "{ls:#?}"
    );
    s.bai(&s.user2, &["vfolder", "mkdir", "my-copy", "mine"])
        .expect_ok();
    s.bai(&s.user2, &["vfolder", "clone", "proj-data", "my-copy"])
        .expect_fail("already have");
    // The clone is user2's alone.
    s.bai(&s.user, &["vfolder", "ls", "my-copy"])
        .expect_fail("my-copy");
}
