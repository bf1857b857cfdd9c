//! The manager's TLS identity: a self-signed certificate made on first start and kept in the
//! data directory (DER files, private key mode 0600). Agents pin its SHA-256.

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::path::Path;
use std::sync::Arc;

const CERT_FILE: &str = "agent-link.crt.der";
const KEY_FILE: &str = "agent-link.key.der";

#[derive(Clone)]
pub struct ManagerIdentity {
    cert: CertificateDer<'static>,
    key: Vec<u8>,
}

impl std::fmt::Debug for ManagerIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("ManagerIdentity")
            .field("fingerprint", &self.fingerprint())
            .finish()
    }
}

impl ManagerIdentity {
    /// Reads the identity from `dir`, or makes and writes one.
    pub fn load_or_create(dir: &Path) -> Result<ManagerIdentity, String> {
        let (cp, kp) = (dir.join(CERT_FILE), dir.join(KEY_FILE));
        if cp.is_file() && kp.is_file() {
            let cert =
                std::fs::read(&cp).map_err(|e| format!("cannot read {}: {e}", cp.display()))?;
            let key =
                std::fs::read(&kp).map_err(|e| format!("cannot read {}: {e}", kp.display()))?;
            return Ok(ManagerIdentity {
                cert: CertificateDer::from(cert),
                key,
            });
        }
        let id = Self::generate()?;
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        write_private(&kp, &id.key)?;
        std::fs::write(&cp, id.cert.as_ref())
            .map_err(|e| format!("cannot write {}: {e}", cp.display()))?;
        Ok(id)
    }

    /// An identity kept elsewhere (the database several managers share): the certificate
    /// and the PKCS#8 key, both DER.
    pub fn from_parts(cert: Vec<u8>, key: Vec<u8>) -> ManagerIdentity {
        ManagerIdentity {
            cert: CertificateDer::from(cert),
            key,
        }
    }

    /// The certificate and the key, DER, to keep elsewhere ([`ManagerIdentity::from_parts`]).
    pub fn parts(&self) -> (&[u8], &[u8]) {
        (self.cert.as_ref(), &self.key)
    }

    /// A new self-signed certificate (not written anywhere).
    pub fn generate() -> Result<ManagerIdentity, String> {
        let ck = rcgen::generate_simple_self_signed(vec!["bai-manager".to_string()])
            .map_err(|e| format!("cannot make the manager's certificate: {e}"))?;
        Ok(ManagerIdentity {
            cert: ck.cert.der().clone(),
            key: ck.key_pair.serialize_der(),
        })
    }

    /// SHA-256 of the certificate, hex: what join tokens carry and agents pin.
    pub fn fingerprint(&self) -> String {
        crate::pin::fingerprint(&self.cert)
    }

    /// Accepts agents' TLS connections with this identity.
    pub fn acceptor(&self) -> Result<tokio_rustls::TlsAcceptor, String> {
        self.server_config().map(tokio_rustls::TlsAcceptor::from)
    }

    /// The server side of the TLS handshake.
    pub fn server_config(&self) -> Result<Arc<rustls::ServerConfig>, String> {
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.key.clone()));
        rustls::ServerConfig::builder_with_provider(crate::pin::provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_no_client_auth()
            .with_single_cert(vec![self.cert.clone()], key)
            .map(Arc::new)
            .map_err(|e| format!("bad manager certificate: {e}"))
    }
}

pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    f.write_all(bytes)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_identity_is_kept_across_restarts() {
        let dir = tempfile::tempdir().unwrap();
        let a = ManagerIdentity::load_or_create(dir.path()).unwrap();
        let b = ManagerIdentity::load_or_create(dir.path()).unwrap();
        assert_eq!(a.fingerprint(), b.fingerprint());
        assert_eq!(a.fingerprint().len(), 64);
        assert_ne!(
            a.fingerprint(),
            ManagerIdentity::generate().unwrap().fingerprint()
        );
        let mode = std::fs::metadata(dir.path().join(KEY_FILE)).unwrap();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(mode.permissions().mode() & 0o777, 0o600);
        assert!(a.server_config().is_ok());
        assert!(!format!("{a:?}").contains("key:"));
    }
}
