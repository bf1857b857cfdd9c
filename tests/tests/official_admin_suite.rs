//! The official admin suite, its cases unmodified: `backend.ai test run-cli admin` from
//! backend.ai-test 26.9.6. Its 29 pytest cases drive the official `backend.ai` CLI as an
//! administrator through pexpect: domains (add with folder-host permissions and registries,
//! rename, purge), groups, images, keypairs (add for new users, update, list, and a deletion
//! refused while the keypair's session is queued), keypair resource policies, scaling groups
//! (driver and scheduler options), storage volumes and users (add with roles and statuses,
//! update, purge), all with `--output=json`. Each command may take 120 s, not the published
//! 5 s (`tests/fixtures/official/bai_patience.py`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::Server;

#[test]
fn official_run_cli_admin_suite_passes() {
    let s = Server::start_dummy(1, "cpu=2,mem=4g");
    let run = bai_e2e::suite::run_cli(&s, "admin", &s.user, &s.user2, &s.admin);
    run.assert_all_pass(29);
}

/// bai's own admin commands for the same accounts: users, keypairs and domains, with the
/// server's refusals printed as one line.
#[test]
fn bai_admin_user_keypair_domain_and_storage_commands() {
    let s = Server::start_dummy(1, "cpu=2,mem=4g");
    let admin = &s.admin;
    s.bai(
        admin,
        &[
            "admin",
            "user",
            "add",
            "ada@lab.test",
            "--password",
            "pw-42-pw",
            "-u",
            "ada",
            "-r",
            "user",
        ],
    )
    .expect_ok();
    s.bai(
        admin,
        &["admin", "user", "add", "ada@lab.test", "--password", "x"],
    )
    .expect_fail("already exists");
    s.bai(
        admin,
        &[
            "admin",
            "user",
            "add",
            "bad@lab.test",
            "--password",
            "x",
            "-r",
            "king",
        ],
    )
    .expect_fail("role");
    let listed = s.bai(
        admin,
        &["admin", "user", "list", "--filter", "username == \"ada\""],
    );
    listed.expect_ok();
    assert!(listed.stdout.contains("ada@lab.test"), "{listed:#?}");
    s.bai(&s.user, &["admin", "user", "list"])
        .expect_fail("only administrators");
    // The official CLI's global `--output json`: `{"items": [...]}`, as its admin suite reads.
    let json = s.bai(admin, &["--output=json", "admin", "user", "list"]);
    json.expect_ok();
    let v: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let items = v["items"].as_array().expect("items");
    assert!(items.iter().any(|u| u["username"] == "ada"), "{v}");

    let added = s.bai(
        admin,
        &[
            "admin",
            "keypair",
            "add",
            "ada@lab.test",
            "--rate-limit",
            "500",
        ],
    );
    added.expect_ok();
    let ak = added
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("access key "))
        .expect("the new access key")
        .trim()
        .to_string();
    let keys = s.bai(
        admin,
        &[
            "admin",
            "keypair",
            "list",
            "--email",
            "ada@lab.test",
            "--json",
        ],
    );
    keys.expect_ok();
    assert!(keys.stdout.contains(&ak), "{keys:#?}");
    assert!(keys.stdout.contains("500"), "{keys:#?}");
    s.bai(admin, &["admin", "keypair", "delete", &ak])
        .expect_ok();
    s.bai(admin, &["admin", "keypair", "delete", &ak])
        .expect_fail("no keypair");

    s.bai(
        admin,
        &["admin", "domain", "add", "lab", "--description", "a lab"],
    )
    .expect_ok();
    s.bai(
        admin,
        &[
            "admin",
            "user",
            "update",
            "ada@lab.test",
            "-d",
            "lab",
            "-s",
            "inactive",
        ],
    )
    .expect_ok();
    s.bai(admin, &["admin", "domain", "purge", "lab"])
        .expect_fail("still has 1 user");
    s.bai(admin, &["admin", "domain", "purge", "default"])
        .expect_fail("cannot be purged");
    s.bai(admin, &["admin", "user", "purge", "ada@lab.test"])
        .expect_ok();
    s.bai(admin, &["admin", "domain", "purge", "lab"])
        .expect_ok();
    let domains = s.bai(admin, &["admin", "domain", "list"]);
    assert!(!domains.stdout.contains("a lab"), "{domains:#?}");

    // Storage hosts: the server's own, with its backend and path; administrators only.
    let hosts = s.bai(admin, &["--output", "json", "admin", "storage", "list"]);
    hosts.expect_ok();
    let v: serde_json::Value = serde_json::from_str(&hosts.stdout).expect("json");
    let local = &v["items"][0];
    assert_eq!(local["id"], "local:volume1", "{v:#}");
    assert_eq!(local["backend"], "local", "{v:#}");
    let root = s.data_dir.path().join("volumes/volume1");
    assert_eq!(local["path"], root.display().to_string(), "{v:#}");
    s.bai(admin, &["admin", "storage", "info", "local:volume1"])
        .expect_ok();
    s.bai(admin, &["admin", "storage", "info", "nfs:none"])
        .expect_fail("no storage host named");
    s.bai(&s.user, &["admin", "storage", "list"])
        .expect_fail("only administrators");
}
