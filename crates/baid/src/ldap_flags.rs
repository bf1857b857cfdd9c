//! `baid up --ldap-*`: the site's LDAP / Active Directory for web logins (issue 60), read
//! into a checked `bai_ldap::LdapConfig` here, at the edge (files read, combinations checked).

use anyhow::{Context, Result};
use bai_ldap::{LdapConfig, LdapSettings, Secret};
use std::path::PathBuf;

/// The default `--ldap-sync-interval`, 5 minutes.
const DEFAULT_SYNC_SECS: u64 = 300;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct LdapArgs {
    /// The site's LDAP / Active Directory for web logins, `ldap://HOST:PORT` or
    /// `ldaps://HOST:PORT`: a name that is no local account is looked up there
    /// (docs/AUTH.md). Off when not given.
    #[arg(long, env = "BAI_LDAP_URL", value_name = "URL")]
    pub ldap_url: Option<String>,
    /// Upgrade an `ldap://` connection with StartTLS.
    #[arg(long, env = "BAI_LDAP_STARTTLS")]
    pub ldap_starttls: bool,
    /// The CA certificates (PEM) the directory's TLS certificate is checked against
    /// (default: the system's).
    #[arg(long, env = "BAI_LDAP_CA", value_name = "FILE")]
    pub ldap_ca: Option<PathBuf>,
    /// The service account that searches for users (default: an anonymous search).
    #[arg(long, env = "BAI_LDAP_BIND_DN", value_name = "DN")]
    pub ldap_bind_dn: Option<String>,
    /// A file holding the service account's password (one line).
    #[arg(long, env = "BAI_LDAP_BIND_PASSWORD_FILE", value_name = "FILE")]
    pub ldap_bind_password_file: Option<PathBuf>,
    /// Where users are searched, e.g. `ou=people,dc=example,dc=org`.
    #[arg(long, env = "BAI_LDAP_USER_BASE", value_name = "DN")]
    pub ldap_user_base: Option<String>,
    /// The search filter; `{user}` is the typed name, escaped as RFC 4515 says
    /// (default `(uid={user})`; Active Directory: `(sAMAccountName={user})`). A name with
    /// an `@` is also looked up by --ldap-email-attr.
    #[arg(long, env = "BAI_LDAP_USER_FILTER", value_name = "FILTER")]
    pub ldap_user_filter: Option<String>,
    /// The attribute holding a user's email (default `mail`).
    #[arg(long, env = "BAI_LDAP_EMAIL_ATTR", value_name = "ATTR")]
    pub ldap_email_attr: Option<String>,
    /// Members of this group are bai administrators (their role is set at every login).
    #[arg(long, env = "BAI_LDAP_ADMIN_GROUP", value_name = "DN")]
    pub ldap_admin_group: Option<String>,
    /// Members of the group GROUP_DN are in the bai project PROJECT (made when missing),
    /// e.g. `cn=vision,ou=groups,dc=example,dc=org=vision`; repeatable (the environment
    /// variable takes a `;`-separated list). Memberships follow the directory at every login.
    #[arg(
        long = "ldap-group-project",
        env = "BAI_LDAP_GROUP_PROJECTS",
        value_delimiter = ';',
        value_name = "GROUP_DN=PROJECT"
    )]
    pub ldap_group_project: Vec<String>,
    /// Where groups are searched when groups in groups are followed (default: the DN suffix
    /// --ldap-user-base and the configured groups share, e.g. `dc=example,dc=org`).
    #[arg(long, env = "BAI_LDAP_GROUP_BASE", value_name = "DN")]
    pub ldap_group_base: Option<String>,
    /// The directory is Active Directory: nested groups are asked of it with
    /// LDAP_MATCHING_RULE_IN_CHAIN (other directories: followed level by level, 8 at most).
    #[arg(long, env = "BAI_LDAP_ACTIVE_DIRECTORY")]
    pub ldap_active_directory: bool,
    /// How often bai checks the accounts made from the directory against it: removed or
    /// disabled entries are deactivated (their keypairs stop working), returning ones
    /// reactivated. `0` or `off`: never.
    #[arg(
        long,
        env = "BAI_LDAP_SYNC_INTERVAL",
        value_name = "DURATION",
        default_value = "5m"
    )]
    pub ldap_sync_interval: String,
}

