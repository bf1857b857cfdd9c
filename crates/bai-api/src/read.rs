//! Reading a JSON value as its type, naming the field at fault when it does not read.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// Why a body did not read as its type: where (`None`: the body itself) and what is wrong,
/// e.g. `config.resources.cpu`, `invalid type: boolean `true`, expected a number …`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    /// The field's path (`a.b[2].c`), or `None` when the body as a whole is wrong.
    pub path: Option<String>,
    /// What is wrong with it.
    pub what: String,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.path {
            Some(p) => write!(f, "{p}: {}", self.what),
            None => write!(f, "the request body does not read: {}", self.what),
        }
    }
}

impl std::error::Error for ReadError {}

/// Reads `value` as a `T`; when it does not read, says which field and why.
pub fn from_value<T: DeserializeOwned>(value: Value) -> Result<T, ReadError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        ReadError {
            path: (path != ".").then_some(path),
            what: e.into_inner().to_string(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Outer {
        inner: Vec<Inner>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        flag: bool,
    }

    #[test]
    fn a_nested_field_is_named_with_its_path() {
        let e =
            from_value::<Outer>(json!({"inner": [{"flag": true}, {"flag": "yes"}]})).unwrap_err();
        assert_eq!(e.path.as_deref(), Some("inner[1].flag"));
        assert!(e.what.contains("expected a boolean"), "{e}");
        assert!(
            e.to_string().starts_with("inner[1].flag: invalid type"),
            "{e}"
        );
    }

    #[test]
    fn a_body_of_the_wrong_shape_is_the_body_at_fault() {
        let e = from_value::<Outer>(json!("text")).unwrap_err();
        assert_eq!(e.path, None);
        assert!(
            e.to_string().starts_with("the request body does not read"),
            "{e}"
        );
    }
}
