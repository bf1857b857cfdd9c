//! `bai ps`, `bai admin sessions` / `bai admin session list`.

use crate::args::PsArgs;
use crate::output::{cell, table};
use anyhow::{Result, bail};
use bai_client::{Client, SessionListQuery};

/// Page size when `--all` walks every page.
const ALL_PAGE: i64 = 100;

/// The selected item fields: the official `ps` list (+ `access_key` for admins after
/// `name`, + `tag created_at occupying_slots` with `--detail`).
pub fn fields(admin: bool, detail: bool) -> Vec<String> {
    let mut f: Vec<String> = SessionListQuery::DEFAULT_FIELDS
        .iter()
        .map(|s| s.to_string())
        .collect();
    if admin {
        f.insert(1, "access_key".into());
    }
    if detail {
        f.extend(["tag", "created_at", "occupying_slots"].map(String::from));
    }
    f
}

/// (header, field) pairs of the table.
fn columns(admin: bool, detail: bool) -> Vec<(&'static str, &'static str)> {
    let mut c = vec![("Session Name", "name"), ("Session ID", "id")];
    if admin {
        c.push(("Owner Access Key", "access_key"));
    }
    c.extend([
        ("Status", "status"),
        ("Status Info", "status_info"),
        ("Type", "type"),
        ("Image", "image"),
        ("Last Updated", "status_changed"),
    ]);
    if detail {
        c.extend([
            ("Tag", "tag"),
            ("Created At", "created_at"),
            ("Occupying Slots", "occupying_slots"),
        ]);
    }
    c
}

pub async fn ps(client: &Client, a: &PsArgs, access_key: Option<&str>, admin: bool) -> Result<i32> {
    if admin {
        let kp = client.keypair_info().await?;
        if !kp.is_admin {
            bail!(
                "listing every user's sessions needs an administrator keypair ({} is not an admin); use `bai ps` for your own",
                kp.access_key
            );
        }
    }
    let cols = columns(admin, a.detail);
    let mut q = SessionListQuery {
        status: a.statuses(),
        access_key: access_key.map(str::to_string),
        limit: if a.all { ALL_PAGE } else { a.limit },
        offset: a.offset,
        fields: fields(admin, a.detail),
        system: a.system,
        // `--all` from the start walks by cursor: each page starts at the last one's key,
        // so the walk costs what it lists however long the history.
        cursor: (a.all && a.offset == 0).then_some(None),
    };
    let mut rows = Vec::new();
    let total = loop {
        let page = match client.list_sessions(&q).await {
            // A manager without cursors (Backend.AI's): by offset, as the official client.
            Err(e) if q.cursor.is_some() && rows.is_empty() && knows_no_cursors(&e) => {
                q.cursor = None;
                continue;
            }
            other => other?,
        };
        let n = page.items.len() as i64;
        rows.extend(
            page.items
                .iter()
                .map(|it| cols.iter().map(|(_, f)| cell(&it[*f])).collect::<Vec<_>>()),
        );
        if !a.all || n == 0 {
            break page.total_count;
        }
        match &mut q.cursor {
            // The next page starts after the last one's key.
            Some(after) => match page.next_cursor {
                Some(next) => *after = Some(next),
                None => break page.total_count,
            },
            None => {
                q.offset += n;
                if q.offset >= page.total_count {
                    break page.total_count;
                }
            }
        }
    };
    if rows.is_empty() && !crate::output::json_output() {
        println!("No matching items.");
        return Ok(0);
    }
    let headers: Vec<&str> = cols.iter().map(|(h, _)| *h).collect();
    table(&headers, &rows);
    let shown = rows.len() as i64;
    if !a.all && a.offset + shown < total {
        eprintln!(
            "(showing {} of {total}; use --all or --offset {} to see more)",
            if a.offset == 0 {
                format!("first {shown}")
            } else {
                format!("{}–{}", a.offset + 1, a.offset + shown)
            },
            a.offset + shown
        );
    }
    Ok(0)
}

/// Whether `e` is a manager's refusal of the cursor's argument or field (one that pages only
/// by offset).
fn knows_no_cursors(e: &bai_client::ClientError) -> bool {
    let text = e.to_string();
    e.is_kind("graphql-error") && (text.contains("after") || text.contains("next_cursor"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admin_and_detail_fields() {
        assert_eq!(
            fields(false, false).join(" "),
            "name priority id group_name type image status status_info status_changed result"
        );
        let f = fields(true, true);
        assert_eq!(f[1], "access_key");
        assert!(f.ends_with(&["tag".into(), "created_at".into(), "occupying_slots".into()]));
        // Every column is selected.
        for admin in [false, true] {
            for detail in [false, true] {
                let f = fields(admin, detail);
                for (_, c) in columns(admin, detail) {
                    assert!(f.iter().any(|x| x == c), "{c}");
                }
            }
        }
    }
}