impl LdapArgs {
    /// The checked configuration, None when no `--ldap-*` flag is given. Reads the CA and
    /// password files; the error is one line naming the flag.
    pub fn config(&self) -> Result<Option<LdapConfig>> {
        let ca = match &self.ldap_ca {
            Some(p) => Some((
                p.display().to_string(),
                std::fs::read(p).with_context(|| format!("--ldap-ca {}", p.display()))?,
            )),
            None => None,
        };
        let bind_password = match &self.ldap_bind_password_file {
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .with_context(|| format!("--ldap-bind-password-file {}", p.display()))?;
                Some(Secret::new(text.trim_end_matches(['\r', '\n'])))
            }
            None => None,
        };
        let sync = self.ldap_sync_interval.trim();
        let sync_interval = if sync.eq_ignore_ascii_case("off") {
            None
        } else if sync.is_empty() {
            Some(std::time::Duration::from_secs(DEFAULT_SYNC_SECS))
        } else {
            Some(
                bai_core::parse_duration(sync)
                    .map_err(|e| anyhow::anyhow!("--ldap-sync-interval {sync:?}: {e}"))?,
            )
        };
        Ok(LdapConfig::from_settings(LdapSettings {
            url: self.ldap_url.clone(),
            starttls: self.ldap_starttls,
            ca,
            bind_dn: self.ldap_bind_dn.clone(),
            bind_password,
            user_base: self.ldap_user_base.clone(),
            user_filter: self.ldap_user_filter.clone(),
            email_attr: self.ldap_email_attr.clone(),
            admin_group: self.ldap_admin_group.clone(),
            group_projects: self.ldap_group_project.clone(),
            group_base: self.ldap_group_base.clone(),
            active_directory: self.ldap_active_directory,
            sync_interval,
        })?)
    }

    /// The directory to give the manager (none without `--ldap-url`).
    pub fn directory(&self) -> Result<Option<bai_ldap::Directory>> {
        self.config().and_then(|c| {
            c.map(bai_ldap::Directory::new)
                .transpose()
                .map_err(Into::into)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_flags_no_directory_and_files_are_read() {
        assert!(LdapArgs::default().config().unwrap().is_none());
        let dir = std::env::temp_dir().join(format!("bai-ldap-flags-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pw = dir.join("pw");
        std::fs::write(&pw, "s3cret\n").unwrap();
        let c = LdapArgs {
            ldap_url: Some("ldap://127.0.0.1:3890".into()),
            ldap_bind_dn: Some("cn=svc,dc=x".into()),
            ldap_bind_password_file: Some(pw),
            ldap_user_base: Some("ou=people,dc=x".into()),
            ..Default::default()
        }
        .config()
        .unwrap()
        .unwrap();
        assert_eq!(c.service.unwrap().password.expose(), "s3cret");
        let with = |every: &str| LdapArgs {
            ldap_url: Some("ldap://127.0.0.1:3890".into()),
            ldap_user_base: Some("ou=people,dc=x".into()),
            ldap_sync_interval: every.into(),
            ..Default::default()
        };
        assert_eq!(
            with("5m").config().unwrap().unwrap().sync_interval,
            Some(std::time::Duration::from_secs(300))
        );
        assert_eq!(with("off").config().unwrap().unwrap().sync_interval, None);
        assert_eq!(with("0").config().unwrap().unwrap().sync_interval, None);
        let e = with("soon").config().unwrap_err();
        assert!(
            format!("{e:#}").starts_with("--ldap-sync-interval"),
            "{e:#}"
        );
        let e = LdapArgs {
            ldap_url: Some("ldap://h".into()),
            ldap_bind_dn: Some("cn=svc,dc=x".into()),
            ldap_bind_password_file: Some(dir.join("missing")),
            ldap_user_base: Some("ou=people,dc=x".into()),
            ..Default::default()
        }
        .config()
        .unwrap_err();
        assert!(
            format!("{e:#}").starts_with("--ldap-bind-password-file"),
            "{e:#}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
