//! Images travel between machines through the cluster's registry: a manager with
//! `--registry` lists what the registry holds, and an agent in a network namespace of its own
//! (its own Docker engine, without the image) pulls the image when a session lands there
//! (status PULLING, `kernel_pulling` events with its progress), then runs it; the next session
//! there does not pull again; an image made on the node by hand reaches the catalogue.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::netns::Machine;
use bai_e2e::registry::Registry;
use bai_e2e::remote::{Agent, IMAGE, manager_for_machines, query, start_session, wait_status};

fn has_image(m: &Machine) -> bool {
    m.docker(&["image", "inspect", IMAGE]).status.success()
}

#[test]
fn an_agent_without_the_image_pulls_it_from_the_registry() {
    let registry = Registry::start();
    registry.push(IMAGE);
    let (s, port, token) = manager_for_machines(&[("BAI_REGISTRY", &registry.local())]);
    // The registry's image is in the catalogue, with its short name.
    let r = s.bai(&s.admin, &["admin", "image", "list", "--json"]);
    r.expect_ok();
    let list: Vec<bai_api::images::Image> = serde_json::from_str(&r.stdout).expect("JSON");
    let img = list
        .iter()
        .find(|i| i.canonical_name.as_deref() == Some(IMAGE))
        .unwrap_or_else(|| panic!("{IMAGE} from the registry is listed: {list:?}"));
    assert_eq!(img.installed_agents, Some(vec![]), "no agent holds it yet");
    assert!(
        img.aliases
            .clone()
            .unwrap_or_default()
            .contains(&"python".to_string())
    );

    let m = Machine::start(45);
    assert!(!has_image(&m), "a fresh machine's engine has no images");
    let reg_there = format!("{}:{}", m.host_addr(), registry.port);
    let _agent = Agent::start(
        &m,
        "node-pull",
        port,
        &token,
        &["--registry".into(), reg_there],
    );
    wait_status(&s, "node-pull", "ALIVE", 120);

    let agent = start_session(&s, "pulled", &[]);
    assert_eq!(agent, "node-pull");
    assert!(has_image(&m), "the agent pulled {IMAGE}");
    let history = s.bai(&s.admin, &["session", "history", "pulled"]);
    history.expect_ok();
    assert!(history.stdout.contains("PULLING"), "{history:#?}");
    let events = s
        .api(&s.admin, "GET", "/session/pulled/status-history", None)
        .expect("status history");
    assert!(events.to_string().contains("PULLING"), "{events}");
    // Its progress reached the session's events: `kernel_pulling` with bytes of the total.
    let log = s.log();
    let progress: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("kernel_pulling") && l.contains(" MB)"))
        .collect();
    assert!(!progress.is_empty(), "pull progress events:\n{log}");
    let out = query(
        &s,
        "pulled",
        "import sys; print('py', sys.version_info[:2])",
    );
    assert!(out.contains("py (3, 11)"), "{out}");

    // A session converted to an image on that agent travels too: it is pushed to the
    // registry (and only its final name stays on the agent).
    s.bai(
        &s.admin,
        &["session", "convert-to-image", "pulled", "travelled"],
    )
    .expect_ok();
    let r = s.bai(&s.admin, &["images", "--customized", "--json"]);
    r.expect_ok();
    let mine: Vec<bai_api::images::Image> = serde_json::from_str(&r.stdout).expect("JSON");
    let t = mine
        .iter()
        .find(|i| i.label("ai.backend.customized-image.name") == Some("travelled"))
        .unwrap_or_else(|| panic!("travelled is listed: {mine:?}"));
    assert_eq!(t.in_registry, Some(true), "{t:?}");
    let refs = m.docker(&["images", "--format", "{{.Repository}}:{{.Tag}}"]);
    let refs = String::from_utf8_lossy(&refs.stdout).to_string();
    assert!(!refs.contains("-pending"), "{refs}");
    assert!(!refs.contains(&format!(":{}/", registry.port)), "{refs}");

    // The agent now reports the image: the next session starts without pulling.
    start_session(&s, "again", &[]);
    let history = s.bai(&s.admin, &["session", "history", "again"]);
    history.expect_ok();
    assert!(!history.stdout.contains("PULLING"), "{history:#?}");

    // An image made on the node by hand while its agent is connected reaches the catalogue
    // as that agent's (the agent reads its engine's images and reports a change).
    assert!(
        m.docker(&["create", "--name", "handmade", IMAGE, "true"])
            .status
            .success()
    );
    assert!(
        m.docker(&["commit", "handmade", "bai/handmade:1"])
            .status
            .success()
    );
    s.wait_for(180, "the hand-made image in the catalogue", || {
        let r = s.bai(&s.admin, &["admin", "image", "list", "--json"]);
        let list: Vec<bai_api::images::Image> = serde_json::from_str(&r.stdout).ok()?;
        list.iter()
            .find(|i| i.canonical_name.as_deref() == Some("bai/handmade:1"))
            .filter(|i| {
                i.installed_agents
                    .as_ref()
                    .is_some_and(|a| a.contains(&"node-pull".to_string()))
            })
            .map(|_| ())
    });
}

