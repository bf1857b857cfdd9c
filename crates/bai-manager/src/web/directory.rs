//! The web login through the site's directory (`baid up --ldap-url …`, issue 60): a name
//! that is no local account is checked by `bai_ldap::Directory`, and the bai account is made
//! on the first login (email from the directory, role from the admin group, projects from the
//! group mapping, a keypair) and brought in line with the directory on every later one.
//!
//! Accounts made so are marked by the user setting [`DN_SETTING`] (the entry's DN); a local
//! account (one without it) is never taken over by a directory entry with its email.

use super::external::{self, External};
use bai_ldap::{Directory, DirectoryUser, LoginError, Presence};
use bai_store::{KeypairRow, Store, StoreError, UserInfo};
use std::sync::Arc;

/// The user setting that marks an account as the directory's: the entry's DN (JSON text).
pub const DN_SETTING: &str = external::DN_SETTING;
/// The user setting of an account the directory sync deactivated: why (`"missing"` or
/// `"disabled"`, JSON text; `null` once reactivated). Only such accounts are reactivated by
/// it: one an administrator deactivated stays so.
pub const LEFT_SETTING: &str = external::LEFT_SETTING;

/// What one directory sync did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SyncReport {
    /// Accounts made from the directory, asked about.
    pub checked: usize,
    /// Emails deactivated: gone from the directory or disabled there.
    pub deactivated: Vec<String>,
    /// Emails reactivated: back in the directory.
    pub reactivated: Vec<String>,
}

/// The accounts made from the directory, with their entries' DNs.
fn directory_accounts(store: &Store) -> Result<Vec<(UserInfo, String)>, StoreError> {
    let mut out = Vec::new();
    let mut offset = 0;
    loop {
        let (page, _) = store.user_list(&bai_store::UserFilter {
            limit: 500,
            offset,
            ..Default::default()
        })?;
        let n = page.len() as i64;
        for u in page {
            if let Some(dn) = store
                .user_setting(&u.id, DN_SETTING)?
                .and_then(|v| serde_json::from_str::<String>(&v).ok())
            {
                out.push((u, dn));
            }
        }
        if n < 500 {
            return Ok(out);
        }
        offset += n;
    }
}

/// Checks every account made from the directory against it once: an entry gone (or no
/// longer found by the user filter) or disabled there deactivates the account, so its
/// keypairs and web sessions stop working; an account this sync deactivated whose entry is
/// back is reactivated. Sessions keep running. A directory that cannot be asked changes
/// nothing (the error says why).
pub async fn sync_once(store: &Store, dir: &Directory) -> Result<SyncReport, String> {
    let accounts = directory_accounts(store).map_err(|e| format!("the database: {e}"))?;
    let mut report = SyncReport {
        checked: accounts.len(),
        ..Default::default()
    };
    if accounts.is_empty() {
        return Ok(report);
    }
    let dns: Vec<String> = accounts.iter().map(|(_, dn)| dn.clone()).collect();
    let presence = dir.check_accounts(&dns).await.map_err(|e| e.to_string())?;
    for ((mut info, _), p) in accounts.into_iter().zip(presence) {
        let left = store
            .user_setting(&info.id, LEFT_SETTING)
            .map_err(|e| e.to_string())?
            .and_then(|v| serde_json::from_str::<String>(&v).ok());
        let why = match p {
            Presence::Present => None,
            Presence::Missing => Some("missing"),
            Presence::Disabled => Some("disabled"),
        };
        let write = |info: &UserInfo, left: &str| -> Result<(), StoreError> {
            store.update_user(info, None, None)?;
            store.set_user_setting(&info.id, LEFT_SETTING, left)
        };
        match (why, info.status.as_str(), left) {
            (Some(why), "active", _) => {
                info.status = "inactive".into();
                let v = serde_json::Value::String(why.into()).to_string();
                write(&info, &v).map_err(|e| e.to_string())?;
                tracing::warn!(email = %info.email, why, "directory sync: the account is deactivated (its entry is {why} in the directory)");
                bai_ground::audit::record(
                    store,
                    "directory sync",
                    None,
                    "user deactivate",
                    &info.email,
                    Ok(()),
                );
                report.deactivated.push(info.email.clone());
            }
            (None, "inactive", Some(_)) => {
                info.status = "active".into();
                write(&info, "null").map_err(|e| e.to_string())?;
                tracing::info!(email = %info.email, "directory sync: the account is back in the directory and reactivated");
                bai_ground::audit::record(
                    store,
                    "directory sync",
                    None,
                    "user reactivate",
                    &info.email,
                    Ok(()),
                );
                report.reactivated.push(info.email.clone());
            }
            _ => {}
        }
    }
    Ok(report)
}

