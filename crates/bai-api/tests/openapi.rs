//! `docs/openapi.json` is what the types make: generated from `openapi-base.json` (the
//! operation texts) and the bodies of `bai-api`. Run with `BAI_BLESS_OPENAPI=1` to write it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_api::Body;
use std::path::Path;

#[test]
fn the_committed_document_is_the_generated_one() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let base: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("openapi-base.json")).unwrap())
            .expect("openapi-base.json is JSON");
    let doc = bai_api::openapi::generate(&base).unwrap_or_else(|e| panic!("{e}"));
    let text = serde_json::to_string_pretty(&doc).unwrap() + "\n";
    let committed = root.join("../../docs/openapi.json");
    if std::env::var_os("BAI_BLESS_OPENAPI").is_some() {
        std::fs::write(&committed, &text).unwrap();
        return;
    }
    let now = std::fs::read_to_string(&committed).unwrap();
    assert!(
        now == text,
        "docs/openapi.json is not what bai-api generates: run `BAI_BLESS_OPENAPI=1 cargo test -p bai-api --test openapi` and commit it"
    );
}

/// Every body the route table gives a type has its schema in the committed document, and
/// nothing else does (bodiless answers: 204, upgrades, HEAD, a 201 with no body).
#[test]
fn every_body_has_a_schema() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("../../docs/openapi.json")).unwrap(),
    )
    .unwrap();
    let has_content = |b: &Body| !matches!(b, Body::Empty | Body::Upgrade);
    let mut wrong = Vec::new();
    for r in bai_api::routes() {
        let op = &doc["paths"][r.path][r.method];
        let (status, body) = &r.response;
        let answer = &op["responses"][status.to_string()];
        if answer.is_null() || has_content(body) != answer.get("content").is_some() {
            wrong.push(format!("{} {} {status}", r.method, r.path));
        }
        if let Some(req) = &r.request
            && has_content(req) != op["requestBody"].get("content").is_some()
        {
            wrong.push(format!("{} {} request", r.method, r.path));
        }
    }
    assert!(wrong.is_empty(), "bodies not as the table says: {wrong:#?}");
}
