//! The server itself: version, announcement, and the app proxy's path mode.

use crate::route::{Body, Route, json};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `GET /`: the API version a client must speak.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Version {
    /// e.g. `v9.20250722`.
    pub version: String,
    /// The manager's release, e.g. `26.9.6`.
    pub manager: String,
}

/// `GET /manager/announcement`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Announcement {
    pub enabled: bool,
    pub message: String,
}

/// The server area's operations.
pub fn routes() -> Vec<Route> {
    let mut out = vec![
        Route::new("get", "/").answers(200, json::<Version>()),
        Route::new("get", "/manager/announcement").answers(200, json::<Announcement>()),
    ];
    // The app proxy's path mode passes requests and answers through as the app makes them.
    for path in [
        "/app/{session}/{app}",
        "/app/{session}/{app}/",
        "/app/{session}/{app}/{rest}",
    ] {
        for method in ["get", "post", "put", "patch", "delete"] {
            out.push(
                Route::new(method, path)
                    .takes(Body::Any)
                    .answers(200, Body::Any),
            );
        }
    }
    out
}