/// Runs [`sync_once`] every `--ldap-sync-interval` (nothing when it is off).
pub fn spawn_sync(store: Arc<Store>, dir: Directory) {
    let Some(every) = dir.config().sync_interval else {
        return;
    };
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            match sync_once(&store, &dir).await {
                Ok(r) => tracing::debug!(
                    checked = r.checked,
                    deactivated = r.deactivated.len(),
                    reactivated = r.reactivated.len(),
                    "directory sync"
                ),
                Err(why) => {
                    tracing::warn!(reason = %why, "directory sync: the directory cannot be asked; nobody is deactivated")
                }
            }
        }
    });
}

/// What a directory login came to.
#[derive(Debug)]
pub enum Outcome {
    /// Logged in with this keypair.
    In(Box<KeypairRow>),
    /// Refused, with the words for the person.
    Refused(&'static str),
    /// The directory could not be asked (a 503); the reason is for the log.
    Unavailable(String),
}

/// The same words for an unknown name and a wrong password.
pub const WRONG: &str = "The user name or the password is wrong.";

/// Checks `name`/`password` against the directory and makes or updates the account.
pub async fn login(store: &Store, dir: &Directory, name: &str, password: &str) -> Outcome {
    match dir.login(name, password).await {
        Ok(user) => match provision(store, &user) {
            Ok(Ok(kp)) => Outcome::In(Box::new(kp)),
            Ok(Err(why)) => Outcome::Refused(why),
            Err(e) => {
                tracing::error!(error = %e, "the account of a directory user cannot be written");
                Outcome::Unavailable(format!("the database: {e}"))
            }
        },
        Err(LoginError::Refused) => Outcome::Refused(WRONG),
        Err(LoginError::NoEmail { attr }) => {
            tracing::warn!(user = %name, attr, "directory entry without an email");
            Outcome::Refused(
                "Your directory entry has no email address, which bai needs: ask the site's administrators.",
            )
        }
        Err(LoginError::Unavailable(why)) => Outcome::Unavailable(why),
    }
}

/// The account of a directory user: made or brought in line ([`external::provision`]).
pub fn provision(
    store: &Store,
    u: &DirectoryUser,
) -> Result<Result<KeypairRow, &'static str>, StoreError> {
    external::provision(
        store,
        &External {
            marker: (DN_SETTING, u.dn.clone()),
            made_by: "the site's directory",
            uid: u.uid.clone(),
            email: u.email.clone(),
            full_name: u.full_name.clone(),
            is_admin: u.is_admin,
            projects: u.projects.clone(),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(email: &str, admin: bool, projects: &[&str]) -> DirectoryUser {
        DirectoryUser {
            dn: format!(
                "uid={},ou=people,dc=example,dc=org",
                email.split('@').next().unwrap()
            ),
            uid: email.split('@').next().map(String::from),
            email: email.into(),
            full_name: "Ada".into(),
            is_admin: admin,
            projects: projects.iter().map(|p| p.to_string()).collect(),
        }
    }

    fn projects_of(store: &Store, email: &str) -> Vec<String> {
        let id = store.user_by_email(email).unwrap().unwrap().id;
        let mut p: Vec<String> = store
            .projects_of_user(&id)
            .unwrap()
            .into_iter()
            .map(|(_, name)| name)
            .collect();
        p.sort();
        p
    }

    #[test]
    fn first_login_makes_later_logins_update() {
        let store = bai_store::testing::store().unwrap();
        let kp = provision(&store, &user("ada@example.org", false, &["vision"]))
            .unwrap()
            .unwrap();
        assert!(!kp.is_admin);
        let info = store.user_by_email("ada@example.org").unwrap().unwrap();
        assert_eq!(
            (info.role.as_str(), info.username.as_str()),
            ("user", "ada")
        );
        assert_eq!(
            projects_of(&store, "ada@example.org"),
            ["default", "vision"]
        );
        // Later: an admin now, in another project; the same keypair.
        let again = provision(&store, &user("ada@example.org", true, &["nlp"]))
            .unwrap()
            .unwrap();
        assert_eq!(again.access_key, kp.access_key);
        assert!(again.is_admin);
        assert_eq!(projects_of(&store, "ada@example.org"), ["default", "nlp"]);
        let back = provision(&store, &user("ada@example.org", false, &[]))
            .unwrap()
            .unwrap();
        assert!(!back.is_admin);
        assert_eq!(projects_of(&store, "ada@example.org"), ["default"]);
    }

    #[test]
    fn local_accounts_are_never_taken_over() {
        let store = bai_store::testing::store().unwrap();
        let u = bai_store::UserRow {
            id: "u1".into(),
            email: "root@example.org".into(),
            role: "superadmin".into(),
        };
        store
            .create_user_with_keypair(&u, "AKLOCAL", "secret", true)
            .unwrap();
        let r = provision(&store, &user("root@example.org", false, &[])).unwrap();
        assert!(r.is_err());
        assert_eq!(
            store
                .user_by_email("root@example.org")
                .unwrap()
                .unwrap()
                .role,
            "superadmin"
        );
    }
}
