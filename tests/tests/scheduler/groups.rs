//! Resource presets, resource groups and projects, and choosing an agent, end to end (`bai
//! admin preset`, `bai presets --check`, `bai admin resource-group`, `bai start --scaling-group`,
//! `--assign-agent`).

use super::*;

#[test]
fn presets_resource_groups_and_select_agent() {
    let s = Server::start_dummy(2, "cpu=2,mem=4g");
    s.bai(
        &s.admin,
        &[
            "admin", "preset", "create", "small", "-r", "cpu=1", "-r", "mem=1g",
        ],
    )
    .expect_ok();
    s.bai(
        &s.admin,
        &[
            "admin", "preset", "create", "huge", "-r", "cpu=16", "-r", "mem=64g",
        ],
    )
    .expect_ok();
    let r = s.bai(&s.user, &["presets", "--check"]);
    r.expect_ok();
    let line = |name: &str| {
        r.stdout
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_default()
            .to_string()
    };
    assert!(line("small").ends_with("yes"), "{r:#?}");
    assert!(line("huge").ends_with("no"), "{r:#?}");
    // A launch from a preset gets its resources; an unknown preset is a clear error.
    start(
        &s,
        &s.user,
        &["-c", "sleep 30", "-t", "from-preset", "--preset", "small"],
    );
    let i = s.info(&s.user, "from-preset");
    assert_eq!(i["cpu"], "1", "{i:#}");
    let r = s.bai(&s.user, &["start", "--preset", "nope", "python"]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("no resource preset named \"nope\""),
        "{r:#?}"
    );
    // Select Agent: the session lands on the agent picked.
    start(
        &s,
        &s.user,
        &[
            "-c",
            "sleep 30",
            "-t",
            "picked",
            "-r",
            "cpu=1",
            "--assign-agent",
            "dummy-default-0001",
        ],
    );
    let i = s.wait_status(&s.user, "picked", "RUNNING", 10);
    assert_eq!(i["agent"], "dummy-default-0001", "{i:#}");
    // A private group is invisible to the user until allowed; a group without agents refuses.
    s.bai(
        &s.admin,
        &[
            "admin",
            "resource-group",
            "create",
            "private",
            "--public",
            "false",
        ],
    )
    .expect_ok();
    let r = s.bai(&s.user, &["resource-groups"]);
    assert!(!r.stdout.contains("private"), "{r:#?}");
    let r = s.bai(&s.user, &["start", "--scaling-group", "private", "python"]);
    assert!(r.stderr.contains("not open to you"), "{r:#?}");
    let ak = s.user.get("BACKEND_ACCESS_KEY").to_string();
    s.bai(
        &s.admin,
        &["admin", "resource-group", "allow", "private", &ak],
    )
    .expect_ok();
    let r = s.bai(&s.user, &["resource-groups"]);
    assert!(r.stdout.contains("private"), "{r:#?}");
    let r = s.bai(&s.user, &["start", "--scaling-group", "private", "python"]);
    assert!(
        r.stderr
            .contains("no agent node is registered in resource group \"private\""),
        "{r:#?}"
    );
    // Projects: a group opened to a project is usable by its members, in that project only.
    s.bai(&s.admin, &["admin", "project", "create", "vision"])
        .expect_ok();
    s.bai(
        &s.admin,
        &[
            "admin",
            "resource-group",
            "create",
            "team",
            "--public",
            "false",
        ],
    )
    .expect_ok();
    s.bai(
        &s.admin,
        &[
            "admin",
            "resource-group",
            "allow",
            "team",
            "--project",
            "vision",
        ],
    )
    .expect_ok();
    let r = s.bai(&s.user, &["start", "-g", "vision", "python"]);
    assert!(
        r.stderr.contains("not a member of project \"vision\""),
        "{r:#?}"
    );
    assert!(!s.bai(&s.user, &["resource-groups"]).stdout.contains("team"));
    s.bai(
        &s.admin,
        &["admin", "project", "add-member", "vision", "user@bai.local"],
    )
    .expect_ok();
    assert!(s.bai(&s.user, &["projects"]).stdout.contains("vision"));
    assert!(s.bai(&s.user, &["resource-groups"]).stdout.contains("team"));
    let r = s.bai(
        &s.user,
        &["start", "-g", "vision", "--scaling-group", "team", "python"],
    );
    assert!(
        r.stderr
            .contains("no agent node is registered in resource group \"team\""),
        "{r:#?}"
    );
    let r = s.bai(&s.user, &["start", "--scaling-group", "team", "python"]);
    assert!(r.stderr.contains("not open to you"), "{r:#?}");
    // Users cannot administer.
    let r = s.bai(
        &s.user,
        &[
            "admin", "preset", "create", "mine", "-r", "cpu=1", "-r", "mem=1g",
        ],
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("administrator"), "{r:#?}");
    // Bad scheduler names are refused with the choices.
    let r = s.bai(
        &s.admin,
        &[
            "admin",
            "resource-group",
            "update",
            "default",
            "--scheduler",
            "random",
        ],
    );
    assert!(
        r.stderr.contains("use fifo, lifo, drf or fairshare"),
        "{r:#?}"
    );
    let r = s.bai(
        &s.user,
        &["session", "history", "picked", "--result", "BOGUS"],
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("is not one of"), "{r:#?}");
}
