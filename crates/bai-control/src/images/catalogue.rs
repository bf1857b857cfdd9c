//! The image catalogue: every kernel image some agent holds, with its labels, aliases and
//! agents, less the ones an admin forgot; images made from sessions carry their owner and are
//! seen and launched only by their owner (and admins).

use super::reference::{image_id, split};
use super::registry_view::RegistryView;
use bai_ground::agents::Agents;
use bai_store::{CustomizedImageRow, Store};
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// Labels an image made from a session carries (Backend.AI's names).
pub const LABEL_OWNER: &str = "ai.backend.customized-image.owner";
pub const LABEL_NAME: &str = "ai.backend.customized-image.name";
pub const LABEL_ID: &str = "ai.backend.customized-image.id";
pub const LABEL_EMAIL: &str = "ai.backend.customized-image.user.email";

#[derive(Debug, Clone, PartialEq)]
pub struct CatalogueImage {
    pub id: Uuid,
    pub reference: String,
    pub registry: String,
    pub name: String,
    pub tag: String,
    pub architecture: String,
    pub digest: String,
    pub size_bytes: u64,
    pub labels: BTreeMap<String, String>,
    pub aliases: Vec<String>,
    /// Agents whose engine holds it.
    pub agents: Vec<String>,
    /// The cluster's registry holds it (agents that lack it pull it).
    pub in_registry: bool,
    /// Set for an image made from a session.
    pub customized: Option<CustomizedImageRow>,
}

impl CatalogueImage {
    pub fn visible_to(&self, user_id: &str, is_admin: bool) -> bool {
        match &self.customized {
            None => true,
            Some(c) => is_admin || c.owner_user_id == user_id,
        }
    }

    /// Minimum resources its labels ask for (`cpu`, `mem`, …: the label's text).
    pub fn min_resources(&self) -> BTreeMap<String, String> {
        self.labels
            .iter()
            .filter_map(|(k, v)| {
                k.strip_prefix("ai.backend.resource.min.")
                    .map(|s| (s.to_string(), v.clone()))
            })
            .collect()
    }

