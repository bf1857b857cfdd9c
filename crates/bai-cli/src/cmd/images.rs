//! `bai images`, `bai image forget|purge`, `bai admin image …`, and `bai session commit |
//! convert-to-image` (followed to their end with a progress bar on a terminal).

use crate::args::{AdminImageCmd, ImageCmd, ImagesArgs};
use crate::output::{spinner, table};
use anyhow::{Result, anyhow, bail};
use bai_api::images::Image;
use bai_client::Client;
use futures::StreamExt;

fn size(bytes: Option<u64>) -> String {
    match bytes {
        Some(b) if b >= 1 << 30 => format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
        Some(b) if b >= 1 << 20 => format!("{:.0} MiB", b as f64 / (1u64 << 20) as f64),
        Some(b) => format!("{b} B"),
        None => "-".into(),
    }
}

fn or_dash(s: &Option<String>) -> String {
    s.clone()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "-".into())
}

pub async fn list(client: &Client, a: &ImagesArgs, admin: bool) -> Result<i32> {
    let images = client.images(a.customized).await?;
    if crate::output::json_items(&images) {
        return Ok(0);
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&images)?);
        return Ok(0);
    }
    let rows: Vec<Vec<String>> = images
        .iter()
        .map(|i| {
            let mut row = vec![
                or_dash(&i.canonical_name),
                i.label("ai.backend.customized-image.name")
                    .map(|n| format!("{n} (Customized)"))
                    .unwrap_or_else(|| i.aliases.clone().unwrap_or_default().join(", ")),
                i.resource_limits
                    .clone()
                    .unwrap_or_default()
                    .iter()
                    .map(|l| format!("{}={}", l.key, l.min.clone().unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join(" "),
                i.apps.clone().unwrap_or_default().join(", "),
                size(i.size_bytes),
            ];
            if admin || a.customized {
                row.push(i.installed_agents.clone().unwrap_or_default().join(", "));
                row.push(or_dash(&i.id));
            }
            row
        })
        .collect();
    let mut headers = vec!["Image", "Aliases / name", "Minimum", "Apps", "Size"];
    if admin || a.customized {
        headers.extend(["Agents", "Id"]);
    }
    table(&headers, &rows);
    Ok(0)
}

/// An image the caller sees, by id, reference or (customized) name.
async fn find(client: &Client, key: &str) -> Result<Image> {
    let images = client.images(false).await?;
    images
        .into_iter()
        .find(|i| {
            i.id.as_deref() == Some(key)
                || i.canonical_name.as_deref() == Some(key)
                || i.label("ai.backend.customized-image.name") == Some(key)
        })
        .ok_or_else(|| anyhow!("no image {key:?} is visible to you (see `bai images`)"))
}

async fn by_id(client: &Client, field: &str, key: &str) -> Result<Image> {
    let img = find(client, key).await?;
    let id = img.id.clone().unwrap_or_default();
    client.image_mutation(field, &[("image_id", &id)]).await?;
    Ok(img)
}

pub async fn image(client: &Client, c: &ImageCmd) -> Result<i32> {
    match c {
        ImageCmd::List(a) => list(client, a, false).await,
        ImageCmd::Forget { image } => {
            let i = by_id(client, "forget_image_by_id", image).await?;
            println!("Image {} is forgotten.", or_dash(&i.canonical_name));
            Ok(0)
        }
        ImageCmd::Purge { image } => {
            let i = by_id(client, "purge_image_by_id", image).await?;
            println!("Image {} is purged.", or_dash(&i.canonical_name));
            Ok(0)
        }
    }
}

pub async fn admin_image(client: &Client, c: &AdminImageCmd) -> Result<i32> {
    match c {
        AdminImageCmd::List(a) => list(client, a, true).await,
        AdminImageCmd::Alias { alias, target } => {
            client
                .image_mutation("alias_image", &[("alias", alias), ("target", target)])
                .await?;
            println!("Alias {alias} now names {target}.");
            Ok(0)
        }
        AdminImageCmd::Dealias { alias } => {
            client
                .image_mutation("dealias_image", &[("alias", alias)])
                .await?;
            println!("Alias {alias} is removed.");
            Ok(0)
        }
        AdminImageCmd::Forget { image } => {
            let i = by_id(client, "forget_image_by_id", image).await?;
            println!("Image {} is forgotten.", or_dash(&i.canonical_name));
            Ok(0)
        }
        AdminImageCmd::Purge { image } => {
            let i = by_id(client, "purge_image_by_id", image).await?;
            println!("Image {} is purged.", or_dash(&i.canonical_name));
            Ok(0)
        }
        AdminImageCmd::Rescan => {
            let v = client
                .gql(
                    "mutation { rescan_images { ok msg task_id } }",
                    serde_json::json!({}),
                )
                .await?;
            println!(
                "Rescanned the agents' images ({}).",
                v["rescan_images"]["task_id"].as_str().unwrap_or("-")
            );
            Ok(0)
        }
    }
}

/// Follows a background task to its end; returns the done message.
pub(crate) async fn follow(
    client: &Client,
    task_id: &str,
    what: &str,
    quiet: bool,
) -> Result<String> {
    let mut events = client.bgtask_events(task_id).await?;
    let pb = spinner(what, quiet);
    let mut outcome: Option<Result<String>> = None;
    while let Some(ev) = events.next().await {
        let ev = ev?;
        let data = ev.json().unwrap_or_default();
        let msg = data["message"].as_str().unwrap_or_default().to_string();
        match ev.name.as_str() {
            "bgtask_updated" => {
                if let Some(pb) = &pb {
                    pb.set_message(format!("{what}: {msg}"));
                }
            }
            "bgtask_done" => outcome = Some(Ok(msg)),
            "bgtask_failed" => outcome = Some(Err(anyhow!("{msg}"))),
            "bgtask_cancelled" => outcome = Some(Err(anyhow!("cancelled: {msg}"))),
            _ => {}
        }
    }
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    outcome.unwrap_or_else(|| bail!("the task's event stream ended without an outcome"))
}

pub async fn commit(client: &Client, reference: &str) -> Result<i32> {
    let s = client.commit_session(reference).await?;
    follow(client, &s.bgtask_id, "committing", false).await?;
    println!(
        "Session {reference} is committed: {} on its agent (kernel {}).",
        s.path, s.kernel
    );
    Ok(0)
}

pub async fn convert(client: &Client, reference: &str, name: &str) -> Result<i32> {
    let s = client.convert_to_image(reference, name).await?;
    let id = follow(client, &s.task_id, "converting to an image", false).await?;
    let reference_out = client
        .images(true)
        .await?
        .into_iter()
        .find(|i| i.id.as_deref() == Some(id.as_str()))
        .and_then(|i| i.canonical_name)
        .unwrap_or_else(|| id.clone());
    println!("Image {name} is ready: {reference_out}");
    eprintln!("note: /home/work and mounted folders are not part of the image.");
    Ok(0)
}
