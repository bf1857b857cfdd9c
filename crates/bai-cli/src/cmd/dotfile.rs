//! `bai dotfile …`.

use crate::args::DotfileCmd;
use crate::output::{json_items, table};
use anyhow::Result;
use bai_client::Client;
use std::path::Path;

fn text(file: Option<&Path>) -> Result<String> {
    super::file_or_stdin(file, "the dotfile's text")
}

/// The first line of a text, cut short for a table.
fn preview(data: &str) -> String {
    let line = data.lines().next().unwrap_or("");
    let mut out: String = line.chars().take(40).collect();
    if out.len() < line.len() || data.lines().nth(1).is_some() {
        out.push('…');
    }
    out
}

pub async fn dotfile(client: &Client, c: &DotfileCmd) -> Result<i32> {
    match c {
        DotfileCmd::Create {
            path,
            file,
            permission,
        }
        | DotfileCmd::Update {
            path,
            file,
            permission,
        } => {
            let replace = matches!(c, DotfileCmd::Update { .. });
            let data = text(file.as_deref())?;
            client
                .put_dotfile(path, &data, permission.as_deref(), replace)
                .await?;
            let verb = if replace { "replaced" } else { "stored" };
            println!("Dotfile {path} {verb}: new sessions get it in /home/work.");
        }
        DotfileCmd::List => {
            let list = client.dotfiles().await?;
            if json_items(&list) {
                return Ok(0);
            }
            if list.is_empty() {
                println!("You keep no dotfiles (bai dotfile create PATH -f FILE).");
                return Ok(0);
            }
            let rows: Vec<Vec<String>> = list
                .iter()
                .map(|d| vec![d.path.clone(), d.permission.clone(), preview(&d.data)])
                .collect();
            table(&["Path", "Permission", "Data"], &rows);
        }
        DotfileCmd::Get { path } => print!("{}", client.dotfile(path).await?.data),
        DotfileCmd::Delete { path } => {
            client.delete_dotfile(path).await?;
            println!("Dotfile {path} deleted.");
        }
    }
    Ok(0)
}
