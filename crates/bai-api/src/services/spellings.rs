//! The spellings of a `POST /services` body, brought to the one [`NewService`] reads: the
//! first spelling given wins (`name`, `service_name`, `clientSessionToken`; `replicas`,
//! `desired_session_count`, `desiredSessionCount`; …), empty texts are not given, a replica
//! count may be its text, and environment values of any kind are texts.

use super::NewService;
use crate::read::{ReadError, from_value};
use crate::spellings::{
    Spellings, drop_empty, number_from_text, one_spelling, reword, tidy_config,
};
use serde_json::Value;

const TOP: &[Spellings] = &[
    ("name", &["name", "service_name", "clientSessionToken"]),
    (
        "replicas",
        &["replicas", "desired_session_count", "desiredSessionCount"],
    ),
    ("image", &["image", "lang"]),
    ("arch", &["arch", "architecture"]),
];

const CONFIG: &[Spellings] = &[
    ("model", &["model", "model_id"]),
    ("scaling_group", &["scaling_group", "scalingGroup"]),
];

/// `body` with one spelling per field, ready to read as a [`NewService`]. A body that is not
/// an object is left as it is (and does not read).
pub fn canonical_service_body(mut body: Value) -> Value {
    let Some(top) = body.as_object_mut() else {
        return body;
    };
    tidy_config(top, CONFIG);
    one_spelling(top, TOP);
    drop_empty(top);
    number_from_text(top, "replicas");
    reword(top, "runtime_variant", str::to_ascii_lowercase);
    body
}

impl NewService {
    /// Reads a `POST /services` body in any of the spellings clients use
    /// ([`canonical_service_body`]); a field that does not read is named.
    pub fn read(body: Value) -> Result<NewService, ReadError> {
        from_value(canonical_service_body(body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_spelling_of_a_service_reads() {
        let s = NewService::read(json!({
            "service_name": "svc1", "clientSessionToken": "other",
            "desiredSessionCount": " 2 ", "lang": "python", "runtime_variant": "CMD",
            "tag": "",
            "config": {"model_id": "m", "scalingGroup": "gpu", "environ": {"N": 1}},
        }))
        .unwrap();
        assert_eq!(s.name.as_deref(), Some("svc1"));
        assert_eq!(s.replicas, 2);
        assert_eq!(s.image, "python");
        assert_eq!(s.runtime_variant.as_deref(), Some("cmd"));
        assert_eq!(s.tag, None);
        assert_eq!(s.config.model, "m");
        assert_eq!(s.config.scaling_group.as_deref(), Some("gpu"));
        assert_eq!(s.config.environ.unwrap()["N"], "1");
    }

    #[test]
    fn a_field_of_the_wrong_kind_is_named() {
        let e = NewService::read(json!({
            "replicas": 1, "image": "python",
            "config": {"model": "m", "resources": {"cpu": [1]}},
        }))
        .unwrap_err();
        assert_eq!(e.path.as_deref(), Some("config.resources.cpu"));
        let e = NewService::read(json!({
            "replicas": 1, "image": "python", "open_to_public": "yes",
            "config": {"model": "m"},
        }))
        .unwrap_err();
        assert_eq!(e.path.as_deref(), Some("open_to_public"));
    }
}
