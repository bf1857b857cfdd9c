//! An image given a configuration of our choosing over the layers it has.
//!
//! The engine's commit merges the container's configuration into the one it is given: every
//! variable and label of the container that the given one does not name is copied into the
//! image (a kernel's `BAI_POOL`, its ids, the agent's labels), and nothing in the commit API
//! removes them. So after a commit the agent loads, under the same reference, an image archive
//! that holds only a manifest and the wanted configuration, naming the committed image's own
//! layers: the engine loads a layer only when it does not have it already, so no layer is read
//! or copied, and the image it makes is the committed one with that configuration. The
//! committed image, left untagged, is then removed.

use super::Engine;
use crate::error::runtime;
use bai_core::agent::AgentError;
use bollard::models::ImageConfig;
use bollard::query_parameters::{ImportImageOptions, RemoveImageOptions};
use futures::StreamExt;
use serde_json::json;

/// Replaces the configuration of the image `reference` with `config`, keeping its layers,
/// platform and creation time.
pub async fn replace(
    engine: &Engine,
    reference: &str,
    config: &ImageConfig,
) -> Result<(), AgentError> {
    let committed = engine
        .docker
        .inspect_image(reference)
        .await
        .map_err(|e| runtime("cannot inspect the committed image", e))?;
    let layers = committed
        .root_fs
        .as_ref()
        .and_then(|r| r.layers.clone())
        .unwrap_or_default();
    let mut doc = json!({
        "architecture": committed.architecture.clone().unwrap_or_else(|| "amd64".into()),
        "os": committed.os.clone().unwrap_or_else(|| "linux".into()),
        "created": serde_json::to_value(&committed.created).unwrap_or_default(),
        "config": config,
        "rootfs": {"type": "layers", "diff_ids": layers},
    });
    if let Some(v) = committed.variant.as_ref().filter(|v| !v.is_empty()) {
        doc["variant"] = json!(v);
    }
    let text = serde_json::to_vec(&doc)
        .map_err(|e| AgentError::Runtime(format!("image configuration: {e}")))?;
    let tar = archive(reference, &text, layers.len())
        .map_err(|e| runtime("cannot write the image archive", e))?;
    let opts = ImportImageOptions {
        quiet: true,
        ..Default::default()
    };
    let mut stream = engine
        .docker
        .import_image(opts, bollard::body_full(tar.into()), None);
    while let Some(item) = stream.next().await {
        let info = item.map_err(|e| runtime("cannot load the image's configuration", e))?;
        if let Some(err) = info.error_detail.and_then(|d| d.message) {
            return Err(AgentError::Runtime(format!(
                "the engine refused the image's configuration: {err}"
            )));
        }
    }
    // The committed image, untagged now (its layers are the new image's too).
    if let Some(old) = committed.id {
        let opts = RemoveImageOptions {
            force: false,
            noprune: true,
            ..Default::default()
        };
        if let Err(e) = engine.docker.remove_image(&old, Some(opts), None).await {
            tracing::warn!(image = %old, error = %e, "cannot remove the committed image's first form");
        }
    }
    Ok(())
}

/// A `docker save` archive of one image, `reference`, whose configuration is `config` and
/// whose `layers` layer entries name no file: the engine has them all.
pub fn archive(reference: &str, config: &[u8], layers: usize) -> std::io::Result<Vec<u8>> {
    let manifest = json!([{
        "Config": "config.json",
        "RepoTags": [reference],
        "Layers": (0..layers).map(|i| format!("{i}/layer.tar")).collect::<Vec<_>>(),
    }]);
    let manifest = serde_json::to_vec(&manifest).map_err(std::io::Error::other)?;
    let mut b = tar::Builder::new(Vec::new());
    for (name, data) in [("config.json", config), ("manifest.json", &manifest[..])] {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        b.append_data(&mut h, name, data)?;
    }
    b.into_inner()
}

#[cfg(test)]
mod tests {
    use super::archive;
    use std::io::Read;

    #[test]
    fn the_archive_holds_the_manifest_and_the_config_only() {
        let tar = archive("bai/python:custom", br#"{"os":"linux"}"#, 3).unwrap();
        let mut a = tar::Archive::new(&tar[..]);
        let mut files = Vec::new();
        for e in a.entries().unwrap() {
            let mut e = e.unwrap();
            let mut text = String::new();
            e.read_to_string(&mut text).unwrap();
            files.push((e.path().unwrap().display().to_string(), text));
        }
        assert_eq!(files.len(), 2);
        assert_eq!(files[0], ("config.json".into(), r#"{"os":"linux"}"#.into()));
        let m: serde_json::Value = serde_json::from_str(&files[1].1).unwrap();
        assert_eq!(m[0]["RepoTags"][0], "bai/python:custom");
        assert_eq!(m[0]["Layers"].as_array().unwrap().len(), 3);
    }
}
