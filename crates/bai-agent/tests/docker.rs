//! DOCKER TESTS: the agent against the real Docker engine and the real kernel image
//! `bai/python:3.11-bookworm` (built by images/python/build.sh). Every test here is named
//! `docker_*` and needs a running engine; the krunner binary is built on demand
//! (`scripts/build-krunner.sh`), so `cargo test -p bai-agent` alone is enough.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_core::agent::{AgentError, AgentRpc, ExecEvent, ExecRequest, KernelSpec};
use bai_core::status::SessionType;
use futures::StreamExt;
use std::path::Path;
use std::time::Duration;
use uuid::Uuid;

mod common;

use common::*;

#[tokio::test]
async fn docker_query_mode_is_a_persistent_repl() {
    let t = agent().await;
    let a = &t.agent;
    let s = spec(SessionType::Interactive, 256, None);
    let k = s.kernel_id;
    a.create_kernel(s).await.expect("create");
    assert!(a.list_kernels().await.expect("list").contains(&k));

    assert_eq!(
        run(a, k, q("print(\"Hello, world!\")")).await,
        ("Hello, world!\n".into(), String::new(), 0)
    );
    assert_eq!(run(a, k, q("1 + 1")).await, ("2".into(), String::new(), 0));
    assert_eq!(
        run(a, k, q("x = 41")).await,
        (String::new(), String::new(), 0)
    );
    assert_eq!(run(a, k, q("x + 1")).await.0, "42");
    let (_, err, code) = run(a, k, q("def f(:")).await;
    assert_eq!(code, 1);
    assert!(err.contains("SyntaxError"), "{err}");
    let (_, err, code) = run(a, k, q("1 / 0")).await;
    assert_eq!(code, 1);
    assert!(err.contains("ZeroDivisionError"), "{err}");
    let (_, err, code) = run(a, k, q("import sys; sys.exit(2)")).await;
    assert_eq!((code, err.as_str()), (2, "SystemExit: 2\n"));
    assert_eq!(run(a, k, q("import sys; sys.exit()")).await.2, 0);
    assert_eq!(run(a, k, q("x")).await.0, "41", "SystemExit kept the REPL");
    assert_eq!(
        run(
            a,
            k,
            q("import os; print('a'); os.system('echo from-shell'); print('c')")
        )
        .await
        .0,
        "a\nfrom-shell\nc\n"
    );
    // Unprivileged work user in /home/work, with the environment and limits applied.
    let (out, _, _) = run(
        a,
        k,
        q("import os; print(os.getuid(), os.getcwd(), os.environ['FOO'], os.environ['BAI_KERNEL_ID'])"),
    )
    .await;
    assert_eq!(out, format!("1000 /home/work bar {k}\n"));
    let (out, _, _) = run(
        a,
        k,
        q("print(open('/sys/fs/cgroup/memory/memory.limit_in_bytes').read().strip())"),
    )
    .await;
    assert_eq!(out.trim(), (256u64 << 20).to_string());

    // input(): waiting-input, the line arrives over a second request, the run goes on.
    let mut s = a
        .execute(k, q("name = input('Name: '); print('hi', name)"))
        .await
        .expect("execute");
    let first = tokio::time::timeout(Duration::from_secs(10), s.next()).await;
    assert_eq!(
        first.expect("an event"),
        Some(ExecEvent::WaitingInput {
            prompt: "Name: ".into(),
            password: false
        })
    );
    let ack = a
        .execute(k, ExecRequest::Input { line: "bob".into() })
        .await
        .expect("input");
    assert_eq!(collect(ack).await.2, 0);
    assert_eq!(collect(s).await, ("hi bob\n".into(), String::new(), 0));

    t.agent.destroy_kernel(k).await.expect("destroy");
}

