//! HTTPS for the API and the web UI. `--tls-cert FILE --tls-key FILE` serve a certificate the
//! admin has (PEM: the chain, then any private key rustls reads); `--tls-self-signed` makes
//! one on the first start for `localhost`, the listen address and `--endpoint-host`, keeps it
//! in the data dir (`tls/cert.pem`, `tls/key.pem`, the key 0600) and serves it from then on;
//! clients trust it by that file (`BAI_CA_CERT` for `bai`, `SSL_CERT_FILE` for the official
//! client). The web session cookie is `Secure` then.

use anyhow::{Context, Result, bail};
use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

/// How long a client may take over its TLS handshake.
const HANDSHAKE: Duration = Duration::from_secs(15);

/// The certificate and key files to serve.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// What `--tls-cert`, `--tls-key` and `--tls-self-signed` ask for: None for plain HTTP.
pub fn choose(
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
    self_signed: bool,
    data_dir: &Path,
    names: &[String],
) -> Result<Option<TlsFiles>> {
    match (cert, key, self_signed) {
        (None, None, false) => Ok(None),
        (Some(cert), Some(key), false) => Ok(Some(TlsFiles { cert, key })),
        (None, None, true) => self_signed_files(data_dir, names).map(Some),
        (Some(_), None, _) | (None, Some(_), _) => {
            bail!("--tls-cert and --tls-key go together: give both files")
        }
        (Some(_), Some(_), true) => {
            bail!("--tls-self-signed makes its own certificate: drop --tls-cert/--tls-key or it")
        }
    }
}

/// The data dir's self-signed certificate, made on the first call.
fn self_signed_files(data_dir: &Path, names: &[String]) -> Result<TlsFiles> {
    let dir = data_dir.join("tls");
    let files = TlsFiles {
        cert: dir.join("cert.pem"),
        key: dir.join("key.pem"),
    };
    if files.cert.exists() && files.key.exists() {
        return Ok(files);
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let made = rcgen::generate_simple_self_signed(names.to_vec())
        .context("cannot make a self-signed certificate")?;
    crate::bootstrap::write_private(&files.key, &made.key_pair.serialize_pem())?;
    std::fs::write(&files.cert, made.cert.pem())
        .with_context(|| format!("cannot write {}", files.cert.display()))?;
    tracing::info!(cert = %files.cert.display(), names = ?names, "made a self-signed certificate");
    Ok(files)
}

/// A TLS acceptor for the files (HTTP/1.1 and HTTP/2 offered by ALPN).
pub fn acceptor(files: &TlsFiles) -> Result<TlsAcceptor> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&files.cert)
        .with_context(|| format!("cannot read the certificate {}", files.cert.display()))?
        .collect::<Result<_, _>>()
        .with_context(|| format!("{} is not a PEM certificate chain", files.cert.display()))?;
    if certs.is_empty() {
        bail!("{} holds no certificate", files.cert.display());
    }
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .with_context(|| format!("cannot read a private key from {}", files.key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS versions")?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .with_context(|| {
            format!(
                "the key {} does not go with the certificate {}",
                files.key.display(),
                files.cert.display()
            )
        })?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Serves `app` over TLS on `listener` until `shutdown` resolves (connections then open
/// finish on their own).
pub async fn serve(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    app: Router,
    shutdown: impl Future<Output = ()>,
) {
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (tcp, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => return,
        };
        let _ = tcp.set_nodelay(true);
        let acceptor = acceptor.clone();
        let app = app.clone();
        tokio::spawn(async move {
            let tls = match tokio::time::timeout(HANDSHAKE, acceptor.accept(tcp)).await {
                Ok(Ok(t)) => t,
                Ok(Err(e)) => {
                    tracing::debug!(%peer, error = %e, "a TLS handshake failed");
                    return;
                }
                Err(_) => return,
            };
            // The client's address, as axum's own server gives it (login throttling).
            let app = app.layer(axum::Extension(axum::extract::ConnectInfo(peer)));
            let service = TowerToHyperService::new(app);
            if let Err(e) = Builder::new(TokioExecutor::new())
                .serve_connection_with_upgrades(TokioIo::new(tls), service)
                .await
            {
                tracing::debug!(%peer, error = %e, "an HTTPS connection ended with an error");
            }
        });
    }
}
