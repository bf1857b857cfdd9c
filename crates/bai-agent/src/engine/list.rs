//! The kernel images of an engine.

use super::{Engine, LABEL_KERNELSPEC};
use crate::error::runtime;
use bai_core::agent::{AgentError, ImageInfo};
use bollard::query_parameters::ListImagesOptions;
use std::collections::{BTreeMap, HashMap};

/// Local images labelled as kernels (`ai.backend.kernelspec`), named by their first tag.
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
        .filter_map(|img| {
            let name = img
                .repo_tags
                .iter()
                .find(|t| t.as_str() != "<none>:<none>")?
                .clone();
            Some(ImageInfo {
                name,
                digest: img.id,
                labels: img.labels.into_iter().collect::<BTreeMap<_, _>>(),
                size_bytes: u64::try_from(img.size).unwrap_or(0),
            })
        })
        .collect())
}
