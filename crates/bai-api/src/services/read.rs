//! `POST /services` and the counts and durations of the services' other bodies, read at the
//! edge in any spelling clients use; a field that does not read is named (Backend.AI's
//! `api_parsing_invalid-parameters`).

use super::NewService;
use super::spellings::canonical_service_body;
use crate::body::Fields;
use bai_core::Problem;
use serde_json::Value;

pub use bai_core::serving::MAX_REPLICAS;

pub use bai_core::serving::invalid_params;

fn field<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a Value> {
    keys.iter().find_map(|k| v.get(*k)).filter(|v| !v.is_null())
}

/// The replica count of a body (`replicas`, `desired_session_count`, `desiredSessionCount`,
/// or `to` for scaling), under the first of `keys` given: a whole number from 0 to
/// [`MAX_REPLICAS`].
pub fn replicas_in(body: &Fields, keys: &[&str]) -> Result<u32, Problem> {
    replicas_of(body.value(), keys)
}

fn replicas_of(body: &Value, keys: &[&str]) -> Result<u32, Problem> {
    let v = field(body, keys)
        .ok_or_else(|| invalid_params(format!("{} is required: how many replicas", keys[0])))?;
    let n = v
        .as_i64()
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
        .ok_or_else(|| invalid_params(format!("{} {v} is not a whole number", keys[0])))?;
    if n < 0 || n > i64::from(MAX_REPLICAS) {
        return Err(invalid_params(format!(
            "{} {n} is out of range: a service runs 0 to {MAX_REPLICAS} replicas",
            keys[0]
        )));
    }
    Ok(n as u32)
}

/// Reads a `POST /services` body in any spelling clients use; the fields every service
/// needs are asked for by name, and a field that does not read is named.
pub fn read_new_service(body: &[u8]) -> Result<NewService, Problem> {
    let body = Fields::read(body)?.into_value();
    if !body.is_object() {
        return Err(invalid_params("the request body must be a JSON object"));
    }
    let body = canonical_service_body(body);
    let config = body.get("config");
    if config.is_some_and(|c| !c.is_object()) {
        return Err(invalid_params("config must be an object"));
    }
    // The count first: its own messages say what range it takes.
    replicas_of(&body, &["replicas"])?;
    if body.get("image").is_none() {
        return Err(invalid_params("image is required: the image replicas run"));
    }
    if config.and_then(|c| c.get("model")).is_none() {
        return Err(invalid_params(
            "config.model is required: the model folder's name or id",
        ));
    }
    crate::read::from_value(body).map_err(|e| invalid_params(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(text: &str) -> Fields {
        Fields::read(text.as_bytes()).unwrap()
    }

    #[test]
    fn counts_are_checked() {
        assert_eq!(
            replicas_in(&fields(r#"{"replicas": 2}"#), &["replicas"]).unwrap(),
            2
        );
        assert_eq!(
            replicas_in(
                &fields(r#"{"desiredSessionCount": "3"}"#),
                &["replicas", "desiredSessionCount"]
            )
            .unwrap(),
            3
        );
        let e = replicas_in(&fields(r#"{"replicas": 100}"#), &["replicas"]).unwrap_err();
        assert_eq!(
            e.error_code.as_deref(),
            Some("api_parsing_invalid-parameters")
        );
        assert!(replicas_in(&fields("{}"), &["replicas"]).is_err());
        assert!(replicas_in(&fields(r#"{"replicas": -1}"#), &["replicas"]).is_err());
    }

    #[test]
    fn a_service_body_names_what_it_lacks() {
        let e = read_new_service(br#"{"replicas": 1}"#).unwrap_err();
        assert!(e.msg.starts_with("image is required"), "{}", e.msg);
        let e = read_new_service(br#"{"replicas": 1, "image": "python"}"#).unwrap_err();
        assert!(e.msg.starts_with("config.model is required"), "{}", e.msg);
        let e = read_new_service(b"[]").unwrap_err();
        assert!(e.msg.contains("JSON object"), "{}", e.msg);
    }
}
