//! The web login through the site's directory (`baid up --ldap-url …`, issue 60): a name
//! that is no local account is checked by `bai_ldap::Directory`, and the bai account is made
//! on the first login (email from the directory, role from the admin group, projects from the
//! group mapping, a keypair) and brought in line with the directory on every later one.
//!
//! Accounts made so are marked by the user setting [`DN_SETTING`] (the entry's DN); a local
//! account (one without it) is never taken over by a directory entry with its email.

use super::external::{self, External};
use bai_ldap::{Directory, DirectoryUser, LoginError};
use bai_store::{KeypairRow, Store, StoreError};

/// The user setting that marks an account as the directory's: the entry's DN (JSON text).
pub const DN_SETTING: &str = external::DN_SETTING;

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
