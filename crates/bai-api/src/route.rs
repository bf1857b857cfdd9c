//! Which body each operation takes and answers. The table is checked against the OpenAPI
//! document's operations, so no route can be left without its bodies.

use schemars::{JsonSchema, Schema, SchemaGenerator};

/// A body of a request or a response.
#[derive(Clone, Copy)]
pub enum Body {
    /// JSON described by a type of this crate.
    Json(fn(&mut SchemaGenerator) -> Schema),
    /// Bytes of a file or an archive, with their media type.
    Bytes(&'static str),
    /// `multipart/form-data` or `multipart/mixed` parts of files.
    Multipart(&'static str),
    /// `text/event-stream` of server-sent events whose `data` is this JSON.
    Events(fn(&mut SchemaGenerator) -> Schema),
    /// A WebSocket (or raw upgraded) connection; no body.
    Upgrade,
    /// Nothing (e.g. 204).
    Empty,
    /// Whatever the proxied app answers (the app proxy).
    Any,
}

/// The JSON body of type `T`.
pub fn json<T: JsonSchema>() -> Body {
    Body::Json(|g| g.subschema_for::<T>())
}

/// Server-sent events whose data is `T`.
pub fn events<T: JsonSchema>() -> Body {
    Body::Events(|g| g.subschema_for::<T>())
}

/// One operation's bodies.
#[derive(Clone, Copy)]
pub struct Route {
    pub method: &'static str,
    /// The path as OpenAPI writes it (`/session/{reference}`).
    pub path: &'static str,
    pub request: Option<Body>,
    /// The success status and its body.
    pub response: (u16, Body),
    /// Other answers than the success and a problem: a second success (`"200"` of a create
    /// that found the session it would make), or a refusal with a body of its own (a 4xx
    /// one may still be a problem too; `"4XX"` replaces the problem for the whole range).
    pub also: [Option<(&'static str, Body)>; 2],
}

impl Route {
    pub const fn new(method: &'static str, path: &'static str) -> Route {
        Route {
            method,
            path,
            request: None,
            response: (200, Body::Empty),
            also: [None, None],
        }
    }

    /// One more answer (see [`Route::also`]).
    pub fn also(mut self, status: &'static str, body: Body) -> Route {
        if let Some(slot) = self.also.iter_mut().find(|s| s.is_none()) {
            *slot = Some((status, body));
        }
        self
    }

    /// The request body.
    pub fn takes(mut self, body: Body) -> Route {
        self.request = Some(body);
        self
    }

    /// The success status and its body.
    pub fn answers(mut self, status: u16, body: Body) -> Route {
        self.response = (status, body);
        self
    }
}

/// Every operation bai serves, area by area. Errors are always a [`crate::Problem`].
pub fn routes() -> Vec<Route> {
    let mut all = Vec::new();
    for area in crate::AREAS {
        all.extend(area());
    }
    all
}
