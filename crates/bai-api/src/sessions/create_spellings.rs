//! The spellings of a `POST /session` body, brought to the one [`CreateRequest`] reads.
//!
//! Clients name some fields in several ways (`image` or `lang`, `clusterSize` at the top or in
//! `config`, …), send empty texts for "not given", and write words in either case; the body
//! is rewritten first (`crate::spellings`): the first spelling given (in the order of `TOP`
//! and `CONFIG`) wins and the others are dropped, empty texts are dropped, and the words are
//! put in the case the type reads.

use super::create::CreateRequest;
use crate::read::{ReadError, from_value};
use crate::spellings::{Spellings, drop_empty, given, one_spelling, reword, tidy_config};
use serde_json::Value;

/// The top level's fields with several spellings.
const TOP: &[Spellings] = &[
    ("image", &["image", "lang"]),
    ("name", &["name", "clientSessionToken", "sessionName"]),
    ("type", &["type", "sessionType"]),
    ("startupCommand", &["startupCommand", "startup_command"]),
    ("starts_at", &["starts_at", "startsAt"]),
    ("bootstrap_script", &["bootstrap_script", "bootstrapScript"]),
];

/// The same for `config`.
const CONFIG: &[Spellings] = &[
    ("scalingGroup", &["scalingGroup", "scaling_group"]),
    ("preset", &["preset", "resource_preset"]),
    ("agentList", &["agentList", "agent_list"]),
];

/// The cluster's shape is read at the top level, or in `config` as older clients send it.
const CLUSTER: &[Spellings] = &[
    ("clusterSize", &["clusterSize", "cluster_size"]),
    ("clusterMode", &["clusterMode", "cluster_mode"]),
];

/// `body` with one spelling per field, ready to read as a [`CreateRequest`]. A body that is
/// not an object is left as it is (and does not read).
pub fn canonical_create_body(mut body: Value) -> Value {
    let Some(top) = body.as_object_mut() else {
        return body;
    };
    tidy_config(top, CONFIG);
    // The cluster's shape from `config` when the top level does not give it.
    for (canonical, spellings) in CLUSTER {
        let at_top = spellings.iter().any(|k| top.get(*k).is_some_and(given));
        if at_top {
            continue;
        }
        let from_config = top
            .get("config")
            .and_then(Value::as_object)
            .and_then(|c| spellings.iter().find_map(|k| c.get(*k).cloned()));
        if let Some(v) = from_config {
            top.insert((*canonical).to_string(), v);
        }
    }
    if let Some(Value::Object(config)) = top.get_mut("config") {
        for (_, spellings) in CLUSTER {
            for k in *spellings {
                config.remove(*k);
            }
        }
    }
    one_spelling(top, TOP);
    one_spelling(top, CLUSTER);
    drop_empty(top);
    reword(top, "type", str::to_ascii_lowercase);
    reword(top, "clusterMode", |s| {
        s.trim().to_ascii_lowercase().replace('_', "-")
    });
    body
}

impl CreateRequest {
    /// Reads a `POST /session` body in any of the spellings clients use
    /// ([`canonical_create_body`]); a field that does not read is named.
    pub fn read(body: Value) -> Result<CreateRequest, ReadError> {
        from_value(canonical_create_body(body))
    }
}

#[cfg(test)]
mod tests {
    use super::super::create::ListOrText;
    use super::super::status::{ClusterMode, SessionType};
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_spelling_given_wins() {
        let r = CreateRequest::read(json!({
            "lang": "python", "image": "",
            "sessionName": "second", "clientSessionToken": "first",
            "startup_command": "run", "bootstrapScript": "boot",
        }))
        .unwrap();
        assert_eq!(r.image, "python");
        assert_eq!(r.name.as_deref(), Some("first"));
        assert_eq!(r.startup_command.as_deref(), Some("run"));
        assert_eq!(r.bootstrap_script.as_deref(), Some("boot"));
        let r = CreateRequest::read(json!({"image": "a", "lang": "b"})).unwrap();
        assert_eq!(r.image, "a");
    }

    #[test]
    fn empty_texts_and_nulls_are_not_given() {
        let r = CreateRequest::read(json!({
            "image": "python", "name": "", "tag": null, "group": "",
            "config": {"scalingGroup": "", "scaling_group": "gpu", "preset": null}
        }))
        .unwrap();
        assert_eq!(r.name, None);
        assert_eq!(r.tag, None);
        assert_eq!(r.group, None);
        let c = r.config.unwrap();
        assert_eq!(c.scaling_group.as_deref(), Some("gpu"));
        assert_eq!(c.preset, None);
        assert!(CreateRequest::read(json!({"lang": ""})).is_err());
    }

    #[test]
    fn the_cluster_shape_is_read_at_the_top_or_in_config() {
        let r = CreateRequest::read(json!({
            "image": "python",
            "config": {"cluster_size": 3, "cluster_mode": "MULTI_NODE"}
        }))
        .unwrap();
        assert_eq!(r.cluster_size, Some(3));
        assert_eq!(r.cluster_mode, Some(ClusterMode::MultiNode));
        let r = CreateRequest::read(json!({
            "image": "python", "cluster_size": 2,
            "config": {"clusterSize": 4, "clusterMode": "single_node"}
        }))
        .unwrap();
        assert_eq!(r.cluster_size, Some(2));
        assert_eq!(r.cluster_mode, Some(ClusterMode::SingleNode));
    }

    #[test]
    fn words_in_either_case_and_environment_values_of_any_kind_read() {
        let r = CreateRequest::read(json!({
            "image": "python", "sessionType": "BATCH",
            "config": {
                "environ": {"N": 4, "ON": true, "EMPTY": null, "S": "x"},
                "agent_list": "i-1",
            }
        }))
        .unwrap();
        assert_eq!(r.session_type, Some(SessionType::Batch));
        let c = r.config.unwrap();
        let env = c.environ.unwrap();
        assert_eq!(env["N"], "4");
        assert_eq!(env["ON"], "true");
        assert_eq!(env["EMPTY"], "");
        assert_eq!(env["S"], "x");
        assert_eq!(c.agent_list, Some(ListOrText::Text("i-1".into())));
    }

    #[test]
    fn a_field_of_the_wrong_kind_is_named() {
        let e = CreateRequest::read(json!({"image": "python", "enqueueOnly": "yes"})).unwrap_err();
        assert_eq!(e.path.as_deref(), Some("enqueueOnly"));
        let e = CreateRequest::read(json!({
            "image": "python", "config": {"resources": {"cpu": true}}
        }))
        .unwrap_err();
        assert_eq!(e.path.as_deref(), Some("config.resources.cpu"));
        assert!(e.what.contains("expected a number, or a text"), "{e}");
        let e = CreateRequest::read(json!({"image": "python", "clusterMode": "ring"})).unwrap_err();
        assert_eq!(e.path.as_deref(), Some("clusterMode"));
        let e = CreateRequest::read(json!({"image": "python", "config": {"mounts": ["a", 1]}}))
            .unwrap_err();
        assert_eq!(e.path.as_deref(), Some("config.mounts[1]"));
    }
}
