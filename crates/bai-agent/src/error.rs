//! Mapping Docker engine errors to [`AgentError`]s with context.

use bai_core::agent::AgentError;

/// Whether the engine answered 404 (no such container or image).
pub fn is_not_found(e: &bollard::errors::Error) -> bool {
    matches!(
        e,
        bollard::errors::Error::DockerResponseServerError {
            status_code: 404,
            ..
        }
    )
}

/// A runtime error saying what was being done.
pub fn runtime(context: impl std::fmt::Display, e: impl std::fmt::Display) -> AgentError {
    AgentError::Runtime(format!("{context}: {e}"))
}
