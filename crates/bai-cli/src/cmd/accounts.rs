//! `bai admin user|keypair|domain …`: accounts through Backend.AI's admin GraphQL. A
//! mutation the server refuses (`ok: false`) prints its reason and exits 1.

use crate::args::{AdminDomainCmd, AdminKeypairCmd, AdminUserCmd, UserFields};
use crate::output::table;
use anyhow::{Result, bail};
use bai_client::Client;
use serde_json::{Map, Value, json};

/// The `{ok, msg}` of mutation `field`: Ok on success, else the server's reason.
fn outcome(v: &Value, field: &str) -> Result<Value> {
    let r = &v[field];
    if r["ok"] == true {
        Ok(r.clone())
    } else {
        bail!("{}", r["msg"].as_str().unwrap_or("refused"))
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

/// Prints a listing: `{"items": [...]}` under `--output json`, the bare list with `--json`,
/// else a table of the `(header, field)` columns.
pub(crate) fn listing(items: &[Value], json: bool, columns: &[(&str, &str)]) -> Result<()> {
    if crate::output::json_output() {
        crate::output::print_items(items);
    } else if json {
        println!("{}", serde_json::to_string_pretty(items)?);
    } else {
        let rows: Vec<Vec<String>> = items
            .iter()
            .map(|i| columns.iter().map(|(_, k)| text(&i[*k])).collect())
            .collect();
        let headers: Vec<&str> = columns.iter().map(|(h, _)| *h).collect();
        table(&headers, &rows);
    }
    Ok(())
}

fn user_props(f: &UserFields, password: Option<&str>) -> Value {
    let mut p = Map::new();
    let mut put = |k: &str, v: Option<&String>| {
        if let Some(v) = v {
            p.insert(k.into(), json!(v));
        }
    };
    put("username", f.username.as_ref());
    put("full_name", f.full_name.as_ref());
    put("role", f.role.as_ref());
    put("status", f.status.as_ref());
    put("domain_name", f.domain.as_ref());
    put("resource_policy", f.resource_policy.as_ref());
    if let Some(pw) = password {
        p.insert("password".into(), json!(pw));
    }
    if f.need_password_change {
        p.insert("need_password_change".into(), json!(true));
    }
    Value::Object(p)
}

pub async fn user(client: &Client, c: &AdminUserCmd) -> Result<i32> {
    match c {
        AdminUserCmd::List { filter, json } => {
            let q = "query($filter: String) { user_list(limit: 1000, offset: 0, filter: $filter) \
                     { items { uuid username email full_name role status domain_name main_access_key } total_count } }";
            let v = client.gql(q, json!({"filter": filter})).await?;
            let items = v["user_list"]["items"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            listing(
                &items,
                *json,
                &[
                    ("EMAIL", "email"),
                    ("USERNAME", "username"),
                    ("NAME", "full_name"),
                    ("ROLE", "role"),
                    ("STATUS", "status"),
                    ("DOMAIN", "domain_name"),
                ],
            )?;
        }
        AdminUserCmd::Add {
            email,
            password,
            fields,
        } => {
            let q = "mutation($email: String!, $input: UserInput!) { create_user(email: $email, props: $input) \
                     { ok msg user { username main_access_key } } }";
            let v = client
                .gql(
                    q,
                    json!({"email": email, "input": user_props(fields, Some(password))}),
                )
                .await?;
            let r = outcome(&v, "create_user")?;
            println!(
                "User {email} ({}) created with keypair {}.",
                text(&r["user"]["username"]),
                text(&r["user"]["main_access_key"])
            );
        }
        AdminUserCmd::Update {
            email,
            password,
            fields,
        } => {
            let props = user_props(fields, password.as_deref());
            if props.as_object().is_some_and(Map::is_empty) {
                bail!("nothing to change: give a field such as --role, --status or --password");
            }
            let q = "mutation($email: String!, $input: ModifyUserInput!) { modify_user(email: $email, props: $input) { ok msg } }";
            let v = client
                .gql(q, json!({"email": email, "input": props}))
                .await?;
            outcome(&v, "modify_user")?;
            println!("User {email} updated.");
        }
        AdminUserCmd::Purge { email } => {
            let q = "mutation($email: String!, $input: PurgeUserInput!) { purge_user(email: $email, props: $input) { ok msg } }";
            let v = client
                .gql(
                    q,
                    json!({"email": email, "input": {"purge_shared_vfolders": false}}),
                )
                .await?;
            outcome(&v, "purge_user")?;
            println!("User {email} purged.");
        }
    }
    Ok(0)
}

pub async fn keypair(client: &Client, c: &AdminKeypairCmd) -> Result<i32> {
    match c {
        AdminKeypairCmd::List { email, json } => {
            let q = "query($email: String) { keypairs(email: $email) \
                     { user_id access_key is_active is_admin resource_policy rate_limit concurrency_used created_at } }";
            let v = client.gql(q, json!({"email": email})).await?;
            let items = v["keypairs"].as_array().cloned().unwrap_or_default();
            listing(
                &items,
                *json,
                &[
                    ("ACCESS KEY", "access_key"),
                    ("OWNER", "user_id"),
                    ("ACTIVE", "is_active"),
                    ("ADMIN", "is_admin"),
                    ("POLICY", "resource_policy"),
                    ("RATE LIMIT", "rate_limit"),
                    ("SESSIONS", "concurrency_used"),
                ],
            )?;
        }
        AdminKeypairCmd::Add {
            email,
            admin,
            inactive,
            rate_limit,
        } => {
            let mut props = json!({"is_active": !inactive, "is_admin": admin});
            if let Some(n) = rate_limit {
                props["rate_limit"] = json!(n);
            }
            let q = "mutation($user_id: String!, $input: KeyPairInput!) { create_keypair(user_id: $user_id, props: $input) \
                     { ok msg keypair { access_key secret_key } } }";
            let v = client
                .gql(q, json!({"user_id": email, "input": props}))
                .await?;
            let r = outcome(&v, "create_keypair")?;
            println!("access key {}", text(&r["keypair"]["access_key"]));
            println!(
                "secret key {}  (shown only now)",
                text(&r["keypair"]["secret_key"])
            );
        }
        AdminKeypairCmd::Delete { access_key } => {
            let q = "mutation($access_key: String!) { delete_keypair(access_key: $access_key) { ok msg } }";
            let v = client.gql(q, json!({"access_key": access_key})).await?;
            outcome(&v, "delete_keypair")?;
            println!("Keypair {access_key} deleted.");
        }
        AdminKeypairCmd::Info { access_key } => {
            let kp = client.keypair_of(Some(access_key)).await?;
            table(
                &[
                    "ACCESS KEY",
                    "OWNER",
                    "ACTIVE",
                    "ADMIN",
                    "RATE LIMIT / 15 MIN",
                ],
                &[vec![
                    kp.access_key,
                    kp.user_id.unwrap_or_default(),
                    kp.is_active.to_string(),
                    kp.is_admin.to_string(),
                    if kp.rate_limit == 0 {
                        "no limit".into()
                    } else {
                        kp.rate_limit.to_string()
                    },
                ]],
            );
        }
        AdminKeypairCmd::Update {
            access_key,
            rate_limit,
            deactivate,
            activate,
        } => {
            let active = match (activate, deactivate) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            };
            if active.is_none() && rate_limit.is_none() {
                bail!("nothing to change: give --rate-limit, --activate or --deactivate");
            }
            if rate_limit.is_some_and(|n| n < 0) {
                bail!("--rate-limit must be 0 (no limit) or more");
            }
            client
                .modify_keypair(access_key, active, *rate_limit)
                .await?;
            println!("Keypair {access_key} updated.");
        }
    }
    Ok(0)
}

pub async fn domain(client: &Client, c: &AdminDomainCmd) -> Result<i32> {
    match c {
        AdminDomainCmd::List { json } => {
            let v = client
                .gql(
                    "query { domains { name description is_active created_at } }",
                    json!({}),
                )
                .await?;
            let items = v["domains"].as_array().cloned().unwrap_or_default();
            listing(
                &items,
                *json,
                &[
                    ("NAME", "name"),
                    ("DESCRIPTION", "description"),
                    ("ACTIVE", "is_active"),
                    ("CREATED", "created_at"),
                ],
            )?;
        }
        AdminDomainCmd::Add {
            name,
            description,
            inactive,
        } => {
            let q = "mutation($name: String!, $input: DomainInput!) { create_domain(name: $name, props: $input) { ok msg } }";
            let input = json!({"description": description.clone().unwrap_or_default(), "is_active": !inactive});
            let v = client.gql(q, json!({"name": name, "input": input})).await?;
            outcome(&v, "create_domain")?;
            println!("Domain {name} created.");
        }
        AdminDomainCmd::Update {
            name,
            new_name,
            description,
            active,
        } => {
            let mut input = Map::new();
            if let Some(n) = new_name {
                input.insert("name".into(), json!(n));
            }
            if let Some(d) = description {
                input.insert("description".into(), json!(d));
            }
            if let Some(a) = active {
                input.insert("is_active".into(), json!(a));
            }
            if input.is_empty() {
                bail!("nothing to change: give --new-name, --description or --active");
            }
            let q = "mutation($name: String!, $input: ModifyDomainInput!) { modify_domain(name: $name, props: $input) { ok msg } }";
            let v = client.gql(q, json!({"name": name, "input": input})).await?;
            outcome(&v, "modify_domain")?;
            println!("Domain {name} updated.");
        }
        AdminDomainCmd::Purge { name } => {
            let q = "mutation($name: String!) { purge_domain(name: $name) { ok msg } }";
            let v = client.gql(q, json!({"name": name})).await?;
            outcome(&v, "purge_domain")?;
            println!("Domain {name} purged.");
        }
    }
    Ok(0)
}
