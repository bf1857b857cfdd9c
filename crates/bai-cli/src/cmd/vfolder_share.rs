//! `bai vfolder invite|invitations|accept|reject|share|unshare|leave|shared|clone`.

use crate::args::VfolderCmd;
use crate::output::{json_items, table};
use anyhow::{Result, bail};
use bai_client::Client;

pub async fn vfolder_share(client: &Client, c: &VfolderCmd) -> Result<i32> {
    match c {
        VfolderCmd::Invite { name, emails, perm } => {
            let id = client.vfolder_id(name).await?;
            let r = client.invite_to_vfolder(&id, *perm, emails).await?;
            if !r.invited_ids.is_empty() {
                println!(
                    "Invited {} user(s) to \"{name}\" ({perm}).",
                    r.invited_ids.len()
                );
            }
            for s in &r.skipped {
                println!("Skipped {}: {}.", s.email, s.reason);
            }
        }
        VfolderCmd::Invitations { sent } => {
            let list = client.vfolder_invitations(*sent).await?;
            if json_items(&list) {
                return Ok(0);
            }
            if list.is_empty() {
                println!("No pending invitations.");
                return Ok(0);
            }
            let rows: Vec<Vec<String>> = list
                .iter()
                .map(|i| {
                    vec![
                        i.id.clone(),
                        i.vfolder_name.clone(),
                        if *sent {
                            i.invitee_user_email.clone()
                        } else {
                            i.inviter_user_email.clone()
                        },
                        i.perm.to_string(),
                        i.created_at.clone(),
                    ]
                })
                .collect();
            let who = if *sent { "To" } else { "From" };
            table(&["ID", "Folder", who, "Permission", "Sent"], &rows);
        }
        VfolderCmd::Accept { invitation_id } => {
            client.accept_invitation(invitation_id).await?;
            println!("Invitation {invitation_id} accepted: the folder is shared with you.");
        }
        VfolderCmd::Reject { invitation_id } => {
            client.delete_invitation(invitation_id).await?;
            println!("Invitation {invitation_id} withdrawn.");
        }
        VfolderCmd::Share { name, emails, perm } => {
            let id = client.vfolder_id(name).await?;
            let done = client.share_vfolder(&id, *perm, emails).await?;
            println!("\"{name}\" is {perm} for {}.", done.join(", "));
        }
        VfolderCmd::Unshare { name, emails } => {
            let id = client.vfolder_id(name).await?;
            let done = client.unshare_vfolder(&id, emails).await?;
            if done.is_empty() {
                bail!("\"{name}\" was not shared with {}", emails.join(", "));
            }
            println!("\"{name}\" is no longer shared with {}.", done.join(", "));
        }
        VfolderCmd::Leave { name } => {
            let id = client.vfolder_id(name).await?;
            client.leave_vfolder(&id).await?;
            println!("You left \"{name}\".");
        }
        VfolderCmd::Shared { name } => {
            let id = match name {
                Some(n) => Some(client.vfolder_id(n).await?),
                None => None,
            };
            let list = client.vfolder_shares(id.as_deref()).await?;
            if json_items(&list) {
                return Ok(0);
            }
            if list.is_empty() {
                println!("Nothing you manage is shared.");
                return Ok(0);
            }
            let rows: Vec<Vec<String>> = list
                .iter()
                .map(|s| {
                    vec![
                        s.vfolder_name.clone(),
                        s.shared_to.email.clone(),
                        s.perm.to_string(),
                    ]
                })
                .collect();
            table(&["Folder", "Shared with", "Permission"], &rows);
        }
        VfolderCmd::Clone {
            name,
            new_name,
            host,
            quiet,
        } => {
            let id = client.vfolder_id(name).await?;
            let r = client.clone_vfolder(&id, new_name, host.as_deref()).await?;
            let msg = super::images::follow(client, &r.bgtask_id, "cloning", *quiet).await?;
            println!("\"{name}\" is cloned into \"{new_name}\" ({msg}).");
        }
        _ => bail!("not a sharing command"),
    }
    Ok(0)
}
