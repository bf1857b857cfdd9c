//! `bai vfolder …`: data folders and their files, with progress bars for transfers.

use crate::args::VfolderCmd;
use crate::output::{cell, table};
use anyhow::Result;
use bai_api::folders;
use bai_client::Client;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;

/// A byte progress bar for one transfer (nothing when quiet).
struct Progress(Option<ProgressBar>);

impl Progress {
    fn new(label: &str, quiet: bool) -> Progress {
        if quiet {
            return Progress(None);
        }
        let pb = ProgressBar::new(0);
        pb.set_style(
            ProgressStyle::with_template(
                "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        pb.set_message(label.to_string());
        Progress(Some(pb))
    }

    fn update(&self, done: u64, total: u64) {
        if let Some(pb) = &self.0 {
            pb.set_length(total);
            pb.set_position(done);
        }
    }

    fn finish(self) {
        if let Some(pb) = self.0 {
            pb.finish_and_clear();
        }
    }
}

pub async fn vfolder(client: &Client, c: &VfolderCmd) -> Result<i32> {
    match c {
        VfolderCmd::Create {
            name,
            host,
            permission,
            quota,
            project,
            usage_mode,
        } => {
            client
                .create_vfolder(&folders::CreateFolder {
                    name: name.clone(),
                    host: host.clone(),
                    group: project.clone(),
                    permission: Some(*permission),
                    usage_mode: Some(*usage_mode),
                    quota: quota.clone().map(folders::Size::Text),
                    unmanaged_path: None,
                    cloneable: Some(false),
                })
                .await?;
            println!("Virtual folder \"{name}\" is created.");
        }
        VfolderCmd::List => {
            let items = client.list_vfolders().await?;
            if crate::output::json_output() {
                crate::output::print_items(&items);
                return Ok(0);
            }
            // Folders in the trash are listed by `bai vfolder trash`.
            let rows: Vec<Vec<String>> = items
                .iter()
                .filter(|v| v["status"] != bai_core::permission::FOLDER_TRASHED)
                .map(|v| {
                    let quota = v["max_size"].as_u64().filter(|q| *q > 0);
                    let owner = match v["group"].as_str() {
                        Some(p) => format!("project {p}"),
                        None if v["is_owner"] == false => "shared with you".into(),
                        None => "you".into(),
                    };
                    vec![
                        cell(&v["name"]),
                        owner,
                        cell(&v["host"]),
                        cell(&v["permission"]),
                        cell(&v["status"]),
                        quota
                            .map(|q| format!("{q} MiB"))
                            .unwrap_or_else(|| "-".into()),
                        cell(&v["created_at"]),
                    ]
                })
                .collect();
            table(
                &[
                    "Name",
                    "Owner",
                    "Host",
                    "Permission",
                    "Status",
                    "Quota",
                    "Created",
                ],
                &rows,
            );
        }
        VfolderCmd::Hosts => {
            let hosts = client.vfolder_hosts().await?;
            println!("default: {}", hosts.default);
            println!("allowed: {}", hosts.allowed.join(", "));
        }
        VfolderCmd::Info { name } => {
            let id = client.vfolder_id(name).await?;
            // Printed field by field as the API names them.
            let v = serde_json::to_value(client.vfolder_info(&id).await?)?;
            for k in [
                "name",
                "id",
                "host",
                "permission",
                "status",
                "numFiles",
                "used_bytes",
                "quota",
                "usage_mode",
                "created_at",
            ] {
                println!("{k}: {}", cell(&v[k]));
            }
        }
        VfolderCmd::Rename { name, new_name } => {
            let id = client.vfolder_id(name).await?;
            client.rename_vfolder(&id, new_name).await?;
            println!("Virtual folder \"{name}\" is renamed to \"{new_name}\".");
        }
        VfolderCmd::Sftp { name, key_file } => {
            let id = client.vfolder_id(name).await?;
            let a = client.vfolder_sftp(&id).await?;
            let key = key_file
                .clone()
                .unwrap_or_else(|| format!("sftp-{name}.key").into());
            write_key(&key, &a.private_key)?;
            let k = key.display();
            println!(
                "SFTP session {} is ready for folder {name}.",
                a.session_name
            );
            println!(
                "host: {}  port: {}  user: {}  folder: {}",
                a.host, a.port, a.user, a.path
            );
            println!("key: {k} (made for this session only)");
            println!("sftp -i {k} -P {} {}@{}", a.port, a.user, a.host);
            println!(
                "scp -i {k} -P {} FILE {}@{}:{}/",
                a.port, a.user, a.host, a.path
            );
        }
        VfolderCmd::Delete { name, purge } => {
            let id = client.vfolder_id(name).await?;
            client.delete_vfolder(&id).await?;
            if *purge {
                client.purge_vfolder(&id).await?;
                println!("Virtual folder \"{name}\" is deleted with its files.");
            } else {
                println!(
                    "Virtual folder \"{name}\" is moved to the trash (bai vfolder restore|purge {name})."
                );
            }
        }
        VfolderCmd::Trash => {
            let folders = client.list_vfolders().await?;
            let trashed: Vec<_> = folders
                .iter()
                .filter(|f| f["status"] == bai_core::permission::FOLDER_TRASHED)
                .collect();
            if trashed.is_empty() {
                println!("The trash is empty.");
            }
            for f in trashed {
                println!(
                    "{}\t{}\t{}",
                    cell(&f["name"]),
                    cell(&f["host"]),
                    cell(&f["id"])
                );
            }
        }
        VfolderCmd::Restore { name } => {
            let id = client.vfolder_id(name).await?;
            client.restore_vfolder(&id).await?;
            println!("Virtual folder \"{name}\" is restored.");
        }
        VfolderCmd::Purge { name } => {
            let id = client.vfolder_id(name).await?;
            client.purge_vfolder(&id).await?;
            println!("Virtual folder \"{name}\" is deleted with its files.");
        }
        VfolderCmd::Ls { name, path } => {
            let id = client.vfolder_id(name).await?;
            let listing = client.list_files(&id, path).await?;
            if crate::output::json_output() {
                let items: Vec<serde_json::Value> = listing
                    .items
                    .iter()
                    .map(|f| serde_json::to_value(f).unwrap_or_default())
                    .collect();
                crate::output::print_items(&items);
                return Ok(0);
            }
            let rows: Vec<Vec<String>> = listing
                .items
                .iter()
                .map(|f| {
                    vec![
                        f.name.clone(),
                        f.kind.as_str().to_string(),
                        f.size.to_string(),
                        f.modified.clone(),
                        f.mode.clone(),
                    ]
                })
                .collect();
            table(&["Name", "Type", "Size", "Modified", "Mode"], &rows);
        }
        VfolderCmd::Mkdir {
            name,
            paths,
            parents,
            exist_ok,
        } => {
            let id = client.vfolder_id(name).await?;
            let v = client.mkdir(&id, paths, *parents, *exist_ok).await?;
            let failed = v.results.failed;
            for f in &failed {
                eprintln!("error: {}: {}", f.item, f.msg.as_deref().unwrap_or("-"));
            }
            if !failed.is_empty() {
                return Ok(1);
            }
            println!("Created: {}", paths.join(", "));
        }
        VfolderCmd::Upload {
            name,
            files,
            base_dir,
            quiet,
        } => {
            let id = client.vfolder_id(name).await?;
            for f in files {
                // An absolute path stays itself (`join` keeps it).
                let local = base_dir.join(f);
                // Named by its path under the base directory (the working directory unless
                // --base-dir), given relative or absolute; one outside it by its file name.
                let remote = bai_client::upload_name(&local, base_dir)?;
                let pb = Progress::new(&remote, *quiet);
                client
                    .upload_file(&id, &local, &remote, |d, t| pb.update(d, t))
                    .await?;
                pb.finish();
                if !quiet {
                    println!("Uploaded {remote}.");
                }
            }
        }
        VfolderCmd::Download {
            name,
            files,
            base_dir,
            quiet,
        } => {
            let id = client.vfolder_id(name).await?;
            for f in files {
                let local: PathBuf = base_dir.join(f.trim_start_matches('/'));
                let pb = Progress::new(f, *quiet);
                client
                    .download_file(&id, f, &local, |d, t| pb.update(d, t))
                    .await?;
                pb.finish();
                if !quiet {
                    println!("Downloaded {f}.");
                }
            }
        }
        VfolderCmd::RenameFile {
            name,
            path,
            new_name,
        } => {
            let id = client.vfolder_id(name).await?;
            client.rename_file(&id, path, new_name).await?;
            println!("Renamed {path} to {new_name}.");
        }
        VfolderCmd::Mv { name, src, dst } => {
            let id = client.vfolder_id(name).await?;
            client.move_file(&id, src, dst).await?;
            println!("Moved {src} to {dst}.");
        }
        VfolderCmd::Rm {
            name,
            files,
            recursive,
        } => {
            let id = client.vfolder_id(name).await?;
            client.delete_files(&id, files, *recursive).await?;
            println!("Deleted {}.", files.join(", "));
        }
        other => return super::vfolder_share::vfolder_share(client, other).await,
    }
    Ok(0)
}

/// Saves a private key readable by its owner alone (ssh refuses one others may read).
fn write_key(path: &std::path::Path, key: &str) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::remove_file(path);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot write the key to {}", path.display()))?;
    f.write_all(key.as_bytes())
        .with_context(|| format!("cannot write the key to {}", path.display()))
}
