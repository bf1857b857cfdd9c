//! The official client's "encoded" login body. Over plain HTTP it sends `POST /server/login`
//! with `X-BackendAI-Encoded: true` and the JSON body AES-256-CBC encrypted as
//! `IV:BASE64(CIPHERTEXT)`, the key being the first 32 bytes of
//! `BASE64(ENDPOINT) + IV + IV`. The key travels with the message, so this hides the password
//! from a casual look and nothing more; HTTPS (`--tls-cert`) is what protects it.

use aes::cipher::{BlockDecryptMut, KeyIvInit, block_padding::Pkcs7};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;

type Decryptor = cbc::Decryptor<aes::Aes256>;

/// The JSON body of an encoded request, decrypted with the key of the first of `endpoints`
/// (the ways the client may have spelled the server's address) that yields JSON.
pub fn decode(payload: &[u8], endpoints: &[String]) -> Result<Vec<u8>, String> {
    let text = std::str::from_utf8(payload).map_err(|_| "the encoded body is not text")?;
    let (iv, data) = text
        .trim()
        .split_once(':')
        .ok_or("the encoded body must be IV:BASE64")?;
    if iv.len() != 16 {
        return Err("the encoded body's IV must be 16 characters".into());
    }
    let cipher = STANDARD
        .decode(data)
        .map_err(|e| format!("the encoded body is not base64: {e}"))?;
    for endpoint in endpoints {
        let mut key = STANDARD.encode(endpoint.as_bytes()).into_bytes();
        key.extend_from_slice(iv.as_bytes());
        key.extend_from_slice(iv.as_bytes());
        key.truncate(32);
        if key.len() < 32 {
            continue;
        }
        let Ok(d) = Decryptor::new_from_slices(&key, iv.as_bytes()) else {
            continue;
        };
        let mut buf = cipher.clone();
        if let Ok(plain) = d.decrypt_padded_mut::<Pkcs7>(&mut buf)
            && serde_json::from_slice::<serde::de::IgnoredAny>(plain).is_ok()
        {
            return Ok(plain.to_vec());
        }
    }
    Err("the encoded body does not decrypt for this server's address".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use aes::cipher::BlockEncryptMut;

    fn encode(endpoint: &str, iv: &str, body: &[u8]) -> Vec<u8> {
        let mut key = STANDARD.encode(endpoint.as_bytes()).into_bytes();
        key.extend_from_slice(iv.as_bytes());
        key.extend_from_slice(iv.as_bytes());
        key.truncate(32);
        let e = cbc::Encryptor::<aes::Aes256>::new_from_slices(&key, iv.as_bytes()).unwrap();
        let mut buf = body.to_vec();
        buf.resize(body.len() + 16, 0);
        let c = e
            .encrypt_padded_mut::<Pkcs7>(&mut buf, body.len())
            .unwrap()
            .to_vec();
        format!("{iv}:{}", STANDARD.encode(c)).into_bytes()
    }

    #[test]
    fn a_body_encoded_for_this_address_decodes_and_others_do_not() {
        let body = br#"{"username": "a@b", "password": "pw"}"#;
        let wire = encode("http://127.0.0.1:8090", "ABCDEFGHabcdefgh", body);
        let ends = |e: &[&str]| e.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let got = decode(&wire, &ends(&["http://other:1", "http://127.0.0.1:8090"])).unwrap();
        assert_eq!(got, body);
        assert!(decode(&wire, &ends(&["http://127.0.0.1:9999"])).is_err());
        assert!(decode(b"no-colon", &ends(&["http://127.0.0.1:8090"])).is_err());
        assert!(decode(b"short:AAAA", &ends(&["http://127.0.0.1:8090"])).is_err());
    }
}
