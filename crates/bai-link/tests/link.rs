//! The link over a real TLS connection on loopback: the agent pins the manager's certificate
//! (a wrong pin is refused before anything is sent), the manager drives a dummy agent through
//! `RemoteAgent` exactly as through the in-process interface, events flow back, and a closed
//! link fails calls at once instead of hanging.

use bai_agent::{DummyAgent, DummyAgentConfig};
use bai_core::agent::{AgentError, AgentEvent, AgentRpc, ExecEvent, ExecRequest, KernelSpec};
use bai_core::resources::ResourceSlots;
use bai_core::status::SessionType;
use bai_link::remote::{RemoteAgent, RemoteShared};
use bai_link::serve::{Serving, serve};
use bai_link::tunnel::Tunnels;
use bai_link::{Link, ManagerIdentity, Side, pin};
use futures::StreamExt;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use uuid::Uuid;

const KEEPALIVE: Duration = Duration::from_secs(5);

fn dummy() -> DummyAgent {
    DummyAgent::new(DummyAgentConfig {
        id: "remote-1".into(),
        scaling_group: "default".into(),
        capacity: ResourceSlots {
            cpu_milli: 4000,
            mem: 8 << 30,
            ..Default::default()
        },
        start_delay: Duration::ZERO,
        images: vec!["bai/python:3.11-bookworm".into()],
    })
}

fn spec(kernel_id: Uuid) -> KernelSpec {
    KernelSpec {
        kernel_id,
        session_id: Uuid::new_v4(),
        session_name: "remote".into(),
        session_type: SessionType::Interactive,
        image: "bai/python:3.11-bookworm".into(),
        slots: ResourceSlots {
            cpu_milli: 1000,
            mem: 1 << 30,
            ..Default::default()
        },
        shmem: 64 << 20,
        environ: Default::default(),
        startup_command: None,
        bootstrap_script: None,
        owner_access_key: "AKIATEST".into(),
        mounts: vec![],
        cluster: None,
    }
}

/// A manager end listening on loopback; returns its address and the accepted link.
async fn listen(
    id: &ManagerIdentity,
) -> (
    std::net::SocketAddr,
    tokio::task::JoinHandle<Option<RemoteAgent>>,
) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(id.server_config().unwrap());
    let task = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.ok()?;
        let tls = acceptor.accept(tcp).await.ok()?;
        let (link, inbound) = Link::start(tls, Side::Listener, KEEPALIVE);
        Some(RemoteAgent::new(
            link,
            inbound,
            RemoteShared::new("remote-1", Arc::new(Tunnels::default())),
        ))
    });
    (addr, task)
}

async fn dial(
    addr: std::net::SocketAddr,
    pin_hash: &str,
) -> std::io::Result<(Link, tokio::sync::mpsc::Receiver<bai_link::Inbound>)> {
    let tcp = TcpStream::connect(addr).await?;
    let connector = tokio_rustls::TlsConnector::from(pin::client_config(pin_hash).unwrap());
    let tls = connector.connect(pin::server_name(), tcp).await?;
    Ok(Link::start(tls, Side::Dialer, KEEPALIVE))
}

#[tokio::test]
async fn a_remote_dummy_agent_is_driven_through_the_link() {
    let id = ManagerIdentity::generate().unwrap();
    let (addr, accepted) = listen(&id).await;
    let agent = dummy();
    let (link, inbound) = dial(addr, &id.fingerprint()).await.unwrap();
    let served: Arc<dyn AgentRpc> = Arc::new(agent.clone());
    let mut serving = Serving::new(served.as_ref(), Duration::from_secs(1), None);
    tokio::spawn({
        let link = link.clone();
        async move { serve(served, link, inbound, &mut serving).await }
    });
    let remote = accepted.await.unwrap().expect("the manager accepts");

    let info = remote.info().await.unwrap();
    assert_eq!(info.id, "remote-1");
    assert_eq!(info.capacity.cpu_milli, 4000);

    let k = Uuid::new_v4();
    let created = remote.create_kernel(spec(k)).await.unwrap();
    assert_eq!(created.kernel_id, k);
    assert_eq!(agent.live(), vec![k]);
    assert_eq!(remote.list_kernels().await.unwrap(), vec![k]);

    // An execution's output arrives in order and ends with its exit code.
    let events: Vec<ExecEvent> = remote
        .execute(k, ExecRequest::Query { code: "1".into() })
        .await
        .unwrap()
        .collect()
        .await;
    assert_eq!(events.last(), Some(&ExecEvent::Finished { exit_code: 0 }));
    // Errors keep their kind across the link.
    let missing = Uuid::new_v4();
    assert_eq!(
        remote.logs(missing).await.unwrap_err(),
        AgentError::KernelNotFound(missing)
    );
    // Files travel as bytes.
    remote
        .upload_files(
            k,
            vec![("a.bin".into(), bytes::Bytes::from(vec![0u8, 255, 7]))],
        )
        .await
        .unwrap();

    // The agent's events reach the manager.
    let mut events = remote.events();
    assert!(agent.exit(k, 3, true));
    match tokio::time::timeout(Duration::from_secs(30), events.next()).await {
        Ok(Some(AgentEvent::KernelExited(e))) => {
            assert_eq!((e.kernel_id, e.exit_code, e.oom_killed), (k, Some(3), true));
        }
        other => panic!("no exit event: {other:?}"),
    }

    // Once the link is gone, calls fail at once.
    link.close();
    remote.link().closed().await;
    assert!(matches!(
        remote.info().await,
        Err(AgentError::Unreachable(_))
    ));
}

#[tokio::test]
async fn an_agent_refuses_a_manager_whose_certificate_it_does_not_pin() {
    let id = ManagerIdentity::generate().unwrap();
    let other = ManagerIdentity::generate().unwrap();
    let (addr, accepted) = listen(&id).await;
    let e = dial(addr, &other.fingerprint())
        .await
        .err()
        .expect("a refused handshake");
    assert!(
        e.to_string().contains("not the one the join token names"),
        "{e}"
    );
    assert!(accepted.await.unwrap().is_none(), "no link was made");
}
