//! The directory's configuration as `baid up` gives it: checked once, at the edge, into
//! typed parts ([`LdapConfig`]); a bad combination is one [`ConfigError`] line.

use crate::filter::UserFilter;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use std::time::Duration;

/// A configuration that cannot work, said in one line naming the flag.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{0}")]
    Missing(String),
    #[error("--ldap-url {0}")]
    Url(String),
    #[error("--ldap-user-filter {0}")]
    Filter(String),
    #[error("--ldap-group-project {0}")]
    GroupProject(String),
    #[error("--ldap-ca: {0}")]
    Ca(String),
    #[error("{0}")]
    Invalid(String),
}

/// A password that never prints (Debug shows `<hidden>`).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Secret {
        Secret(s.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<hidden>")
    }
}

/// The service account that searches the directory.
#[derive(Debug, Clone)]
pub struct ServiceAccount {
    pub dn: String,
    pub password: Secret,
}

/// A directory group whose members join a bai project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupProject {
    pub group_dn: String,
    pub project: String,
}

impl GroupProject {
    /// `GROUP_DN=project`: the project is what follows the last `=` (a DN has `=` of its
    /// own, a project name none).
    pub fn parse(s: &str) -> Result<GroupProject, ConfigError> {
        let bad = |why: &str| ConfigError::GroupProject(format!("{s:?}: {why}"));
        let (dn, project) = s
            .rsplit_once('=')
            .ok_or_else(|| bad("write it as GROUP_DN=project"))?;
        let (dn, project) = (dn.trim(), project.trim());
        if !dn.contains('=') {
            return Err(bad(
                "the group must be a DN, e.g. cn=vision,ou=groups,dc=example,dc=org=vision",
            ));
        }
        if project.is_empty()
            || project.len() > 64
            || !project
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            return Err(bad(
                "the project name is letters, digits, '-', '_' or '.' (at most 64)",
            ));
        }
        Ok(GroupProject {
            group_dn: dn.to_string(),
            project: project.to_string(),
        })
    }
}

/// How the connection is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// `ldap://` without TLS (a site's loopback or a test directory).
    Plain,
    /// `ldap://` upgraded with StartTLS.
    StartTls,
    /// `ldaps://`.
    Tls,
}

/// Everything `baid up --ldap-*` says, checked.
#[derive(Debug, Clone)]
pub struct LdapConfig {
    /// `ldap://HOST:PORT` or `ldaps://HOST:PORT`.
    pub url: String,
    pub transport: Transport,
    /// Certificates to trust instead of the system's (PEM, `--ldap-ca`).
    pub ca: Vec<CertificateDer<'static>>,
    /// None: the search binds anonymously.
    pub service: Option<ServiceAccount>,
    pub user_base: String,
    pub user_filter: UserFilter,
    pub email_attr: String,
    pub admin_group: Option<String>,
    pub group_projects: Vec<GroupProject>,
    /// Where the groups that hold other groups are searched when nested groups are followed
    /// (`--ldap-group-base`; default: the DN suffix the user base and the configured groups
    /// share).
    pub group_base: String,
    /// The server is Active Directory (`--ldap-active-directory`): nested groups are
    /// asked of it with LDAP_MATCHING_RULE_IN_CHAIN instead of followed level by level.
    pub active_directory: bool,
    /// How often the directory's accounts are checked against the directory (None: never).
    pub sync_interval: Option<Duration>,
    /// How long one login may wait for the directory.
    pub timeout: Duration,
}

impl LdapConfig {
    /// The groups a login asks about: the admin group, then the mapped groups.
    pub fn wanted_groups(&self) -> impl Iterator<Item = &str> {
        self.admin_group
            .iter()
            .map(String::as_str)
            .chain(self.group_projects.iter().map(|g| g.group_dn.as_str()))
    }
}

/// The flags as given (files already read), before they are checked.
#[derive(Debug, Clone, Default)]
pub struct LdapSettings {
    pub url: Option<String>,
    pub starttls: bool,
    /// The CA file's name and contents.
    pub ca: Option<(String, Vec<u8>)>,
    pub bind_dn: Option<String>,
    pub bind_password: Option<Secret>,
    pub user_base: Option<String>,
    pub user_filter: Option<String>,
    pub email_attr: Option<String>,
    pub admin_group: Option<String>,
    pub group_projects: Vec<String>,
    pub group_base: Option<String>,
    pub active_directory: bool,
    /// None: no background check of the directory's accounts.
    pub sync_interval: Option<Duration>,
}