    /// Its apps (`name:protocol:port` of the service-ports label), intrinsic ones aside.
    pub fn apps(&self) -> Vec<String> {
        self.labels
            .get("ai.backend.service-ports")
            .map(|s| {
                s.split(',')
                    .filter_map(|p| p.split(':').next())
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// What the catalogue is read from: the store (aliases, forgotten and customized images),
/// the agents' images and the registry's.
pub struct Sources<'a> {
    pub store: &'a Store,
    pub agents: &'a Agents,
    pub registry: &'a RegistryView,
}

/// The whole catalogue, sorted by reference.
pub fn catalogue(sources: &Sources<'_>) -> Vec<CatalogueImage> {
    let forgotten: BTreeSet<String> = sources
        .store
        .forgotten_images()
        .unwrap_or_default()
        .into_iter()
        .collect();
    let customized: BTreeMap<String, CustomizedImageRow> = sources
        .store
        .customized_images()
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.reference.clone(), c))
        .collect();
    let aliases = sources.store.image_aliases().unwrap_or_default();
    let mut out: BTreeMap<String, CatalogueImage> = BTreeMap::new();
    for a in sources.agents.all() {
        let info = a.info();
        for img in info.images {
            if forgotten.contains(&img.name) {
                continue;
            }
            let custom = customized.get(&img.name).cloned();
            // An image made from a session that the catalogue no longer records was purged.
            if custom.is_none() && img.labels.contains_key(LABEL_OWNER) {
                continue;
            }
            let e = out
                .entry(img.name.clone())
                .or_insert_with(|| entry(&img.name, &info.architecture, custom, &aliases));
            if e.digest.is_empty() {
                e.digest = img.digest.clone();
            }
            e.size_bytes = e.size_bytes.max(img.size_bytes);
            if e.labels.is_empty() {
                e.labels = img.labels.clone();
            }
            if !e.agents.contains(&info.id) {
                e.agents.push(info.id.clone());
            }
        }
    }
    // What the registry holds (its labels are known once an agent has pulled it).
    for reference in sources.registry.references() {
        // A customized image the catalogue no longer records was purged.
        let custom = customized.get(&reference).cloned();
        if forgotten.contains(&reference)
            || (custom.is_none() && super::reference::is_customized(&reference))
        {
            continue;
        }
        out.entry(reference.clone())
            .or_insert_with(|| entry(&reference, std::env::consts::ARCH, custom, &aliases))
            .in_registry = true;
    }
    // Recorded images whose agent is away are still theirs (and still count).
    for (reference, c) in customized {
        if !out.contains_key(&reference) && !forgotten.contains(&reference) {
            let mut e = entry(
                &reference,
                std::env::consts::ARCH,
                Some(c.clone()),
                &aliases,
            );
            e.size_bytes = c.size_bytes;
            out.insert(reference, e);
        }
    }
    out.into_values().collect()
}

fn entry(
    reference: &str,
    arch: &str,
    customized: Option<CustomizedImageRow>,
    aliases: &[(String, String)],
) -> CatalogueImage {
    let parts = split(reference);
    CatalogueImage {
        id: customized
            .as_ref()
            .map(|c| c.id)
            .unwrap_or_else(|| image_id(reference)),
        reference: reference.to_string(),
        registry: parts.registry,
        name: parts.name,
        tag: parts.tag,
        architecture: arch.to_string(),
        digest: String::new(),
        size_bytes: 0,
        labels: BTreeMap::new(),
        aliases: aliases
            .iter()
            .filter(|(_, i)| i == reference)
            .map(|(a, _)| a.clone())
            .collect(),
        agents: Vec::new(),
        in_registry: false,
        customized,
    }
}

/// Finds an image for a launch by `user_id`: an alias, a reference (`:latest` when it has no
/// tag), the canonical `REGISTRY/NAME:TAG` the image list shows (`local/` for images without a
/// registry) or an image id; others' customized images and forgotten ones are not found. Only
/// images some agent or the cluster's registry holds are returned.
pub fn resolve(
    sources: &Sources<'_>,
    requested: &str,
    user_id: &str,
    is_admin: bool,
) -> Option<String> {
    resolve_exact(sources, requested, user_id, is_admin).or_else(|| {
        requested
            .strip_prefix("local/")
            .and_then(|rest| resolve_exact(sources, rest, user_id, is_admin))
    })
}

fn resolve_exact(
    sources: &Sources<'_>,
    requested: &str,
    user_id: &str,
    is_admin: bool,
) -> Option<String> {
    let target = sources
        .store
        .image_aliases()
        .ok()
        .and_then(|a| {
            a.into_iter()
                .find(|(al, _)| al == requested)
                .map(|(_, i)| i)
        })
        .unwrap_or_else(|| requested.to_string());
    let with_latest = if split(&target).tag == "latest" && !target.ends_with(":latest") {
        format!("{target}:latest")
    } else {
        target.clone()
    };
    catalogue(sources)
        .into_iter()
        .filter(|i| i.visible_to(user_id, is_admin) && (!i.agents.is_empty() || i.in_registry))
        .find(|i| i.reference == target || i.reference == with_latest || i.id.to_string() == target)
        .map(|i| i.reference)
}

/// Launchable names for `user_id` (for "no such image" messages).
pub fn known(sources: &Sources<'_>, user_id: &str, is_admin: bool) -> Vec<String> {
    let cat = catalogue(sources);
    let mut names: Vec<String> = cat
        .iter()
        .filter(|i| i.visible_to(user_id, is_admin))
        .flat_map(|i| std::iter::once(i.reference.clone()).chain(i.aliases.clone()))
        .collect();
    names.sort();
    names.dedup();
    names
}
