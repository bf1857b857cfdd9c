//! A directory login: search for the typed name as the service account, read the entry's
//! email and groups, then bind as the entry with the typed password. One connection per
//! login, every step within the configured timeout.

use crate::config::{LdapConfig, Transport};
use crate::filter::{escape_filter_value, membership_filter};
use crate::tls;
use ldap3::adapters::{Adapter, EntriesOnly, PagedResults};
use ldap3::{Ldap, LdapConnAsync, LdapConnSettings, LdapError, Scope, SearchEntry};
use std::collections::{HashMap, HashSet};
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
        let groups = self
            .groups_of(ldap, &dn, uid.as_deref(), &member_of)
            .await?;
        let is_admin = c.admin_group.as_deref().is_some_and(|g| groups.has(g));
        let mut projects = Vec::new();
        for gp in &c.group_projects {
            if !projects.contains(&gp.project) && groups.has(&gp.group_dn) {
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

    /// Which of the configured groups (admin, mapped) the entry `dn` is in, directly or
    /// through groups in groups. Active Directory is asked once per configured group with
    /// LDAP_MATCHING_RULE_IN_CHAIN; other directories are walked upwards level by level
    /// ([`MAX_DEPTH`] at most, each group once, so cycles end).
    async fn groups_of(
        &self,
        ldap: &mut Ldap,
        dn: &str,
        uid: Option<&str>,
        member_of: &[String],
    ) -> Result<Groups, LoginError> {
        let c = &self.config;
        let mut groups = Groups::default();
        for g in member_of {
            groups.add(g);
        }
        let wanted: Vec<&str> = c.wanted_groups().collect();
        if wanted.is_empty() {
            return Ok(groups);
        }
        if c.active_directory {
            let filter = format!("(member:{IN_CHAIN}:={})", escape_filter_value(dn));
            for g in wanted {
                if !groups.has(g) && self.base_matches(ldap, g, &filter).await? {
                    groups.add(g);
                }
            }
            return Ok(groups);
        }
        // Level 1: the groups listing the entry (by DN, or by uid for posixGroups), with
        // its memberOf; then the groups listing those, and so on.
        let mut level: Vec<String> = Vec::new();
        for g in member_of {
            level.push(g.clone());
        }
        for g in self
            .search_dns(ldap, &c.group_base, &membership_filter(dn, uid))
            .await?
        {
            if groups.add(&g) {
                level.push(g);
            }
        }
        let mut depth = 1;
        while !level.is_empty() && !wanted.iter().all(|w| groups.has(w)) {
            if depth >= MAX_DEPTH || groups.len() >= MAX_GROUPS {
                tracing::warn!(
                    user = dn,
                    depth,
                    groups = groups.len(),
                    "nested groups are followed no further"
                );
                break;
            }
            let mut next = Vec::new();
            for chunk in level.chunks(FILTER_CHUNK) {
                let filter = members_filter(chunk);
                for g in self.search_dns(ldap, &c.group_base, &filter).await? {
                    if groups.add(&g) {
                        next.push(g);
                    }
                }
            }
            level = next;
            depth += 1;
        }
        // A configured group outside the group base is asked directly.
        for g in wanted {
            if !groups.has(g)
                && !is_under(g, &c.group_base)
                && self
                    .base_matches(ldap, g, &membership_filter(dn, uid))
                    .await?
            {
                groups.add(g);
            }
        }
        Ok(groups)
    }

    /// Whether the entry `base` matches `filter`. An entry that does not exist does not.
    async fn base_matches(
        &self,
        ldap: &mut Ldap,
        base: &str,
        filter: &str,
    ) -> Result<bool, LoginError> {
        match ldap.search(base, Scope::Base, filter, vec!["1.1"]).await {
            Ok(r) => match r.success() {
                Ok((entries, _)) => Ok(entries.iter().any(|e| !e.is_ref())),
                Err(LdapError::LdapResult { result }) if result.rc == NO_SUCH_OBJECT => {
                    tracing::warn!(group = base, "a configured directory group does not exist");
                    Ok(false)
                }
                Err(e) => Err(unavailable(&self.config.url, &e)),
            },
            Err(e) => Err(unavailable(&self.config.url, &e)),
        }
    }

    /// The DNs of every entry under `base` matching `filter`, page by page (the Paged
    /// Results control), so a server's size limit never cuts the answer short unnoticed:
    /// a search the server ends early is an error.
    async fn search_dns(
        &self,
        ldap: &mut Ldap,
        base: &str,
        filter: &str,
    ) -> Result<Vec<String>, LoginError> {
        let url = &self.config.url;
        let adapters: Vec<Box<dyn Adapter<'_, &str, Vec<&str>>>> = vec![
            Box::new(EntriesOnly::new()),
            Box::new(PagedResults::new(PAGE_SIZE)),
        ];
        let mut stream = ldap
            .streaming_search_with(adapters, base, Scope::Subtree, filter, vec!["1.1"])
            .await
            .map_err(|e| unavailable(url, &e))?;
        let mut dns = Vec::new();
        while let Some(entry) = stream.next().await.map_err(|e| unavailable(url, &e))? {
            dns.push(SearchEntry::construct(entry).dn);
        }
        let result = stream.finish().await;
        match result.rc {
            0 => Ok(dns),
            NO_SUCH_OBJECT => {
                tracing::warn!(base, "the directory's group base does not exist");
                Ok(Vec::new())
            }
            rc => Err(LoginError::Unavailable(format!(
                "{url}: the search of {base} ended with result {rc} ({}) after {} entries",
                result.text,
                dns.len()
            ))),
        }
    }

    /// Asks the directory about accounts made from it, by their DNs: each is
    /// [`Presence::Present`], [`Presence::Missing`] (no such entry, or one the user filter
    /// no longer finds, or outside the user base) or [`Presence::Disabled`] (Active
    /// Directory's ACCOUNTDISABLE, a permanent ppolicy lock, `nsAccountLock`). Any trouble
    /// asking — the directory down, the service account refused, the user base gone — is
    /// an error for the whole list, so an outage never looks like people leaving.
    pub async fn check_accounts(&self, dns: &[String]) -> Result<Vec<Presence>, LoginError> {
        let c = &self.config;
        let within = |what: &'static str| {
            let url = c.url.clone();
            move |_| LoginError::Unavailable(format!("{url}: {what} took too long"))
        };
        let mut ldap = tokio::time::timeout(c.timeout, self.connect())
            .await
            .map_err(within("connecting"))??;
        let r = self.check_within(&mut ldap, dns).await;
        let _ = ldap.unbind().await;
        r
    }

    async fn check_within(
        &self,
        ldap: &mut Ldap,
        dns: &[String],
    ) -> Result<Vec<Presence>, LoginError> {
        let c = &self.config;
        let url = &c.url;
        let late = |_| LoginError::Unavailable(format!("{url} did not answer in time"));
        if let Some(svc) = &c.service {
            let r =
                tokio::time::timeout(c.timeout, ldap.simple_bind(&svc.dn, svc.password.expose()))
                    .await
                    .map_err(late)?
                    .map_err(|e| unavailable(url, &e))?;
            if r.rc != 0 {
                return Err(LoginError::Unavailable(format!(
                    "the service account {} cannot bind (result {}: {})",
                    svc.dn, r.rc, r.text
                )));
            }
        }
        // The user base itself must be there: a base gone (or unreadable) is no reason to
        // think everybody left.
        let base = tokio::time::timeout(
            c.timeout,
            ldap.search(&c.user_base, Scope::Base, "(objectClass=*)", vec!["1.1"]),
        )
        .await
        .map_err(late)?
        .and_then(|r| r.success())
        .map_err(|e| unavailable(url, &e))?;
        if !base.0.iter().any(|e| !e.is_ref()) {
            return Err(LoginError::Unavailable(format!(
                "{url}: the user base {} cannot be read",
                c.user_base
            )));
        }
        let filter = c
            .user_filter
            .template()
            .replace(crate::filter::USER_PLACEHOLDER, "*");
        let attrs = vec![
            "userAccountControl",
            "pwdAccountLockedTime",
            "nsAccountLock",
        ];
        let mut out = Vec::with_capacity(dns.len());
        for dn in dns {
            if !is_under(dn, &c.user_base) {
                out.push(Presence::Missing);
                continue;
            }
            let r = tokio::time::timeout(
                c.timeout,
                ldap.search(dn, Scope::Base, &filter, attrs.clone()),
            )
            .await
            .map_err(late)?
            .map_err(|e| unavailable(url, &e))?;
            let presence = match r.success() {
                Ok((entries, _)) => match entries.into_iter().find(|e| !e.is_ref()) {
                    None => Presence::Missing,
                    Some(e) => {
                        if disabled(&lower_keys(SearchEntry::construct(e).attrs)) {
                            Presence::Disabled
                        } else {
                            Presence::Present
                        }
                    }
                },
                Err(LdapError::LdapResult { result }) if result.rc == NO_SUCH_OBJECT => {
                    Presence::Missing
                }
                Err(e) => return Err(unavailable(url, &e)),
            };
            out.push(presence);
        }
        Ok(out)
    }
}

