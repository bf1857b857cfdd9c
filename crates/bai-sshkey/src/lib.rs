//! Ed25519 SSH key pairs made in-process, in OpenSSH's formats: the private key written as
//! `openssh-key-v1`, unencrypted, and its `ssh-ed25519 …` public line. A kernel's runner makes
//! its host key and `id_container` with it (no `ssh-keygen` process on the start's path), and
//! the manager a cluster session's shared key.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rand::RngCore;
use ring::signature::{Ed25519KeyPair, KeyPair as _};

const KEY_TYPE: &[u8] = b"ssh-ed25519";

/// SSH wire `string`: a 32-bit big-endian length, then the bytes.
fn put_string(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

fn public_blob(public: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    put_string(&mut b, KEY_TYPE);
    put_string(&mut b, public);
    b
}

/// An SSH key pair: the private key as an unencrypted `openssh-key-v1` file, the public key
/// as its `ssh-ed25519 … comment` line. The private half never prints (`Debug`).
#[derive(Clone, PartialEq, Eq)]
pub struct KeyPair {
    /// `-----BEGIN OPENSSH PRIVATE KEY-----` …
    pub private_key: String,
    /// `ssh-ed25519 AAAA… comment` and a newline.
    pub public_key: String,
}

impl std::fmt::Debug for KeyPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyPair")
            .field("public_key", &self.public_key)
            .field("private_key", &"<hidden>")
            .finish()
    }
}

/// Why no key was made.
#[derive(Debug, thiserror::Error)]
#[error("cannot make an Ed25519 key: {0}")]
pub struct KeyError(String);

/// A fresh Ed25519 key pair whose public line ends with `comment`.
pub fn ed25519(comment: &str) -> Result<KeyPair, KeyError> {
    let mut seed = [0u8; 32];
    rand::rng().fill_bytes(&mut seed);
    let pair = Ed25519KeyPair::from_seed_unchecked(&seed).map_err(|e| KeyError(e.to_string()))?;
    let public = pair.public_key().as_ref().to_vec();
    let blob = public_blob(&public);

    let check = rand::rng().next_u32().to_be_bytes();
    let mut private = Vec::new();
    private.extend_from_slice(&check);
    private.extend_from_slice(&check);
    put_string(&mut private, KEY_TYPE);
    put_string(&mut private, &public);
    let mut secret = seed.to_vec();
    secret.extend_from_slice(&public);
    put_string(&mut private, &secret);
    put_string(&mut private, comment.as_bytes());
    let mut pad = 1u8;
    while !private.len().is_multiple_of(8) {
        private.push(pad);
        pad += 1;
    }

    let mut file = b"openssh-key-v1\0".to_vec();
    put_string(&mut file, b"none");
    put_string(&mut file, b"none");
    put_string(&mut file, b"");
    file.extend_from_slice(&1u32.to_be_bytes());
    put_string(&mut file, &blob);
    put_string(&mut file, &private);

    let body = STANDARD.encode(&file);
    let mut pem = String::from("-----BEGIN OPENSSH PRIVATE KEY-----\n");
    for chunk in body.as_bytes().chunks(70) {
        pem.push_str(&String::from_utf8_lossy(chunk));
        pem.push('\n');
    }
    pem.push_str("-----END OPENSSH PRIVATE KEY-----\n");
    Ok(KeyPair {
        private_key: pem,
        public_key: format!("ssh-ed25519 {} {comment}\n", STANDARD.encode(&blob)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_is_new_and_well_formed() {
        let a = ed25519("work@test").unwrap();
        let b = ed25519("work@test").unwrap();
        assert_ne!(a.private_key, b.private_key);
        assert!(
            a.private_key
                .starts_with("-----BEGIN OPENSSH PRIVATE KEY-----\n")
        );
        let body: String = a
            .private_key
            .lines()
            .filter(|l| !l.starts_with("-----"))
            .collect();
        let raw = STANDARD.decode(body).unwrap();
        assert!(raw.starts_with(b"openssh-key-v1\0"));
        let public = a.public_key.split_whitespace().nth(1).unwrap();
        let blob = STANDARD.decode(public).unwrap();
        // The public blob appears in the private file as it does on the public line.
        assert!(raw.windows(blob.len()).any(|w| w == blob.as_slice()));
    }

    /// OpenSSH itself reads the private key back and derives the same public key (the
    /// OpenSSH client is a test dependency: `scripts/ensure-deps.sh --test`).
    #[test]
    fn ssh_keygen_reads_the_private_key() {
        let k = ed25519("work@test").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("id");
        std::fs::write(&path, &k.private_key).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let out = std::process::Command::new("ssh-keygen")
            .arg("-y")
            .arg("-f")
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let derived = String::from_utf8_lossy(&out.stdout);
        let want: Vec<_> = k.public_key.split_whitespace().take(2).collect();
        let got: Vec<_> = derived.split_whitespace().take(2).collect();
        assert_eq!(got, want);
    }
}