impl LdapSettings {
    /// Whether any `--ldap-*` flag was given besides the URL.
    fn any_besides_url(&self) -> Option<&'static str> {
        [
            (self.starttls, "--ldap-starttls"),
            (self.ca.is_some(), "--ldap-ca"),
            (self.bind_dn.is_some(), "--ldap-bind-dn"),
            (self.bind_password.is_some(), "--ldap-bind-password-file"),
            (self.user_base.is_some(), "--ldap-user-base"),
            (self.user_filter.is_some(), "--ldap-user-filter"),
            (self.email_attr.is_some(), "--ldap-email-attr"),
            (self.admin_group.is_some(), "--ldap-admin-group"),
            (!self.group_projects.is_empty(), "--ldap-group-project"),
            (self.group_base.is_some(), "--ldap-group-base"),
            (self.active_directory, "--ldap-active-directory"),
        ]
        .into_iter()
        .find(|(given, _)| *given)
        .map(|(_, flag)| flag)
    }
}

/// The default `--ldap-user-filter`.
pub const DEFAULT_USER_FILTER: &str = "(uid={user})";
/// The default `--ldap-email-attr`.
pub const DEFAULT_EMAIL_ATTR: &str = "mail";

impl LdapConfig {
    /// Checks the flags: None when no `--ldap-*` flag is given (local accounts only).
    pub fn from_settings(s: LdapSettings) -> Result<Option<LdapConfig>, ConfigError> {
        let Some(url) = s.url.as_deref().map(str::trim).filter(|u| !u.is_empty()) else {
            return match s.any_besides_url() {
                Some(flag) => Err(ConfigError::Missing(format!(
                    "{flag} needs --ldap-url ldap[s]://HOST:PORT"
                ))),
                None => Ok(None),
            };
        };
        let transport = transport_of(url, s.starttls)?;
        let ca = match &s.ca {
            Some((name, pem)) => {
                if transport == Transport::Plain {
                    return Err(ConfigError::Invalid(
                        "--ldap-ca needs an ldaps:// URL or --ldap-starttls".into(),
                    ));
                }
                parse_ca(name, pem)?
            }
            None => Vec::new(),
        };
        let service = match (s.bind_dn, s.bind_password) {
            (Some(dn), Some(password)) if !dn.trim().is_empty() => {
                if password.expose().is_empty() {
                    return Err(ConfigError::Invalid(
                        "--ldap-bind-password-file: the file is empty".into(),
                    ));
                }
                Some(ServiceAccount {
                    dn: dn.trim().to_string(),
                    password,
                })
            }
            (None, None) => None,
            (Some(_), None) => {
                return Err(ConfigError::Missing(
                    "--ldap-bind-dn needs --ldap-bind-password-file FILE".into(),
                ));
            }
            _ => {
                return Err(ConfigError::Missing(
                    "--ldap-bind-password-file needs --ldap-bind-dn DN".into(),
                ));
            }
        };
        let user_base = s
            .user_base
            .map(|b| b.trim().to_string())
            .filter(|b| b.contains('='))
            .ok_or_else(|| {
                ConfigError::Missing(
                    "--ldap-url needs --ldap-user-base DN (where users are searched, e.g. ou=people,dc=example,dc=org)"
                        .into(),
                )
            })?;
        let user_filter =
            UserFilter::parse(s.user_filter.as_deref().unwrap_or(DEFAULT_USER_FILTER))?;
        let email_attr = s
            .email_attr
            .map(|a| a.trim().to_string())
            .unwrap_or_else(|| DEFAULT_EMAIL_ATTR.to_string());
        if email_attr.is_empty()
            || !email_attr
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == ';')
        {
            return Err(ConfigError::Invalid(format!(
                "--ldap-email-attr {email_attr:?} is not an attribute name"
            )));
        }
        let admin_group = match s.admin_group.map(|g| g.trim().to_string()) {
            Some(g) if !g.contains('=') => {
                return Err(ConfigError::Invalid(format!(
                    "--ldap-admin-group {g:?} is not a DN"
                )));
            }
            g => g,
        };
        let group_projects = s
            .group_projects
            .iter()
            .map(|g| GroupProject::parse(g))
            .collect::<Result<Vec<_>, _>>()?;
        let group_base = match s.group_base.map(|b| b.trim().to_string()) {
            Some(b) if !b.contains('=') => {
                return Err(ConfigError::Invalid(format!(
                    "--ldap-group-base {b:?} is not a DN"
                )));
            }
            Some(b) => b,
            None => {
                let groups = admin_group
                    .iter()
                    .chain(group_projects.iter().map(|g| &g.group_dn));
                let base = groups.fold(user_base.clone(), |a, g| common_suffix(&a, g));
                if base.is_empty() && !s.active_directory {
                    return Err(ConfigError::Missing(
                        "the groups and --ldap-user-base share no DN suffix: say where groups are searched with --ldap-group-base DN".into(),
                    ));
                }
                base
            }
        };
        Ok(Some(LdapConfig {
            url: url.to_string(),
            transport,
            ca,
            service,
            user_base,
            user_filter,
            email_attr,
            admin_group,
            group_projects,
            group_base,
            active_directory: s.active_directory,
            sync_interval: s.sync_interval.filter(|d| !d.is_zero()),
            timeout: Duration::from_secs(5),
        }))
    }
}

