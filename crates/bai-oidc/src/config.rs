//! The provider's configuration as `baid up --oidc-*` gives it: checked once, at the edge,
//! into [`OidcConfig`]; a bad combination is one [`ConfigError`] line naming the flag.

use std::time::Duration;

/// A configuration that cannot work, said in one line naming the flag.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{0}")]
    Missing(String),
    #[error("--oidc-issuer {0}")]
    Issuer(String),
    #[error("--oidc-group-project {0}")]
    GroupProject(String),
    #[error("{0}")]
    Invalid(String),
}

/// A client secret that never prints (Debug shows `<hidden>`).
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

/// Members of a provider group join a bai project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupProject {
    pub group: String,
    pub project: String,
}

impl GroupProject {
    /// `GROUP=project`: the project is what follows the last `=` (a group name may have `=`
    /// of its own, a project name none).
    pub fn parse(s: &str) -> Result<GroupProject, ConfigError> {
        let bad = |why: &str| ConfigError::GroupProject(format!("{s:?}: {why}"));
        let (group, project) = s
            .rsplit_once('=')
            .ok_or_else(|| bad("write it as GROUP=project"))?;
        let (group, project) = (group.trim(), project.trim());
        if group.is_empty() {
            return Err(bad("the group is empty"));
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
            group: group.to_string(),
            project: project.to_string(),
        })
    }
}

/// Everything `baid up --oidc-*` says, checked.
#[derive(Debug, Clone)]
pub struct OidcConfig {
    /// The issuer, exactly as the provider's discovery document and ID tokens say it.
    pub issuer: String,
    pub client_id: String,
    pub client_secret: Secret,
    /// What the login button says: "Log in with {name}".
    pub name: String,
    /// The ID token claim that lists the user's groups.
    pub groups_claim: String,
    /// The scopes asked for (always with `openid`).
    pub scopes: String,
    /// Members of this group are bai administrators (set at every login).
    pub admin_group: Option<String>,
    pub group_projects: Vec<GroupProject>,
    /// The callback URL registered at the provider; None: this server's own
    /// (`{scheme}://{Host}/server/oidc/callback`).
    pub redirect_uri: Option<String>,
    /// How long one request to the provider may take.
    pub timeout: Duration,
}

/// The flags as given (the secret file already read), before they are checked.
#[derive(Debug, Clone, Default)]
pub struct OidcSettings {
    pub issuer: Option<String>,
    pub client_id: Option<String>,
    pub client_secret: Option<Secret>,
    pub name: Option<String>,
    pub groups_claim: Option<String>,
    pub scopes: Option<String>,
    pub admin_group: Option<String>,
    pub group_projects: Vec<String>,
    pub redirect_uri: Option<String>,
}

impl OidcConfig {
    /// The checked configuration; None when no `--oidc-*` flag is given.
    pub fn from_settings(s: OidcSettings) -> Result<Option<OidcConfig>, ConfigError> {
        let Some(issuer) = s.issuer.clone() else {
            let given = [
                (s.client_id.is_some(), "--oidc-client-id"),
                (s.client_secret.is_some(), "--oidc-client-secret-file"),
                (s.name.is_some(), "--oidc-name"),
                (s.groups_claim.is_some(), "--oidc-groups-claim"),
                (s.scopes.is_some(), "--oidc-scopes"),
                (s.admin_group.is_some(), "--oidc-admin-group"),
                (!s.group_projects.is_empty(), "--oidc-group-project"),
                (s.redirect_uri.is_some(), "--oidc-redirect-uri"),
            ]
            .into_iter()
            .find(|(on, _)| *on);
            return match given {
                Some((_, flag)) => Err(ConfigError::Missing(format!(
                    "{flag} needs --oidc-issuer (the provider's issuer URL)"
                ))),
                None => Ok(None),
            };
        };
        let issuer = issuer.trim().to_string();
        check_url(&issuer).map_err(|why| ConfigError::Issuer(format!("{issuer:?}: {why}")))?;
        let client_id = s
            .client_id
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .ok_or_else(|| ConfigError::Missing("--oidc-issuer needs --oidc-client-id".into()))?;
        let client_secret = s
            .client_secret
            .filter(|c| !c.expose().is_empty())
            .ok_or_else(|| {
                ConfigError::Missing(
                    "--oidc-issuer needs --oidc-client-secret-file (a file holding the client secret)"
                        .into(),
                )
            })?;
        if let Some(r) = &s.redirect_uri {
            check_url(r)
                .map_err(|why| ConfigError::Invalid(format!("--oidc-redirect-uri {r:?}: {why}")))?;
        }
        let mut scopes: Vec<String> = s
            .scopes
            .as_deref()
            .unwrap_or("openid email profile")
            .split([' ', ','])
            .filter(|w| !w.is_empty())
            .map(String::from)
            .collect();
        if !scopes.iter().any(|w| w == "openid") {
            scopes.insert(0, "openid".into());
        }
        let groups_claim = s
            .groups_claim
            .map(|g| g.trim().to_string())
            .filter(|g| !g.is_empty())
            .unwrap_or_else(|| "groups".into());
        Ok(Some(OidcConfig {
            issuer,
            client_id,
            client_secret,
            name: s
                .name
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| "single sign-on".into()),
            groups_claim,
            scopes: scopes.join(" "),
            admin_group: s.admin_group.filter(|g| !g.trim().is_empty()),
            group_projects: s
                .group_projects
                .iter()
                .filter(|g| !g.trim().is_empty())
                .map(|g| GroupProject::parse(g))
                .collect::<Result<_, _>>()?,
            redirect_uri: s.redirect_uri,
            timeout: Duration::from_secs(10),
        }))
    }

    /// Whether these groups make an administrator.
    pub fn is_admin(&self, groups: &[String]) -> bool {
        self.admin_group
            .as_ref()
            .is_some_and(|a| groups.contains(a))
    }

    /// The bai projects these groups map to (each once, in the mapping's order).
    pub fn projects(&self, groups: &[String]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for m in &self.group_projects {
            if groups.contains(&m.group) && !out.contains(&m.project) {
                out.push(m.project.clone());
            }
        }
        out
    }
}

