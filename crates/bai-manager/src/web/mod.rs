//! The web UI's side of the server: email + password login (argon2 hashes) that opens a
//! cookie session, so the browser never holds a secret key; and the UI's static files.
//!
//! `POST /server/login` `{"username": EMAIL, "password"}` → `{"authenticated": true, "data":
//! {…}}` with an HttpOnly, SameSite=Strict cookie; `POST /server/logout`; `GET /server/me`.
//! A request with the cookie and no signature is the logged-in user's; state-changing ones must
//! also carry `X-BAI-Web: 1` (a header no other site can make a browser send).

pub mod directory;
mod encoded;
pub mod external;
mod files;
pub mod history;
pub mod keypairs;
mod login;
pub mod oidc;
pub mod oidc_logout;

pub use bai_ground::browsers as sessions;

pub use bai_ground::browsers::{
    COOKIE, CSRF_HEADER, WebSessions, cookie, hash_password, verify_password,
};
pub use files::{ui_file, wants_html, web_dir};
pub use login::{cookie_caller, cookie_keypair, login, logout, me};

#[cfg(test)]
mod tests {
    use super::login::DUMMY_HASH;
    use super::*;
    use argon2::password_hash::{PasswordHasher, SaltString};
    use axum::http::{HeaderMap, HeaderValue, header};

    #[test]
    fn passwords_hash_and_verify() {
        let h = hash_password("correct horse").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify_password("correct horse", &h));
        assert!(!verify_password("wrong", &h));
        assert!(!verify_password("x", "not a hash"));
        assert!(!verify_password("x", DUMMY_HASH));
        // Our parameters, the dummy's too (unknown emails take as long as known ones).
        assert!(h.starts_with("$argon2id$v=19$m=7168,t=5,p=1$"), "{h}");
        assert!(DUMMY_HASH.starts_with("$argon2id$v=19$m=7168,t=5,p=1$"));
        // A hash made with other parameters still verifies by its own.
        let salt = SaltString::encode_b64(b"0123456789abcdef").unwrap();
        let old = argon2::Argon2::default()
            .hash_password(b"old password", &salt)
            .unwrap()
            .to_string();
        assert!(old.contains("m=19456"));
        assert!(verify_password("old password", &old));
        assert!(!verify_password("other", &old));
    }

    #[test]
    fn cookies_and_html_requests() {
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, HeaderValue::from_static("a=1; bai_web=tok"));
        h.insert(header::ACCEPT, HeaderValue::from_static("text/html,*/*"));
        assert_eq!(cookie(&h, COOKIE).as_deref(), Some("tok"));
        assert!(wants_html(&h));
        assert!(!wants_html(&HeaderMap::new()));
    }
}
