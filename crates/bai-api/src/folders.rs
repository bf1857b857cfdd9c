//! The folders area's bodies and routes.

use crate::route::Route;

/// The folders area's operations.
pub fn routes() -> Vec<Route> {
    Vec::new()
}
