//! Web login through the site's OpenID provider (issue 60), against a real one: the certified
//! `oidc-provider` npm package (tests/oidc-provider, installed here with `npm ci` when
//! missing) with its built-in login and consent forms, a manager started with the
//! `--oidc-*` flags, and a browser of our own (a cookie jar, redirects followed by hand) that
//! goes bai → the provider's login form → consent → bai's callback.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bai_e2e::accounts::role_and_projects;
use bai_e2e::oidc::{Browser, Op, between};
use bai_e2e::{Server, free_port};
use serde_json::{Value, json};
use std::process::Command;

const SECRET: &str = "bai-client-secret-123";

fn users(bob_groups: &[&str]) -> Value {
    json!({
        "ada": {"email": "Ada@Example.org", "name": "Ada Lovelace", "groups": ["bai-admins"]},
        "bob": {"email": "bob@example.org", "name": "Bob Vision", "groups": bob_groups},
    })
}

/// The callback's problem: status, type's last part, msg.
fn problem(b: &mut Browser, url: &str) -> (u16, String, String) {
    let (status, p) = b.get_json(url);
    let kind = p["type"].as_str().unwrap_or_default();
    (
        status,
        kind.rsplit('/').next().unwrap_or_default().to_string(),
        p["msg"].as_str().unwrap_or_default().to_string(),
    )
}

