//! Schema helpers for shapes the derive does not say by itself.

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

/// A field that is always present but may be `null`: `T` or `null`, and required.
/// Use as `#[schemars(required, schema_with = "crate::schema::nullable::<T>")]` on an
/// `Option<T>` field that is not skipped when `None`.
pub fn nullable<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    let inner = generator.subschema_for::<T>();
    json_schema!({"anyOf": [inner, {"type": "null"}]})
}
