//! Accounts of the site's own logins — its directory (LDAP, [`super::directory`]) or its
//! OpenID provider ([`super::oidc`]): made on the first login (email, role from the admin
//! group, projects from the group mapping, a keypair) and brought in line at every later one.
//!
//! Such accounts are marked by a user setting ([`DN_SETTING`] or [`OIDC_SETTING`]); a local
//! account (one with neither) is never taken over by an outside login with its email.

use bai_store::{KeypairRow, NewUser, Store, StoreError, UserInfo};

/// The user setting that marks an account as the directory's: the entry's DN (JSON text).
pub const DN_SETTING: &str = "directory.dn";
/// The user setting that marks an account as the OpenID provider's: `ISSUER#SUBJECT`
/// (JSON text), the one identity at the provider that may use it.
pub const OIDC_SETTING: &str = "oidc.subject";
/// The user setting of an account the directory sync deactivated (why, JSON text; `null`
/// once reactivated): see [`super::directory::sync_once`].
pub const LEFT_SETTING: &str = "directory.left";

/// Someone the site's directory or OpenID provider vouches for.
#[derive(Debug, Clone)]
pub struct External {
    /// The setting that marks the account, and its value for this person.
    pub marker: (&'static str, String),
    /// Who made the account, in words ("the site's directory").
    pub made_by: &'static str,
    /// A user name to use when it is free (else the email is the user name).
    pub uid: Option<String>,
    pub email: String,
    pub full_name: String,
    pub is_admin: bool,
    /// The bai projects the groups map to.
    pub projects: Vec<String>,
}

impl External {
    fn role(&self) -> &'static str {
        if self.is_admin { "admin" } else { "user" }
    }
}

/// Makes the account of `u` or brings it in line; `Ok(Err(why))` when it may not log in.
pub fn provision(
    store: &Store,
    u: &External,
) -> Result<Result<KeypairRow, &'static str>, StoreError> {
    let project_ids = project_ids(store, &u.projects, u.made_by)?;
    let (setting, id) = &u.marker;
    let id_json = serde_json::Value::String(id.clone()).to_string();
    match store.user_by_email(&u.email)? {
        None => {
            let (ak, sk) = bai_core::sign::new_keypair();
            let username = match u.uid.as_deref() {
                Some(uid) if !uid.is_empty() && !username_taken(store, uid)? => uid.to_string(),
                _ => u.email.clone(),
            };
            let info = UserInfo {
                id: uuid::Uuid::new_v4().to_string(),
                email: u.email.clone(),
                username,
                full_name: u.full_name.clone(),
                description: format!("from {}", u.made_by),
                role: u.role().into(),
                status: "active".into(),
                need_password_change: false,
                domain_name: "default".into(),
                resource_policy: "default".into(),
                created_at: String::new(),
                main_access_key: Some(ak.clone()),
            };
            let uid = info.id.clone();
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
            store.set_user_setting(&uid, setting, &id_json)?;
            tracing::info!(email = %u.email, role = u.role(), projects = ?u.projects, from = u.made_by, "account made");
        }
        Some(mut info) => {
            let dn = store.user_setting(&info.id, DN_SETTING)?;
            let oidc = store.user_setting(&info.id, OIDC_SETTING)?;
            if dn.is_none() && oidc.is_none() {
                tracing::warn!(email = %u.email, from = u.made_by, "an outside login has the email of a local account");
                return Ok(Err(
                    "A local bai account has this email: log in with its bai password.",
                ));
            }
            // One identity at the provider per account: another with the same email (an
            // address changed or reused there) does not take it over.
            if *setting == OIDC_SETTING
                && let Some(bound) = oidc
                && bound != id_json
            {
                tracing::warn!(email = %u.email, "another identity at the OpenID provider has this email");
                return Ok(Err(
                    "Your bai account belongs to another identity at the provider: ask the site's administrators.",
                ));
            }
            // Deactivated by the directory sync, and the directory vouches for them again.
            let left = store
                .user_setting(&info.id, LEFT_SETTING)?
                .is_some_and(|v| v != "null");
            if info.status == "inactive" && left && *setting == DN_SETTING {
                info.status = "active".into();
                store.set_user_setting(&info.id, LEFT_SETTING, "null")?;
                tracing::info!(email = %u.email, "a login through the directory reactivates the account");
            }
            if info.status != "active" {
                return Ok(Err(
                    "Your bai account is deactivated: ask the site's administrators.",
                ));
            }
            // A superadmin made by hand stays one; otherwise the site's groups decide.
            if info.role != "superadmin" {
                info.role = u.role().into();
            }
            if !u.full_name.is_empty() {
                info.full_name = u.full_name.clone();
            }
            let mut ids = project_ids;
            if let Some(default) = project_id(store, "default")? {
                ids.push(default);
            }
            store.update_user(&info, None, Some(ids.as_slice()))?;
            store.set_user_setting(&info.id, setting, &id_json)?;
        }
    }
    Ok(match store.keypair_by_email(&u.email)? {
        Some(kp) if kp.is_active && kp.user_active => Ok(kp),
        _ => Err("Your bai account has no active keypair: ask the site's administrators."),
    })
}

/// The ids of the named projects, each made when missing.
fn project_ids(store: &Store, names: &[String], made_by: &str) -> Result<Vec<String>, StoreError> {
    let mut ids = Vec::with_capacity(names.len());
    for name in names {
        if project_id(store, name)?.is_none() {
            store.create_project(name, &format!("made for a group of {made_by}"))?;
            tracing::info!(project = %name, from = made_by, "project made for a group");
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

    fn oidc(email: &str, sub: &str, admin: bool, projects: &[&str]) -> External {
        External {
            marker: (OIDC_SETTING, format!("https://sso.example.org#{sub}")),
            made_by: "the site's OpenID provider",
            uid: None,
            email: email.into(),
            full_name: String::new(),
            is_admin: admin,
            projects: projects.iter().map(|p| p.to_string()).collect(),
        }
    }

    #[test]
    fn one_provider_identity_per_account() {
        let store = bai_store::testing::store().unwrap();
        let kp = provision(&store, &oidc("eve@example.org", "s1", true, &["nlp"]))
            .unwrap()
            .unwrap();
        assert!(kp.is_admin);
        let info = store.user_by_email("eve@example.org").unwrap().unwrap();
        assert_eq!(info.username, "eve@example.org");
        assert_eq!(info.description, "from the site's OpenID provider");
        let again = provision(&store, &oidc("eve@example.org", "s1", false, &[]))
            .unwrap()
            .unwrap();
        assert_eq!(again.access_key, kp.access_key);
        assert!(!again.is_admin);
        // Another subject with the same email.
        assert!(
            provision(&store, &oidc("eve@example.org", "s2", false, &[]))
                .unwrap()
                .is_err()
        );
    }
}
