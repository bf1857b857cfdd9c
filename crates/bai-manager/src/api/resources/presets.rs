//! Resource presets: the listing, which presets fit now, and the administrators' management.

use super::{check_name, slots_of, typed_body};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use bai_api::resources::{
    Amount, NewPreset, Preset, PresetCheck, PresetFit, PresetFits, PresetList,
    ResourceSlots as WireSlots,
};
use bai_control::scheduler::snapshot::Occupancy;
use bai_core::Problem;
use bai_core::resources::{ResourceSlots, parse_mem};
use bai_store::PresetRow;
use std::sync::Arc;

fn preset_view(p: &PresetRow) -> Preset {
    Preset {
        name: p.name.clone(),
        resource_slots: WireSlots::from(&p.slots),
        shared_memory: p.shmem.map(|s| s.to_string()),
    }
}

/// `GET /resource/presets`.
pub async fn list_presets(State(m): State<Arc<Manager>>) -> ApiResult<Json<PresetList>> {
    let presets = m.store.presets()?.iter().map(preset_view).collect();
    Ok(Json(PresetList { presets }))
}

/// `POST /admin/resource-presets`: creates or replaces a preset.
pub async fn put_preset(
    State(m): State<Arc<Manager>>,
    body: axum::body::Bytes,
) -> ApiResult<(StatusCode, Json<Preset>)> {
    let req: NewPreset = typed_body(&body)?;
    check_name("preset", &req.name)?;
    let slots = slots_of(&req.resource_slots, &m.agents.accel_slots())?;
    if slots.cpu_milli == 0 || slots.mem == 0 {
        return Err(Problem::invalid("a preset needs both cpu and mem").into());
    }
    let shmem = match &req.shared_memory {
        None => None,
        Some(a) => Some(
            parse_mem("shared_memory", &amount_text(a))
                .map_err(|e| Problem::invalid(e.to_string()))?,
        ),
    };
    if shmem.is_some_and(|s| s >= slots.mem) {
        return Err(Problem::invalid("mem must be larger than the shared_memory it holds").into());
    }
    let p = PresetRow {
        name: req.name,
        slots,
        shmem,
    };
    m.store.put_preset(&p)?;
    Ok((StatusCode::CREATED, Json(preset_view(&p))))
}

/// An amount as the parsers of `bai_core::resources` read it.
fn amount_text(a: &Amount) -> String {
    match a {
        Amount::Number(n) => n.to_string(),
        Amount::Text(t) => t.clone(),
    }
}

pub async fn delete_preset(
    State(m): State<Arc<Manager>>,
    Path(name): Path<String>,
) -> ApiResult<StatusCode> {
    if !m.store.delete_preset(&name)? {
        return Err(Problem::not_found("resource-preset", format!("no preset {name:?}")).into());
    }
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /resource/check-presets`: which presets fit right now for the caller, in a group.
pub async fn check_presets(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    body: axum::body::Bytes,
) -> ApiResult<Json<PresetFits>> {
    let req: PresetCheck = typed_body(&body)?;
    let groups = m.store.groups_for(&caller.access_key)?;
    let group = match req.scaling_group.as_deref() {
        Some(g) => groups
            .iter()
            .find(|x| x.name == g)
            .ok_or_else(|| Problem::invalid(format!("resource group {g:?} is not open to you")))?,
        None => groups
            .iter()
            .find(|x| x.name == "default")
            .or(groups.first())
            .ok_or_else(|| Problem::invalid("no resource group is open to you"))?,
    };
    let occupancy = Occupancy::read(&m.store)?;
    let used = &occupancy.by_agent;
    let frees: Vec<ResourceSlots> = m
        .agents
        .all()
        .iter()
        .filter(|a| a.info().scaling_group == group.name && a.is_alive())
        .map(|a| {
            a.info()
                .capacity
                .checked_sub(&used.get(&a.id).cloned().unwrap_or_default())
        })
        .collect();
    let group_remaining = frees.iter().fold(ResourceSlots::default(), |t, f| t.add(f));
    let policy = m.store.policy_of(&caller.access_key)?;
    let using = occupancy.of_owner(&caller.access_key);
    let limits = policy.total_slots.clone();
    let remaining = limits.as_ref().map(|l| {
        let mut r = l.checked_sub(&using);
        // A zero in the limit means "not limited".
        if l.cpu_milli == 0 {
            r.cpu_milli = u64::MAX;
        }
        if l.mem == 0 {
            r.mem = u64::MAX;
        }
        r
    });
    let presets = m
        .store
        .presets()?
        .iter()
        .map(|p| PresetFit {
            preset: preset_view(p),
            allocatable: frees.iter().any(|f| p.slots.fits_in(f))
                && remaining.as_ref().is_none_or(|r| p.slots.fits_in(r)),
        })
        .collect();
    Ok(Json(PresetFits {
        presets,
        scaling_group: group.name.clone(),
        keypair_limits: or_infinity(limits.as_ref()),
        keypair_using: WireSlots::from(&using),
        keypair_remaining: or_infinity(remaining.as_ref()),
        scaling_group_remaining: WireSlots::from(&group_remaining),
    }))
}

/// Slots as `check-presets` prints a limit: `"Infinity"` where nothing limits (no slots,
/// or an amount past any real one, the `u64::MAX` of "not limited").
fn or_infinity(s: Option<&ResourceSlots>) -> WireSlots {
    let infinity = || "Infinity".to_string();
    match s {
        Some(s) => {
            let mut w = WireSlots::from(s);
            for v in [&mut w.cpu, &mut w.mem]
                .into_iter()
                .chain(w.accelerators.values_mut())
            {
                if v.len() > 15 {
                    *v = infinity();
                }
            }
            w
        }
        None => WireSlots {
            cpu: infinity(),
            mem: infinity(),
            accelerators: Default::default(),
        },
    }
}
