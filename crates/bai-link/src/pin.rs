//! The agent's side of trust: it accepts the manager's certificate only when its SHA-256 is
//! the one its join token carries (as kubeadm pins the CA hash). Names, dates and issuers do
//! not matter; the handshake's signatures are still checked against that certificate.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, Error, SignatureScheme};
use std::sync::Arc;

/// SHA-256 of a DER certificate, hex: what a join token carries and the agent compares.
pub fn fingerprint(cert: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(cert))
}

/// The crypto provider of both ends (ring).
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

#[derive(Debug)]
struct Pinned {
    sha256: String,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        if fingerprint(end_entity) == self.sha256 {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(Error::General(
                "the manager's certificate is not the one the join token names".into(),
            ))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// A client configuration that trusts only the certificate with this SHA-256 (hex).
pub fn client_config(sha256: &str) -> Result<Arc<rustls::ClientConfig>, String> {
    let provider = provider();
    let cfg = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(Pinned {
            sha256: sha256.to_ascii_lowercase(),
            provider,
        }))
        .with_no_client_auth();
    Ok(Arc::new(cfg))
}

/// The name the agent asks for in the handshake (the certificate's only name).
pub fn server_name() -> ServerName<'static> {
    ServerName::try_from("bai-manager").unwrap_or_else(|_| unreachable_name())
}

fn unreachable_name() -> ServerName<'static> {
    ServerName::IpAddress(std::net::IpAddr::from([127, 0, 0, 1]).into())
}
