//! Session templates end to end through `bai` against `baid up` with its Docker engine:
//! storing one from a YAML file, listing and showing it, a batch session made from it with an
//! option replacing the template's value, and who may see and change it. (The official
//! client's template specs run in `official_specs.rs`.)
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::Server;

const TEMPLATE: &str = "\
- name: greeter
  template:
    api_version: v1
    kind: taskTemplate
    metadata: {name: greeter, tag: demo}
    spec:
      session_type: batch
      kernel:
        image: python
        environ: {GREETING: hello-from-template}
        run: {startup_command: 'echo \"$GREETING\"'}
      resources: {cpu: 0.25, mem: 256m}
";

#[test]
fn a_template_makes_sessions_and_only_its_owner_sees_it() {
    let s = Server::start();
    std::fs::write(s.work.path().join("t.yaml"), TEMPLATE).expect("write");

    let r = s.bai(&s.user, &["template", "create", "-f", "t.yaml"]);
    r.expect_ok();
    let id = r
        .stdout
        .split_whitespace()
        .nth(2)
        .expect("the stored template's id")
        .to_string();

    let list = s.bai(&s.user, &["template", "list"]);
    list.expect_ok();
    assert!(
        list.stdout.contains("greeter") && list.stdout.contains(&id),
        "{list:#?}"
    );
    let shown = s.bai(&s.user, &["template", "get", &id]);
    shown.expect_ok();
    assert!(
        shown.stdout.contains("GREETING: hello-from-template"),
        "{shown:#?}"
    );

    // The template's own values make the session ...
    let r = s.bai(
        &s.user,
        &["session", "create-from-template", &id, "-t", "tpl-one"],
    );
    r.expect_ok();
    let info = s.wait_terminated(&s.user, "tpl-one", 300);
    assert_eq!(info["type"], "batch", "{info:#}");
    assert_eq!(info["tag"], "demo", "{info:#}");
    let logs = s.bai(&s.user, &["logs", "tpl-one"]);
    assert!(logs.stdout.contains("hello-from-template"), "{logs:#?}");

    // ... and an option given replaces the template's.
    let r = s.bai(
        &s.user,
        &[
            "session",
            "create-from-template",
            &id,
            "-t",
            "tpl-two",
            "-e",
            "GREETING=replaced",
        ],
    );
    r.expect_ok();
    s.wait_terminated(&s.user, "tpl-two", 300);
    let logs = s.bai(&s.user, &["logs", "tpl-two"]);
    assert!(
        logs.stdout.contains("replaced") && !logs.stdout.contains("hello-from-template"),
        "{logs:#?}"
    );

    // Another user neither sees, uses, changes nor deletes it; an administrator lists it.
    for args in [
        vec!["template", "get", id.as_str()],
        vec![
            "session",
            "create-from-template",
            id.as_str(),
            "-t",
            "stolen",
        ],
        vec!["template", "update", id.as_str(), "-f", "t.yaml"],
        vec!["template", "delete", id.as_str()],
    ] {
        s.bai(&s.user2, &args)
            .expect_fail("no session template")
            .expect_fail(&id);
    }
    let theirs = s.bai(&s.user2, &["template", "list"]);
    assert!(!theirs.stdout.contains(&id), "{theirs:#?}");
    s.bai(&s.user2, &["template", "list", "--all"])
        .expect_fail("only administrators");
    let all = s.bai(&s.admin, &["template", "list", "--all"]);
    assert!(all.stdout.contains(&id), "{all:#?}");

    // A payload that could not make a session is refused, and nothing is stored.
    std::fs::write(
        s.work.path().join("bad.yaml"),
        TEMPLATE.replace("cpu: 0.25", "cpu: lots"),
    )
    .expect("write");
    s.bai(&s.user, &["template", "create", "-f", "bad.yaml"])
        .expect_fail("spec.resources");
    let list = s.bai(&s.user, &["--output", "json", "template", "list"]);
    let v: serde_json::Value = serde_json::from_str(&list.stdout).expect("json listing");
    assert_eq!(v["items"].as_array().map(Vec::len), Some(1), "{v:#}");

    s.bai(&s.user, &["template", "delete", &id]).expect_ok();
    s.bai(&s.user, &["template", "get", &id])
        .expect_fail("no session template");
}