#[tokio::test]
async fn docker_upload_then_batch_exec() {
    let t = agent().await;
    let a = &t.agent;
    let s = spec(SessionType::Interactive, 256, None);
    let k = s.kernel_id;
    a.create_kernel(s).await.expect("create");
    a.upload_files(
        k,
        vec![
            (
                "myscript.py".into(),
                "import sys; print('args', sys.argv[1:])".into(),
            ),
            ("sub/dir/data.txt".into(), "payload".into()),
            ("main.py".into(), "print('main ran')".into()),
        ],
    )
    .await
    .expect("upload");
    let batch = |exec: &str| ExecRequest::Batch {
        clean: Some("*".into()),
        build: Some(String::new()),
        exec: Some(exec.into()),
    };
    assert_eq!(
        run(a, k, batch("python3 myscript.py a b")).await,
        ("args ['a', 'b']\n".into(), String::new(), 0)
    );
    assert_eq!(run(a, k, batch("cat sub/dir/data.txt")).await.0, "payload");
    assert_eq!(run(a, k, batch("*")).await.0, "main ran\n");
    let (out, err, code) = run(
        a,
        k,
        ExecRequest::Batch {
            clean: None,
            build: Some("echo building; echo oops >&2; exit 5".into()),
            exec: Some("echo never".into()),
        },
    )
    .await;
    assert_eq!(
        (out.as_str(), err.as_str(), code),
        ("building\n", "oops\n", 5)
    );
    // The uploaded files belong to the kernel user.
    assert_eq!(
        run(a, k, batch("stat -c %u:%g sub/dir/data.txt")).await.0,
        "1000:1000\n"
    );

    for bad in ["../escape", "/etc/passwd", "a/../../b", "nul\0byte"] {
        let r = a.upload_files(k, vec![(bad.into(), "x".into())]).await;
        assert!(
            matches!(r, Err(AgentError::BadRequest(_))),
            "{bad:?}: {r:?}"
        );
    }
    // A link planted by the kernel user does not lead the agent outside.
    run(a, k, batch("ln -s /etc evil")).await;
    let r = a
        .upload_files(k, vec![("evil/new/file".into(), "x".into())])
        .await;
    assert!(matches!(r, Err(AgentError::BadRequest(_))), "{r:?}");
    let r = a.upload_files(k, vec![("evil".into(), "x".into())]).await;
    assert!(matches!(r, Err(AgentError::BadRequest(_))), "{r:?}");
    assert!(!Path::new("/etc/new").exists());

    a.destroy_kernel(k).await.expect("destroy");
}

#[tokio::test]
async fn docker_out_of_memory_is_reported() {
    let t = agent().await;
    let a = &t.agent;
    let mut events = a.events();
    let s = spec(SessionType::Interactive, 128, None);
    let k = s.kernel_id;
    a.create_kernel(s).await.expect("create");
    let (_, err, code) = run(a, k, q("x = bytearray(400 * 1024 * 1024)")).await;
    assert_eq!(code, 137, "{err}");
    assert!(err.contains("killed"), "{err}");
    let exit = next_exit(&mut events, k).await;
    assert!(exit.oom_killed, "{exit:?}");
    assert!(!a.list_kernels().await.expect("list").contains(&k));
    assert!(!kernel_dir(&t, k).exists());
}

#[tokio::test]
async fn docker_batch_session_ends_with_its_startup_command() {
    let t = agent().await;
    let a = &t.agent;
    let mut events = a.events();
    let mut s = spec(
        SessionType::Batch,
        128,
        Some("echo batch-says-hi; cat boot.txt; exit 3"),
    );
    s.bootstrap_script = Some("echo booted > /home/work/boot.txt".into());
    let k = s.kernel_id;
    a.create_kernel(s).await.expect("create batch");
    let exit = next_exit(&mut events, k).await;
    assert_eq!(exit.exit_code, Some(3));
    assert!(!exit.oom_killed);
    assert!(exit.logs.contains("batch-says-hi"), "{:?}", exit.logs);
    assert!(exit.logs.contains("booted"), "{:?}", exit.logs);
    assert!(!a.list_kernels().await.expect("list").contains(&k));
    assert!(!kernel_dir(&t, k).exists());
    // Already gone: destroy is idempotent.
    let again = a.destroy_kernel(k).await.expect("destroy a gone kernel");
    assert_eq!((again.exit_code, again.logs.as_str()), (None, ""));
}

#[tokio::test]
async fn docker_failures_are_reported() {
    let t = agent().await;
    let a = &t.agent;
    let mut events = a.events();

    // krunner dies before it is ready: NotReady with the container's log, nothing left.
    let mut s = spec(SessionType::Interactive, 128, None);
    s.bootstrap_script = Some("echo about-to-fail; kill -9 $PPID".into());
    let k = s.kernel_id;
    match a.create_kernel(s).await {
        Err(AgentError::NotReady(why)) => assert!(why.contains("about-to-fail"), "{why}"),
        other => panic!("expected NotReady, got {other:?}"),
    }
    assert!(!a.list_kernels().await.expect("list").contains(&k));
    assert!(!kernel_dir(&t, k).exists());

    // The kernel vanishes mid-execution: the stream still finishes, the exit is reported.
    let s = spec(SessionType::Interactive, 128, None);
    let k = s.kernel_id;
    a.create_kernel(s).await.expect("create");
    let (_, err, code) = run(
        a,
        k,
        q("import os, time; os.kill(os.getppid(), 9); time.sleep(5)"),
    )
    .await;
    assert_eq!(code, 137, "{err}");
    assert!(err.contains("went away"), "{err}");
    let exit = next_exit(&mut events, k).await;
    assert_eq!((exit.exit_code, exit.oom_killed), (Some(137), false));
}

