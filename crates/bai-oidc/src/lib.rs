//! bai's OpenID Connect login (issue 60): the site's provider (Keycloak, Azure AD, …) checks
//! who someone is and bai makes or updates their account from the ID token.
//!
//! The pieces without I/O come first — [`config`] (the checked `baid up --oidc-*` flags and
//! the group mapping), [`flow`] (state, nonce and the PKCE verifier of logins under way, kept
//! server-side and used once), [`token`] (an ID token's signature against the provider's
//! JWKS and its `iss`/`aud`/`exp`/`nonce`) — then [`provider`], which talks to the provider:
//! discovery, the authorization URL, the code exchange and the JWKS (fetched again once when a
//! token names a key it does not have: the provider rotated its keys) — and [`logout`], the
//! logout tokens of OpenID Connect Back-Channel Logout 1.0, checked the same way.

pub mod config;
pub mod flow;
pub mod logout;
pub mod provider;
pub mod token;

pub use config::{ConfigError, GroupProject, OidcConfig, OidcSettings, Secret};
pub use flow::{Begun, FlowError, Pending};
pub use logout::{Logout, LogoutError};
pub use provider::{Identity, OidcError, Provider};
pub use token::{Jwks, TokenError};
