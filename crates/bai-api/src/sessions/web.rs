//! The web UI's login: `POST /server/login`, `POST /server/logout`, `GET /server/me`; and
//! the user's own keypairs (`/user/keypairs`), for the CLI and the official client.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The body of `POST /server/login`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoginRequest {
    /// The user's email.
    pub username: String,
    /// The user's web password.
    pub password: String,
}

/// A user's role in the web UI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WebRole {
    /// An administrator.
    Superadmin,
    /// Anyone else.
    User,
}

/// Who a web session belongs to (`GET /server/me`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Me {
    /// The user's email.
    pub email: String,
    /// The keypair the web session acts with.
    pub access_key: String,
    /// The user is an administrator.
    pub is_admin: bool,
    /// The role, in words.
    pub role: WebRole,
}

/// `POST /server/login` that succeeded (with an HttpOnly `bai_web` cookie).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoginReply {
    /// True.
    pub authenticated: bool,
    /// Who logged in.
    pub data: Me,
}

/// `POST /server/login` refused (401; not a problem document, as the web UI reads it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoginRefusal {
    /// False.
    pub authenticated: bool,
    /// Why.
    pub data: LoginRefusalData,
}

/// Why a login was refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoginRefusalData {
    /// For the person, e.g. "The email or the password is wrong.".
    pub details: String,
}

/// `POST /server/logout` (the cookie is cleared).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LogoutReply {
    /// False.
    pub authenticated: bool,
}

/// `GET /server/login-options`: the ways of logging in the login page offers besides an
/// email and a password.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoginOptions {
    /// A directory (LDAP) is configured: the login form takes its user name or an email.
    #[serde(default)]
    pub directory: bool,
    /// The site's OpenID provider, when `baid up --oidc-issuer …` names one.
    pub oidc: Option<OidcOption>,
}

/// "Log in with …" through the site's OpenID provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OidcOption {
    /// What the button says after "Log in with" (`--oidc-name`).
    pub name: String,
    /// Where the button goes (`/server/oidc/login`, which redirects to the provider).
    pub login_url: String,
    /// The provider's own logout page (its `end_session_endpoint`), when it has one: the UI
    /// offers it after logging out of bai.
    pub logout_url: Option<String>,
}

/// `GET|PUT /user/launcher-history`: the web launcher's Recent History, kept per user on
/// the server (so the next user of a browser never sees it). The entries are the web UI's
/// own (`id`, `label`, `pinned`, `at`, `settings`); the server checks their shape and size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LauncherHistory {
    /// Newest first, at most [`LauncherHistory::MAX_ENTRIES`].
    pub entries: Vec<serde_json::Value>,
}

impl LauncherHistory {
    pub const MAX_ENTRIES: usize = 20;
    /// The most bytes the whole history may take as JSON.
    pub const MAX_BYTES: usize = 64 * 1024;
}

/// One of the caller's own keypairs (`GET /user/keypairs`): never its secret key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MyKeypair {
    /// The access key (`BACKEND_ACCESS_KEY`).
    pub access_key: String,
    /// False once revoked: requests signed with it are refused.
    pub is_active: bool,
    /// The keypair acts as an administrator.
    pub is_admin: bool,
    /// When it was made.
    pub created_at: String,
    /// The keypair the web login opens sessions with: it cannot be revoked here (that would
    /// lock the user out of the web UI), only given a new secret.
    pub login: bool,
    /// The request that asked was authenticated with this keypair.
    pub current: bool,
}

/// `GET /user/keypairs`: the caller's keypairs, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MyKeypairs {
    pub items: Vec<MyKeypair>,
}

/// A secret key shown once (`POST /user/keypairs`, `POST /user/keypairs/{access_key}/secret`):
/// bai keeps it to check signatures but never shows it again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NewSecret {
    /// `BACKEND_ACCESS_KEY`.
    pub access_key: String,
    /// `BACKEND_SECRET_KEY`.
    pub secret_key: String,
}
