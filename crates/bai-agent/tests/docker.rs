//! The Docker agent against the real engine and the real kernel image (`make test` builds
//! the image and the krunner first).

use bai_agent::{DockerAgent, DockerAgentConfig};
use bai_core::agent::{AgentEvent, AgentRpc, ExecEvent, ExecRequest, KernelSpec};
use bai_core::resources::ResourceSlots;
use bai_core::status::SessionType;
use futures::StreamExt;
use std::path::PathBuf;
use std::time::Duration;
use uuid::Uuid;

const IMAGE: &str = "bai/python:3.11-bookworm";

fn krunner() -> PathBuf {
    // tests run from target/<profile>/deps/
    let exe = std::env::current_exe().expect("test path");
    let p = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("profile dir")
        .join("bai-krunner");
    assert!(
        p.exists(),
        "{} is missing: `make test` builds it (cargo build --bins)",
        p.display()
    );
    p
}

async fn agent() -> (DockerAgent, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = DockerAgent::connect(DockerAgentConfig {
        agent_id: format!("test-{}", &Uuid::new_v4().simple().to_string()[..8]),
        scaling_group: "default".into(),
        data_dir: dir.path().to_path_buf(),
        krunner_path: krunner(),
        reserved_mem: 0,
        reserved_cpu_milli: 0,
    })
    .await
    .expect("Docker engine (make test starts it)");
    (a, dir)
}

fn spec(ty: SessionType, mem_mib: u64, startup: Option<&str>) -> KernelSpec {
    KernelSpec {
        kernel_id: Uuid::new_v4(),
        session_id: Uuid::new_v4(),
        session_name: "agent-test".into(),
        session_type: ty,
        image: IMAGE.into(),
        slots: ResourceSlots {
            cpu_milli: 500,
            mem: mem_mib << 20,
            accel: Default::default(),
        },
        shmem: 16 << 20,
        environ: [("FOO".to_string(), "bar".to_string())]
            .into_iter()
            .collect(),
        startup_command: startup.map(str::to_string),
        bootstrap_script: None,
        owner_access_key: "AK".into(),
    }
}

/// Runs a request; returns (stdout, stderr, exit code).
async fn run(a: &DockerAgent, k: Uuid, req: ExecRequest) -> (String, String, i32) {
    let mut s = a.execute(k, req).await.expect("execute");
    let (mut out, mut err, mut code) = (String::new(), String::new(), -1);
    while let Some(ev) = s.next().await {
        match ev {
            ExecEvent::Stdout { data } => out.push_str(&data),
            ExecEvent::Stderr { data } => err.push_str(&data),
            ExecEvent::Finished { exit_code } => code = exit_code,
            ExecEvent::WaitingInput { .. } => {}
        }
    }
    (out, err, code)
}

fn q(code: &str) -> ExecRequest {
    ExecRequest::Query { code: code.into() }
}

#[tokio::test]
async fn query_mode_is_a_real_repl_in_a_real_container() {
    let (a, dir) = agent().await;
    let s = spec(SessionType::Interactive, 256, None);
    let k = s.kernel_id;
    a.create_kernel(s).await.expect("create");
    assert!(a.list_kernels().await.unwrap().contains(&k));
    assert_eq!(
        run(&a, k, q("print(\"Hello, world!\")")).await,
        ("Hello, world!\n".into(), String::new(), 0)
    );
    assert_eq!(run(&a, k, q("1 + 1")).await.0, "2");
    run(&a, k, q("x = 41")).await;
    assert_eq!(run(&a, k, q("x + 1")).await.0, "42");
    let (_, err, code) = run(&a, k, q("def f(:")).await;
    assert_eq!(code, 1);
    assert!(err.contains("SyntaxError"), "{err}");
    assert_eq!(run(&a, k, q("import sys; sys.exit(2)")).await.2, 2);
    assert!(
        run(&a, k, q("import os; os.system('echo from-shell')"))
            .await
            .0
            .contains("from-shell\n")
    );
    // Runs as the unprivileged work user in /home/work, with the env and limits applied.
    let (out, _, _) = run(
        &a,
        k,
        q("import os; print(os.getuid(), os.getcwd(), os.environ['FOO'])"),
    )
    .await;
    assert_eq!(out, "1000 /home/work bar\n");
    let (out, _, _) = run(
        &a,
        k,
        q("print(open('/sys/fs/cgroup/memory/memory.limit_in_bytes').read().strip())"),
    )
    .await;
    assert_eq!(out.trim(), (256u64 << 20).to_string());

    // Upload + batch exec.
    a.upload_files(
        k,
        vec![(
            "sub/myscript.py".into(),
            "import sys; print('args', sys.argv[1:])".into(),
        )],
    )
    .await
    .unwrap();
    let (out, _, code) = run(
        &a,
        k,
        ExecRequest::Batch {
            clean: Some("*".into()),
            build: Some("*".into()),
            exec: Some("python3 sub/myscript.py a b".into()),
        },
    )
    .await;
    assert_eq!((out.as_str(), code), ("args ['a', 'b']\n", 0));
    assert!(
        a.upload_files(k, vec![("../escape".into(), "x".into())])
            .await
            .is_err()
    );

    // Destroy removes the container and the scratch directory.
    a.destroy_kernel(k).await.expect("destroy");
    assert!(!a.list_kernels().await.unwrap().contains(&k));
    assert!(!dir.path().join("kernels").join(k.to_string()).exists());
}

#[tokio::test]
async fn kernel_exits_are_reported_with_oom_and_exit_codes() {
    let (a, _dir) = agent().await;
    let mut events = a.events();

    // Out of memory: the REPL is killed, the kernel ends, the agent says why.
    let s = spec(SessionType::Interactive, 128, None);
    let k = s.kernel_id;
    a.create_kernel(s).await.expect("create");
    let (_, err, code) = run(&a, k, q("x = bytearray(600 * 1024 * 1024)")).await;
    assert_eq!(code, 137, "{err}");
    let exit = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if let Some(AgentEvent::KernelExited(e)) = events.next().await
                && e.kernel_id == k
            {
                return e;
            }
        }
    })
    .await
    .expect("exit event");
    assert!(exit.oom_killed, "{exit:?}");

    // A batch kernel ends with its startup command's exit code and keeps its logs.
    let s = spec(SessionType::Batch, 128, Some("echo batch-says-hi; exit 3"));
    let k = s.kernel_id;
    a.create_kernel(s).await.expect("create batch");
    let exit = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if let Some(AgentEvent::KernelExited(e)) = events.next().await
                && e.kernel_id == k
            {
                return e;
            }
        }
    })
    .await
    .expect("batch exit event");
    assert_eq!(exit.exit_code, Some(3));
    assert!(!exit.oom_killed);
    assert!(exit.logs.contains("batch-says-hi"), "{:?}", exit.logs);
    assert!(!a.list_kernels().await.unwrap().contains(&k));
}

#[tokio::test]
async fn info_reports_capacity_and_kernel_images() {
    let (a, _dir) = agent().await;
    let info = a.info().await.unwrap();
    assert!(info.capacity.cpu_milli >= 1000);
    assert!(info.capacity.mem > 0);
    assert!(
        info.images.iter().any(|i| i.name == IMAGE),
        "{:?}",
        info.images
    );
    let err = a
        .create_kernel(KernelSpec {
            image: "no/such:image".into(),
            ..spec(SessionType::Interactive, 128, None)
        })
        .await;
    assert!(err.is_err());
}