/// The RDNs two DNs end with alike (compared as [`crate::same_dn`] does), as written in `a`;
/// empty when none.
pub fn common_suffix(a: &str, b: &str) -> String {
    let ra: Vec<&str> = a.split(',').collect();
    let rb: Vec<&str> = b.split(',').collect();
    let n = ra
        .iter()
        .rev()
        .zip(rb.iter().rev())
        .take_while(|(x, y)| crate::same_dn(x, y))
        .count();
    ra[ra.len() - n..]
        .iter()
        .map(|r| r.trim())
        .collect::<Vec<_>>()
        .join(",")
}

fn transport_of(url: &str, starttls: bool) -> Result<Transport, ConfigError> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| ConfigError::Url(format!("{url:?}: write it as ldap[s]://HOST:PORT")))?;
    let host = rest.trim_end_matches('/');
    if host.is_empty() || host.contains('/') || host.contains('?') {
        return Err(ConfigError::Url(format!(
            "{url:?}: write it as ldap[s]://HOST:PORT (no base DN or options in it)"
        )));
    }
    match (scheme.to_ascii_lowercase().as_str(), starttls) {
        ("ldap", false) => Ok(Transport::Plain),
        ("ldap", true) => Ok(Transport::StartTls),
        ("ldaps", false) => Ok(Transport::Tls),
        ("ldaps", true) => Err(ConfigError::Invalid(
            "--ldap-starttls is for ldap:// URLs; ldaps:// is TLS from the start".into(),
        )),
        (other, _) => Err(ConfigError::Url(format!(
            "{url:?}: the scheme is ldap or ldaps, not {other:?}"
        ))),
    }
}

