//! Trust for `https://` endpoints: the web PKI's roots, plus the certificates in the files
//! `BAI_CA_CERT` and `SSL_CERT_FILE` name (a manager's self-signed certificate, a company
//! CA); or no check at all with `BACKEND_SKIP_SSLCERT_VALIDATION=true`, as the official
//! client allows. One rustls configuration serves HTTP (reqwest) and WebSockets.

use crate::ClientError;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use std::path::PathBuf;
use std::sync::Arc;

/// The client's TLS configuration.
pub fn client_config(
    ca_files: &[PathBuf],
    skip_verify: bool,
) -> Result<Arc<rustls::ClientConfig>, ClientError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| ClientError::Config(format!("TLS: {e}")))?;
    let mut config = if skip_verify {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate(
                provider.signature_verification_algorithms,
            )))
            .with_no_client_auth()
    } else {
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        for f in ca_files {
            let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(f)
                .and_then(|i| i.collect::<Result<_, _>>())
                .map_err(|e| {
                    ClientError::Config(format!(
                        "cannot read certificates from {}: {e}",
                        f.display()
                    ))
                })?;
            if certs.is_empty() {
                return Err(ClientError::Config(format!(
                    "{} holds no PEM certificate",
                    f.display()
                )));
            }
            for c in certs {
                roots.add(c).map_err(|e| {
                    ClientError::Config(format!("a certificate in {}: {e}", f.display()))
                })?;
            }
        }
        builder.with_root_certificates(roots).with_no_client_auth()
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// `BACKEND_SKIP_SSLCERT_VALIDATION`: any certificate is taken (signatures are still
/// checked, so the handshake itself is sound).
#[derive(Debug)]
struct AnyCertificate(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}