/// `bench/images.sh`, not a test (`--ignored`): the pull of the `python` image by a fresh
/// agent (its first session's PULLING → PREPARED) against `docker pull` of it from the same
/// registry by a fresh engine, after an unmeasured pull warmed the registry's files. Prints
/// a row of `bench/RESULTS.md`.
#[test]
#[ignore]
fn bench_pull_against_docker_pull() {
    let registry = Registry::start();
    registry.push(IMAGE);
    let pull_on = |m: &Machine| {
        let remote = format!("{}:{}/{IMAGE}", m.host_addr(), registry.port);
        let t = std::time::Instant::now();
        let out = m.docker(&["pull", "-q", &remote]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        t.elapsed().as_secs_f64()
    };
    let warm = Machine::start(46);
    pull_on(&warm);
    drop(warm);

    let (s, port, token) = manager_for_machines(&[("BAI_REGISTRY", &registry.local())]);
    let rounds: usize = std::env::var("BAI_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let (mut docker_s, mut bai_s) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // Fresh engines each round, alternating which side goes first.
        let baseline = |docker_s: &mut Vec<f64>| {
            let b = Machine::start(47);
            docker_s.push(pull_on(&b));
        };
        if round % 2 == 0 {
            baseline(&mut docker_s);
        }
        let m = Machine::start(48);
        let reg_there = format!("{}:{}", m.host_addr(), registry.port);
        let name = format!("node-bench{round}");
        let agent = Agent::start(&m, &name, port, &token, &["--registry".into(), reg_there]);
        wait_status(&s, &name, "ALIVE", 120);
        let session = format!("pullbench{round}");
        start_session(&s, &session, &["--assign-agent", &name]);
        let h = s
            .api(
                &s.admin,
                "GET",
                &format!("/session/{session}/status-history"),
                None,
            )
            .expect("status history");
        let at = |k: &str| {
            chrono::DateTime::parse_from_rfc3339(h["result"][k].as_str().unwrap_or_default())
                .unwrap_or_else(|e| panic!("{k} in {h}: {e}"))
        };
        bai_s.push(
            (at("PREPARED") - at("PULLING"))
                .num_microseconds()
                .unwrap_or(0) as f64
                / 1e6,
        );
        s.bai(&s.admin, &["rm", &session]).expect_ok();
        s.wait_terminated(&s.admin, &session, 120);
        drop(agent);
        drop(m);
        if round % 2 == 1 {
            baseline(&mut docker_s);
        }
        eprintln!(
            "round {round}: bai {:.2} s, docker pull {:.2} s",
            bai_s[round], docker_s[round]
        );
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    };
    let (b, d) = (median(&mut bai_s), median(&mut docker_s));
    println!(
        "| pull of the `python` image by a fresh agent (its first session's PULLING → PREPARED), median of {rounds} | {b:.2} s | `docker pull` from the same registry by a fresh engine {d:.2} s | {:.3}× | ≤ 1.05× |",
        b / d
    );
}
