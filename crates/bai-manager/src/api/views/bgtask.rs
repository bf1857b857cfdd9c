//! A background task's events as `GET /events/background-task` sends them.

use bai_api::images::BgTaskEvent;
use bai_ground::bgtask::BgEvent;

/// The event's data as Backend.AI's clients read it.
pub fn event_data(ev: &BgEvent) -> BgTaskEvent {
    BgTaskEvent {
        task_id: ev.task_id.to_string(),
        message: ev.message.clone(),
        current_progress: ev.current_progress,
        total_progress: ev.total_progress,
    }
}
