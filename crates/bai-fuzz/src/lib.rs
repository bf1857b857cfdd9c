//! Fuzz targets: each takes any bytes, must never panic, and checks what its parser promises
//! about what it accepts. `fuzz/` (cargo-fuzz, libFuzzer, nightly) runs them unbounded with
//! `make fuzz`; `tests/bounded.rs` replays the corpus kept in `fuzz/corpus/` and a bounded
//! number of seeded mutations on stable, in `make test`.
#![forbid(unsafe_code)]

pub mod mutate;

use std::path::{Component, Path};

/// A fuzz target: any bytes in, a panic when a promise is broken.
pub type Target = fn(&[u8]);

/// The targets by name (the name is also the corpus directory's).
pub const TARGETS: &[(&str, Target)] = &[
    ("signature", signature),
    ("folder_path", folder_path),
    ("graphql", graphql),
    ("units", units),
    ("model_definition", model_definition),
];

fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// The `Authorization` header parser: what it returns was in the header, the access key has
/// no `:`, and signing with any key and the parsed parts does not panic.
pub fn signature(data: &[u8]) {
    let Some(s) = text(data) else { return };
    let Some(c) = bai_core::sign::parse_authorization(s) else {
        return;
    };
    assert!(s.contains(&c.access_key), "{s:?}: {c:?}");
    assert!(s.contains(&c.signature), "{s:?}: {c:?}");
    assert!(!c.access_key.contains(':'), "{s:?}: {c:?}");
    assert!(!bai_core::sign::signatures_match(
        &c.signature,
        &format!("{}x", c.signature)
    ));
}

/// Folder path rules: an accepted path is relative, made of plain names only, stays inside
/// any folder it is joined to, and is within the length limits; an accepted new name is one
/// plain name.
pub fn folder_path(data: &[u8]) {
    use bai_core::vpath::{MAX_NAME, MAX_PATH, confine, confine_name};
    let Some(s) = text(data) else { return };
    if let Ok(p) = confine(s) {
        assert!(p.is_relative(), "{s:?} → {p:?}");
        for c in p.components() {
            match c {
                Component::Normal(n) => assert!(n.len() <= MAX_NAME, "{s:?}"),
                other => panic!("{s:?} → {p:?} holds {other:?}"),
            }
        }
        let base = Path::new("/srv/folder");
        assert!(
            base.join(&p).starts_with(base),
            "{s:?} → {p:?} leaves the folder"
        );
        assert!(p.as_os_str().len() <= MAX_PATH, "{s:?}");
    }
    if let Ok(n) = confine_name(s) {
        assert!(
            !n.is_empty() && !n.contains('/') && !n.contains('\0'),
            "{s:?} → {n:?}"
        );
        assert!(n != "." && n != "..", "{s:?} → {n:?}");
    }
}

/// Answers every root field with the same nested object, so any selection has something to
/// project over.
struct Everything;

impl bai_gql::Resolver for Everything {
    fn resolve(
        &self,
        _kind: bai_gql::OperationKind,
        field: &str,
        _args: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<serde_json::Value, bai_gql::FieldError> {
        if field.starts_with('x') {
            return Err(bai_gql::FieldError::new("no such field"));
        }
        Ok(serde_json::json!({
            "id": "s1", "name": field, "ok": true, "n": 1.5,
            "items": [{"id": "a", "tags": ["t"]}, {"id": "b", "tags": []}],
            "total_count": 2, "nested": {"deeper": {"id": "d"}}, "none": null,
        }))
    }
}

/// The GraphQL endpoint's parser and executor: the bytes as a query, and (when they are
/// JSON) as a whole request body. The answer always has `data`; a failure has `errors`.
pub fn graphql(data: &[u8]) {
    let Some(s) = text(data) else { return };
    let check = |req: &bai_gql::Request| {
        let out = bai_gql::execute(req, &Everything);
        assert!(out.get("data").is_some(), "{s:?} → {out}");
        if out["data"].is_null() {
            assert!(
                out["errors"].as_array().is_some_and(|e| !e.is_empty()),
                "{s:?} → {out}"
            );
        }
    };
    check(&bai_gql::Request {
        query: s.to_string(),
        ..Default::default()
    });
    if let Ok(body) = serde_json::from_str::<serde_json::Value>(s)
        && let Ok(req) = bai_gql::Request::from_body(&body)
    {
        check(&req);
    }
}

/// The duration and size parsers: a parsed value, written out as plain digits, parses back to
/// itself.
pub fn units(data: &[u8]) {
    use bai_core::units::{parse_duration, parse_size};
    let Some(s) = text(data) else { return };
    if let Ok(n) = parse_size(s) {
        assert_eq!(parse_size(&n.to_string()), Ok(n), "{s:?}");
    }
    if let Ok(d) = parse_duration(s)
        && d.subsec_nanos() == 0
    {
        assert_eq!(parse_duration(&d.as_secs().to_string()), Ok(d), "{s:?}");
    }
}

/// The model definition parser (`model-definition.yaml` of a model service): an accepted
/// definition has a model to serve and a command line to start it with.
pub fn model_definition(data: &[u8]) {
    let Some(s) = text(data) else { return };
    if let Ok(def) = bai_serving::definition::parse(s) {
        assert!(!def.models.is_empty(), "{s:?}");
        assert!(!def.command_line().trim().is_empty(), "{s:?}");
        let _ = def.port();
        let _ = def.health();
    }
}
