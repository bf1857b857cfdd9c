//! Configuration from the environment, as the official client reads it (wire contract §1).

use crate::ClientError;
use std::time::Duration;

pub const DEFAULT_ENDPOINT: &str = "http://127.0.0.1:8090";

/// The longest a request waits for the manager's next bytes by default: event streams get
/// a keep-alive every 15 s, and every other answer begins within this unless the manager
/// stopped (a create's wait for its session is asked again).
pub const REQUEST_IDLE: Duration = Duration::from_secs(120);

/// Where and as whom to talk to the manager.
#[derive(Debug, Clone)]
pub struct Config {
    /// Base URL without a trailing slash, path prefix included, e.g. `http://127.0.0.1:8090`.
    endpoint: String,
    /// `host[:port]`: sent as Host and signed.
    authority: String,
    /// `""` or `/prefix`: part of every request path (and signed).
    prefix: String,
    pub access_key: String,
    pub secret_key: String,
    /// Sent as `X-BackendAI-Domain` and as `domain` in session creation.
    pub domain: String,
    /// Project name sent as `group` in session creation.
    pub group: String,
    /// vfolders appended to `config.mounts` of every created session.
    pub vfolder_mounts: Vec<String>,
    pub connect_timeout: Duration,
    /// The longest a request waits for the manager's next bytes ([`REQUEST_IDLE`] unless
    /// `BACKEND_READ_TIMEOUT` says otherwise), so that no request hangs for good on a
    /// manager that stopped; a create that waits longer for its session is sent again with
    /// its key. None (`BACKEND_READ_TIMEOUT=0`): wait as long as the server needs.
    pub read_timeout: Option<Duration>,
    /// How long a request is sent again while the platform switches managers
    /// (`BAI_FAILOVER_WAIT`, default [`crate::FAILOVER_WAIT`]; 0: not at all). A create waits
    /// twice as long.
    pub failover_wait: Duration,
    /// For `https://` endpoints: certificates trusted besides the web PKI's roots
    /// (`BAI_CA_CERT`, `SSL_CERT_FILE`).
    pub ca_files: Vec<std::path::PathBuf>,
    /// `BACKEND_SKIP_SSLCERT_VALIDATION=true`: any certificate is taken.
    pub skip_tls_verify: bool,
}

impl Config {
    /// A configuration for `endpoint` (`http://host[:port][/prefix]`) and a keypair, with
    /// the defaults of the official client for everything else.
    pub fn new(endpoint: &str, access_key: &str, secret_key: &str) -> Result<Config, ClientError> {
        let (endpoint, authority, prefix) = parse_endpoint(endpoint)?;
        if access_key.is_empty() || secret_key.is_empty() {
            return Err(ClientError::Config(
                "set BACKEND_ACCESS_KEY and BACKEND_SECRET_KEY \
                 (e.g. `. ~/.local/share/bai/env-user.sh`)"
                    .into(),
            ));
        }
        Ok(Config {
            endpoint,
            authority,
            prefix,
            access_key: access_key.to_string(),
            secret_key: secret_key.to_string(),
            domain: "default".into(),
            group: "default".into(),
            vfolder_mounts: Vec::new(),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Some(REQUEST_IDLE),
            failover_wait: crate::FAILOVER_WAIT,
            ca_files: Vec::new(),
            skip_tls_verify: false,
        })
    }

    /// `BACKEND_*` variables (falling back to `SORNA_*`).
    pub fn from_env() -> Result<Config, ClientError> {
        Config::from_lookup(|k| std::env::var(k).ok())
    }

