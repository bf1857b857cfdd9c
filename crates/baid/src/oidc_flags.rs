//! `baid up --oidc-*`: the site's OpenID provider for web logins (issue 60), read into a
//! checked `bai_oidc::OidcConfig` here, at the edge (the secret file read, combinations
//! checked).

use anyhow::{Context, Result};
use bai_oidc::{OidcConfig, OidcSettings, Secret};
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct OidcArgs {
    /// The site's OpenID Connect provider for web logins (its issuer URL, e.g.
    /// `https://sso.example.org/realms/uni`): the login page offers "Log in with …"
    /// (docs/AUTH.md). Off when not given.
    #[arg(long, env = "BAI_OIDC_ISSUER", value_name = "URL")]
    pub oidc_issuer: Option<String>,
    /// bai's client id at the provider.
    #[arg(long, env = "BAI_OIDC_CLIENT_ID", value_name = "ID")]
    pub oidc_client_id: Option<String>,
    /// A file holding bai's client secret at the provider (one line).
    #[arg(long, env = "BAI_OIDC_CLIENT_SECRET_FILE", value_name = "FILE")]
    pub oidc_client_secret_file: Option<PathBuf>,
    /// What the login button says after "Log in with" (default "single sign-on").
    #[arg(long, env = "BAI_OIDC_NAME", value_name = "TEXT")]
    pub oidc_name: Option<String>,
    /// The ID token claim listing the user's groups (default `groups`; Azure AD: `groups`
    /// or `roles`).
    #[arg(long, env = "BAI_OIDC_GROUPS_CLAIM", value_name = "CLAIM")]
    pub oidc_groups_claim: Option<String>,
    /// The scopes asked for, space-separated (default `openid email profile`).
    #[arg(long, env = "BAI_OIDC_SCOPES", value_name = "SCOPES")]
    pub oidc_scopes: Option<String>,
    /// Members of this group are bai administrators (their role is set at every login).
    #[arg(long, env = "BAI_OIDC_ADMIN_GROUP", value_name = "GROUP")]
    pub oidc_admin_group: Option<String>,
    /// Members of the group GROUP are in the bai project PROJECT (made when missing), e.g.
    /// `/vision=vision`; repeatable (the environment variable takes a `;`-separated list).
    /// Memberships follow the provider's groups at every login.
    #[arg(
        long = "oidc-group-project",
        env = "BAI_OIDC_GROUP_PROJECTS",
        value_delimiter = ';',
        value_name = "GROUP=PROJECT"
    )]
    pub oidc_group_project: Vec<String>,
    /// The callback URL registered at the provider (default: this server's own,
    /// `{scheme}://{host}/server/oidc/callback`, by the Host the browser uses).
    #[arg(long, env = "BAI_OIDC_REDIRECT_URI", value_name = "URL")]
    pub oidc_redirect_uri: Option<String>,
}

impl OidcArgs {
    /// The checked configuration, None when no `--oidc-*` flag is given. Reads the secret
    /// file; the error is one line naming the flag.
    pub fn config(&self) -> Result<Option<OidcConfig>> {
        let client_secret = match &self.oidc_client_secret_file {
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .with_context(|| format!("--oidc-client-secret-file {}", p.display()))?;
                Some(Secret::new(text.trim_end_matches(['\r', '\n'])))
            }
            None => None,
        };
        Ok(OidcConfig::from_settings(OidcSettings {
            issuer: self.oidc_issuer.clone(),
            client_id: self.oidc_client_id.clone(),
            client_secret,
            name: self.oidc_name.clone(),
            groups_claim: self.oidc_groups_claim.clone(),
            scopes: self.oidc_scopes.clone(),
            admin_group: self.oidc_admin_group.clone(),
            group_projects: self.oidc_group_project.clone(),
            redirect_uri: self.oidc_redirect_uri.clone(),
        })?)
    }

    /// The provider to give the manager (none without `--oidc-issuer`).
    pub fn provider(&self) -> Result<Option<bai_oidc::Provider>> {
        self.config().and_then(|c| {
            c.map(bai_oidc::Provider::new)
                .transpose()
                .map_err(Into::into)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_flags_no_provider_and_the_secret_file_is_read() {
        assert!(OidcArgs::default().config().unwrap().is_none());
        let dir = std::env::temp_dir().join(format!("bai-oidc-flags-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let secret = dir.join("secret");
        std::fs::write(&secret, "s3cret\n").unwrap();
        let args = OidcArgs {
            oidc_issuer: Some("https://sso.example.org/realms/uni".into()),
            oidc_client_id: Some("bai".into()),
            oidc_client_secret_file: Some(secret),
            oidc_group_project: vec!["/vision=vision".into()],
            ..Default::default()
        };
        let c = args.config().unwrap().unwrap();
        assert_eq!(c.client_secret.expose(), "s3cret");
        assert_eq!(c.group_projects[0].project, "vision");
        let e = OidcArgs {
            oidc_client_secret_file: Some(dir.join("missing")),
            ..args
        }
        .config()
        .unwrap_err();
        assert!(
            format!("{e:#}").starts_with("--oidc-client-secret-file"),
            "{e:#}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
