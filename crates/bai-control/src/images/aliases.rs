//! Short names for the images agents have: `bai/python:3.11-bookworm` is also `python` and
//! `python:3.11-bookworm`. Added for every agent that starts or joins, unless the alias exists
//! or an admin removed it; images made from sessions get none (they are launched by reference).
//! Where several images share a short name, bai's own (`bai/…`) takes it, then the first by
//! name: a site's `myteam/python:latest` must not take `python` from `bai/python` because it
//! sorts first (`-` and letters sort before `/`).

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

/// The namespace of the images bai builds (`images/`).
const OWN: &str = "bai/";

/// The short names of these images (the registry's, an agent's).
pub fn register_names(store: &Store, mut names: Vec<&str>) -> Result<(), bai_store::StoreError> {
    names.sort_by_key(|n| (!n.starts_with(OWN), *n));
    for name in names {
        let base = name.rsplit('/').next().unwrap_or(name);
        let repo = base.split(':').next().unwrap_or(base);
        store.add_default_image_alias(base, name)?;
        store.add_default_image_alias(repo, name)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::register_names;
    use bai_store::Store;

    fn alias(store: &Store, a: &str) -> Option<String> {
        let all = store.image_aliases().unwrap();
        all.into_iter().find(|(k, _)| k == a).map(|(_, v)| v)
    }

    #[test]
    fn bais_own_image_takes_the_short_name_from_one_that_sorts_first() {
        let store = Store::open_in_memory().unwrap();
        register_names(
            &store,
            vec![
                "bai/python:3.11-bookworm",
                "bai-manual/python:latest",
                "acme/python:3.11-bookworm",
            ],
        )
        .unwrap();
        assert_eq!(
            alias(&store, "python").as_deref(),
            Some("bai/python:3.11-bookworm")
        );
        assert_eq!(
            alias(&store, "python:3.11-bookworm").as_deref(),
            Some("bai/python:3.11-bookworm")
        );
        // Names bai does not have go to the first by name.
        assert_eq!(
            alias(&store, "python:latest").as_deref(),
            Some("bai-manual/python:latest")
        );
    }
}
