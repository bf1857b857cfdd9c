//! The TLS client configuration of `ldaps://` and StartTLS: ring (the workspace's provider),
//! trusting `--ldap-ca`'s certificates, else the system's.

use crate::ConfigError;
use rustls::pki_types::CertificateDer;
use std::sync::Arc;

pub fn client_config(
    ca: &[CertificateDer<'static>],
) -> Result<Arc<rustls::ClientConfig>, ConfigError> {
    let mut roots = rustls::RootCertStore::empty();
    if ca.is_empty() {
        let native = rustls_native_certs::load_native_certs();
        for e in &native.errors {
            tracing::warn!(error = %e, "a system CA certificate could not be read");
        }
        let (added, _) = roots.add_parsable_certificates(native.certs);
        if added == 0 {
            return Err(ConfigError::Ca(
                "the system trusts no CA certificate; give the directory's with --ldap-ca FILE"
                    .into(),
            ));
        }
    } else {
        for c in ca {
            roots
                .add(c.clone())
                .map_err(|e| ConfigError::Ca(format!("a certificate cannot be trusted: {e}")))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ConfigError::Ca(format!("TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}