    /// Like [`Config::from_env`], reading variables through `get` (for tests).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Config, ClientError> {
        let var = |name: &str| {
            get(&format!("BACKEND_{name}"))
                .or_else(|| get(&format!("SORNA_{name}")))
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        match var("ENDPOINT_TYPE").as_deref() {
            None | Some("api") => {}
            Some(other) => {
                return Err(ClientError::Config(format!(
                    "BACKEND_ENDPOINT_TYPE={other} is not supported: bai speaks only `api` \
                     (keypair signing); set BACKEND_ENDPOINT_TYPE=api and a keypair"
                )));
            }
        }
        let endpoint = var("ENDPOINT").unwrap_or_else(|| DEFAULT_ENDPOINT.into());
        // The official client accepts a comma-separated list and rotates; we use the first.
        let endpoint = endpoint.split(',').next().unwrap_or("").trim().to_string();
        let mut c = Config::new(
            &endpoint,
            &var("ACCESS_KEY").unwrap_or_default(),
            &var("SECRET_KEY").unwrap_or_default(),
        )?;
        if let Some(d) = var("DOMAIN") {
            c.domain = d;
        }
        if let Some(g) = var("GROUP") {
            c.group = g;
        }
        c.vfolder_mounts = var("VFOLDER_MOUNTS")
            .map(|v| {
                v.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        if let Some(t) = var("CONNECTION_TIMEOUT") {
            c.connect_timeout =
                seconds(&t, "BACKEND_CONNECTION_TIMEOUT")?.unwrap_or(c.connect_timeout);
        }
        if let Some(t) = var("READ_TIMEOUT") {
            c.read_timeout = seconds(&t, "BACKEND_READ_TIMEOUT")?;
        }
        if let Some(t) = get("BAI_FAILOVER_WAIT").filter(|t| !t.trim().is_empty()) {
            c.failover_wait = seconds(t.trim(), "BAI_FAILOVER_WAIT")?.unwrap_or_default();
        }
        c.ca_files = ["BAI_CA_CERT", "SSL_CERT_FILE"]
            .iter()
            .filter_map(|k| get(k))
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .map(std::path::PathBuf::from)
            .collect();
        c.skip_tls_verify = var("SKIP_SSLCERT_VALIDATION")
            .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes"));
        Ok(c)
    }

    /// The base URL, path prefix included, without a trailing slash.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// `host[:port]` as sent in the Host header and signed.
    pub fn authority(&self) -> &str {
        &self.authority
    }

    /// The path prefix of the endpoint (`""` or `/prefix`), part of every signed path.
    pub fn path_prefix(&self) -> &str {
        &self.prefix
    }

    /// Whether the endpoint is `https://`.
    pub fn is_https(&self) -> bool {
        self.endpoint.starts_with("https://")
    }
}

/// Seconds (fractions too), or a duration like `30s` or `5m`; 0 means "no limit".
fn seconds(v: &str, name: &str) -> Result<Option<Duration>, ClientError> {
    let d = bai_core::parse_duration(v)
        .map_err(|_| ClientError::Config(format!("{name}={v:?} is not a number of seconds")))?;
    Ok((!d.is_zero()).then_some(d))
}

/// Splits an endpoint into (normalised base URL, authority, path prefix).
fn parse_endpoint(raw: &str) -> Result<(String, String, String), ClientError> {
    let url = reqwest::Url::parse(raw.trim()).map_err(|e| {
        ClientError::Config(format!(
            "BACKEND_ENDPOINT {raw:?} is not a URL ({e}); use e.g. {DEFAULT_ENDPOINT}"
        ))
    })?;
    match url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(ClientError::Config(format!(
                "BACKEND_ENDPOINT {raw:?} has scheme {other:?}; use http://host:port or https://host:port"
            )));
        }
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(ClientError::Config(format!(
            "BACKEND_ENDPOINT {raw:?} must not carry a query or fragment"
        )));
    }
    let host = url
        .host_str()
        .ok_or_else(|| ClientError::Config(format!("BACKEND_ENDPOINT {raw:?} names no host")))?;
    // `port()` is None for the scheme's default port, exactly when the Host header omits it.
    let authority = match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    };
    let prefix = url.path().trim_end_matches('/').to_string();
    Ok((
        format!("{}://{authority}{prefix}", url.scheme()),
        authority,
        prefix,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn https_endpoints_and_their_trust() {
        let c = Config::from_lookup(lookup(&[
            ("BACKEND_ENDPOINT", "https://bai.example.com/api/"),
            ("BACKEND_ACCESS_KEY", "AK"),
            ("BACKEND_SECRET_KEY", "SK"),
            ("BAI_CA_CERT", "/etc/bai/ca.pem"),
            ("BACKEND_SKIP_SSLCERT_VALIDATION", "true"),
        ]))
        .unwrap();
        assert!(c.is_https());
        assert_eq!(c.endpoint(), "https://bai.example.com/api");
        assert_eq!(c.authority(), "bai.example.com");
        assert_eq!(c.ca_files, [std::path::PathBuf::from("/etc/bai/ca.pem")]);
        assert!(c.skip_tls_verify);
        let e = Config::new("ftp://x", "AK", "SK").unwrap_err();
        assert!(e.to_string().contains("https://host:port"), "{e}");
    }

    fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn defaults_and_sorna_fallbacks() {
        let c = Config::from_lookup(lookup(&[
            ("SORNA_ACCESS_KEY", "AK"),
            ("BACKEND_SECRET_KEY", "SK"),
            ("BACKEND_VFOLDER_MOUNTS", "a, b,,"),
        ]))
        .unwrap();
        assert_eq!(c.endpoint(), "http://127.0.0.1:8090");
        assert_eq!(c.authority(), "127.0.0.1:8090");
        assert_eq!(c.path_prefix(), "");
        assert_eq!(c.access_key, "AK");
        assert_eq!(c.domain, "default");
        assert_eq!(c.group, "default");
        assert_eq!(c.vfolder_mounts, vec!["a", "b"]);
        // No request waits for good on a manager that stopped.
        assert_eq!(c.read_timeout, Some(REQUEST_IDLE));
        assert_eq!(c.failover_wait, crate::FAILOVER_WAIT);
    }

    #[test]
    fn endpoint_with_prefix_and_default_port() {
        let c = Config::from_lookup(lookup(&[
            (
                "BACKEND_ENDPOINT",
                "http://example.com:8080/prefix/,http://other",
            ),
            ("BACKEND_ACCESS_KEY", "AK"),
            ("BACKEND_SECRET_KEY", "SK"),
            ("BACKEND_DOMAIN", "dom"),
            ("BACKEND_GROUP", "proj"),
        ]))
        .unwrap();
        assert_eq!(c.endpoint(), "http://example.com:8080/prefix");
        assert_eq!(c.authority(), "example.com:8080");
        assert_eq!(c.path_prefix(), "/prefix");
        assert_eq!((c.domain.as_str(), c.group.as_str()), ("dom", "proj"));
        let c = Config::new("http://example.com:80", "AK", "SK").unwrap();
        assert_eq!(c.authority(), "example.com");
    }

    #[test]
    fn clear_errors() {
        let e = Config::from_lookup(lookup(&[
            ("BACKEND_ENDPOINT_TYPE", "session"),
            ("BACKEND_ACCESS_KEY", "AK"),
            ("BACKEND_SECRET_KEY", "SK"),
        ]))
        .unwrap_err();
        assert!(
            e.to_string().contains("BACKEND_ENDPOINT_TYPE=session"),
            "{e}"
        );
        let e = Config::from_lookup(lookup(&[])).unwrap_err();
        assert!(e.to_string().contains("BACKEND_ACCESS_KEY"), "{e}");
        assert!(Config::new("ws://h", "AK", "SK").is_err());
        assert!(Config::new("not a url", "AK", "SK").is_err());
    }

    #[test]
    fn timeouts_are_seconds_or_durations() {
        let with = |k: &str, v: &str| {
            Config::from_lookup(lookup(&[
                ("BACKEND_ACCESS_KEY", "AK"),
                ("BACKEND_SECRET_KEY", "SK"),
                (k, v),
            ]))
        };
        let c = with("BACKEND_READ_TIMEOUT", "2.5").unwrap();
        assert_eq!(c.read_timeout, Some(Duration::from_millis(2500)));
        let c = with("BACKEND_READ_TIMEOUT", "5m").unwrap();
        assert_eq!(c.read_timeout, Some(Duration::from_secs(300)));
        let c = with("BACKEND_READ_TIMEOUT", "0").unwrap();
        assert_eq!(c.read_timeout, None, "0: no limit");
        let c = with("BAI_FAILOVER_WAIT", "5s").unwrap();
        assert_eq!(c.failover_wait, Duration::from_secs(5));
        let c = with("BAI_FAILOVER_WAIT", "0").unwrap();
        assert_eq!(c.failover_wait, Duration::ZERO, "0: not at all");
        assert!(with("BAI_FAILOVER_WAIT", "soon").is_err());
        let c = with("BACKEND_CONNECTION_TIMEOUT", "0").unwrap();
        assert_eq!(c.connect_timeout, Duration::from_secs(10), "0: the default");
        let c = with("BACKEND_CONNECTION_TIMEOUT", "3").unwrap();
        assert_eq!(c.connect_timeout, Duration::from_secs(3));
        for bad in ["soon", "-1", "1e30"] {
            let e = with("BACKEND_READ_TIMEOUT", bad).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("BACKEND_READ_TIMEOUT={bad:?} is not a number of seconds"),
            );
        }
    }
}
