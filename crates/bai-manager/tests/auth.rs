//! Signature verification as the manager does it, against requests signed like the client.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use axum::http::{HeaderMap, HeaderValue};
use bai_core::sign::{SignInput, sign};
use bai_ground::config::ManagerConfig;
use bai_manager::Manager;
use bai_manager::auth::verify;
use bai_store::{Store, UserRow};
use std::sync::Arc;

fn manager() -> Arc<Manager> {
    let store = Arc::new(Store::open_for_tests().unwrap());
    store
        .create_user_with_keypair(
            &UserRow {
                id: "u1".into(),
                email: "user@x".into(),
                role: "user".into(),
            },
            "AKTEST",
            "secret-key",
            false,
        )
        .unwrap();
    Manager::new(store, ManagerConfig::default())
}

fn signed(
    method: &str,
    path: &str,
    secret: &str,
    date: chrono::DateTime<chrono::Utc>,
) -> HeaderMap {
    let date_s = date.to_rfc3339_opts(chrono::SecondsFormat::Micros, false);
    let ymd = date.format("%Y%m%d").to_string();
    let sig = sign(
        secret,
        &SignInput {
            method,
            path_and_query: path,
            date: &date_s,
            date_ymd: &ymd,
            host: "127.0.0.1:8090",
            media_type: "application/json",
            api_version: "v9.20250722",
        },
    );
    let mut h = HeaderMap::new();
    h.insert("host", HeaderValue::from_static("127.0.0.1:8090"));
    h.insert("content-type", HeaderValue::from_static("application/json"));
    h.insert(
        "x-backendai-version",
        HeaderValue::from_static("v9.20250722"),
    );
    h.insert("date", HeaderValue::from_str(&date_s).unwrap());
    h.insert(
        "authorization",
        HeaderValue::from_str(&format!(
            "BackendAI signMethod=HMAC-SHA256, credential=AKTEST:{sig}"
        ))
        .unwrap(),
    );
    h
}

#[test]
fn a_correctly_signed_request_identifies_the_caller() {
    let m = manager();
    let h = signed("POST", "/admin/gql", "secret-key", chrono::Utc::now());
    let caller = verify(&m, "POST", "/admin/gql", &h).expect("valid signature");
    assert_eq!(caller.access_key, "AKTEST");
    assert!(!caller.is_admin);
}

#[test]
fn wrong_secret_tampered_path_or_method_are_refused() {
    let m = manager();
    let h = signed("POST", "/admin/gql", "other-secret", chrono::Utc::now());
    assert_eq!(
        verify(&m, "POST", "/admin/gql", &h).unwrap_err().status,
        401
    );
    let h = signed("POST", "/admin/gql", "secret-key", chrono::Utc::now());
    assert!(verify(&m, "POST", "/admin/gql?x=1", &h).is_err());
    assert!(verify(&m, "GET", "/admin/gql", &h).is_err());
}

#[test]
fn the_clock_window_is_fifteen_minutes() {
    let m = manager();
    let now = chrono::Utc::now();
    let ok = signed(
        "GET",
        "/session/x/logs",
        "secret-key",
        now - chrono::Duration::minutes(14),
    );
    assert!(verify(&m, "GET", "/session/x/logs", &ok).is_ok());
    let old = signed(
        "GET",
        "/session/x/logs",
        "secret-key",
        now - chrono::Duration::minutes(16),
    );
    let err = verify(&m, "GET", "/session/x/logs", &old).unwrap_err();
    assert!(err.msg.contains("clock"), "{}", err.msg);
    let future = signed(
        "GET",
        "/session/x/logs",
        "secret-key",
        now + chrono::Duration::minutes(16),
    );
    assert!(verify(&m, "GET", "/session/x/logs", &future).is_err());
}

#[test]
fn unknown_access_keys_and_missing_headers_are_refused() {
    let m = manager();
    let mut h = signed("GET", "/", "secret-key", chrono::Utc::now());
    h.insert(
        "authorization",
        HeaderValue::from_static("BackendAI signMethod=HMAC-SHA256, credential=NOPE:abc"),
    );
    assert!(verify(&m, "GET", "/", &h).is_err());
    assert!(verify(&m, "GET", "/", &HeaderMap::new()).is_err());
}
