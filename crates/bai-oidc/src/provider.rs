//! The provider over HTTP: discovery (`/.well-known/openid-configuration`, fetched at the
//! first login and kept), the authorization URL of a login, the code exchange (the client
//! secret, the PKCE verifier) and the ID token's check against the JWKS, fetched again once
//! when a token names a key it lacks (the provider rotated its keys).

use crate::config::OidcConfig;
use crate::flow::{self, Begun, Pending};
use crate::logout::{self, ExpectLogout, Logout, LogoutError};
use crate::token::{self, Expect, Jwks, TokenError};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Why a login through the provider did not come to an [`Identity`].
#[derive(Debug, thiserror::Error)]
pub enum OidcError {
    /// The provider cannot be reached or answers nonsense (the reason is for the log).
    #[error("the OpenID provider cannot be used: {0}")]
    Unavailable(String),
    /// The provider refused (at the authorization or at the code exchange): its error code.
    #[error("the OpenID provider refused the login ({error})")]
    Refused { error: String },
    #[error(transparent)]
    Token(#[from] TokenError),
    #[error("the ID token has no email address")]
    NoEmail,
}

/// The parts of the discovery document bai uses.
#[derive(Debug, Clone, Deserialize)]
pub struct Metadata {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub jwks_uri: String,
    #[serde(default)]
    pub end_session_endpoint: Option<String>,
}

/// Who the provider says logged in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub issuer: String,
    pub subject: String,
    pub email: String,
    pub name: String,
    /// `preferred_username`, when the token has one.
    pub username: Option<String>,
    pub groups: Vec<String>,
    /// The provider's session (`sid`), when the token has one: a back-channel logout may
    /// name it.
    pub sid: Option<String>,
}

impl Identity {
    /// The identity in checked claims (`groups_claim` names the group list).
    pub fn from_claims(
        claims: &Map<String, Value>,
        groups_claim: &str,
    ) -> Result<Identity, OidcError> {
        let s = |k: &str| claims.get(k).and_then(Value::as_str).map(str::to_string);
        let username = s("preferred_username").filter(|u| !u.is_empty());
        // Azure AD's `email` is optional; its `preferred_username` is the sign-in address.
        let email = s("email")
            .or_else(|| username.clone().filter(|u| u.contains('@')))
            .map(|e| e.trim().to_lowercase())
            .filter(|e| e.contains('@'))
            .ok_or(OidcError::NoEmail)?;
        let groups = match claims.get(groups_claim) {
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            Some(Value::String(g)) => vec![g.clone()],
            _ => Vec::new(),
        };
        Ok(Identity {
            issuer: s("iss").unwrap_or_default(),
            subject: s("sub").unwrap_or_default(),
            email,
            name: s("name").unwrap_or_default(),
            username,
            groups,
            sid: s("sid").filter(|s| !s.is_empty()),
        })
    }
}

#[derive(Deserialize)]
struct TokenReply {
    #[serde(default)]
    id_token: Option<String>,
}

#[derive(Deserialize)]
struct ErrorReply {
    error: String,
}

/// The site's OpenID provider.
pub struct Provider {
    config: OidcConfig,
    http: reqwest::Client,
    meta: Mutex<Option<Metadata>>,
    jwks: Mutex<Option<Jwks>>,
    /// When the JWKS was last fetched for a logout token naming an unknown key.
    logout_refetch: Mutex<Option<Instant>>,
}

/// A logout token naming a key bai does not have makes it fetch the JWKS again at most this
/// often: anyone may POST one, and a forged `kid` must not make bai hammer the provider.
const LOGOUT_REFETCH: Duration = Duration::from_secs(30);

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("issuer", &self.config.issuer)
            .finish_non_exhaustive()
    }
}

fn unavailable(what: &str) -> impl Fn(reqwest::Error) -> OidcError + '_ {
    move |e| OidcError::Unavailable(format!("{what}: {e}"))
}

impl Provider {
    pub fn new(config: OidcConfig) -> Result<Provider, OidcError> {
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            // The token endpoint's answer is ours to read, never a redirect's.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| OidcError::Unavailable(format!("an HTTP client: {e}")))?;
        Ok(Provider {
            config,
            http,
            meta: Mutex::new(None),
            jwks: Mutex::new(None),
            logout_refetch: Mutex::new(None),
        })
    }