#[test]
fn provider_users_log_in_and_follow_the_provider() {
    let bai_port = free_port();
    let callback = format!("http://127.0.0.1:{bai_port}/server/oidc/callback");
    let op_port = free_port();
    let clients = [
        ("bai", SECRET, callback.as_str()),
        ("other", "other-secret", callback.as_str()),
    ];
    let op = Op::start(op_port, "k1", &clients, &users(&["vision"]));
    let data = tempfile::Builder::new()
        .prefix("bai-e2e-")
        .tempdir()
        .unwrap();
    let secret_file = data.path().join("oidc-secret");
    std::fs::write(&secret_file, format!("{SECRET}\n")).unwrap();
    let issuer = op.issuer();
    let s = Server::start_in_port(
        data,
        &[
            ("BAI_NO_DOCKER", "true"),
            ("BAI_DUMMY_AGENTS", "1"),
            ("BAI_OIDC_ISSUER", &issuer),
            ("BAI_OIDC_CLIENT_ID", "bai"),
            ("BAI_OIDC_CLIENT_SECRET_FILE", secret_file.to_str().unwrap()),
            ("BAI_OIDC_NAME", "Example University"),
            ("BAI_OIDC_ADMIN_GROUP", "bai-admins"),
            ("BAI_OIDC_GROUP_PROJECTS", "vision=vision"),
        ],
        bai_port,
    );
    let bai = s.endpoint.clone();
    assert!(
        s.output().contains("OpenID       : http://127.0.0.1:"),
        "{}",
        s.output()
    );

    // The login page's options.
    let mut bob = Browser::new();
    let (status, opts) = bob.get_json(&format!("{bai}/server/login-options"));
    assert_eq!(status, 200);
    assert_eq!(opts["oidc"]["name"], "Example University", "{opts}");
    assert_eq!(opts["oidc"]["login_url"], "/server/oidc/login");

    // bob's first login: bai → the provider's forms → bai's callback → the UI, logged in.
    let login = format!("{bai}/server/oidc/login");
    let cb = bob.through_provider(&login, "bob", &callback);
    assert!(cb.contains("code=") && cb.contains("state="), "{cb}");
    let done = bob.get(&cb);
    assert_eq!(done.status, 303, "{}\n{}", done.body, s.log());
    assert_eq!(done.location.as_deref(), Some(format!("{bai}/").as_str()));
    assert!(bob.cookie("bai_web").is_some());
    let (status, me) = bob.get_json(&format!("{bai}/server/me"));
    assert_eq!(status, 200, "{me}");
    assert_eq!(me["email"], "bob@example.org");
    assert_eq!(me["is_admin"], false);
    // The web session works for the API as a password login's does.
    let (status, projects) = bob.get_json(&format!("{bai}/projects"));
    assert_eq!(status, 200, "{projects}");
    assert_eq!(
        role_and_projects(&s, "bob@example.org"),
        ("user".into(), vec!["default".into(), "vision".into()])
    );
    // The same callback again (a replay): refused, clearly; the session stands.
    let (status, kind, msg) = problem(&mut bob, &cb);
    assert_eq!((status, kind.as_str()), (400, "oidc-state"), "{msg}");
    assert!(msg.contains("already used"), "{msg}");
    // A browser asking for a page gets one.
    let page = bob.get(&cb);
    assert_eq!(page.status, 400);
    assert!(
        page.body.contains("<h1>Login not recognised</h1>"),
        "{}",
        page.body
    );

    // ada (an admin by her group) in another browser; a tampered state first.
    let mut ada = Browser::new();
    let cb = ada.through_provider(&login, "ada", &callback);
    let state = between(&format!("{cb}&"), "state=", "&");
    let tampered = cb.replace(&state, &format!("{state}x"));
    let (status, kind, msg) = problem(&mut ada, &tampered);
    assert_eq!((status, kind.as_str()), (400, "oidc-state"), "{msg}");
    // Another browser (no binding cookie) cannot finish ada's login, nor use it up.
    let (status, kind, msg) = problem(&mut Browser::new(), &cb);
    assert_eq!((status, kind.as_str()), (400, "oidc-state"), "{msg}");
    assert!(msg.contains("another browser"), "{msg}");
    let done = ada.get(&cb);
    assert_eq!(done.status, 303, "{}", done.body);
    let (_, me) = ada.get_json(&format!("{bai}/server/me"));
    assert_eq!(
        (me["email"].as_str(), me["is_admin"].as_bool()),
        (Some("ada@example.org"), Some(true))
    );
    assert_eq!(
        role_and_projects(&s, "ada@example.org"),
        ("admin".into(), vec!["default".into()])
    );

    // The provider's groups change: bob's next login follows them (no forms this time: the
    // provider remembers him).
    op.set_users(&users(&["bai-admins"]));
    let cb = bob.through_provider(&login, "bob", &callback);
    let done = bob.get(&cb);
    assert_eq!(done.status, 303, "{}", done.body);
    let (_, me) = bob.get_json(&format!("{bai}/server/me"));
    assert_eq!(
        (me["email"].as_str(), me["is_admin"].as_bool()),
        (Some("bob@example.org"), Some(true))
    );
    assert_eq!(
        role_and_projects(&s, "bob@example.org"),
        ("admin".into(), vec!["default".into()])
    );

    // A code issued to another client of the provider (the authorization URL's client_id
    // changed): the provider refuses bai's exchange of it.
    let mut eve = Browser::new();
    let to_op = eve.get(&login).location.unwrap();
    let other = to_op.replace("client_id=bai", "client_id=other");
    let cb = eve.through_provider(&other, "ada", &callback);
    let (status, kind, msg) = problem(&mut eve, &cb);
    assert_eq!((status, kind.as_str()), (401, "oidc-refused"), "{msg}");
    assert!(eve.cookie("bai_web").is_none());

    // The provider rotates its signing key (a restart with a new one): bai fetches the
    // provider's keys again and the next login works.
    drop(op);
    let op = Op::start(op_port, "k2", &clients, &users(&["vision"]));
    let mut ada2 = Browser::new();
    let cb = ada2.through_provider(&login, "ada", &callback);
    let done = ada2.get(&cb);
    assert_eq!(done.status, 303, "{}\n{}", done.body, s.log());
    assert!(s.log().contains("fetching its JWKS again"), "{}", s.log());

    // Logout ends bai's session and the login page offers the provider's logout.
    let (_, opts) = ada2.get_json(&format!("{bai}/server/login-options"));
    let end = opts["oidc"]["logout_url"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        end.starts_with(&format!("{issuer}/session/end?client_id=bai")),
        "{opts}"
    );
    let out = ada2.send("POST", &format!("{bai}/server/logout"), None, true);
    assert_eq!(out.status, 200);
    let (status, _) = ada2.get_json(&format!("{bai}/server/me"));
    assert_eq!(status, 401);

    // Callbacks of no login under way (forged states) from one client are throttled like
    // wrong passwords: after 20 refusals from this address (those above count too), a
    // 429, for callbacks and password logins alike.
    let mut forger = Browser::new();
    let mut tries = 0;
    let throttled = loop {
        tries += 1;
        let (status, kind, msg) = problem(
            &mut forger,
            &format!("{bai}/server/oidc/callback?state=forged{tries}&code=x"),
        );
        if status == 429 {
            break (kind, msg);
        }
        assert_eq!((status, kind.as_str()), (400, "oidc-state"), "{msg}");
        assert!(tries <= 20, "never throttled");
    };
    assert_eq!(throttled.0, "too-many-logins", "{}", throttled.1);
    assert!(throttled.1.contains("from this address"), "{}", throttled.1);
    let r = forger.send(
        "POST",
        &format!("{bai}/server/login"),
        Some(&[("username", "admin@bai.local"), ("password", "whatever")]),
        true,
    );
    assert_eq!(r.status, 429, "{}", r.body);

    // Every refusal is in the audit log; no secret, code or token in bai's log.
    let audit = s
        .api(&s.admin, "GET", "/admin/audit?action=login&limit=100", None)
        .expect("the audit log");
    let refused: Vec<&str> = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["target"] == "web:oidc" && e["outcome"] == "refused")
        .filter_map(|e| e["detail"].as_str())
        .collect();
    for kind in ["oidc-state", "oidc-refused"] {
        assert!(refused.contains(&kind), "{kind} not audited: {audit}");
    }
    let log = s.log();
    assert!(!log.contains(SECRET), "the client secret in the log");
    assert!(!log.contains("eyJ"), "a token in the log");
    assert!(!log.contains("code="), "a code in the log");
    drop(op);
}

