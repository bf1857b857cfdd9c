//! Directory login for bai (issue 60): `baid up --ldap-*` checked into an [`LdapConfig`],
//! the site's user filter filled as RFC 4515 says ([`filter`]), and a login that searches
//! as a service account and binds as the user ([`Directory::login`]). Making or updating
//! the bai account from a [`DirectoryUser`] is the manager's (`bai-manager` `web/directory.rs`).
//!
//! No password (the service account's or a user's) is ever logged or shown by `Debug`.

mod config;
pub mod filter;
mod login;
mod tls;

pub use config::{
    ConfigError, DEFAULT_EMAIL_ATTR, DEFAULT_USER_FILTER, GroupProject, LdapConfig, LdapSettings,
    Secret, ServiceAccount, Transport, common_suffix,
};
pub use filter::{UserFilter, escape_filter_value};
pub use login::{Directory, DirectoryUser, LoginError, MAX_DEPTH, Presence, same_dn};