    pub fn config(&self) -> &OidcConfig {
        &self.config
    }

    /// The discovery document, fetched once (again after a failure).
    pub async fn metadata(&self) -> Result<Metadata, OidcError> {
        if let Some(m) = self.meta.lock().unwrap_or_else(|p| p.into_inner()).clone() {
            return Ok(m);
        }
        let url = format!(
            "{}/.well-known/openid-configuration",
            self.config.issuer.trim_end_matches('/')
        );
        let m: Metadata = self
            .http
            .get(&url)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(unavailable("discovery"))?
            .json()
            .await
            .map_err(unavailable("the discovery document"))?;
        if m.issuer.trim_end_matches('/') != self.config.issuer.trim_end_matches('/') {
            return Err(OidcError::Unavailable(format!(
                "the discovery document names the issuer {:?}, not --oidc-issuer {:?}",
                m.issuer, self.config.issuer
            )));
        }
        *self.meta.lock().unwrap_or_else(|p| p.into_inner()) = Some(m.clone());
        Ok(m)
    }

    /// Whether `iss` (RFC 9207's parameter of the authorization answer) is this provider.
    pub async fn issued_by(&self, iss: &str) -> bool {
        self.metadata().await.is_ok_and(|m| m.issuer == iss)
    }

    /// A new login: where to send the browser, and the login's state and browser binding
    /// (which the caller keeps, to take back once at the callback).
    pub async fn begin(&self, redirect_uri: &str) -> Result<(String, Begun), OidcError> {
        let m = self.metadata().await?;
        let b = flow::begin(redirect_uri);
        let query: String = form_urlencoded::Serializer::new(String::new())
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.config.client_id)
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("scope", &self.config.scopes)
            .append_pair("state", &b.state)
            .append_pair("nonce", &b.pending.nonce)
            .append_pair("code_challenge", &b.pending.challenge())
            .append_pair("code_challenge_method", "S256")
            .finish();
        let sep = if m.authorization_endpoint.contains('?') {
            '&'
        } else {
            '?'
        };
        Ok((format!("{}{sep}{query}", m.authorization_endpoint), b))
    }

    /// The code of a finished login exchanged for an ID token, checked: who logged in.
    pub async fn finish(&self, code: &str, login: &Pending) -> Result<Identity, OidcError> {
        let m = self.metadata().await?;
        let form: String = form_urlencoded::Serializer::new(String::new())
            .append_pair("grant_type", "authorization_code")
            .append_pair("code", code)
            .append_pair("redirect_uri", &login.redirect_uri)
            .append_pair("code_verifier", &login.verifier)
            .finish();
        // client_secret_basic: the id and secret form-encoded first (RFC 6749 §2.3.1).
        let enc = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        let r = self
            .http
            .post(&m.token_endpoint)
            .basic_auth(
                enc(&self.config.client_id),
                Some(enc(self.config.client_secret.expose())),
            )
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .body(form)
            .send()
            .await
            .map_err(unavailable("the token endpoint"))?;
        let status = r.status();
        let body = r.bytes().await.map_err(unavailable("the token endpoint"))?;
        if !status.is_success() {
            return Err(match serde_json::from_slice::<ErrorReply>(&body) {
                Ok(e) if status.is_client_error() => OidcError::Refused { error: e.error },
                _ => OidcError::Unavailable(format!("the token endpoint answered {status}")),
            });
        }
        let reply: TokenReply = serde_json::from_slice(&body).map_err(|_| {
            OidcError::Unavailable("the token endpoint's answer is not JSON".into())
        })?;
        let id_token = reply
            .id_token
            .ok_or_else(|| OidcError::Unavailable("the token endpoint gave no ID token".into()))?;
        let claims = self.verify(&m, &id_token, &login.nonce).await?;
        Identity::from_claims(&claims, &self.config.groups_claim)
    }

    /// The ID token checked against the JWKS (fetched again once for an unknown key).
    async fn verify(
        &self,
        m: &Metadata,
        id_token: &str,
        nonce: &str,
    ) -> Result<Map<String, Value>, OidcError> {
        let expect = Expect {
            issuer: &m.issuer,
            client_id: &self.config.client_id,
            nonce,
            now: now_secs(),
        };
        let cached = self.jwks.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let jwks = match cached {
            Some(j) => j,
            None => self.fetch_jwks(m).await?,
        };
        // Tokens come only from the token endpoint, after a login at the provider, so an
        // unknown key costs one fetch per real login at most.
        match token::verify(id_token, &jwks, &expect) {
            Err(TokenError::UnknownKey(kid)) => {
                tracing::info!(kid = ?kid, "OpenID provider: an unknown key, fetching its JWKS again");
                let jwks = self.fetch_jwks(m).await?;
                Ok(token::verify(id_token, &jwks, &expect)?)
            }
            other => Ok(other?),
        }
    }

    /// A back-channel logout token checked: whose sessions end. `Ok(Err)` is a bad token
    /// (the sender's fault), `Err` a provider that cannot be asked for its keys.
    pub async fn check_logout(
        &self,
        logout_token: &str,
    ) -> Result<Result<Logout, LogoutError>, OidcError> {
        let m = self.metadata().await?;
        let expect = ExpectLogout {
            issuer: &m.issuer,
            client_id: &self.config.client_id,
            now: now_secs(),
        };
        let cached = self.jwks.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let jwks = match cached {
            Some(j) => j,
            None => self.fetch_jwks(&m).await?,
        };
        match logout::verify(logout_token, &jwks, &expect) {
            Err(LogoutError::Token(TokenError::UnknownKey(kid))) => {
                let due = {
                    let mut last = self
                        .logout_refetch
                        .lock()
                        .unwrap_or_else(|p| p.into_inner());
                    let due = last.is_none_or(|t| t.elapsed() >= LOGOUT_REFETCH);
                    if due {
                        *last = Some(Instant::now());
                    }
                    due
                };
                if !due {
                    return Ok(Err(LogoutError::Token(TokenError::UnknownKey(kid))));
                }
                let kid: Option<String> = kid.map(|k| k.chars().take(64).collect());
                tracing::info!(kid = ?kid, "OpenID provider: a logout token of an unknown key, fetching its JWKS again");
                let jwks = self.fetch_jwks(&m).await?;
                Ok(logout::verify(logout_token, &jwks, &expect))
            }
            other => Ok(other),
        }
    }

    async fn fetch_jwks(&self, m: &Metadata) -> Result<Jwks, OidcError> {
        let jwks: Jwks = self
            .http
            .get(&m.jwks_uri)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(unavailable("the JWKS"))?
            .json()
            .await
            .map_err(unavailable("the JWKS"))?;
        *self.jwks.lock().unwrap_or_else(|p| p.into_inner()) = Some(jwks.clone());
        Ok(jwks)
    }

    /// The provider's logout page (`end_session_endpoint`), once discovery has found it.
    pub fn end_session(&self) -> Option<String> {
        self.meta
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .and_then(|m| m.end_session_endpoint.clone())
    }

    /// The provider's logout page with this client's id and where to come back to.
    pub fn end_session_url(&self, post_logout_redirect_uri: Option<&str>) -> Option<String> {
        let end = self.end_session()?;
        let mut q = form_urlencoded::Serializer::new(String::new());
        q.append_pair("client_id", &self.config.client_id);
        if let Some(back) = post_logout_redirect_uri {
            q.append_pair("post_logout_redirect_uri", back);
        }
        let sep = if end.contains('?') { '&' } else { '?' };
        Some(format!("{end}{sep}{}", q.finish()))
    }
}

/// Seconds since the epoch.
fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn identity_from_claims() {
        let c = json!({"iss": "https://i", "sub": "s1", "email": "Ada@Example.org",
                       "name": "Ada", "preferred_username": "ada", "groups": ["a", "b", 3]});
        let i = Identity::from_claims(c.as_object().unwrap(), "groups").unwrap();
        assert_eq!(i.email, "ada@example.org");
        assert_eq!(i.groups, ["a", "b"]);
        assert_eq!(i.username.as_deref(), Some("ada"));
        // Azure AD: no email, the sign-in address in preferred_username; roles as groups.
        let c = json!({"sub": "s2", "preferred_username": "bob@uni.edu", "roles": "bai-admins"});
        let i = Identity::from_claims(c.as_object().unwrap(), "roles").unwrap();
        assert_eq!((i.email.as_str(), i.groups.len()), ("bob@uni.edu", 1));
        let c = json!({"sub": "s3", "preferred_username": "carol"});
        assert!(matches!(
            Identity::from_claims(c.as_object().unwrap(), "groups"),
            Err(OidcError::NoEmail)
        ));
    }
}
