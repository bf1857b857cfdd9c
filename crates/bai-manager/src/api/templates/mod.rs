//! Session templates (`/template/session`, Backend.AI's task templates) and creating a
//! session from one (`POST /session/_/create-from-template`).
//!
//! `payload`: reading and checking a template payload (JSON or YAML); `crud`: storing,
//! listing, showing, replacing and deleting templates; `from_template`: a create request made
//! of a template and the call's fields. A template is its owner's: only they (and
//! administrators) see, use, change or delete it.

mod crud;
mod from_template;
mod payload;

pub use crud::{create, delete, get, list, put};
pub use from_template::create_from_template;

use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use bai_core::Problem;
use bai_store::TemplateRow;
use uuid::Uuid;

fn not_found(id: &str) -> Problem {
    Problem::not_found(
        "task-template",
        format!("no session template {id:?} is visible to you"),
    )
}

/// The template `id` names (hex or hyphenated) if the caller owns it or is an administrator;
/// 404 otherwise, as if it did not exist.
fn visible_template(m: &Manager, caller: &Caller, id: &str) -> ApiResult<TemplateRow> {
    let key = Uuid::parse_str(id.trim())
        .map_err(|_| not_found(id))?
        .simple()
        .to_string();
    match m.store.template(&key)? {
        Some(t) if caller.is_admin || t.user_id == caller.user_id => Ok(t),
        _ => Err(not_found(id).into()),
    }
}
