//! The bounds of model serving (the replicas one service may ask for are
//! `bai_core::serving::MAX_REPLICAS`).

/// Routes that failed to start before a service stops making new ones (until it is scaled,
/// its errors are cleared, or a route becomes healthy).
pub const MAX_RETRIES: u32 = 5;
