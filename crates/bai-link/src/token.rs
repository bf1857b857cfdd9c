//! Join tokens: `bai1.<id>.<secret>.<sha256 of the manager's certificate>`. The id names the
//! token (for listing and revoking), the secret proves it (the manager keeps only its hash),
//! and the hash lets the agent pin the manager before it sends anything.

use rand::Rng;
use sha2::{Digest, Sha256};

const PREFIX: &str = "bai1";

#[derive(Clone, PartialEq, Eq)]
pub struct JoinToken {
    pub id: String,
    pub secret: String,
    pub ca_hash: String,
}

impl std::fmt::Debug for JoinToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JoinToken")
            .field("id", &self.id)
            .field("ca_hash", &self.ca_hash)
            .finish_non_exhaustive()
    }
}

fn random_hex(bytes: usize) -> String {
    let mut b = vec![0u8; bytes];
    rand::rng().fill(&mut b[..]);
    hex::encode(b)
}

impl JoinToken {
    /// A new token for the manager whose certificate hashes to `ca_hash`.
    pub fn new(ca_hash: &str) -> JoinToken {
        JoinToken {
            id: random_hex(4),
            secret: random_hex(16),
            ca_hash: ca_hash.to_string(),
        }
    }

    pub fn parse(s: &str) -> Result<JoinToken, String> {
        let bad = || {
            "a join token looks like bai1.ID.SECRET.HASH (from `bai admin agent-token create`)"
                .to_string()
        };
        let parts: Vec<&str> = s.trim().split('.').collect();
        let [p, id, secret, ca] = parts.as_slice() else {
            return Err(bad());
        };
        let hex_of = |v: &str, n: usize| v.len() == n && v.chars().all(|c| c.is_ascii_hexdigit());
        if *p != PREFIX || !hex_of(id, 8) || !hex_of(secret, 32) || !hex_of(ca, 64) {
            return Err(bad());
        }
        Ok(JoinToken {
            id: id.to_string(),
            secret: secret.to_string(),
            ca_hash: ca.to_ascii_lowercase(),
        })
    }

    /// What the manager stores instead of the secret.
    pub fn secret_hash(&self) -> String {
        hash_secret(&self.secret)
    }
}

impl std::fmt::Display for JoinToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{PREFIX}.{}.{}.{}", self.id, self.secret, self.ca_hash)
    }
}

/// SHA-256 of a secret, hex (tokens and agent credentials are stored only as this).
pub fn hash_secret(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// A new agent credential secret.
pub fn new_secret() -> String {
    random_hex(24)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_hide_their_secret() {
        let t = JoinToken::new(&"ab".repeat(32));
        let s = t.to_string();
        assert_eq!(JoinToken::parse(&s), Ok(t.clone()));
        assert!(!format!("{t:?}").contains(&t.secret));
        assert_ne!(t.secret_hash(), t.secret);
        for bad in [
            "",
            "bai1.x.y.z",
            &s.replace("bai1", "bai2"),
            &s[..s.len() - 1],
        ] {
            assert!(JoinToken::parse(bad).is_err(), "{bad}");
        }
    }
}
