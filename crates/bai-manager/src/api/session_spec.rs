//! A `POST /session` request (read by `bai_api::sessions::read_create`) becomes a
//! [`SessionSpec`] here, at the edge: its preset looked up, then converted by `bai_api`'s pure
//! [`CreateRequest::to_spec`]. Below the edge, the lifecycle plans the spec
//! (`lifecycle::create::plan_spec`) and never sees the wire's request.

use bai_api::sessions::{CreateRequest, SpecContext};
use bai_control::lifecycle::Lifecycle;
use bai_core::{Problem, ResourceSlots, SessionSpec};
use bai_store::PresetRow;

/// The request as a spec, with the preset it names and this cluster's accelerators.
pub fn spec_of(lifecycle: &Lifecycle, req: &CreateRequest) -> Result<SessionSpec, Problem> {
    let presets = match req.preset_name() {
        Some(_) => lifecycle.store.presets()?,
        None => Vec::new(),
    };
    let preset = req
        .preset_name()
        .map(|name| named_preset(&presets, name))
        .transpose()?;
    let accel = lifecycle.agents.accel_slots();
    let mut reserved: Vec<u16> = bai_ground::apps::INTRINSIC.iter().map(|a| a.port).collect();
    reserved.push(bai_core::cluster::RUNNER_PORT);
    req.to_spec(&SpecContext {
        preset,
        accel_slots: &accel,
        reserved_ports: &reserved,
        now: chrono::Utc::now(),
    })
}

/// The preset `name`'s slots and shared memory, or 404 naming the presets there are.
fn named_preset<'a>(
    presets: &'a [PresetRow],
    name: &str,
) -> Result<(&'a ResourceSlots, Option<u64>), Problem> {
    if let Some(p) = presets.iter().find(|p| p.name == name) {
        return Ok((&p.slots, p.shmem));
    }
    let names: Vec<&str> = presets.iter().map(|p| p.name.as_str()).collect();
    Err(Problem::not_found(
        "resource-preset",
        format!(
            "no resource preset named {name:?}; presets: {}",
            if names.is_empty() {
                "none defined".to_string()
            } else {
                names.join(", ")
            }
        ),
    ))
}
