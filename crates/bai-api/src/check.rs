//! Checking that a body on the wire is what its type says.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Reads `wire` as a `T` and writes it back: `Ok` when nothing was lost or changed (every
/// field the server sent is a field of `T`, every value has `T`'s type). For contract tests.
pub fn round_trip<T: Serialize + DeserializeOwned>(wire: &Value) -> Result<T, String> {
    let typed: T = serde_json::from_value(wire.clone()).map_err(|e| {
        format!(
            "{} does not read the body: {e}\n{wire:#}",
            std::any::type_name::<T>()
        )
    })?;
    let back = serde_json::to_value(&typed).map_err(|e| e.to_string())?;
    if &back != wire {
        return Err(format!(
            "{} does not write the body back as it was:\nwire: {wire:#}\ntype: {back:#}",
            std::any::type_name::<T>()
        ));
    }
    Ok(typed)
}
