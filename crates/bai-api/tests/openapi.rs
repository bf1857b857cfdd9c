//! `docs/openapi.json` is what the types make: generated from `openapi-base.json` (the
//! operation texts) and the bodies of `bai-api`. Run with `BAI_BLESS_OPENAPI=1` to write it.

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

/// Every operation's success answer and request body has content (a schema), except answers
/// that have none by nature (204, 101 upgrades).
#[test]
fn every_body_has_a_schema() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("../../docs/openapi.json")).unwrap(),
    )
    .unwrap();
    let mut missing = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let Some(responses) = op["responses"].as_object() else {
                continue;
            };
            for (status, r) in responses {
                let bodiless = status == "204" || status == "101";
                if status.starts_with(['1', '2', '3']) && !bodiless && r.get("content").is_none() {
                    missing.push(format!("{method} {path} {status}"));
                }
            }
            if let Some(req) = op.get("requestBody")
                && req.get("content").is_none()
            {
                missing.push(format!("{method} {path} request"));
            }
        }
    }
    assert!(missing.is_empty(), "bodies without a schema: {missing:#?}");
}