#[tokio::test]
async fn docker_destroy_removes_container_and_scratch() {
    let t = agent().await;
    let a = &t.agent;
    let mut events = a.events();
    let s = spec(SessionType::Interactive, 128, None);
    let k = s.kernel_id;
    a.create_kernel(s).await.expect("create");
    run(a, k, q("print('bye')")).await;
    assert!(kernel_dir(&t, k).join("run/krunner.sock").exists());
    let exit = a.destroy_kernel(k).await.expect("destroy");
    assert_eq!(exit.exit_code, None, "we ended it");
    assert!(exit.logs.is_empty() || !exit.logs.contains("Traceback"));
    // It has stopped; the engine removes it after the answer, and a second destroy waits
    // for that.
    assert!(a.destroy_kernel(k).await.is_ok());
    assert!(!a.list_kernels().await.expect("list").contains(&k));
    assert!(!kernel_dir(&t, k).exists());
    assert!(matches!(
        a.execute(k, q("1")).await.map(|_| ()),
        Err(AgentError::KernelNotFound(_))
    ));
    // destroy_kernel answers for the kernel: no KernelExited event as well.
    let extra = tokio::time::timeout(Duration::from_millis(500), events.next()).await;
    assert!(extra.is_err(), "unexpected event {extra:?}");
}

#[tokio::test]
async fn docker_info_and_orphans() {
    let t = agent().await;
    let a = &t.agent;
    let info = a.info().await.expect("info");
    assert!(info.capacity.cpu_milli >= 1000);
    assert!(info.capacity.mem > 0);
    assert_eq!(info.architecture, std::env::consts::ARCH);
    let image = info.images.iter().find(|i| i.name == IMAGE);
    let image = image.unwrap_or_else(|| panic!("{IMAGE} not in {:?}", info.images));
    assert!(image.size_bytes > 0);
    assert!(image.labels.contains_key("ai.backend.kernelspec"));

    let r = a
        .create_kernel(KernelSpec {
            image: "bai/no-such-image:0".into(),
            ..spec(SessionType::Interactive, 128, None)
        })
        .await;
    assert!(matches!(r, Err(AgentError::ImageNotFound(_))), "{r:?}");

    let keep = spec(SessionType::Interactive, 128, None);
    let drop_ = spec(SessionType::Interactive, 128, None);
    let (keep_id, drop_id) = (keep.kernel_id, drop_.kernel_id);
    a.create_kernel(keep).await.expect("create");
    a.create_kernel(drop_).await.expect("create");
    let stray = Uuid::new_v4();
    std::fs::create_dir_all(kernel_dir(&t, stray).join("work")).expect("stray dir");
    let removed = a.cleanup_orphans(&[keep_id]).await.expect("cleanup");
    assert_eq!(removed, 2);
    assert_eq!(a.list_kernels().await.expect("list"), vec![keep_id]);
    assert!(!kernel_dir(&t, drop_id).exists());
    assert!(!kernel_dir(&t, stray).exists());
    a.destroy_kernel(keep_id).await.expect("destroy");
}

/// A second name of a kernel image (a registry's tag, an alias) is listed beside its first,
/// and hides neither: both are the same image.
#[tokio::test]
async fn docker_an_image_with_a_second_name_is_listed_under_both() {
    let t = agent().await;
    // Sorts before and after `bai/…`, whichever name the engine lists first. Not named
    // `…/python`: a manager of a test running beside this one on the same engine would make
    // the short name `python` point at the first-sorted such name, gone a moment later.
    let names = [
        format!("0bai-alias-{}/second-name:x", std::process::id()),
        format!("zbai-alias-{}/second-name:x", std::process::id()),
    ];
    struct Untag<'a>(&'a [String]);
    impl Drop for Untag<'_> {
        fn drop(&mut self) {
            for n in self.0 {
                let _ = std::process::Command::new("docker")
                    .args(["rmi", n])
                    .output();
            }
        }
    }
    let _untag = Untag(&names);
    for n in &names {
        let out = std::process::Command::new("docker")
            .args(["tag", IMAGE, n])
            .output()
            .expect("docker tag");
        assert!(out.status.success(), "docker tag {IMAGE} {n}");
    }
    let info = t.agent.info().await.expect("info");
    let digest_of = |name: &str| {
        info.images
            .iter()
            .find(|i| i.name == name)
            .map(|i| i.digest.clone())
            .unwrap_or_else(|| panic!("{name} not in {:?}", info.images))
    };
    let first = digest_of(IMAGE);
    for n in &names {
        assert_eq!(digest_of(n), first, "{n} is the same image as {IMAGE}");
    }
}
