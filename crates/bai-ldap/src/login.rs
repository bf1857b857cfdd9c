//! A directory login: search for the typed name as the service account, read the entry's
//! email and groups, then bind as the entry with the typed password. One connection per
//! login, every step within the configured timeout.

use crate::config::{LdapConfig, Transport};
use crate::filter::membership_filter;
use crate::tls;
use ldap3::{Ldap, LdapConnAsync, LdapConnSettings, LdapError, Scope, SearchEntry};
use std::collections::HashMap;
use std::sync::Arc;

/// Who the directory says logged in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectoryUser {
    /// The entry's DN.
    pub dn: String,
    /// The entry's `uid` (or `sAMAccountName`), if it has one.
    pub uid: Option<String>,
    /// From the configured email attribute, lower-cased.
    pub email: String,
    /// `displayName` or `cn`.
    pub full_name: String,
    /// A member of `--ldap-admin-group`.
    pub is_admin: bool,
    /// The bai projects of the mapped groups the user is in (in the mapping's order).
    pub projects: Vec<String>,
}

/// Why a directory login did not happen.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    /// No such user, several entries for the name, or a wrong password: said alike.
    #[error("wrong name or password")]
    Refused,
    /// The password was right but the entry has no email to make the account with.
    #[error("the directory entry has no {attr} attribute")]
    NoEmail { attr: String },
    /// The directory is down, did not answer in time, or refused the service account.
    #[error("the directory cannot be used: {0}")]
    Unavailable(String),
}

/// A configured directory, ready to check logins.
#[derive(Debug, Clone)]
pub struct Directory {
    config: Arc<LdapConfig>,
    tls: Option<Arc<rustls::ClientConfig>>,
}

/// Result codes of a bind that mean "not this user with this password": invalidCredentials,
/// inappropriateAuthentication, unwillingToPerform (AD: a disabled or locked account),
/// constraintViolation (password policies), insufficientAccessRights.
const REFUSED_BIND: [u32; 5] = [49, 48, 53, 19, 50];

impl Directory {
    /// A directory for `config` (its TLS settings built now, so a bad CA fails at start).
    pub fn new(config: LdapConfig) -> Result<Directory, crate::ConfigError> {
        let tls = match config.transport {
            Transport::Plain => None,
            Transport::StartTls | Transport::Tls => Some(tls::client_config(&config.ca)?),
        };
        Ok(Directory {
            config: Arc::new(config),
            tls,
        })
    }

    pub fn config(&self) -> &LdapConfig {
        &self.config
    }

    /// Checks `name` (a user name or an email) and `password` against the directory.
    pub async fn login(&self, name: &str, password: &str) -> Result<DirectoryUser, LoginError> {
        let name = name.trim();
        // An empty password would be an unauthenticated bind, which succeeds.
        if name.is_empty() || password.is_empty() {
            return Err(LoginError::Refused);
        }
        let timeout = self.config.timeout;
        match tokio::time::timeout(timeout, self.login_within(name, password)).await {
            Ok(r) => r,
            Err(_) => Err(LoginError::Unavailable(format!(
                "{} did not answer within {} s",
                self.config.url,
                timeout.as_secs()
            ))),
        }
    }

    async fn login_within(&self, name: &str, password: &str) -> Result<DirectoryUser, LoginError> {
        let mut ldap = self.connect().await?;
        let r = self.search_and_bind(&mut ldap, name, password).await;
        let _ = ldap.unbind().await;
        r
    }

    async fn connect(&self) -> Result<Ldap, LoginError> {
        let c = &self.config;
        let mut settings = LdapConnSettings::new()
            .set_conn_timeout(c.timeout)
            .set_starttls(c.transport == Transport::StartTls);
        if let Some(tls) = &self.tls {
            settings = settings.set_config(tls.clone());
        }
        let (conn, ldap) = LdapConnAsync::with_settings(settings, &c.url)
            .await
            .map_err(|e| unavailable(&c.url, &e))?;
        tokio::spawn(async move {
            if let Err(e) = conn.drive().await {
                tracing::debug!(error = %e, "directory connection ended");
            }
        });
        Ok(ldap)
    }

