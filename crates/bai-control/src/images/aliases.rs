//! Short names for the images agents have: `bai/python:3.11-bookworm` is also `python` and
//! `python:3.11-bookworm`. Added for every agent that starts or joins, unless the alias exists
//! or an admin removed it; images made from sessions get none (they are launched by reference).

use bai_core::agent::AgentInfo;
use bai_store::Store;

pub fn register(store: &Store, info: &AgentInfo) -> Result<(), bai_store::StoreError> {
    let names: Vec<&str> = info
        .images
        .iter()
        .filter(|i| !i.labels.contains_key(super::LABEL_OWNER))
        .map(|i| i.name.as_str())
        .collect();
    register_names(store, names)
}

/// The short names of these images (the registry's, an agent's).
pub fn register_names(store: &Store, mut names: Vec<&str>) -> Result<(), bai_store::StoreError> {
    names.sort();
    for name in names {
        let base = name.rsplit('/').next().unwrap_or(name);
        let repo = base.split(':').next().unwrap_or(base);
        store.add_default_image_alias(base, name)?;
        store.add_default_image_alias(repo, name)?;
    }
    Ok(())
}
