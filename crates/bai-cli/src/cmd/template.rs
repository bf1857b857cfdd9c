//! `bai template …` and `bai session create-from-template`.

use crate::args::{FromTemplateArgs, TemplateCmd, TemplateFormat, environ, resources};
use crate::cmd::create::{Outcome, failure, outcome};
use crate::output::{json_items, table};
use anyhow::{Result, anyhow};
use bai_client::Client;
use serde_json::{Map, Value, json};
use std::path::Path;

fn payload(file: Option<&Path>) -> Result<String> {
    super::file_or_stdin(file, "the template")
}

pub async fn template(client: &Client, c: &TemplateCmd) -> Result<i32> {
    match c {
        TemplateCmd::Create { file, project } => {
            let text = payload(file.as_deref())?;
            for id in client.create_templates(&text, project.as_deref()).await? {
                println!("Session template {id} stored.");
            }
        }
        TemplateCmd::List { all } => {
            let list = client.templates(*all).await?;
            if json_items(&list) {
                return Ok(0);
            }
            if list.is_empty() {
                println!("There are no session templates.");
                return Ok(0);
            }
            let rows: Vec<Vec<String>> = list
                .iter()
                .map(|t| {
                    vec![
                        t.name.clone(),
                        t.id.clone(),
                        t.template.spec.kernel.image.clone(),
                        t.template
                            .spec
                            .session_type
                            .map(|s| s.as_str())
                            .unwrap_or("interactive")
                            .to_string(),
                        t.user_email.clone().unwrap_or_else(|| t.user.clone()),
                        t.group_name.clone().unwrap_or_default(),
                        t.created_at.clone(),
                    ]
                })
                .collect();
            table(
                &["Name", "ID", "Image", "Type", "Owner", "Project", "Created"],
                &rows,
            );
        }
        TemplateCmd::Get { id, format } => match format {
            TemplateFormat::Yaml => print!("{}", client.template_yaml(id).await?),
            TemplateFormat::Json => {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&client.template(id).await?)?
                )
            }
        },
        TemplateCmd::Update { id, file } => {
            let text = payload(file.as_deref())?;
            client.update_template(id, &text).await?;
            println!("Session template {id} updated.");
        }
        TemplateCmd::Delete { id } => {
            client.delete_template(id).await?;
            println!("Session template {id} deleted.");
        }
    }
    Ok(0)
}

/// The `POST /session` fields the options give (only those given).
pub fn overrides(a: &FromTemplateArgs) -> Result<Map<String, Value>> {
    let mut o = Map::new();
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            o.insert(k.into(), v);
        }
    };
    if let Some(n) = &a.name {
        bai_core::SessionName::parse(n).map_err(|e| anyhow!("{e}"))?;
    }
    put("name", a.name.as_ref().map(|v| json!(v)));
    put("type", a.session_type.map(|t| json!(t.as_str())));
    put("image", a.image.as_ref().map(|v| json!(v)));
    put(
        "startupCommand",
        a.startup_command.as_ref().map(|v| json!(v)),
    );
    put("clusterSize", a.cluster_size.map(|v| json!(v)));
    put("clusterMode", a.cluster_mode.as_ref().map(|v| json!(v)));
    put("group", a.project.as_ref().map(|v| json!(v)));
    put("tag", a.tag.as_ref().map(|v| json!(v)));
    put("maxWaitSeconds", a.max_wait.map(|v| json!(v)));
    put("enqueueOnly", a.enqueue_only.then_some(json!(true)));
    let mut config = Map::new();
    let (res, opts) = resources(&a.resources);
    if !res.is_empty() {
        config.insert("resources".into(), json!(res));
    }
    if !opts.is_empty() {
        config.insert("resource_opts".into(), json!(opts));
    }
    if !a.env.is_empty() {
        config.insert("environ".into(), json!(environ(&a.env)));
    }
    if let Some(g) = &a.scaling_group {
        config.insert("scalingGroup".into(), json!(g));
    }
    if !a.mounts.is_empty() {
        let mut names = Vec::new();
        let mut map = Map::new();
        for m in &a.mounts {
            let (name, path) = m.split_once(':').unwrap_or((m.as_str(), ""));
            if name.is_empty() {
                return Err(anyhow!(
                    "--mount {m:?}: give a folder name, NAME or NAME:PATH"
                ));
            }
            if !path.is_empty() {
                map.insert(name.to_string(), json!(path));
            }
            names.push(json!(name));
        }
        config.insert("mounts".into(), Value::Array(names));
        if !map.is_empty() {
            config.insert("mount_map".into(), Value::Object(map));
        }
    }
    if !config.is_empty() {
        o.insert("config".into(), Value::Object(config));
    }
    Ok(o)
}

pub async fn from_template(client: &Client, a: &FromTemplateArgs) -> Result<i32> {
    let r = client
        .create_from_template(&a.template_id, overrides(a)?)
        .await?;
    match outcome(&r) {
        Outcome::Ready => {
            println!("Session {} is ready (ID {}).", r.session_name, r.session_id);
            Ok(0)
        }
        Outcome::Done(msg) => {
            println!("{msg}");
            Ok(0)
        }
        Outcome::Failed => Err(failure(client, &r).await),
    }
}
