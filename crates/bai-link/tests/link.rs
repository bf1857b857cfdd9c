//! The link over a real TLS connection on loopback: the agent pins the manager's certificate
//! (a wrong pin is refused before anything is sent), the manager drives a dummy agent through
//! `RemoteAgent` exactly as through the in-process interface, events flow back, and a closed
//! link fails calls at once instead of hanging. A call cut off by a broken link is answered
//! once on the next link, carried out once; files far bigger than one frame travel in parts.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

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
        egress: Default::default(),
        dotfiles: Vec::new(),
    }
}

/// A manager end listening on loopback; returns its address and the accepted link.
async fn listen(
    id: &ManagerIdentity,
) -> (
    std::net::SocketAddr,
    tokio::task::JoinHandle<Option<RemoteAgent>>,
) {
    listen_under(id, 0).await
}

/// [`listen`] for a manager leading under lease term `term`.
async fn listen_under(
    id: &ManagerIdentity,
    term: u64,
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
            RemoteShared::new("remote-1", Arc::new(Tunnels::default())).with_term(term),
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

/// A manager end that accepts every connection; each accepted link comes out of the channel.
async fn listen_many(
    id: &ManagerIdentity,
) -> (
    std::net::SocketAddr,
    tokio::sync::mpsc::Receiver<(Link, tokio::sync::mpsc::Receiver<bai_link::Inbound>)>,
) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(id.server_config().unwrap());
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let Ok(tls) = acceptor.accept(tcp).await else {
                continue;
            };
            if tx
                .send(Link::start(tls, Side::Listener, KEEPALIVE))
                .await
                .is_err()
            {
                return;
            }
        }
    });
    (addr, rx)
}

#[tokio::test]
async fn a_call_cut_off_by_a_broken_link_is_carried_out_once_and_answered_on_the_next() {
    let id = ManagerIdentity::generate().unwrap();
    let (addr, mut accepted) = listen_many(&id).await;
    let agent = dummy();
    // The creation hangs on the agent while its link breaks.
    agent.script_create([bai_agent::CreateStep::Hang]);
    let served: Arc<dyn AgentRpc> = Arc::new(agent.clone());
    let mut serving = Serving::new(served.as_ref(), Duration::from_secs(1), None);
    let (first_link, inbound) = dial(addr, &id.fingerprint()).await.unwrap();
    let (cut_tx, cut_rx) = tokio::sync::oneshot::channel::<()>();
    let pin_hash = id.fingerprint();
    let agent_side = tokio::spawn({
        let served = served.clone();
        let first_link = first_link.clone();
        async move {
            serve(served.clone(), first_link, inbound, &mut serving).await;
            let _ = cut_rx.await;
            // The agent dials again (as `join::run` does) with the same memory.
            let (link, inbound) = dial(addr, &pin_hash).await.unwrap();
            serve(served, link, inbound, &mut serving).await;
        }
    });
    let shared = RemoteShared::new("remote-1", Arc::new(Tunnels::default()))
        .with_retry_window(Duration::from_secs(120));
    let (link, inbound) = accepted.recv().await.unwrap();
    let remote = RemoteAgent::new(link, inbound, shared.clone());

    let k = Uuid::new_v4();
    let call = tokio::spawn({
        let remote = remote.clone();
        async move { remote.create_kernel(spec(k)).await }
    });
    agent.wait_asked(1).await;
    // The link breaks while the agent is still creating the kernel.
    first_link.close();
    remote.link().closed().await;
    let _ = cut_tx.send(());
    let (link, inbound) = accepted.recv().await.unwrap();
    let _next = RemoteAgent::new(link, inbound, shared);
    // The manager's call went again on the new link and waits for the first creation.
    agent.release();
    let created = tokio::time::timeout(Duration::from_secs(60), call)
        .await
        .expect("the call is answered")
        .unwrap()
        .expect("the creation succeeded");
    assert_eq!(created.kernel_id, k);
    assert_eq!(agent.asked(), vec![k], "created once, not twice");
    assert_eq!(agent.live(), vec![k]);
    agent_side.abort();
}

