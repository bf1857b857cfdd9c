//! `bai admin user-policy …`: user resource policies (per-user limits).

use crate::args::{AdminUserPolicyCmd, UserPolicyLimits};
use crate::output::table;
use anyhow::{Result, bail};
use bai_client::Client;
use serde_json::{Map, Value, json};

/// The GraphQL `props` of the limits given.
fn props(l: &UserPolicyLimits) -> Result<Value> {
    let mut p = Map::new();
    if let Some(n) = l.max_customized_images {
        p.insert("max_customized_image_count".into(), json!(n));
    }
    if let Some(n) = l.max_model_replicas {
        p.insert("max_session_count_per_model_session".into(), json!(n));
    }
    if let Some(n) = l.max_folders {
        p.insert("max_vfolder_count".into(), json!(n));
    }
    if let Some(s) = &l.max_folder_size {
        let bytes = match s.trim() {
            "-1" => -1,
            t => i64::try_from(bai_core::units::parse_size(t)?)
                .map_err(|_| anyhow::anyhow!("--max-folder-size {t} is too large"))?,
        };
        p.insert("max_quota_scope_size".into(), json!(bytes));
    }
    Ok(Value::Object(p))
}

fn size_text(b: i64) -> String {
    if b < 0 {
        "no limit".into()
    } else {
        bai_core::resources::format_bytes(b as u64)
    }
}

pub async fn admin(client: &Client, c: &AdminUserPolicyCmd) -> Result<i32> {
    match c {
        AdminUserPolicyCmd::List { json } => {
            let list = client.user_policies(false).await?;
            if crate::output::json_items(&list) {
                return Ok(0);
            }
            if *json {
                println!("{}", serde_json::to_string_pretty(&list)?);
                return Ok(0);
            }
            let rows: Vec<Vec<String>> = list
                .iter()
                .map(|p| {
                    vec![
                        p.name.clone(),
                        p.max_customized_image_count.to_string(),
                        p.max_session_count_per_model_session.to_string(),
                        if p.max_vfolder_count == 0 {
                            "no limit".into()
                        } else {
                            p.max_vfolder_count.to_string()
                        },
                        size_text(p.max_quota_scope_size),
                    ]
                })
                .collect();
            table(
                &[
                    "NAME",
                    "CUSTOMIZED IMAGES",
                    "REPLICAS PER SERVICE",
                    "FOLDERS",
                    "FOLDER SIZE",
                ],
                &rows,
            );
            Ok(0)
        }
        AdminUserPolicyCmd::Create { name, limits } => {
            client.put_user_policy(name, props(limits)?, true).await?;
            println!("User resource policy {name} is created.");
            Ok(0)
        }
        AdminUserPolicyCmd::Update { name, limits } => {
            let p = props(limits)?;
            if p.as_object().is_some_and(Map::is_empty) {
                bail!("give at least one limit to change (see --help)");
            }
            client.put_user_policy(name, p, false).await?;
            println!("User resource policy {name} is updated.");
            Ok(0)
        }
        AdminUserPolicyCmd::Delete { name } => {
            client.delete_user_policy(name).await?;
            println!("User resource policy {name} is deleted.");
            Ok(0)
        }
        AdminUserPolicyCmd::Assign { email, policy } => {
            client.assign_user_policy(email, policy).await?;
            println!("User {email} now has the user resource policy {policy}.");
            Ok(0)
        }
    }
}
