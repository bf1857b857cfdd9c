//! Web login through the site's LDAP directory (issue 60), against Debian's real `slapd`
//! (`scripts/ensure-deps.sh --test` installs it): a test directory with two people, one in
//! an admin group and one in a group mapped to a project, a manager started with the
//! `--ldap-*` flags, and `POST /server/login` as the web UI sends it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bai_e2e::{Server, free_port, wait_until};
use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

#[path = "ldap/active_directory.rs"]
mod active_directory;

#[path = "ldap/calls.rs"]
mod calls;
#[path = "ldap/slapd.rs"]
mod slapd;

use calls::*;
use slapd::*;

#[test]
fn directory_users_log_in_and_follow_the_directory() {
    let mut ldap = Slapd::start();
    let pw_file = ldap.dir().join("bind-password");
    std::fs::write(&pw_file, "search-secret\n").unwrap();
    let url = ldap.url();
    let groups = format!("{VISION}=vision");
    let s = Server::start_with(&[
        ("BAI_NO_DOCKER", "true"),
        ("BAI_DUMMY_AGENTS", "1"),
        ("BAI_LDAP_URL", &url),
        ("BAI_LDAP_BIND_DN", &format!("cn=bai-search,{SUFFIX}")),
        ("BAI_LDAP_BIND_PASSWORD_FILE", pw_file.to_str().unwrap()),
        ("BAI_LDAP_USER_BASE", &format!("ou=people,{SUFFIX}")),
        ("BAI_LDAP_ADMIN_GROUP", ADMINS),
        ("BAI_LDAP_GROUP_PROJECTS", &groups),
    ]);
    let banner = wait_until(Duration::from_secs(5), || {
        s.output().contains("directory    : ldap://")
    });
    assert!(banner, "{}", s.output());

    // First logins make the accounts: ada by her user name (an admin), bob by his email.
    let (status, ada) = login(&s, "ada", "ada-pass");
    assert_eq!(status, 200, "{ada}\n{}", s.log());
    assert_eq!(ada["data"]["email"], "ada@example.org");
    assert_eq!(ada["data"]["is_admin"], true);
    let (status, bob) = login(&s, "bob@example.org", "bob-pass");
    assert_eq!(status, 200, "{bob}");
    assert_eq!(bob["data"]["is_admin"], false);
    assert_eq!(
        role_and_projects(&s, "ada@example.org"),
        ("admin".into(), vec!["default".into()])
    );
    assert_eq!(
        role_and_projects(&s, "bob@example.org"),
        ("user".into(), vec!["default".into(), "vision".into()])
    );
    // The keypair made for bob works for the CLI.
    let bob_cli = account_of(&s, "bob@example.org");
    assert_eq!(bob_cli.get("BACKEND_ACCESS_KEY"), bob["data"]["access_key"]);
    s.bai(&bob_cli, &["ps"]).expect_ok();
    // A second login is the same account with the same keypair.
    let (status, again) = login(&s, "bob", "bob-pass");
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["data"]["access_key"], bob["data"]["access_key"]);

    // Wrong password, unknown user and filter injections: the same 401.
    let (status, wrong) = login(&s, "bob", "not-bobs");
    assert_eq!(status, 401, "{wrong}");
    let (status, unknown) = login(&s, "nobody", "bob-pass");
    assert_eq!(status, 401, "{unknown}");
    assert_eq!(wrong, unknown);
    for name in ["*)(uid=*", "*", "b*", "bo*)(|(uid=*"] {
        let (status, body) = login(&s, name, "bob-pass");
        assert_eq!(status, 401, "{name}: {body}");
        assert_eq!(body, wrong, "{name}");
    }

    // The directory changes: bob joins the admins and leaves vision; ada is removed.
    ldap.modify(&format!(
        "dn: {ADMINS}\nchangetype: modify\nadd: member\nmember: uid=bob,ou=people,{SUFFIX}\n\n\
         dn: {VISION}\nchangetype: modify\nreplace: member\nmember: {ROOT_DN}\n\n\
         dn: uid=ada,ou=people,{SUFFIX}\nchangetype: delete\n"
    ));
    let (status, bob2) = login(&s, "bob", "bob-pass");
    assert_eq!(status, 200, "{bob2}");
    assert_eq!(bob2["data"]["is_admin"], true);
    assert_eq!(
        role_and_projects(&s, "bob@example.org"),
        ("admin".into(), vec!["default".into()])
    );
    let (status, gone) = login(&s, "ada", "ada-pass");
    assert_eq!(status, 401, "{gone}");

    // A local account still logs in with its own password (not the directory's).
    let admin_email = "admin@bai.local";
    let (status, local) = login(&s, admin_email, &s.web_password(admin_email));
    assert_eq!(status, 200, "{local}");

    // The directory is down: a clear 503 for directory names, local accounts unaffected.
    ldap.stop();
    let (status, down) = login(&s, "bob", "bob-pass");
    assert_eq!(status, 503, "{down}");
    assert_eq!(
        down["type"]
            .as_str()
            .map(|t| t.ends_with("directory-unavailable")),
        Some(true),
        "{down}"
    );
    let (status, local) = login(&s, admin_email, &s.web_password(admin_email));
    assert_eq!(status, 200, "{local}");
    // No password reached the log.
    let log = s.log();
    for secret in ["search-secret", "bob-pass", "ada-pass", "not-bobs"] {
        assert!(!log.contains(secret), "{secret} in the log");
    }
}

