//! OpenID Connect Back-Channel Logout 1.0 (issue 60) against the real provider
//! (tests/oidc-provider, `features.backchannelLogout`, bai's client registered with
//! `backchannel_logout_uri` = bai's `/server/oidc/backchannel-logout`): a person logging out
//! at the provider loses bai's web session at once; another person's stays; forged logout
//! tokens and the provider's token for another client are refused with 400, audited, and
//! end nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bai_e2e::oidc::{Browser, Op, provider_logout};
use bai_e2e::{Server, free_port};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

const SECRET: &str = "bai-client-secret-123";

/// A JWT with this header and these claims and a made-up signature: a forgery.
fn forged(header: Value, claims: Value) -> String {
    let enc = |v: &Value| URL_SAFE_NO_PAD.encode(v.to_string());
    format!(
        "{}.{}.{}",
        enc(&header),
        enc(&claims),
        URL_SAFE_NO_PAD.encode([7u8; 256])
    )
}

#[test]
fn logging_out_at_the_provider_ends_the_bai_session() {
    let bai_port = free_port();
    let callback = format!("http://127.0.0.1:{bai_port}/server/oidc/callback");
    let clients = [
        ("bai", SECRET, callback.as_str()),
        ("other", "other-secret", callback.as_str()),
    ];
    let users = json!({
        "ada": {"email": "ada@example.org", "name": "Ada", "groups": []},
        "bob": {"email": "bob@example.org", "name": "Bob", "groups": []},
    });
    let op = Op::start(free_port(), "k1", &clients, &users);
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
        ],
        bai_port,
    );
    let bai = s.endpoint.clone();
    let login = format!("{bai}/server/oidc/login");
    let me = format!("{bai}/server/me");
    let backchannel = format!("{bai}/server/oidc/backchannel-logout");

    // bob and ada log in, each in a browser of their own.
    let mut bob = Browser::new();
    let cb = bob.through_provider(&login, "bob", &callback);
    assert_eq!(bob.get(&cb).status, 303, "{}", s.log());
    let mut ada = Browser::new();
    let cb = ada.through_provider(&login, "ada", &callback);
    assert_eq!(ada.get(&cb).status, 303, "{}", s.log());
    assert_eq!(bob.get_json(&me).0, 200);
    assert_eq!(ada.get_json(&me).0, 200);
    // bob's provider session also serves the provider's client `other`, whose back-channel
    // URI is bai's too: its logout token (aud `other`) must be refused by bai.
    let to_op = bob.get(&login).location.unwrap();
    bob.through_provider(
        &to_op.replace("client_id=bai", "client_id=other"),
        "bob",
        &callback,
    );

    // Forged logout tokens naming ada: refused with a problem, her session stands.
    let mut eve = Browser::new();
    let claims = json!({"iss": issuer, "aud": "bai", "sub": "ada", "iat": chrono::Utc::now().timestamp(),
                        "jti": "j1", "events": {"http://schemas.openid.net/event/backchannel-logout": {}}});
    let bad = [
        forged(json!({"alg": "RS256", "kid": "k1"}), claims.clone()),
        forged(json!({"alg": "none"}), claims.clone()),
        forged(json!({"alg": "HS256", "kid": "k1"}), claims.clone()),
        "not-a-jwt".to_string(),
    ];
    for token in &bad {
        let r = eve.send("POST", &backchannel, Some(&[("logout_token", token)]), true);
        assert_eq!(r.status, 400, "{}", r.body);
        let p: Value = serde_json::from_str(&r.body).unwrap();
        assert!(
            p["type"].as_str().unwrap().ends_with("/oidc-logout-token"),
            "{p}"
        );
        assert!(p["msg"].as_str().is_some() && p["title"].as_str().is_some());
    }
    let r = eve.send("POST", &backchannel, Some(&[("other", "x")]), true);
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(ada.get_json(&me).0, 200, "a forged token ended a session");

    // bob logs out at the provider: its back-channel logout ends bai's session of bob (and
    // only that one); the token for `other` is refused.
    provider_logout(&mut bob, &issuer, "bai");
    let (status, body) = bob.get_json(&me);
    assert_eq!(status, 401, "bob is still logged in: {body}\n{}", op.log());
    assert_eq!(ada.get_json(&me).0, 200, "ada's session ended too");
    let log = s.wait_for(30, "the refusal of the token for `other`", || {
        let log = s.log();
        log.contains("OpenID back-channel logout refused")
            .then_some(log)
    });
    assert!(log.contains("for another client"), "{log}");

    // ada logs out at the provider too.
    provider_logout(&mut ada, &issuer, "bai");
    assert_eq!(ada.get_json(&me).0, 401);

    // Audited: the logouts done and refused; never a token in bai's log.
    let audit = s
        .api(
            &s.admin,
            "GET",
            "/admin/audit?action=logout&limit=100",
            None,
        )
        .expect("the audit log");
    let lines: Vec<(String, String)> = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["target"] == "web:oidc")
        .map(|e| {
            (
                e["actor"].as_str().unwrap_or_default().to_string(),
                e["outcome"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    for who in ["bob@example.org", "ada@example.org"] {
        assert!(
            lines.contains(&(who.to_string(), "ok".to_string())),
            "{who}: {audit}"
        );
    }
    let refused = lines.iter().filter(|(_, o)| o == "refused").count();
    assert!(refused >= bad.len() + 2, "{audit}");
    let log = s.log();
    assert!(!log.contains("eyJ"), "a token in the log");
    for token in &bad {
        assert!(!log.contains(token.as_str()), "a forged token in the log");
    }
}