/// The same login in a real browser through the provider's own pages (`web/e2e/oidc.mjs`,
/// Debian's chromium): the button on bai's login page, the provider's login form and consent,
/// back in the UI logged in; logout offers the provider's logout.
#[test]
fn provider_login_in_a_browser() {
    let bai_port = free_port();
    let callback = format!("http://127.0.0.1:{bai_port}/server/oidc/callback");
    let op = Op::start(
        free_port(),
        "k1",
        &[("bai", SECRET, callback.as_str())],
        &users(&[]),
    );
    let data = tempfile::Builder::new()
        .prefix("bai-e2e-")
        .tempdir()
        .unwrap();
    let secret_file = data.path().join("oidc-secret");
    std::fs::write(&secret_file, SECRET).unwrap();
    let issuer = op.issuer();
    let s = Server::start_in_port(
        data,
        &[
            ("BAI_NO_DOCKER", "true"),
            ("BAI_DUMMY_AGENTS", "1"),
            ("BAI_OIDC_ISSUER", &issuer),
            ("BAI_OIDC_CLIENT_ID", "bai"),
            ("BAI_OIDC_CLIENT_SECRET_FILE", secret_file.to_str().unwrap()),
            ("BAI_OIDC_NAME", "Example University"),
        ],
        bai_port,
    );
    let web = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../web");
    let mut cmd = Command::new("node");
    cmd.arg("e2e/oidc.mjs")
        .current_dir(&web)
        .env("BAI_URL", &s.endpoint)
        .env("OIDC_NAME", "Example University")
        .env("OIDC_USER", "ada")
        .env("BAI_EMAIL", "ada@example.org");
    if let Ok(dir) = std::env::var("BAI_SCREENSHOTS") {
        cmd.env("SCREENSHOTS", dir);
    }
    let out = cmd.output().expect("node e2e/oidc.mjs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{text}\nbaid log:\n{}\nprovider log:\n{}",
        s.log(),
        op.log()
    );
    assert!(text.contains("oidc: 5 passed"), "{text}");
}

