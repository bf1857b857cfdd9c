//! The kernel images of an engine.

use super::{Engine, LABEL_KERNELSPEC};
use crate::error::runtime;
use bai_core::agent::{AgentError, ImageInfo};
use bollard::query_parameters::ListImagesOptions;
use std::collections::{BTreeMap, HashMap};

/// Local images labelled as kernels (`ai.backend.kernelspec`), one entry for each of an
/// image's names: a second tag (a registry's, an alias) is one more name of the same image,
/// never one that hides the others (an image named by its first tag alone vanished from the
/// catalogue while a registry tag of it existed).
pub async fn images(engine: &Engine) -> Result<Vec<ImageInfo>, AgentError> {
    let mut filters = HashMap::new();
    filters.insert("label".to_string(), vec![LABEL_KERNELSPEC.to_string()]);
    let opts = ListImagesOptions {
        filters: Some(filters),
        ..Default::default()
    };
    let list = engine
        .docker
        .list_images(Some(opts))
        .await
        .map_err(|e| runtime("cannot list images", e))?;
    Ok(list
        .into_iter()
        .flat_map(|img| {
            let labels = img.labels.into_iter().collect::<BTreeMap<_, _>>();
            let size_bytes = u64::try_from(img.size).unwrap_or(0);
            let digest = img.id;
            img.repo_tags
                .into_iter()
                .filter(|t| t.as_str() != "<none>:<none>")
                .map(move |name| ImageInfo {
                    name,
                    digest: digest.clone(),
                    labels: labels.clone(),
                    size_bytes,
                })
        })
        .collect())
}