#[test]
fn bad_ldap_flags_stop_baid_with_one_line() {
    let data = tempfile::tempdir().unwrap();
    let out = Command::new(bai_e2e::bin("baid"))
        .args(["up", "--no-docker", "--dummy-agents", "1", "--listen"])
        .arg(format!("127.0.0.1:{}", free_port()))
        .arg("--data-dir")
        .arg(data.path())
        .args([
            "--ldap-url",
            "ldap://127.0.0.1:1",
            "--ldap-user-filter",
            "uid={user}",
        ])
        .args(["--ldap-user-base", "ou=people,dc=x"])
        .env_remove("BAI_CONFIG")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let last = err.lines().last().unwrap_or_default();
    assert!(last.starts_with("Error: --ldap-user-filter"), "{err}");
    let out = Command::new(bai_e2e::bin("baid"))
        .args(["up", "--no-docker", "--dummy-agents", "1"])
        .arg("--data-dir")
        .arg(data.path())
        .args(["--ldap-user-base", "ou=people,dc=x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--ldap-user-base needs --ldap-url"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A manager that logs people in through `ldap`.
fn server_for(ldap: &Slapd) -> Server {
    let pw_file = ldap.dir().join("bind-password");
    std::fs::write(&pw_file, "search-secret\n").unwrap();
    Server::start_with(&[
        ("BAI_NO_DOCKER", "true"),
        ("BAI_DUMMY_AGENTS", "1"),
        ("BAI_LDAP_URL", &ldap.url()),
        ("BAI_LDAP_BIND_DN", &format!("cn=bai-search,{SUFFIX}")),
        ("BAI_LDAP_BIND_PASSWORD_FILE", pw_file.to_str().unwrap()),
        ("BAI_LDAP_USER_BASE", &format!("ou=people,{SUFFIX}")),
        ("BAI_LDAP_ADMIN_GROUP", ADMINS),
    ])
}

#[test]
fn directory_users_take_their_keys_to_the_cli() {
    let ldap = Slapd::start();
    let s = server_for(&ldap);
    // The login form is told that a directory name works as well as an email.
    let (_, opts) = web(&s, "", "GET", "/server/login-options");
    assert_eq!(opts["directory"], true, "{opts}");

    let (bob, bob_login) = web_login(&s, "bob", "bob-pass");
    let (status, mine) = web(&s, &bob, "GET", "/user/keypairs");
    assert_eq!(status, 200, "{mine}");
    let items = mine["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{mine}");
    assert_eq!(items[0]["access_key"], bob_login.as_str());
    assert_eq!(items[0]["login"], true);
    assert_eq!(items[0]["current"], true);
    assert!(!mine.to_string().contains("secret"), "{mine}");
    // The web login's keypair cannot be revoked (it would lock bob out of the web UI).
    let path = |ak: &str, what: &str| format!("/user/keypairs/{ak}/{what}");
    let (status, refused) = web(&s, &bob, "POST", &path(&bob_login, "revoke"));
    assert_eq!(status, 409, "{refused}");
    assert!(
        refused["type"]
            .as_str()
            .unwrap()
            .ends_with("keypair-needed")
    );
    assert!(refused["msg"].as_str().unwrap().contains("lock you out"));

    // A keypair for the CLI: its secret is shown once, and `bai` works with it.
    let (status, made) = web(&s, &bob, "POST", "/user/keypairs");
    assert_eq!(status, 201, "{made}");
    let ak = made["access_key"].as_str().unwrap().to_string();
    let first = made["secret_key"].as_str().unwrap().to_string();
    s.bai(&with_keys(&s, &ak, &first), &["ps"]).expect_ok();
    // A new secret: the old one stops working at once.
    let (status, again) = web(&s, &bob, "POST", &path(&ak, "secret"));
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["access_key"], ak.as_str());
    let sk = again["secret_key"].as_str().unwrap().to_string();
    assert_ne!(sk, first);
    let cli = with_keys(&s, &ak, &sk);
    s.bai(&cli, &["ps"]).expect_ok();
    let login = s.bai(&cli, &["login"]);
    login.expect_ok();
    assert!(login.stdout.contains("bob@example.org"), "{login:#?}");
    one_error_line(&s.bai(&with_keys(&s, &ak, &first), &["ps"]));

    // Nobody else sees or touches bob's keys: another directory user, a local user's
    // signed requests, even an administrator's (they have GraphQL for that).
    let (ada, _) = web_login(&s, "ada", "ada-pass");
    let (_, theirs) = web(&s, &ada, "GET", "/user/keypairs");
    assert!(!theirs.to_string().contains(&ak), "{theirs}");
    for what in ["secret", "revoke"] {
        let (status, body) = web(&s, &ada, "POST", &path(&ak, what));
        assert_eq!(status, 404, "{what}: {body}");
        assert!(
            body["title"].is_string() && body["msg"].is_string(),
            "{body}"
        );
        let signed = s.api(&s.user, "POST", &path(&ak, what), None);
        assert_eq!(signed.map_err(|e| e.0), Err(404), "{what}");
    }
    s.bai(&cli, &["ps"]).expect_ok();

    // Revoked: `bai` fails with one clear line; bob's web login goes on.
    let (status, revoked) = web(&s, &bob, "POST", &path(&ak, "revoke"));
    assert_eq!(status, 200, "{revoked}");
    assert_eq!(revoked["is_active"], false);
    let line = one_error_line(&s.bai(&cli, &["ps"]));
    assert!(!line.contains(&sk), "{line}");
    let (status, _) = web(&s, &bob, "GET", "/user/keypairs");
    assert_eq!(status, 200);
    let (status, _) = web(&s, &bob, "POST", &path(&ak, "secret"));
    assert_eq!(status, 409);

    // Without keys, `bai login` says where to get them.
    let none = with_keys(&s, "", "");
    let line = one_error_line(&s.bai(&none, &["login"]));
    assert!(
        line.contains(&format!("{}/#keypair", s.endpoint)) && line.contains("My keypair"),
        "{line}"
    );

    // The audit log has each change; no secret reached a log.
    let audit = s
        .api(&s.admin, "GET", "/admin/audit?limit=200", None)
        .expect("audit");
    let text = audit.to_string();
    for action in ["keypair create", "keypair new secret", "keypair revoke"] {
        assert!(text.contains(action), "{action}: {text}");
    }
    for secret in [&first, &sk] {
        assert!(!text.contains(secret.as_str()));
        assert!(!s.log().contains(secret.as_str()), "a secret in baid's log");
    }
}

/// Groups in groups are followed (admin and project by a group two levels up, a cycle
/// included), and a person in 300 groups — three times the directory's size limit —
/// logs in and gets the mapped ones.
#[test]
fn nested_groups_and_hundreds_of_groups() {
    let ldap = Slapd::start();
    // carol: in lab-a, which is in faculty, which is in bai-admins; faculty and lab-a list
    // each other (a cycle). dave: in g000…g299 (ou=many); g150 is in vision.
    let mut ldif = format!(
        "dn: uid=carol,ou=people,{SUFFIX}\nchangetype: add\nobjectClass: inetOrgPerson\nuid: carol\ncn: Carol\nsn: C\nmail: carol@example.org\nuserPassword: carol-pass\n\n\
         dn: uid=dave,ou=people,{SUFFIX}\nchangetype: add\nobjectClass: inetOrgPerson\nuid: dave\ncn: Dave\nsn: D\nmail: dave@example.org\nuserPassword: dave-pass\n\n\
         dn: cn=lab-a,ou=groups,{SUFFIX}\nchangetype: add\nobjectClass: groupOfNames\ncn: lab-a\nmember: uid=carol,ou=people,{SUFFIX}\n\n\
         dn: cn=faculty,ou=groups,{SUFFIX}\nchangetype: add\nobjectClass: groupOfNames\ncn: faculty\nmember: cn=lab-a,ou=groups,{SUFFIX}\n\n\
         dn: cn=lab-a,ou=groups,{SUFFIX}\nchangetype: modify\nadd: member\nmember: cn=faculty,ou=groups,{SUFFIX}\n\n\
         dn: {ADMINS}\nchangetype: modify\nadd: member\nmember: cn=faculty,ou=groups,{SUFFIX}\n\n\
         dn: ou=many,ou=groups,{SUFFIX}\nchangetype: add\nobjectClass: organizationalUnit\nou: many\n\n"
    );
    for i in 0..300 {
        ldif.push_str(&format!(
            "dn: cn=g{i:03},ou=many,ou=groups,{SUFFIX}\nchangetype: add\nobjectClass: groupOfNames\ncn: g{i:03}\nmember: uid=dave,ou=people,{SUFFIX}\n\n"
        ));
    }
    ldif.push_str(&format!(
        "dn: {VISION}\nchangetype: modify\nadd: member\nmember: cn=g150,ou=many,ou=groups,{SUFFIX}\n"
    ));
    ldap.modify(&ldif);
    // The size limit is real: bai's service account's plain search for dave's groups is cut
    // short (the root DN has no limits).
    let plain = Command::new("ldapsearch")
        .args([
            "-x",
            "-H",
            &ldap.url(),
            "-w",
            "search-secret",
            "-b",
            SUFFIX,
            "-D",
        ])
        .arg(format!("cn=bai-search,{SUFFIX}"))
        .arg(format!("(member=uid=dave,ou=people,{SUFFIX})"))
        .arg("1.1")
        .output()
        .expect("ldapsearch (ldap-utils)");
    assert_eq!(plain.status.code(), Some(4), "{plain:?}");

    let pw_file = ldap.dir().join("bind-password");
    std::fs::write(&pw_file, "search-secret\n").unwrap();
    let groups = format!("{VISION}=vision");
    let s = Server::start_with(&[
        ("BAI_NO_DOCKER", "true"),
        ("BAI_DUMMY_AGENTS", "1"),
        ("BAI_LDAP_URL", &ldap.url()),
        ("BAI_LDAP_BIND_DN", &format!("cn=bai-search,{SUFFIX}")),
        ("BAI_LDAP_BIND_PASSWORD_FILE", pw_file.to_str().unwrap()),
        ("BAI_LDAP_USER_BASE", &format!("ou=people,{SUFFIX}")),
        ("BAI_LDAP_ADMIN_GROUP", ADMINS),
        ("BAI_LDAP_GROUP_PROJECTS", &groups),
    ]);
    let (status, carol) = login(&s, "carol", "carol-pass");
    assert_eq!(status, 200, "{carol}\n{}", s.log());
    assert_eq!(carol["data"]["is_admin"], true, "{carol}");
    assert_eq!(
        role_and_projects(&s, "carol@example.org"),
        ("admin".into(), vec!["default".into()])
    );
    let (status, dave) = login(&s, "dave", "dave-pass");
    assert_eq!(status, 200, "{dave}\n{}", s.log());
    assert_eq!(dave["data"]["is_admin"], false);
    assert_eq!(
        role_and_projects(&s, "dave@example.org"),
        ("user".into(), vec!["default".into(), "vision".into()])
    );
    // Out of the chain: faculty leaves bai-admins, and carol's next login follows.
    ldap.modify(&format!(
        "dn: {ADMINS}\nchangetype: modify\ndelete: member\nmember: cn=faculty,ou=groups,{SUFFIX}\n"
    ));
    let (status, carol) = login(&s, "carol", "carol-pass");
    assert_eq!(status, 200, "{carol}");
    assert_eq!(carol["data"]["is_admin"], false, "{carol}");
}

/// A manager whose directory sync runs every second.
fn syncing_server(ldap: &Slapd) -> Server {
    let pw_file = ldap.dir().join("bind-password");
    std::fs::write(&pw_file, "search-secret\n").unwrap();
    Server::start_with(&[
        ("BAI_NO_DOCKER", "true"),
        ("BAI_DUMMY_AGENTS", "1"),
        ("BAI_LDAP_URL", &ldap.url()),
        ("BAI_LDAP_BIND_DN", &format!("cn=bai-search,{SUFFIX}")),
        ("BAI_LDAP_BIND_PASSWORD_FILE", pw_file.to_str().unwrap()),
        ("BAI_LDAP_USER_BASE", &format!("ou=people,{SUFFIX}")),
        ("BAI_LDAP_SYNC_INTERVAL", "1s"),
    ])
}

const BOB_ENTRY: &str = "objectClass: inetOrgPerson\nuid: bob\ncn: Bob Vision\nsn: Vision\nmail: bob@example.org\nuserPassword: bob-pass\n";

/// A person removed from the directory loses their keys at the next sync (their web login
/// with them), whatever keys they hold; a directory outage deactivates nobody; back in the
/// directory, the keys work again.
#[test]
fn people_removed_from_the_directory_lose_their_keys() {
    let mut ldap = Slapd::start();
    let s = syncing_server(&ldap);
    let (bob, _) = web_login(&s, "bob", "bob-pass");
    let (_, ada_login) = web_login(&s, "ada", "ada-pass");
    // bob's second keypair, made in the web UI.
    let (status, made) = web(&s, &bob, "POST", "/user/keypairs");
    assert_eq!(status, 201, "{made}");
    let bob_cli = with_keys(
        &s,
        made["access_key"].as_str().unwrap(),
        made["secret_key"].as_str().unwrap(),
    );
    let bob_main = account_of(&s, "bob@example.org");
    let ada_cli = account_of(&s, "ada@example.org");
    assert_eq!(ada_cli.get("BACKEND_ACCESS_KEY"), ada_login);
    for a in [&bob_cli, &bob_main, &ada_cli] {
        s.bai(a, &["ps"]).expect_ok();
    }

    // The directory goes down: a few syncs pass, nobody is deactivated.
    ldap.stop();
    std::thread::sleep(Duration::from_secs(3));
    for a in [&bob_cli, &bob_main, &ada_cli] {
        s.bai(a, &["ps"]).expect_ok();
    }
    assert!(s.log().contains("nobody is deactivated"), "{}", s.log());
    ldap.restart();

    // bob is removed: both his keypairs and his web session stop at the next sync.
    ldap.modify(&format!(
        "dn: uid=bob,ou=people,{SUFFIX}\nchangetype: delete\n"
    ));
    let gone = wait_until(Duration::from_secs(20), || !s.bai(&bob_cli, &["ps"]).ok());
    assert!(gone, "bob's key still works: {}", s.log());
    let line = one_error_line(&s.bai(&bob_cli, &["ps"]));
    assert!(line.contains("deactivated"), "{line}");
    one_error_line(&s.bai(&bob_main, &["ps"]));
    let (status, _) = web(&s, &bob, "GET", "/user/keypairs");
    assert_eq!(status, 401);
    // ada is still in the directory: untouched.
    s.bai(&ada_cli, &["ps"]).expect_ok();
    let r = gql(
        &s,
        "query($email: String) { user(email: $email) { status } }",
        json!({"email": "bob@example.org"}),
    );
    assert_eq!(r["data"]["user"]["status"], "inactive", "{r}");

    // An account an administrator deactivated is not reactivated by the sync; bob, whom
    // the sync deactivated, is once he is back.
    let r = gql(
        &s,
        "mutation($email: String!) { modify_user(email: $email, props: {status: \"inactive\"}) { ok msg } }",
        json!({"email": "ada@example.org"}),
    );
    assert_eq!(r["data"]["modify_user"]["ok"], true, "{r}");
    ldap.modify(&format!(
        "dn: uid=bob,ou=people,{SUFFIX}\nchangetype: add\n{BOB_ENTRY}"
    ));
    let back = wait_until(Duration::from_secs(20), || s.bai(&bob_cli, &["ps"]).ok());
    assert!(back, "bob's key is not back: {}", s.log());
    s.bai(&bob_main, &["ps"]).expect_ok();
    std::thread::sleep(Duration::from_secs(2));
    one_error_line(&s.bai(&ada_cli, &["ps"]));

    // The audit log says who the sync deactivated and reactivated.
    let audit = s
        .api(&s.admin, "GET", "/admin/audit?limit=200", None)
        .expect("audit")
        .to_string();
    for action in ["user deactivate", "user reactivate"] {
        assert!(audit.contains(action), "{action}: {audit}");
    }
}

/// Refused logins from one client are throttled whatever names it tries (a password
/// sprayed over many directory names), and then even a right password waits.
#[test]
fn one_client_trying_many_names_is_throttled() {
    let ldap = Slapd::start();
    let s = server_for(&ldap);
    let mut tries = 0;
    let (status, body) = loop {
        tries += 1;
        let (status, body) = login(&s, &format!("user{tries}"), "Spring2026!");
        if status != 401 {
            break (status, body);
        }
        assert!(tries <= 20, "never throttled");
    };
    assert_eq!((status, tries), (429, 21), "{body}");
    assert!(
        body["data"]["details"]
            .as_str()
            .unwrap_or_default()
            .contains("from this address"),
        "{body}"
    );
    let (status, body) = login(&s, "bob", "bob-pass");
    assert_eq!(status, 429, "{body}");
    // A signed API request is no login: the keys still work.
    s.bai(&s.user, &["ps"]).expect_ok();
}

/// Settings → My keypair in Debian's chromium (`web/e2e/keypair.mjs`): a directory user logs
/// in with the form, makes a keypair whose secret is shown once, checks it with `bai ps`,
/// gives it a new secret, revokes it, and sees why the web login's keypair cannot be revoked.
#[test]
fn my_keypair_page_in_a_browser() {
    let web = Path::new(env!("CARGO_MANIFEST_DIR")).join("../web");
    assert!(
        web.join("dist/index.html").is_file(),
        "the web UI is not built: run scripts/build-web.sh"
    );
    let ldap = Slapd::start();
    let s = server_for(&ldap);
    let mut cmd = Command::new("node");
    cmd.arg("e2e/keypair.mjs")
        .current_dir(&web)
        .env("BAI_URL", &s.endpoint)
        .env("BAI_USER", "bob")
        .env("BAI_PASSWORD", "bob-pass")
        .env("BAI_EMAIL", "bob@example.org")
        .env("BAI_BIN", bai_e2e::bin("bai"));
    if let Ok(dir) = std::env::var("BAI_SCREENSHOTS") {
        cmd.env("SCREENSHOTS", dir);
    }
    let out = cmd.output().expect("node e2e/keypair.mjs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}\nbaid log:\n{}", s.log());
    assert!(text.contains("keypair: 6 passed"), "{text}");
}