fn parse_ca(name: &str, pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, ConfigError> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ConfigError::Ca(format!("{name}: {e}")))?;
    if certs.is_empty() {
        return Err(ConfigError::Ca(format!("{name} holds no PEM certificate")));
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> LdapSettings {
        LdapSettings {
            url: Some("ldap://127.0.0.1:3890".into()),
            user_base: Some("ou=people,dc=example,dc=org".into()),
            ..Default::default()
        }
    }

    fn err(s: LdapSettings) -> String {
        LdapConfig::from_settings(s).unwrap_err().to_string()
    }

    #[test]
    fn nothing_given_is_no_directory() {
        assert!(
            LdapConfig::from_settings(LdapSettings::default())
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn defaults_and_parts() {
        let c = LdapConfig::from_settings(LdapSettings {
            bind_dn: Some("cn=svc,dc=example,dc=org".into()),
            bind_password: Some(Secret::new("pw")),
            admin_group: Some("cn=admins,ou=groups,dc=example,dc=org".into()),
            group_projects: vec!["cn=vision,ou=groups,dc=example,dc=org=vision".into()],
            ..base()
        })
        .unwrap()
        .unwrap();
        assert_eq!(c.transport, Transport::Plain);
        assert_eq!(c.user_filter.template(), "(uid={user})");
        assert_eq!(c.email_attr, "mail");
        assert_eq!(
            c.group_projects,
            vec![GroupProject {
                group_dn: "cn=vision,ou=groups,dc=example,dc=org".into(),
                project: "vision".into()
            }]
        );
        // The password never prints.
        assert!(!format!("{c:?}").contains("pw\""));
        assert!(format!("{c:?}").contains("<hidden>"));
    }

    #[test]
    fn bad_combinations_say_which_flag() {
        let e = err(LdapSettings {
            user_base: Some("ou=people,dc=x".into()),
            ..Default::default()
        });
        assert!(e.contains("--ldap-user-base needs --ldap-url"), "{e}");
        let e = err(LdapSettings {
            user_base: None,
            ..base()
        });
        assert!(e.contains("--ldap-user-base"), "{e}");
        let e = err(LdapSettings {
            bind_dn: Some("cn=svc,dc=x".into()),
            ..base()
        });
        assert!(e.contains("--ldap-bind-password-file"), "{e}");
        let e = err(LdapSettings {
            bind_password: Some(Secret::new("x")),
            ..base()
        });
        assert!(e.contains("needs --ldap-bind-dn"), "{e}");
        let e = err(LdapSettings {
            url: Some("ldaps://h:636".into()),
            starttls: true,
            ..base()
        });
        assert!(e.contains("--ldap-starttls"), "{e}");
        let e = err(LdapSettings {
            ca: Some(("ca.pem".into(), b"-----BEGIN CERTIFICATE-----".to_vec())),
            ..base()
        });
        assert!(e.contains("--ldap-ca needs"), "{e}");
        let e = err(LdapSettings {
            url: Some("ldaps://h:636".into()),
            ca: Some(("ca.pem".into(), b"nothing".to_vec())),
            ..base()
        });
        assert!(e.contains("ca.pem holds no PEM certificate"), "{e}");
        let e = err(LdapSettings {
            url: Some("http://h".into()),
            ..base()
        });
        assert!(e.contains("--ldap-url"), "{e}");
        let e = err(LdapSettings {
            url: Some("ldap://h/dc=x".into()),
            ..base()
        });
        assert!(e.contains("no base DN"), "{e}");
        let e = err(LdapSettings {
            user_filter: Some("uid={user}".into()),
            ..base()
        });
        assert!(e.starts_with("--ldap-user-filter"), "{e}");
        let e = err(LdapSettings {
            email_attr: Some("mail)(x".into()),
            ..base()
        });
        assert!(e.contains("--ldap-email-attr"), "{e}");
        let e = err(LdapSettings {
            admin_group: Some("admins".into()),
            ..base()
        });
        assert!(e.contains("--ldap-admin-group"), "{e}");
    }

    #[test]
    fn the_group_base_defaults_to_the_shared_suffix() {
        let c = LdapConfig::from_settings(LdapSettings {
            admin_group: Some("cn=admins,ou=groups,dc=example,dc=org".into()),
            group_projects: vec!["CN=vision, OU=groups,DC=Example,DC=org=vision".into()],
            ..base()
        })
        .unwrap()
        .unwrap();
        assert_eq!(c.group_base, "dc=example,dc=org");
        assert_eq!(
            c.wanted_groups().collect::<Vec<_>>(),
            [
                "cn=admins,ou=groups,dc=example,dc=org",
                "CN=vision, OU=groups,DC=Example,DC=org"
            ]
        );
        assert_eq!(common_suffix("ou=a,dc=x", "ou=b,dc=y"), "");
        let e = err(LdapSettings {
            admin_group: Some("cn=admins,dc=elsewhere".into()),
            ..base()
        });
        assert!(e.contains("--ldap-group-base"), "{e}");
        let c = LdapConfig::from_settings(LdapSettings {
            admin_group: Some("cn=admins,dc=elsewhere".into()),
            group_base: Some("dc=elsewhere".into()),
            sync_interval: Some(Duration::ZERO),
            ..base()
        })
        .unwrap()
        .unwrap();
        assert_eq!(c.group_base, "dc=elsewhere");
        assert_eq!(c.sync_interval, None);
    }

    #[test]
    fn group_project_mappings() {
        assert_eq!(
            GroupProject::parse("cn=a,dc=x = ml-1").unwrap(),
            GroupProject {
                group_dn: "cn=a,dc=x".into(),
                project: "ml-1".into()
            }
        );
        for bad in [
            "vision",
            "cn=a,dc=x=",
            "admins=vision",
            "cn=a,dc=x=two words",
        ] {
            let e = GroupProject::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with("--ldap-group-project"), "{bad}: {e}");
        }
    }
}
