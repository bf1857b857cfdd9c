//! Web sessions: the cookie a login opens ([`sessions`]: kept in the store, its idle
//! limit), and the password hashes.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use axum::http::{HeaderMap, header};

pub mod sessions;

pub use sessions::{IDLE, MOST_PER_KEY, Origin, REFRESH, WebSessions};

/// The session cookie.
pub const COOKIE: &str = "bai_web";
/// The header that state-changing cookie requests must carry.
pub const CSRF_HEADER: &str = "x-bai-web";

/// argon2id with OWASP's 7 MiB / 5 passes / 1 lane, as strong as the crate's default
/// (19 MiB, 2 passes) by their table but with a third of the memory, which the allocator keeps
/// after every hash: baid's resident memory stays small. Verification reads the parameters from
/// each stored hash, so hashes made with other parameters still verify.
fn argon2() -> argon2::Argon2<'static> {
    let params = argon2::Params::new(7 * 1024, 5, 1, None).unwrap_or_default();
    argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params)
}

/// An argon2id PHC string for `password`.
pub fn hash_password(password: &str) -> Result<String, String> {
    let salt = SaltString::encode_b64(&rand::random::<[u8; 16]>()).map_err(|e| e.to_string())?;
    argon2()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| e.to_string())
}

pub fn verify_password(password: &str, phc: &str) -> bool {
    PasswordHash::new(phc).is_ok_and(|h| argon2().verify_password(password.as_bytes(), &h).is_ok())
}

/// The value of cookie `name`, if the request carries it.
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}
