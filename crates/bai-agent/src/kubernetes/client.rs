//! Reaching the API server: the client from a kubeconfig (or the pod's service account),
//! checked with one request; the namespace made when missing; the node bai offers.

use super::capacity;
use super::error::KubeError;
use k8s_openapi::api::core::v1::{Namespace, Node};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{ListParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client, Config};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// How long the first answer of the API server may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A client for the cluster of `kubeconfig` (its current context), or of the pod this runs
/// in; fails unless the API server answers.
pub async fn connect(kubeconfig: Option<&Path>) -> Result<Client, KubeError> {
    let mut config = match kubeconfig {
        Some(path) => {
            let what = |source| KubeError::Kubeconfig {
                path: path.display().to_string(),
                source,
            };
            let file = Kubeconfig::read_from(path).map_err(what)?;
            Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
                .await
                .map_err(what)?
        }
        None => Config::incluster()?,
    };
    config.connect_timeout = Some(CONNECT_TIMEOUT);
    let server = config.cluster_url.to_string();
    let url = &config.cluster_url;
    let port = url.port_u16().unwrap_or(match url.scheme_str() {
        Some("http") => 80,
        _ => 443,
    });
    probe(url.host().unwrap_or(""), port)
        .await
        .map_err(|detail| KubeError::Unreachable {
            server: server.clone(),
            detail,
        })?;
    let client = Client::try_from(config).map_err(|e| KubeError::Unreachable {
        server: server.clone(),
        detail: e.to_string(),
    })?;
    let version = tokio::time::timeout(CONNECT_TIMEOUT, client.apiserver_version())
        .await
        .map_err(|_| KubeError::Unreachable {
            server: server.clone(),
            detail: format!("no answer within {}s", CONNECT_TIMEOUT.as_secs()),
        })?
        .map_err(|e| KubeError::Unreachable {
            server: server.clone(),
            detail: one_line(&e.to_string()),
        })?;
    tracing::info!(%server, version = %version.git_version, "connected to the Kubernetes API server");
    Ok(client)
}

/// A TCP connection to the API server: a server that is not there is said here in bai's
/// words (kube's client would log its own error line first).
async fn probe(host: &str, port: u16) -> Result<(), String> {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err("the server URL has no host".into());
    }
    match tokio::time::timeout(
        CONNECT_TIMEOUT,
        tokio::net::TcpStream::connect((host, port)),
    )
    .await
    {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(format!("cannot connect to {host}:{port}: {e}")),
        Err(_) => Err(format!(
            "no connection to {host}:{port} within {}s",
            CONNECT_TIMEOUT.as_secs()
        )),
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Makes the namespace unless it exists.
pub async fn ensure_namespace(client: &Client, name: &str) -> Result<(), KubeError> {
    let api: Api<Namespace> = Api::all(client.clone());
    let found = api
        .get_opt(name)
        .await
        .map_err(KubeError::api(format_args!(
            "cannot read the namespace {name}"
        )))?;
    if found.is_some() {
        return Ok(());
    }
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            labels: Some(BTreeMap::from([(
                super::labels::LABEL_MANAGED_BY.to_string(),
                super::labels::MANAGED_BY.to_string(),
            )])),
            ..Default::default()
        },
        ..Default::default()
    };
    match api.create(&PostParams::default(), &ns).await {
        Ok(_) => {
            tracing::info!(namespace = name, "made the namespace");
            Ok(())
        }
        Err(e) if super::error::is_conflict(&e) => Ok(()),
        Err(e) => Err(KubeError::api(format_args!(
            "cannot make the namespace {name}"
        ))(e)),
    }
}

/// `k=v,k2=v2` from the node selector pairs.
pub fn selector(pairs: &BTreeMap<String, String>) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The nodes the selector allows that can take kernels now, by name.
pub async fn usable_nodes(
    client: &Client,
    node_selector: &BTreeMap<String, String>,
) -> Result<Vec<Node>, KubeError> {
    let api: Api<Node> = Api::all(client.clone());
    let lp = ListParams::default().labels(&selector(node_selector));
    let mut nodes: Vec<Node> = api
        .list(&lp)
        .await
        .map_err(KubeError::api("cannot list the nodes"))?
        .items
        .into_iter()
        .filter(|n| capacity::unusable(n).is_none())
        .collect();
    nodes.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    Ok(nodes)
}

/// One node by name (None: gone).
pub async fn node(client: &Client, name: &str) -> Result<Option<Node>, KubeError> {
    let api: Api<Node> = Api::all(client.clone());
    api.get_opt(name)
        .await
        .map_err(KubeError::api(format_args!("cannot read the node {name}")))
}
