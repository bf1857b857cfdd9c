//! HMAC-SHA256 keypair signing, exactly as the Backend.AI wire contract (§2.3) describes.
//! The same code signs in the client and verifies in the manager.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

type HmacSha256 = Hmac<Sha256>;

/// The media type signed when a request has no Content-Type (WebSocket, SSE).
pub const DEFAULT_MEDIA_TYPE: &str = "application/octet-stream";

/// What goes into one signature.
#[derive(Debug, Clone)]
pub struct SignInput<'a> {
    pub method: &'a str,
    /// Raw request target (path and query) exactly as on the request line.
    pub path_and_query: &'a str,
    /// The Date header value verbatim (ISO-8601).
    pub date: &'a str,
    /// The date as `YYYYMMDD` (UTC), from the parsed Date header.
    pub date_ymd: &'a str,
    /// The Host header value, with `:port` when non-default.
    pub host: &'a str,
    /// Content-Type without parameters, lower-cased; [`DEFAULT_MEDIA_TYPE`] when absent.
    pub media_type: &'a str,
    pub api_version: &'a str,
}

fn hmac(key: &[u8], msg: &[u8]) -> Vec<u8> {
    #[expect(clippy::expect_used, reason = "HMAC accepts keys of any length")]
    let mut mac = <HmacSha256 as Mac>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(msg);
    mac.finalize().into_bytes().to_vec()
}

/// Returns the hex signature.
pub fn sign(secret_key: &str, input: &SignInput<'_>) -> String {
    let body_hash = hex::encode(Sha256::digest(b""));
    let sign_str = format!(
        "{}\n{}\n{}\nhost:{}\ncontent-type:{}\nx-backendai-version:{}\n{}",
        input.method.to_ascii_uppercase(),
        input.path_and_query,
        input.date,
        input.host,
        input.media_type,
        input.api_version,
        body_hash
    );
    let k1 = hmac(secret_key.as_bytes(), input.date_ymd.as_bytes());
    let k2 = hmac(&k1, input.host.as_bytes());
    hex::encode(hmac(&k2, sign_str.as_bytes()))
}

/// Constant-time comparison of two hex signatures.
pub fn signatures_match(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Media type as signed: parameters stripped, lower-cased, default when absent.
pub fn media_type_of(content_type: Option<&str>) -> String {
    match content_type {
        Some(ct) if !ct.trim().is_empty() => ct
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase(),
        _ => DEFAULT_MEDIA_TYPE.to_string(),
    }
}

/// Parsed `Authorization: BackendAI signMethod=HMAC-SHA256, credential=AK:SIG`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credential {
    pub access_key: String,
    pub signature: String,
    pub hash: String,
}

pub fn parse_authorization(value: &str) -> Option<Credential> {
    let (scheme, rest) = value.trim().split_once(' ')?;
    if scheme != "BackendAI" && scheme != "Sorna" {
        return None;
    }
    let mut method = None;
    let mut cred = None;
    for part in rest.split(',') {
        let (k, v) = part.trim().split_once('=')?;
        match k.trim() {
            "signMethod" => method = Some(v.trim().to_string()),
            "credential" => cred = Some(v.trim().to_string()),
            _ => {}
        }
    }
    let method = method?;
    let hash = method.strip_prefix("HMAC-")?.to_ascii_lowercase();
    let (ak, sig) = cred?
        .split_once(':')
        .map(|(a, s)| (a.to_string(), s.to_string()))?;
    Some(Credential {
        access_key: ak,
        signature: sig,
        hash,
    })
}

/// `len` characters drawn uniformly from `alphabet` (a CSPRNG: keys and passwords).
pub fn random_string(len: usize, alphabet: &[u8]) -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    (0..len)
        .map(|_| alphabet[rng.random_range(0..alphabet.len())] as char)
        .collect()
}

/// A new keypair as Backend.AI spells them: `AKIA` and 16 base32 characters, and a secret of
/// 40 letters and digits.
pub fn new_keypair() -> (String, String) {
    let ak = format!(
        "AKIA{}",
        random_string(16, b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
    );
    let sk = random_string(
        40,
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
    );
    (ak, sk)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    const DATE: &str = "2026-01-02T03:04:05.123456+00:00";

    fn vector(method: &str, path: &str, media: &str) -> String {
        sign(
            SECRET,
            &SignInput {
                method,
                path_and_query: path,
                date: DATE,
                date_ymd: "20260102",
                host: "127.0.0.1:8090",
                media_type: media,
                api_version: "v9.20250722",
            },
        )
    }

    /// The known-answer vectors of the wire contract §2.3.
    #[test]
    fn known_answer_vectors() {
        assert_eq!(
            vector("GET", "/session/mysess/logs", "text/plain"),
            "c8958c232cded759c947826f4649e2e83aaa79caf7a409cf1492376345f66e43"
        );
        assert_eq!(
            vector("POST", "/admin/gql", "application/json"),
            "181c4b0766584d64729220add89099bc5e9d440bfac72603535202dcf59b8baa"
        );
        assert_eq!(
            vector(
                "GET",
                "/events/session?sessionName=mysess&scope=*",
                DEFAULT_MEDIA_TYPE
            ),
            "c67a43959277ff3c566ada020373d02253b5effa3e743358c38324a115208c46"
        );
    }

    #[test]
    fn any_change_breaks_the_signature() {
        let good = vector("GET", "/session/mysess/logs", "text/plain");
        assert_ne!(
            good,
            vector("GET", "/session/mysess/logs?x=1", "text/plain")
        );
        assert_ne!(good, vector("POST", "/session/mysess/logs", "text/plain"));
        assert_ne!(
            good,
            vector("GET", "/session/mysess/logs", "application/json")
        );
    }

    #[test]
    fn authorization_header() {
        let c = parse_authorization(
            "BackendAI signMethod=HMAC-SHA256, credential=AKIAIOSFODNN7EXAMPLE:abcdef",
        )
        .unwrap();
        assert_eq!(c.access_key, "AKIAIOSFODNN7EXAMPLE");
        assert_eq!(c.signature, "abcdef");
        assert_eq!(c.hash, "sha256");
        assert!(parse_authorization("Bearer x").is_none());
        assert!(parse_authorization("BackendAI credential=nocolon").is_none());
    }

    #[test]
    fn media_types() {
        assert_eq!(media_type_of(None), DEFAULT_MEDIA_TYPE);
        assert_eq!(
            media_type_of(Some("multipart/form-data; boundary=xyz")),
            "multipart/form-data"
        );
        assert_eq!(media_type_of(Some("Application/JSON")), "application/json");
        assert!(signatures_match("abc", "abc"));
        assert!(!signatures_match("abc", "abd"));
    }
}