/// `https://…`, or `http://` to a loopback host (a provider on this machine, as in tests).
fn check_url(u: &str) -> Result<(), &'static str> {
    if let Some(rest) = u.strip_prefix("https://") {
        return if rest.is_empty() || rest.starts_with('/') {
            Err("has no host")
        } else {
            Ok(())
        };
    }
    let Some(rest) = u.strip_prefix("http://") else {
        return Err("must start with https://");
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = match host.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => host,
    };
    let loopback = host
        .parse::<std::net::Ipv4Addr>()
        .is_ok_and(|ip| ip.is_loopback());
    if matches!(host, "localhost" | "[::1]") || loopback {
        Ok(())
    } else {
        Err("must be https:// (plain http:// only to this machine's loopback)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> OidcSettings {
        OidcSettings {
            issuer: Some("https://sso.example.org/realms/uni".into()),
            client_id: Some("bai".into()),
            client_secret: Some(Secret::new("s3cret")),
            ..Default::default()
        }
    }

    #[test]
    fn none_without_flags_and_defaults() {
        assert!(
            OidcConfig::from_settings(OidcSettings::default())
                .unwrap()
                .is_none()
        );
        let c = OidcConfig::from_settings(base()).unwrap().unwrap();
        assert_eq!(c.scopes, "openid email profile");
        assert_eq!(c.groups_claim, "groups");
        assert_eq!(c.name, "single sign-on");
        assert_eq!(format!("{:?}", c.client_secret), "<hidden>");
        assert!(!format!("{c:?}").contains("s3cret"));
    }

    #[test]
    fn bad_combinations_are_one_line() {
        let e = OidcConfig::from_settings(OidcSettings {
            client_id: Some("x".into()),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "--oidc-client-id needs --oidc-issuer (the provider's issuer URL)"
        );
        let e = OidcConfig::from_settings(OidcSettings {
            client_secret: None,
            ..base()
        })
        .unwrap_err();
        assert!(e.to_string().contains("--oidc-client-secret-file"), "{e}");
        let e = OidcConfig::from_settings(OidcSettings {
            issuer: Some("http://sso.example.org".into()),
            ..base()
        })
        .unwrap_err();
        assert!(e.to_string().starts_with("--oidc-issuer"), "{e}");
        let e = OidcConfig::from_settings(OidcSettings {
            issuer: Some("http://127.0.0.1.evil.example:9000".into()),
            ..base()
        })
        .unwrap_err();
        assert!(e.to_string().starts_with("--oidc-issuer"), "{e}");
        assert!(
            OidcConfig::from_settings(OidcSettings {
                issuer: Some("http://127.0.0.1:9000".into()),
                ..base()
            })
            .is_ok()
        );
        let e = OidcConfig::from_settings(OidcSettings {
            group_projects: vec!["vision".into()],
            ..base()
        })
        .unwrap_err();
        assert!(e.to_string().starts_with("--oidc-group-project"), "{e}");
    }

    #[test]
    fn groups_map_to_role_and_projects() {
        let c = OidcConfig::from_settings(OidcSettings {
            admin_group: Some("bai-admins".into()),
            group_projects: vec![
                "/vision=vision".into(),
                "a=b=nlp".into(),
                "cv=vision".into(),
            ],
            ..base()
        })
        .unwrap()
        .unwrap();
        let g = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(c.is_admin(&g(&["x", "bai-admins"])));
        assert!(!c.is_admin(&g(&["bai-admins-not"])));
        assert_eq!(c.projects(&g(&["/vision", "cv", "a=b"])), ["vision", "nlp"]);
        assert!(c.projects(&g(&[])).is_empty());
    }
}
