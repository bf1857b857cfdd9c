//! The resources area's bodies and routes.

use crate::route::Route;

/// The resources area's operations.
pub fn routes() -> Vec<Route> {
    Vec::new()
}
