//! HTTPS for the API and the web UI. `baid up --tls-self-signed` makes a certificate on its
//! first start, keeps it in the data dir and serves every route over TLS: `bai` (trusting it
//! through `BAI_CA_CERT`, which the env files carry) creates, lists and runs code over
//! WebSocket; data folders go up and down; the official client trusts it through
//! `SSL_CERT_FILE`; a client that does not trust it, and plain HTTP, get nothing; the web
//! session cookie is `Secure`. The same files given as `--tls-cert`/`--tls-key` serve the
//! same; half a pair is refused with one line.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::{Account, Server, bin};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::Command;

fn official() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv-official/bin/backend.ai")
}

fn with(acct: &Account, k: &str, v: &str) -> Account {
    let mut a = acct.clone();
    a.vars.retain(|(key, _)| key != k);
    if !v.is_empty() {
        a.vars.push((k.to_string(), v.to_string()));
    }
    a
}

/// The web login's Set-Cookie over HTTPS, trusting `cert`.
fn login_cookie(port: u16, cert: &std::path::Path, email: &str, password: &str) -> String {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let pem = std::fs::read(cert).expect("cert");
        let c = reqwest::Client::builder()
            .add_root_certificate(reqwest::Certificate::from_pem(&pem).expect("PEM"))
            .build()
            .expect("client");
        let r = c
            .post(format!("https://127.0.0.1:{port}/server/login"))
            .json(&serde_json::json!({"username": email, "password": password}))
            .send()
            .await
            .expect("login over HTTPS");
        assert_eq!(r.status(), 200);
        r.headers()
            .get("set-cookie")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    })
}

#[test]
fn the_api_and_the_web_ui_over_https() {
    let s = Server::start_with(&[
        ("BAI_TLS_SELF_SIGNED", "true"),
        ("BAI_NO_DOCKER", "true"),
        ("BAI_DUMMY_AGENTS", "1"),
    ]);
    let port = s.port();
    let cert = s.data_dir.path().join("tls/cert.pem");
    assert!(cert.exists(), "the certificate is kept in the data dir");
    assert!(s.user.get("BACKEND_ENDPOINT").starts_with("https://"));
    assert_eq!(s.user.get("BAI_CA_CERT"), cert.display().to_string());

    // bai: REST, then code over a WebSocket (wss), then a folder up and down.
    s.bai(&s.user, &["start", "-t", "over-tls", "python"])
        .expect_ok();
    let ps = s.bai(&s.user, &["ps"]);
    ps.expect_ok();
    assert!(ps.stdout.contains("over-tls"), "{ps:#?}");
    let run = s.bai(
        &s.user,
        &["run", "-t", "over-tls", "-c", "print(1)", "python"],
    );
    assert!(
        run.stderr.contains("dummy agent") || run.stdout.contains("dummy agent"),
        "the execution went over wss: {run:#?}"
    );
    s.bai(&s.user, &["vfolder", "create", "tls-data"])
        .expect_ok();
    std::fs::write(s.work.path().join("f.txt"), "secret bytes\n").expect("write");
    s.bai(&s.user, &["vfolder", "upload", "tls-data", "f.txt"])
        .expect_ok();
    std::fs::remove_file(s.work.path().join("f.txt")).expect("rm");
    s.bai(&s.user, &["vfolder", "download", "tls-data", "f.txt"])
        .expect_ok();
    assert_eq!(
        std::fs::read_to_string(s.work.path().join("f.txt")).expect("downloaded"),
        "secret bytes\n"
    );

    // Without trusting the certificate: refused, in one line.
    let untrusted = with(&s.user, "BAI_CA_CERT", "");
    let r = s.bai(&untrusted, &["ps"]);
    assert_ne!(r.code, 0, "{r:#?}");
    assert!(
        r.stderr.to_lowercase().contains("certificate") || r.stderr.contains("connect"),
        "{r:#?}"
    );
    // Unless told to skip the check, as the official client allows.
    let skip = with(&untrusted, "BACKEND_SKIP_SSLCERT_VALIDATION", "true");
    s.bai(&skip, &["ps"]).expect_ok();

    // Plain HTTP on the HTTPS port gets no answer.
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    c.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .ok();
    c.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .expect("send");
    let mut got = Vec::new();
    let _ = c.read_to_end(&mut got);
    assert!(
        !String::from_utf8_lossy(&got).contains("200 OK"),
        "plain HTTP was answered"
    );

    // The official client, trusting the certificate as Python does.
    let official_user = with(&s.user, "SSL_CERT_FILE", &cert.display().to_string());
    let r = s.run_as(official(), &official_user, &["session", "list"]);
    r.expect_ok();
    assert!(r.stdout.contains("over-tls"), "{r:#?}");

    // The web session cookie is Secure.
    let cookie = login_cookie(
        port,
        &cert,
        "user@bai.local",
        &s.web_password("user@bai.local"),
    );
    for attr in ["HttpOnly", "SameSite=Strict", "Secure"] {
        assert!(cookie.contains(attr), "{attr} in {cookie}");
    }
    s.bai(&s.user, &["rm", "over-tls"]).expect_ok();

    // The same files as --tls-cert/--tls-key.
    let dir = tempfile::tempdir().expect("tempdir");
    let (c2, k2) = (dir.path().join("c.pem"), dir.path().join("k.pem"));
    std::fs::copy(&cert, &c2).expect("copy");
    std::fs::copy(s.data_dir.path().join("tls/key.pem"), &k2).expect("copy");
    let t = Server::start_with(&[
        ("BAI_TLS_CERT", c2.to_str().expect("path")),
        ("BAI_TLS_KEY", k2.to_str().expect("path")),
        ("BAI_NO_DOCKER", "true"),
        ("BAI_DUMMY_AGENTS", "1"),
    ]);
    assert!(t.admin.get("BACKEND_ENDPOINT").starts_with("https://"));
    let admin = with(&t.admin, "BAI_CA_CERT", &c2.display().to_string());
    t.bai(&admin, &["ps"]).expect_ok();

    // Half a pair: one line, and baid does not start.
    let out = Command::new(bin("baid"))
        .arg("up")
        .env("BAI_DATA_DIR", dir.path())
        .env("BAI_LISTEN", "127.0.0.1:0")
        .env("BAI_NO_DOCKER", "true")
        .env("BAI_DUMMY_AGENTS", "1")
        .env("BAI_TLS_CERT", &c2)
        .output()
        .expect("baid");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--tls-cert and --tls-key go together"),
        "{out:?}"
    );
}
