//! The web login through the site's directory (`baid up --ldap-url …`, issue 60): a name
//! that is no local account is checked by `bai_ldap::Directory`, and the bai account is made
//! on the first login (email from the directory, role from the admin group, projects from the
//! group mapping, a keypair) and brought in line with the directory on every later one.
//!
//! Accounts made so are marked by the user setting [`DN_SETTING`] (the entry's DN); a local
//! account (one without it) is never taken over by a directory entry with its email.

use bai_ldap::{Directory, DirectoryUser, LoginError};
use bai_store::{KeypairRow, NewUser, Store, StoreError, UserInfo};

/// The user setting that marks an account as the directory's: the entry's DN (JSON text).
pub const DN_SETTING: &str = "directory.dn";

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

/// The role a directory user gets.
fn role_of(u: &DirectoryUser) -> &'static str {
    if u.is_admin { "admin" } else { "user" }
}

/// Makes the account of `u` or brings it in line; `Ok(Err(why))` when it may not log in.
pub fn provision(
    store: &Store,
    u: &DirectoryUser,
) -> Result<Result<KeypairRow, &'static str>, StoreError> {
    let project_ids = project_ids(store, &u.projects)?;
    let dn_json = serde_json::Value::String(u.dn.clone()).to_string();
    match store.user_by_email(&u.email)? {
        None => {
            let (ak, sk) = bai_core::sign::new_keypair();
            let username = match u.uid.as_deref() {
                Some(uid) if !username_taken(store, uid)? => uid.to_string(),
                _ => u.email.clone(),
            };
            let info = UserInfo {
                id: uuid::Uuid::new_v4().to_string(),
                email: u.email.clone(),
                username,
                full_name: u.full_name.clone(),
                description: "from the site's directory".into(),
                role: role_of(u).into(),
                status: "active".into(),
                need_password_change: false,
                domain_name: "default".into(),
                resource_policy: "default".into(),
                created_at: String::new(),
                main_access_key: Some(ak.clone()),
            };
            let id = info.id.clone();
            let made = store.create_user(&NewUser {
                info,
                password_hash: None,
                access_key: ak,
                secret_key: sk,
                project_ids,
            })?;
            if !made {
                // Made by a login at the same moment: that one's account stands.
                return Ok(Err("Your account is being made: log in again."));
            }
            store.set_user_setting(&id, DN_SETTING, &dn_json)?;
            tracing::info!(email = %u.email, role = role_of(u), projects = ?u.projects, "account made from the directory");
        }
        Some(mut info) => {
            if store.user_setting(&info.id, DN_SETTING)?.is_none() {
                tracing::warn!(email = %u.email, "a directory entry has the email of a local account");
                return Ok(Err(
                    "A local bai account has this email: log in with its bai password.",
                ));
            }
            if info.status != "active" {
                return Ok(Err(
                    "Your bai account is deactivated: ask the site's administrators.",
                ));
            }
            // A superadmin made by hand stays one; otherwise the directory decides.
            if info.role != "superadmin" {
                info.role = role_of(u).into();
            }
            if !u.full_name.is_empty() {
                info.full_name = u.full_name.clone();
            }
            let mut ids = project_ids;
            if let Some(default) = project_id(store, "default")? {
                ids.push(default);
            }
            store.update_user(&info, None, Some(ids.as_slice()))?;
            store.set_user_setting(&info.id, DN_SETTING, &dn_json)?;
        }
    }
    Ok(match store.keypair_by_email(&u.email)? {
        Some(kp) if kp.is_active && kp.user_active => Ok(kp),
        _ => Err("Your bai account has no active keypair: ask the site's administrators."),
    })
}

/// The ids of the named projects, each made when missing.
fn project_ids(store: &Store, names: &[String]) -> Result<Vec<String>, StoreError> {
    let mut ids = Vec::with_capacity(names.len());
    for name in names {
        if project_id(store, name)?.is_none() {
            store.create_project(name, "made for a group of the site's directory")?;
            tracing::info!(project = %name, "project made for a directory group");
        }
        if let Some(id) = project_id(store, name)? {
            ids.push(id);
        }
    }
    Ok(ids)
}

fn project_id(store: &Store, name: &str) -> Result<Option<String>, StoreError> {
    Ok(store
        .project_rows(None)?
        .into_iter()
        .find(|p| p.name == name)
        .map(|p| p.id))
}

fn username_taken(store: &Store, username: &str) -> Result<bool, StoreError> {
    let (_, n) = store.user_list(&bai_store::UserFilter {
        field: Some((bai_store::UserField::Username, username.to_string())),
        limit: 1,
        ..Default::default()
    })?;
    Ok(n > 0)
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
