//! Sub-steps of a scheduling attempt, as the Scheduling History modal shows them: the
//! domain's own types ([`bai_core::history`]), which the store keeps and the API shows.

pub use bai_core::history::{StepResult, SubStep};
