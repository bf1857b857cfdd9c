//! Configuration from the environment, as the official client reads it.

use crate::ClientError;

#[derive(Debug, Clone)]
pub struct Config {
    /// Base URL without a trailing slash, e.g. `http://127.0.0.1:8090`.
    pub endpoint: String,
    pub access_key: String,
    pub secret_key: String,
    pub domain: String,
    pub group: String,
    pub vfolder_mounts: Vec<String>,
}

fn var(name: &str) -> Option<String> {
    std::env::var(format!("BACKEND_{name}"))
        .or_else(|_| std::env::var(format!("SORNA_{name}")))
        .ok()
        .filter(|v| !v.is_empty())
}

impl Config {
    pub fn from_env() -> Result<Config, ClientError> {
        let endpoint = var("ENDPOINT").unwrap_or_else(|| "http://127.0.0.1:8090".into());
        let endpoint = endpoint
            .split(',')
            .next()
            .unwrap_or("")
            .trim()
            .trim_end_matches('/')
            .to_string();
        if !endpoint.starts_with("http://") && !endpoint.starts_with("https://") {
            return Err(ClientError::Config(format!(
                "BACKEND_ENDPOINT {endpoint:?} must start with http:// or https://"
            )));
        }
        if endpoint.starts_with("https://") {
            return Err(ClientError::Config(
                "this build of bai speaks plain HTTP only; use an http:// endpoint".into(),
            ));
        }
        match var("ENDPOINT_TYPE").as_deref() {
            None | Some("api") => {}
            Some(other) => {
                return Err(ClientError::Config(format!(
                    "BACKEND_ENDPOINT_TYPE={other} is not supported by bai; use api (keypair signing)"
                )));
            }
        }
        let access_key = var("ACCESS_KEY").unwrap_or_default();
        let secret_key = var("SECRET_KEY").unwrap_or_default();
        if access_key.is_empty() || secret_key.is_empty() {
            return Err(ClientError::Config(
                "set BACKEND_ACCESS_KEY and BACKEND_SECRET_KEY (e.g. `. ~/.local/share/bai/env-user.sh`)".into(),
            ));
        }
        Ok(Config {
            endpoint,
            access_key,
            secret_key,
            domain: var("DOMAIN").unwrap_or_else(|| "default".into()),
            group: var("GROUP").unwrap_or_else(|| "default".into()),
            vfolder_mounts: var("VFOLDER_MOUNTS")
                .map(|v| {
                    v.split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect()
                })
                .unwrap_or_default(),
        })
    }

    /// `host[:port]` as written in the endpoint (what is signed and sent as Host).
    pub fn authority(&self) -> &str {
        let rest = self
            .endpoint
            .split_once("://")
            .map(|(_, r)| r)
            .unwrap_or(&self.endpoint);
        rest.split('/').next().unwrap_or(rest)
    }

    /// The path prefix of the endpoint (`""` or `/prefix`), part of every signed path.
    pub fn path_prefix(&self) -> &str {
        let rest = self
            .endpoint
            .split_once("://")
            .map(|(_, r)| r)
            .unwrap_or(&self.endpoint);
        match rest.find('/') {
            Some(i) => &rest[i..],
            None => "",
        }
    }
}