/// ID tokens the real provider signed (RS256) for its client `other`, checked by bai's own
/// checks (`bai_oidc::token`) as bai would: one for another audience, one whose signature
/// was tampered with, one with another nonce are refused; the right one passes.
#[test]
fn real_id_tokens_are_checked_by_bai() {
    use bai_oidc::token::{Expect, Jwks, TokenError, verify};
    let callback = format!("http://127.0.0.1:{}/server/oidc/callback", free_port());
    let op = Op::start(
        free_port(),
        "k1",
        &[("other", "other-secret", callback.as_str())],
        &users(&["vision"]),
    );
    let issuer = op.issuer();
    // The authorization code flow as a client of the provider: PKCE, state, nonce.
    let verifier = bai_oidc::flow::random_token();
    let challenge = bai_oidc::flow::challenge(&verifier);
    let auth = format!(
        "{issuer}/auth?response_type=code&client_id=other&redirect_uri={}&scope=openid%20email%20profile&state=s1&nonce=n1&code_challenge={challenge}&code_challenge_method=S256",
        callback.replace(':', "%3A").replace('/', "%2F")
    );
    let mut b = Browser::new();
    let back = b.through_provider(&auth, "ada", &callback);
    let code = between(&format!("{back}&"), "code=", "&");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (token, jwks) = rt.block_on(async {
        let http = reqwest::Client::new();
        let r: Value = http
            .post(format!("{issuer}/token"))
            .basic_auth("other", Some("other-secret"))
            .form(&[
                ("grant_type", "authorization_code"),
                ("code", code.as_str()),
                ("redirect_uri", callback.as_str()),
                ("code_verifier", verifier.as_str()),
            ])
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let jwks: Value = http
            .get(format!("{issuer}/jwks"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        (
            r["id_token"]
                .as_str()
                .unwrap_or_else(|| panic!("{r}"))
                .to_string(),
            jwks,
        )
    });
    let jwks: Jwks = serde_json::from_value(jwks).unwrap();
    let now = chrono::Utc::now().timestamp();
    let expect = |client_id, nonce| Expect {
        issuer: &issuer,
        client_id,
        nonce,
        now,
    };
    let claims = verify(&token, &jwks, &expect("other", "n1")).expect("the provider's token");
    assert_eq!(claims["email"], "Ada@Example.org");
    assert_eq!(claims["groups"], json!(["bai-admins"]));
    assert_eq!(
        verify(&token, &jwks, &expect("bai", "n1")).unwrap_err(),
        TokenError::Audience
    );
    assert_eq!(
        verify(&token, &jwks, &expect("other", "n2")).unwrap_err(),
        TokenError::Nonce
    );
    // One character of the signature changed.
    let mut forged = token.clone().into_bytes();
    let last = forged.len() - 5;
    forged[last] = if forged[last] == b'A' { b'B' } else { b'A' };
    let forged = String::from_utf8(forged).unwrap();
    assert_eq!(
        verify(&forged, &jwks, &expect("other", "n1")).unwrap_err(),
        TokenError::Signature
    );
    // Too late: an hour after it expired.
    let late = Expect {
        now: claims["exp"].as_i64().unwrap() + 3600,
        ..expect("other", "n1")
    };
    assert_eq!(
        verify(&token, &jwks, &late).unwrap_err(),
        TokenError::Expired
    );
}

#[test]
fn bad_oidc_flags_stop_baid_with_one_line() {
    let data = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(bai_e2e::bin("baid"))
            .args(["up", "--no-docker", "--dummy-agents", "1", "--listen"])
            .arg(format!("127.0.0.1:{}", free_port()))
            .arg("--data-dir")
            .arg(data.path())
            .args(args)
            .env_remove("BAI_CONFIG")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        err.lines().last().unwrap_or_default().to_string()
    };
    let last = run(&["--oidc-client-id", "bai"]);
    assert_eq!(
        last,
        "Error: --oidc-client-id needs --oidc-issuer (the provider's issuer URL)"
    );
    let last = run(&[
        "--oidc-issuer",
        "http://sso.example.org",
        "--oidc-client-id",
        "bai",
    ]);
    assert!(last.starts_with("Error: --oidc-issuer"), "{last}");
    let last = run(&[
        "--oidc-issuer",
        "https://sso.example.org",
        "--oidc-client-id",
        "bai",
        "--oidc-client-secret-file",
        "/nonexistent/secret",
    ]);
    assert!(
        last.starts_with("Error: --oidc-client-secret-file"),
        "{last}"
    );
}

/// Logins under way are in the store, not in the memory of the manager that began them: the
/// browser leaves for the provider, the manager is killed and started again, and the
/// callback finishes the login; a replay is still refused. On SQLite here, and on
/// PostgreSQL below (the database the managers of one site share; the new manager takes the
/// lease over from the dead one).
#[test]
fn a_login_begun_before_a_restart_finishes_after_it() {
    login_across_a_restart(None);
}

#[test]
fn a_login_begun_before_a_restart_finishes_after_it_on_postgres() {
    let url = bai_store::testing::fresh_database().expect("a database in the test cluster");
    login_across_a_restart(Some(&url));
}

fn login_across_a_restart(database: Option<&str>) {
    let bai_port = free_port();
    let callback = format!("http://127.0.0.1:{bai_port}/server/oidc/callback");
    let op = Op::start(
        free_port(),
        "k1",
        &[("bai", SECRET, callback.as_str())],
        &users(&["vision"]),
    );
    let data = tempfile::Builder::new()
        .prefix("bai-e2e-")
        .tempdir()
        .unwrap();
    let secret_file = data.path().join("oidc-secret");
    std::fs::write(&secret_file, SECRET).unwrap();
    let issuer = op.issuer();
    let mut env = vec![
        ("BAI_NO_DOCKER", "true"),
        ("BAI_DUMMY_AGENTS", "1"),
        ("BAI_OIDC_ISSUER", issuer.as_str()),
        ("BAI_OIDC_CLIENT_ID", "bai"),
        ("BAI_OIDC_CLIENT_SECRET_FILE", secret_file.to_str().unwrap()),
    ];
    if let Some(url) = database {
        env.push(("BAI_DATABASE", url));
    }
    let s = Server::start_in_port(data, &env, bai_port);
    let bai = s.endpoint.clone();
    let mut bob = Browser::new();
    let cb = bob.through_provider(&format!("{bai}/server/oidc/login"), "bob", &callback);
    // The manager that began the login goes away (killed: nothing of it is kept) and a new
    // one starts on the same database before the browser comes back.
    let data = s.crash();
    let s = Server::start_in_port(data, &env, bai_port);
    let done = bob.get(&cb);
    assert_eq!(done.status, 303, "{}\n{}", done.body, s.log());
    let (status, me) = bob.get_json(&format!("{bai}/server/me"));
    assert_eq!(status, 200, "{me}");
    assert_eq!(me["email"], "bob@example.org");
    let (status, kind, msg) = problem(&mut bob, &cb);
    assert_eq!((status, kind.as_str()), (400, "oidc-state"), "{msg}");
}
