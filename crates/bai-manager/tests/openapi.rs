//! The OpenAPI spec in the tree (`docs/openapi.json`) and the router agree: every route the
//! router serves is in the spec with the same methods, nothing else is, and every operation
//! says what it does and answers errors as JSON problems.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use serde_json::Value;
use std::collections::BTreeSet;

const SPEC: &str = include_str!("../../../docs/openapi.json");
const ROUTER: &str = include_str!("../src/api/mod.rs");

/// The methods an `any(…)` route is documented with.
const ANY: &[&str] = &["get", "post", "put", "patch", "delete"];
const METHODS: &[&str] = &["get", "post", "put", "patch", "delete", "head", "any"];

/// `(method, path)` of every `.route("PATH", method(…).method(…))` in the router's source.
/// Wildcards (`{*rest}`) are written `{rest}` as OpenAPI templates have no wildcard.
fn router_routes() -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    let mut rest = ROUTER;
    while let Some(at) = rest.find(".route(") {
        rest = &rest[at + ".route(".len()..];
        let open = rest.find('"').expect("a path literal");
        let close = open + 1 + rest[open + 1..].find('"').expect("the path's end");
        let path = rest[open + 1..close].replace("{*", "{");
        // The handlers: up to the parenthesis that closes `.route(`.
        let mut depth = 1;
        let mut end = close + 1;
        for (i, c) in rest[close + 1..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                end = close + 1 + i;
                break;
            }
        }
        let handlers = &rest[close + 1..end];
        for (i, _) in handlers.match_indices('(') {
            let before = &handlers[..i];
            let word_start = before
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map(|j| j + 1)
                .unwrap_or(0);
            let word = &before[word_start..];
            // A method call, not a handler path such as `vfolder::delete`.
            let preceded_by_path = before[..word_start].ends_with("::")
                && !before[..word_start].ends_with("routing::");
            if !METHODS.contains(&word) || preceded_by_path {
                continue;
            }
            if word == "any" {
                for m in ANY {
                    out.insert((m.to_string(), path.clone()));
                }
            } else {
                out.insert((word.to_string(), path.clone()));
            }
        }
        rest = &rest[end..];
    }
    out
}

fn spec() -> Value {
    serde_json::from_str(SPEC).expect("docs/openapi.json is JSON")
}

fn spec_routes(spec: &Value) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for (path, ops) in spec["paths"].as_object().expect("paths") {
        for method in ops.as_object().expect("operations").keys() {
            out.insert((method.clone(), path.clone()));
        }
    }
    out
}

#[test]
fn the_route_reader_sees_every_kind_of_route() {
    let r = router_routes();
    assert!(r.contains(&("post".into(), "/session".into())));
    assert!(r.contains(&("delete".into(), "/session/{reference}".into())));
    assert!(r.contains(&("head".into(), "/storage/upload".into())));
    assert!(r.contains(&("patch".into(), "/storage/upload".into())));
    assert!(r.contains(&("get".into(), "/folders".into())));
    assert!(r.contains(&("delete".into(), "/folders".into())));
    assert!(r.contains(&("put".into(), "/app/{session}/{app}/{rest}".into())));
    assert!(r.contains(&("get".into(), "/manager/announcement".into())));
    assert!(r.len() > 60, "{r:?}");
}

#[test]
fn spec_and_router_list_the_same_routes() {
    let spec = spec();
    let (documented, served) = (spec_routes(&spec), router_routes());
    let missing: Vec<_> = served.difference(&documented).collect();
    let stale: Vec<_> = documented.difference(&served).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "served but not in docs/openapi.json: {missing:?}\nin docs/openapi.json but not served: {stale:?}"
    );
}

#[test]
fn every_operation_is_described_and_answers_problems() {
    let spec = spec();
    assert!(spec["openapi"].as_str().unwrap_or("").starts_with("3."));
    assert_eq!(
        spec["info"]["version"],
        bai_core::API_VERSION.trim_start_matches('v')
    );
    let problem = &spec["components"]["schemas"]["Problem"];
    for field in ["type", "title", "msg"] {
        assert!(
            problem["required"]
                .as_array()
                .is_some_and(|r| r.iter().any(|x| x == field)),
            "Problem requires {field}"
        );
    }
    let schemes = spec["components"]["securitySchemes"]
        .as_object()
        .expect("security schemes");
    let mut ids = BTreeSet::new();
    for (path, ops) in spec["paths"].as_object().expect("paths") {
        for (method, op) in ops.as_object().expect("operations") {
            let at = format!("{method} {path}");
            assert!(
                op["summary"].as_str().is_some_and(|s| s.len() > 10),
                "{at}: summary"
            );
            assert!(
                ids.insert(op["operationId"].as_str().expect("operationId").to_string()),
                "{at}: operationId is not unique"
            );
            // Errors are problems; only the app proxy's pages for the browser are HTML.
            if path.starts_with("/app/") {
                assert!(
                    op["responses"]["4XX"]["content"]["text/html"].is_object(),
                    "{at}: the proxy's refusals are pages"
                );
            } else {
                assert_eq!(
                    op["responses"]["4XX"]["$ref"], "#/components/responses/Problem",
                    "{at}: errors are problems"
                );
            }
            for s in op["security"].as_array().expect("security") {
                for name in s.as_object().expect("requirement").keys() {
                    assert!(schemes.contains_key(name), "{at}: unknown scheme {name}");
                }
            }
            // Every `{param}` of the path is declared.
            for part in path.split('/').filter(|p| p.starts_with('{')) {
                let name = part.trim_matches(|c| c == '{' || c == '}');
                assert!(
                    op["parameters"].as_array().is_some_and(|ps| ps
                        .iter()
                        .any(|p| p["name"] == name && p["in"] == "path")),
                    "{at}: path parameter {name} is not declared"
                );
            }
        }
    }
}
