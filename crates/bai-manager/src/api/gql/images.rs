//! GraphQL of the image catalogue, as the official client's `image` and `admin image`
//! commands ask: `images`, `image`, `customized_images`; `alias_image`, `dealias_image`,
//! `forget_image`, `forget_image_by_id`, `purge_image_by_id`, `untag_image_from_registry`,
//! `rescan_images`. Users see the general images and their own customized ones; only admins
//! change general images; owners forget and purge their own.

use super::{db, err};
use crate::auth::Caller;
use crate::state::Manager;
use bai_control::images::{CatalogueImage, catalogue};
use bai_gql::{FieldError, OperationKind};
use serde_json::{Map, Value, json};
use std::sync::Arc;

fn arg<'a>(args: &'a Map<String, Value>, k: &str) -> Option<&'a str> {
    args.get(k).and_then(Value::as_str)
}

/// One image as Backend.AI's `ImageNode` / `Image` type.
pub fn image_json(i: &CatalogueImage) -> Value {
    let labels: Vec<Value> = i
        .labels
        .iter()
        .map(|(k, v)| json!({"key": k, "value": v}))
        .collect();
    let limits: Vec<Value> = i
        .min_resources()
        .into_iter()
        .map(|(k, v)| json!({"key": k, "min": v, "max": Value::Null}))
        .collect();
    let humanized = i
        .customized
        .as_ref()
        .map(|c| format!("{} (Customized)", c.name))
        .unwrap_or_else(|| i.reference.clone());
    json!({
        "id": i.id.to_string(),
        "row_id": i.id.to_string(),
        "name": i.name,
        "namespace": i.name,
        "base_image_name": i.name.rsplit('/').next().unwrap_or(&i.name),
        "humanized_name": humanized,
        "registry": i.registry,
        "project": i.name.split('/').next().unwrap_or(""),
        "tag": i.tag,
        "architecture": i.architecture,
        "digest": i.digest,
        "size_bytes": i.size_bytes,
        "aliases": i.aliases,
        "labels": labels,
        "resource_limits": limits,
        "supported_accelerators": ["cuda", "mock"],
        "installed": !i.agents.is_empty(),
        "installed_agents": i.agents,
        "in_registry": i.in_registry,
        "is_local": i.registry == "local",
        "status": "ALIVE",
        "type": if i.labels.get("ai.backend.role").map(String::as_str) == Some("SYSTEM") { "system" } else { "compute" },
        "tags": i.customized.as_ref().map(|_| vec![json!({"key": "Customized", "value": ""})]).unwrap_or_default(),
        "canonical_name": i.reference,
        "reference": i.reference,
        "apps": i.apps(),
        "last_used_at": Value::Null,
    })
}

fn visible(m: &Manager, caller: &Caller) -> Vec<CatalogueImage> {
    catalogue(&m.images.sources())
        .into_iter()
        .filter(|i| i.visible_to(&caller.user_id, caller.is_admin))
        .collect()
}

/// An image by its id or its reference (with or without `:latest`), as the caller sees it.
fn find(m: &Manager, caller: &Caller, key: &str) -> Result<CatalogueImage, FieldError> {
    let with_latest = format!("{key}:latest");
    visible(m, caller)
        .into_iter()
        .find(|i| i.id.to_string() == key || i.reference == key || i.reference == with_latest)
        .ok_or_else(|| err(format!("no image {key:?} is visible to you")))
}

fn may_change(caller: &Caller, i: &CatalogueImage) -> Result<(), FieldError> {
    match &i.customized {
        _ if caller.is_admin => Ok(()),
        Some(c) if c.owner_user_id == caller.user_id => Ok(()),
        Some(_) => Err(err("only the image's owner or an admin may change it")),
        None => Err(err(
            "only administrators may change general images; you may forget or purge the \
             images you made from your sessions",
        )),
    }
}

fn ok(msg: impl Into<String>) -> Value {
    json!({"ok": true, "msg": msg.into()})
}

/// Hides an image: a customized one leaves its owner's list (and quota); a general one the
/// catalogue. The engines keep it.
fn forget(m: &Manager, i: &CatalogueImage) -> Result<(), FieldError> {
    if let Some(c) = &i.customized {
        m.store.delete_customized_image(c.id).map_err(db)?;
    }
    m.store.forget_image(&i.reference).map_err(db)
}

/// Removes an image from every agent that holds it, then from the catalogue.
fn purge(m: &Arc<Manager>, i: &CatalogueImage) -> Result<(), FieldError> {
    let handle = tokio::runtime::Handle::current();
    for agent_id in &i.agents {
        let Some(a) = m.agents.get(agent_id) else {
            continue;
        };
        handle
            .block_on(a.rpc.remove_image(i.reference.clone()))
            .map_err(|e| err(format!("agent {agent_id} cannot remove the image: {e}")))?;
        handle.block_on(bai_control::images::refresh_agent(&m.agents, agent_id));
    }
    if let Some(c) = &i.customized {
        m.store.delete_customized_image(c.id).map_err(db)?;
    }
    Ok(())
}