    async fn search_and_bind(
        &self,
        ldap: &mut Ldap,
        name: &str,
        password: &str,
    ) -> Result<DirectoryUser, LoginError> {
        let c = &self.config;
        if let Some(svc) = &c.service {
            match ldap.simple_bind(&svc.dn, svc.password.expose()).await {
                Ok(r) if r.rc == 0 => {}
                Ok(r) => {
                    return Err(LoginError::Unavailable(format!(
                        "the service account {} cannot bind (result {}: {})",
                        svc.dn, r.rc, r.text
                    )));
                }
                Err(e) => return Err(unavailable(&c.url, &e)),
            }
        }
        let filter = c.user_filter.fill(name, &c.email_attr);
        let attrs = [
            c.email_attr.as_str(),
            "uid",
            "sAMAccountName",
            "cn",
            "displayName",
            "memberOf",
        ];
        let found = ldap
            .search(&c.user_base, Scope::Subtree, &filter, attrs.to_vec())
            .await
            .and_then(|r| r.success())
            .map_err(|e| unavailable(&c.url, &e))?;
        let mut entries = found
            .0
            .into_iter()
            .filter(|e| !e.is_ref())
            .map(SearchEntry::construct);
        let (Some(entry), None) = (entries.next(), entries.next()) else {
            // None, or several (a filter that names more than one person): refused alike.
            return Err(LoginError::Refused);
        };
        let attrs = lower_keys(entry.attrs);
        let first = |a: &str| {
            attrs
                .get(&a.to_ascii_lowercase())
                .and_then(|v| v.first())
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        let email = first(&c.email_attr).map(|e| e.to_lowercase());
        let uid = first("uid").or_else(|| first("sAMAccountName"));
        let full_name = first("displayName")
            .or_else(|| first("cn"))
            .unwrap_or_default();
        let member_of: Vec<String> = attrs.get("memberof").cloned().unwrap_or_default();
        let dn = entry.dn;

        // Groups, while still bound as the service account (the user may not read them).
        let is_admin = match &c.admin_group {
            Some(g) => {
                self.is_member(ldap, g, &dn, uid.as_deref(), &member_of)
                    .await?
            }
            None => false,
        };
        let mut projects = Vec::new();
        for gp in &c.group_projects {
            if !projects.contains(&gp.project)
                && self
                    .is_member(ldap, &gp.group_dn, &dn, uid.as_deref(), &member_of)
                    .await?
            {
                projects.push(gp.project.clone());
            }
        }

        // The password: a bind as the entry.
        match ldap.simple_bind(&dn, password).await {
            Ok(r) if r.rc == 0 => {}
            Ok(r) if REFUSED_BIND.contains(&r.rc) => return Err(LoginError::Refused),
            Ok(r) => {
                return Err(LoginError::Unavailable(format!(
                    "the directory answered the user's bind with result {}: {}",
                    r.rc, r.text
                )));
            }
            Err(e) => return Err(unavailable(&c.url, &e)),
        }
        let email = email.ok_or_else(|| LoginError::NoEmail {
            attr: c.email_attr.clone(),
        })?;
        Ok(DirectoryUser {
            dn,
            uid,
            email,
            full_name,
            is_admin,
            projects,
        })
    }

    /// Whether the entry `dn` is in `group`: by its `memberOf`, else by the group's entry
    /// listing it (member, uniqueMember or memberUid). A group that does not exist has no
    /// members.
    async fn is_member(
        &self,
        ldap: &mut Ldap,
        group: &str,
        dn: &str,
        uid: Option<&str>,
        member_of: &[String],
    ) -> Result<bool, LoginError> {
        if member_of.iter().any(|m| same_dn(m, group)) {
            return Ok(true);
        }
        let filter = membership_filter(dn, uid);
        match ldap.search(group, Scope::Base, &filter, vec!["1.1"]).await {
            Ok(r) => match r.success() {
                Ok((entries, _)) => Ok(entries.iter().any(|e| !e.is_ref())),
                Err(LdapError::LdapResult { result }) if result.rc == 32 => {
                    tracing::warn!(group, "a configured directory group does not exist");
                    Ok(false)
                }
                Err(e) => Err(unavailable(&self.config.url, &e)),
            },
            Err(e) => Err(unavailable(&self.config.url, &e)),
        }
    }
}

fn unavailable(url: &str, e: &LdapError) -> LoginError {
    LoginError::Unavailable(format!("{url}: {e}"))
}

fn lower_keys(attrs: HashMap<String, Vec<String>>) -> HashMap<String, Vec<String>> {
    attrs
        .into_iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v))
        .collect()
}

/// Two DNs alike but for case and spaces around the separators (enough for `memberOf`
/// values against a configured group).
pub fn same_dn(a: &str, b: &str) -> bool {
    fn norm(s: &str) -> String {
        s.split(',')
            .map(|rdn| {
                rdn.split('=')
                    .map(|p| p.trim().to_lowercase())
                    .collect::<Vec<_>>()
                    .join("=")
            })
            .collect::<Vec<_>>()
            .join(",")
    }
    norm(a) == norm(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_compare_without_case_or_spaces() {
        assert!(same_dn(
            "CN=Vision, OU=Groups,DC=example,DC=org",
            "cn=vision,ou=groups,dc=example,dc=org"
        ));
        assert!(!same_dn("cn=vision,dc=x", "cn=vision2,dc=x"));
    }

    #[tokio::test]
    async fn empty_passwords_never_reach_the_directory() {
        let c = LdapConfig::from_settings(crate::LdapSettings {
            // Nothing listens there; an empty password must be refused before connecting.
            url: Some("ldap://127.0.0.1:1".into()),
            user_base: Some("dc=x".into()),
            ..Default::default()
        })
        .unwrap()
        .unwrap();
        let d = Directory::new(c).unwrap();
        assert!(matches!(
            d.login("alice", "").await,
            Err(LoginError::Refused)
        ));
        assert!(matches!(
            d.login("  ", "pw").await,
            Err(LoginError::Refused)
        ));
        assert!(matches!(
            d.login("alice", "pw").await,
            Err(LoginError::Unavailable(_))
        ));
    }
}
