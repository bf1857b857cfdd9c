//! Route statuses (Backend.AI's names, lower case as its current API writes them).

pub const PROVISIONING: &str = "provisioning";
pub const HEALTHY: &str = "healthy";
pub const UNHEALTHY: &str = "unhealthy";
pub const TERMINATING: &str = "terminating";
pub const FAILED_TO_START: &str = "failed_to_start";

/// Routes that count as replicas of the service.
pub fn is_active(s: &str) -> bool {
    matches!(s, PROVISIONING | HEALTHY | UNHEALTHY)
}