#[tokio::test]
async fn files_bigger_than_a_frame_travel_in_parts() {
    let id = ManagerIdentity::generate().unwrap();
    let (addr, accepted) = listen(&id).await;
    let agent = dummy();
    let (link, inbound) = dial(addr, &id.fingerprint()).await.unwrap();
    let served: Arc<dyn AgentRpc> = Arc::new(agent.clone());
    let mut serving = Serving::new(served.as_ref(), Duration::from_secs(1), None);
    tokio::spawn(async move { serve(served, link, inbound, &mut serving).await });
    let remote = accepted.await.unwrap().expect("the manager accepts");
    let k = Uuid::new_v4();
    remote.create_kernel(spec(k)).await.unwrap();

    // 70 MiB: more than the 64 MiB a frame may carry.
    let big: Vec<u8> = (0..(70u32 << 20)).map(|i| (i % 251) as u8).collect();
    assert!(big.len() > bai_link::frame::MAX_BODY);
    let files = vec![
        ("big.bin".to_string(), bytes::Bytes::from(big.clone())),
        ("empty".to_string(), bytes::Bytes::new()),
        ("small.txt".to_string(), bytes::Bytes::from_static(b"small")),
    ];
    remote.upload_files(k, files).await.unwrap();
    let back = remote
        .download_files(
            k,
            vec!["small.txt".into(), "big.bin".into(), "empty".into()],
        )
        .await
        .unwrap();
    let names: Vec<&str> = back.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(names, ["small.txt", "big.bin", "empty"]);
    assert_eq!(&back[0].1[..], b"small");
    assert!(back[1].1 == big, "the big file comes back byte for byte");
    assert!(back[2].1.is_empty());
}

/// Two managers reach the agent, the second under a newer lease term: once the agent has
/// seen the newer term, the older manager's calls are refused and change nothing.
#[tokio::test]
async fn calls_of_a_deposed_manager_are_refused() {
    let id = ManagerIdentity::generate().unwrap();
    let agent = dummy();
    let served: Arc<dyn AgentRpc> = Arc::new(agent.clone());
    let mut old_serving = Serving::new(served.as_ref(), Duration::from_secs(1), None);
    let mut new_serving = Serving::new(served.as_ref(), Duration::from_secs(1), None);
    new_serving.term = old_serving.term.clone();
    let mut remotes = Vec::new();
    for (term, serving) in [(4, &mut old_serving), (5, &mut new_serving)] {
        let (addr, accepted) = listen_under(&id, term).await;
        let (link, inbound) = dial(addr, &id.fingerprint()).await.unwrap();
        let mut serving = std::mem::replace(
            serving,
            Serving::new(served.as_ref(), Duration::from_secs(1), None),
        );
        let served = served.clone();
        tokio::spawn(async move { serve(served, link, inbound, &mut serving).await });
        remotes.push(accepted.await.unwrap().expect("the manager accepts"));
    }
    let (old, new) = (&remotes[0], &remotes[1]);
    // Before the agent heard of term 5, term 4 leads.
    let k = Uuid::new_v4();
    old.create_kernel(spec(k)).await.unwrap();
    // Term 5 speaks; from now on term 4 is refused, whatever it asks.
    assert_eq!(new.list_kernels().await.unwrap(), vec![k]);
    let e = old.destroy_kernel(k).await.unwrap_err();
    assert!(e.to_string().contains("lease term 4"), "{e}");
    let e = old.create_kernel(spec(Uuid::new_v4())).await.unwrap_err();
    assert!(e.to_string().contains("term 5"), "{e}");
    assert_eq!(agent.live(), vec![k], "the deposed manager changed nothing");
    new.destroy_kernel(k).await.unwrap();
    assert!(agent.live().is_empty());
}
