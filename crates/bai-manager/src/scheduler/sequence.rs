//! Sequencers: in which order PENDING sessions are considered.

use bai_store::SessionRow;

/// Priority first, then first come first served (the store already orders them so).
pub fn fifo(mut rows: Vec<SessionRow>) -> Vec<SessionRow> {
    rows.sort_by(|a, b| {
        b.priority
            .cmp(&a.priority)
            .then_with(|| a.created_at.cmp(&b.created_at))
    });
    rows
}