/// What the directory says of an account made from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    Present,
    Missing,
    Disabled,
}

/// Whether an entry's attributes (lower-case names) say the account is disabled.
fn disabled(attrs: &HashMap<String, Vec<String>>) -> bool {
    let first = |a: &str| attrs.get(a).and_then(|v| v.first()).map(|s| s.trim());
    // Active Directory: ACCOUNTDISABLE (0x2) of userAccountControl (not a lockout).
    let ad = first("useraccountcontrol")
        .and_then(|v| v.parse::<i64>().ok())
        .is_some_and(|v| v & 2 != 0);
    // OpenLDAP ppolicy: an administrator's permanent lock (a lockout after wrong passwords
    // has a real time and ends by itself: it must not cost anyone their keys).
    let ppolicy = first("pwdaccountlockedtime").is_some_and(|v| v == "000001010000Z");
    // 389 Directory Server / FreeIPA.
    let ns = first("nsaccountlock").is_some_and(|v| v.eq_ignore_ascii_case("true"));
    ad || ppolicy || ns
}

/// LDAP_MATCHING_RULE_IN_CHAIN: Active Directory's transitive match.
const IN_CHAIN: &str = "1.2.840.113556.1.4.1941";
/// noSuchObject.
const NO_SUCH_OBJECT: u32 = 32;
/// How many levels of groups in groups are followed.
pub const MAX_DEPTH: usize = 8;
/// How many groups one login follows at most.
const MAX_GROUPS: usize = 10_000;
/// Groups asked about in one filter.
const FILTER_CHUNK: usize = 50;
/// Entries per page of a paged search.
const PAGE_SIZE: i32 = 200;

/// The groups found for one login, compared as [`same_dn`] does.
#[derive(Debug, Default)]
struct Groups(HashSet<String>);

impl Groups {
    /// Adds a group; false when it was there already.
    fn add(&mut self, dn: &str) -> bool {
        self.0.insert(norm_dn(dn))
    }
    fn has(&self, dn: &str) -> bool {
        self.0.contains(&norm_dn(dn))
    }
    fn len(&self) -> usize {
        self.0.len()
    }
}

/// The filter for groups listing any of `groups` as a member.
fn members_filter(groups: &[String]) -> String {
    let mut f = String::from("(|");
    for g in groups {
        let v = escape_filter_value(g);
        f.push_str(&format!("(member={v})(uniqueMember={v})"));
    }
    f.push(')');
    f
}

/// Whether `dn` is `base` or below it.
fn is_under(dn: &str, base: &str) -> bool {
    let (d, b) = (norm_dn(dn), norm_dn(base));
    d == b || d.ends_with(&format!(",{b}"))
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
    norm_dn(a) == norm_dn(b)
}

fn norm_dn(s: &str) -> String {
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

#[cfg(test)]
#[path = "login_tests.rs"]
mod tests;
