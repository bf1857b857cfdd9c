//! Request bodies: JSON routes take at most a few MiB and refuse more with a 413 JSON
//! problem; the routes that carry file data take much more.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

mod common;

use common::{Api, IMAGE, USER};
use serde_json::{Value, json};

const FIVE_MIB: usize = 5 << 20;

/// A valid JSON object of about `size` bytes.
fn big_json(size: usize) -> Vec<u8> {
    serde_json::to_vec(&json!({"name": "big", "padding": "x".repeat(size)})).expect("JSON")
}

fn assert_too_large(r: &common::Reply, what: &str) {
    assert_eq!(r.status, 413, "{what}: {:?}", r.body);
    assert!(
        r.content_type().contains("json"),
        "{what}: {}",
        r.content_type()
    );
    let p = r.json();
    assert_eq!(
        p["type"], "https://api.backend.ai/probs/request-too-large",
        "{what}: {p}"
    );
    assert!(p["title"].as_str().is_some_and(|t| !t.is_empty()), "{p}");
    assert!(p["msg"].as_str().is_some_and(|m| m.contains("MiB")), "{p}");
}

#[tokio::test]
async fn an_oversized_json_body_is_a_413_problem() {
    let api = Api::start().await;
    for path in ["/folders", "/session", "/admin/gql"] {
        let r = api
            .send(
                "POST",
                path,
                Some(USER),
                "application/json",
                &[],
                big_json(FIVE_MIB),
            )
            .await;
        assert_too_large(&r, path);
    }
    // Below the limit, the same route reads the body (and ignores the padding).
    let r = api
        .send(
            "POST",
            "/folders",
            Some(USER),
            "application/json",
            &[],
            big_json(1 << 20),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!(r.json()["name"], "big");
}

#[tokio::test]
async fn a_session_upload_takes_more_than_the_json_limit() {
    let api = Api::start_with_agent().await;
    let r = api
        .call(
            "POST",
            "/session",
            USER,
            &json!({"image": IMAGE, "name": "upload-test", "maxWaitSeconds": 30}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!(r.json()["status"], "RUNNING", "{}", r.json());

    let boundary = "bai-test-boundary";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"src\"; filename=\"big.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n"
    )
    .into_bytes();
    body.extend(std::iter::repeat_n(b'z', FIVE_MIB));
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let r = api
        .send(
            "POST",
            "/session/upload-test/upload",
            Some(USER),
            &format!("multipart/form-data; boundary={boundary}"),
            &[],
            body,
        )
        .await;
    assert_eq!(r.status, 204, "{:?}", r.body);
}

#[tokio::test]
async fn a_tus_upload_takes_more_than_the_json_limit() {
    let api = Api::start().await;
    let r = api
        .call("POST", "/folders", USER, &json!({"name": "data"}))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let id = r.json()["id"].as_str().expect("folder id").to_string();
    let r = api
        .call(
            "POST",
            &format!("/folders/{id}/request-upload"),
            USER,
            &json!({"path": "big.bin", "size": FIVE_MIB}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let token = r.json()["token"].as_str().expect("token").to_string();
    let r = api
        .send(
            "PATCH",
            &format!("/storage/upload?token={token}"),
            None,
            "application/offset+octet-stream",
            &[
                ("upload-offset", "0".to_string()),
                ("tus-resumable", "1.0.0".to_string()),
            ],
            vec![b'y'; FIVE_MIB],
        )
        .await;
    assert_eq!(r.status, 204, "{:?}", r.body);
    assert_eq!(
        r.headers.get("upload-offset").and_then(|v| v.to_str().ok()),
        Some(FIVE_MIB.to_string().as_str())
    );
    let r = api
        .call(
            "GET",
            &format!("/folders/{id}/files?path=."),
            USER,
            &Value::Null,
        )
        .await;
    assert_eq!(r.json()["items"][0]["size"], FIVE_MIB, "{}", r.json());
}
