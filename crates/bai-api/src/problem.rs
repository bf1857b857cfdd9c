//! Every error answer: an RFC 7807 problem with Backend.AI's fields.

// The problem and its typed `data` are `bai-core`'s (what the server writes), with their
// schemas from its `schema` feature.
pub use bai_core::problem::{ExistingSession, Problem, QuotaData};
