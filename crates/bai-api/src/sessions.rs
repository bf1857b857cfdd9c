//! The sessions area's bodies and routes.

use crate::route::Route;

/// The sessions area's operations.
pub fn routes() -> Vec<Route> {
    Vec::new()
}
