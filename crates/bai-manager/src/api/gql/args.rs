//! GraphQL field arguments read as their `bai_api` types, shared by every resolver module:
//! a field's whole arguments, or a mutation's `props` input object. The argument or field at
//! fault is named in the error.

use bai_gql::FieldError;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// A field's arguments read as their type.
pub fn typed_args<T: DeserializeOwned>(args: &Map<String, Value>) -> Result<T, FieldError> {
    bai_api::read::from_value(Value::Object(args.clone()))
        .map_err(|e| FieldError::new(e.to_string()))
}

/// A mutation's `props` input object read as its type (absent or null: nothing given); a
/// field of the wrong kind, or one the type does not know, is named.
pub fn props<T: DeserializeOwned + Default>(args: &Map<String, Value>) -> Result<T, FieldError> {
    match args.get("props") {
        None | Some(Value::Null) => Ok(T::default()),
        Some(v) => bai_api::read::from_value(v.clone()).map_err(|e| FieldError::new(e.to_string())),
    }
}
