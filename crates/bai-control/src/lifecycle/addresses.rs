//! A multi-node session whose kernels learn their addresses only as they start (pods on a
//! Kubernetes agent: each gets the IP its cluster's network gives it): once all run, every
//! agent of the session is told the whole table by hostname (`AgentRpc::cluster_hosts`), so
//! a kernel on one agent reaches those on the others as `main1`, `sub1` … before the session
//! runs. Kernels whose addresses were fixed beforehand (the Docker agents' overlay) report
//! none, and nothing is sent.

use bai_core::Reason;
use bai_core::agent::KernelCreated;
use bai_ground::agents::AgentHandle;
use futures::future::join_all;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// The session's host table from each kernel's hostname, reported address and agent (main1
/// first): `None` when no kernel reported one (the overlay's addresses are fixed); a
/// refusal when some did and some did not (pods and overlay kernels cannot reach each
/// other).
pub fn table(
    hostnames: &[String],
    created: &[KernelCreated],
    agents: &[&str],
) -> Result<Option<Vec<(String, IpAddr)>>, Reason> {
    if created.iter().all(|c| c.address.is_none()) {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(created.len());
    for ((host, c), a) in hostnames.iter().zip(created).zip(agents) {
        match c.address {
            Some(addr) => out.push((host.clone(), addr)),
            None => {
                return Err(Reason::CreationFailed(format!(
                    "a multi-node session cannot span pods and containers: kernel {host} on \
                     agent {} has an overlay address, its siblings are pods of a Kubernetes \
                     agent; keep the resource group's agents of one backend",
                    a
                )));
            }
        }
    }
    Ok(Some(out))
}

/// Tells every agent of the session (each once) the whole table, each within `limit`.
pub async fn tell(
    session: Uuid,
    hosts: &[(String, IpAddr)],
    agents: &[Arc<AgentHandle>],
    limit: Duration,
) -> Result<(), Reason> {
    let mut each: Vec<&Arc<AgentHandle>> = Vec::new();
    for a in agents {
        if !each.iter().any(|e| e.id == a.id) {
            each.push(a);
        }
    }
    let told = join_all(each.iter().map(|a| async move {
        let r = tokio::time::timeout(limit, a.rpc.cluster_hosts(session, hosts.to_vec())).await;
        (a.id.clone(), r)
    }))
    .await;
    for (agent, r) in told {
        let why = match r {
            Ok(Ok(())) => continue,
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("no answer within {} s", limit.as_secs()),
        };
        return Err(Reason::CreationFailed(format!(
            "cannot tell agent {agent} the addresses of its session's kernels on other agents: \
             {why}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn made(n: u128, address: Option<&str>) -> KernelCreated {
        KernelCreated {
            kernel_id: Uuid::from_u128(n),
            container_id: format!("c{n}"),
            cpuset: None,
            devices: Default::default(),
            address: address.map(|a| a.parse().unwrap()),
        }
    }

    #[test]
    fn the_table_lists_every_pod_by_hostname_and_is_none_for_overlay_kernels() {
        let hosts = vec!["main1".to_string(), "sub1".to_string()];
        let pods = [made(1, Some("10.1.0.5")), made(2, Some("10.2.0.7"))];
        assert_eq!(
            table(&hosts, &pods, &["k-a", "k-b"]).unwrap(),
            Some(vec![
                ("main1".to_string(), "10.1.0.5".parse().unwrap()),
                ("sub1".to_string(), "10.2.0.7".parse().unwrap())
            ])
        );
        let overlay = [made(1, None), made(2, None)];
        assert_eq!(table(&hosts, &overlay, &["d-a", "d-b"]).unwrap(), None);
        let mixed = [made(1, Some("10.1.0.5")), made(2, None)];
        let Err(Reason::CreationFailed(why)) = table(&hosts, &mixed, &["k-a", "d-b"]) else {
            panic!("a mixed session must be refused");
        };
        assert!(why.contains("sub1") && why.contains("d-b"), "{why}");
    }
}
