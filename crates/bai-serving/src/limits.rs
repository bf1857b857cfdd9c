//! The bounds of model serving.

/// Routes that failed to start before a service stops making new ones (until it is scaled,
/// its errors are cleared, or a route becomes healthy).
pub const MAX_RETRIES: u32 = 5;

/// Replicas one service may ask for (a bound of the wire's bodies).
pub use bai_api::services::MAX_REPLICAS;