pub fn resolve(
    m: &Arc<Manager>,
    caller: &Caller,
    kind: OperationKind,
    field: &str,
    args: &Map<String, Value>,
) -> Result<Value, FieldError> {
    match (kind, field) {
        (OperationKind::Query, "images") => {
            let filters: Vec<String> = args
                .get("load_filters")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_ascii_lowercase)
                        .collect()
                })
                .unwrap_or_default();
            let list: Vec<Value> = visible(m, caller)
                .iter()
                .filter(|i| {
                    filters.is_empty()
                        || (i.customized.is_some() && filters.iter().any(|f| f == "customized"))
                        || (i.customized.is_none()
                            && filters.iter().any(|f| f == "general" || f == "operational"))
                })
                .map(image_json)
                .collect();
            Ok(Value::Array(list))
        }
        (OperationKind::Query, "customized_images") => Ok(Value::Array(
            visible(m, caller)
                .iter()
                .filter(|i| i.customized.is_some())
                .map(image_json)
                .collect(),
        )),
        (OperationKind::Query, "image") => {
            let key = arg(args, "id")
                .or_else(|| arg(args, "reference"))
                .ok_or_else(|| err("name the image: id or reference"))?;
            Ok(image_json(&find(m, caller, key)?))
        }
        (OperationKind::Mutation, "alias_image") => {
            if !caller.is_admin {
                return Err(err("only administrators may alias images"));
            }
            let alias = arg(args, "alias").unwrap_or_default().trim();
            let target = arg(args, "target").unwrap_or_default();
            if alias.is_empty() || alias.contains(char::is_whitespace) {
                return Err(err("alias must be a non-empty name without spaces"));
            }
            let i = find(m, caller, target)?;
            if i.customized.is_some() {
                return Err(err(
                    "images made from sessions are private: they cannot have an alias",
                ));
            }
            m.store.set_image_alias(alias, &i.reference).map_err(db)?;
            Ok(ok(format!("{alias} now names {}", i.reference)))
        }
        (OperationKind::Mutation, "dealias_image") => {
            if !caller.is_admin {
                return Err(err("only administrators may remove image aliases"));
            }
            let alias = arg(args, "alias").unwrap_or_default();
            if !m.store.remove_image_alias(alias).map_err(db)? {
                return Err(err(format!("there is no image alias {alias:?}")));
            }
            Ok(ok(format!("alias {alias} removed")))
        }
        (OperationKind::Mutation, "forget_image" | "forget_image_by_id") => {
            let key = arg(args, "image_id")
                .or_else(|| arg(args, "reference"))
                .ok_or_else(|| err("name the image: image_id or reference"))?;
            let i = find(m, caller, key)?;
            may_change(caller, &i)?;
            forget(m, &i)?;
            Ok(json!({"ok": true, "msg": "", "image": image_json(&i)}))
        }
        (OperationKind::Mutation, "purge_image_by_id" | "untag_image_from_registry") => {
            let key = arg(args, "image_id").ok_or_else(|| err("image_id is required"))?;
            let i = find(m, caller, key)?;
            may_change(caller, &i)?;
            purge(m, &i)?;
            Ok(json!({"ok": true, "msg": "", "image": image_json(&i)}))
        }
        (OperationKind::Mutation, "rescan_images") => {
            if !caller.is_admin {
                return Err(err("only administrators may rescan images"));
            }
            let task = m.bgtasks.start(&caller.access_key);
            let handle = tokio::runtime::Handle::current();
            let agents = m.agents.all();
            handle.block_on(bai_control::images::registry::refresh(&m.images));
            for a in &agents {
                handle.block_on(bai_control::images::refresh_agent(&m.agents, &a.id));
                if let Err(e) = bai_control::images::aliases::register(&m.store, &a.info()) {
                    tracing::warn!(agent = %a.id, error = %e, "cannot register image aliases");
                }
            }
            task.done(format!("read the images of {} agents", agents.len()));
            Ok(json!({"ok": true, "msg": "", "task_id": task.id.to_string()}))
        }
        _ => Err(err(format!(
            "field {field:?} is not available on this server"
        ))),
    }
}

/// Whether `field` is one of the catalogue's.
pub fn handles(field: &str) -> bool {
    matches!(
        field,
        "images"
            | "image"
            | "customized_images"
            | "alias_image"
            | "dealias_image"
            | "forget_image"
            | "forget_image_by_id"
            | "purge_image_by_id"
            | "untag_image_from_registry"
            | "rescan_images"
    )
}
