//! Accelerators end to end through the MOCK plugin (this machine has no GPU), against
//! `baid up --mock-accelerator FILE` with the real Docker engine: fractional GPUs pack,
//! wait with the shortage as their reason and span devices; discrete GPUs refuse fractions;
//! kernels see the devices they were given; the utilization checker reclaims a session whose
//! GPU stays idle; whole-core CPU requests are pinned. The real cuda plugin is checked on a
//! GPU machine by `bench/gpu.sh`, never by this file.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::{Account, Server};
use serde_json::Value;
use std::collections::BTreeMap;

fn mock_file(dir: &std::path::Path, mode: &str) -> String {
    let path = dir.join(format!("mock-{mode}.toml"));
    std::fs::write(
        &path,
        format!(
            r#"# Backend.AI's mock-accelerator.toml format
slot_name = "cuda"
device_plugin_name = "CUDADevice"
allocation_mode = "{mode}"
quantum_size = 0.1

[[devices]]
mother_uuid = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d01"
model_name = "Mock GPU"
numa_node = 0
subproc_count = 108
memory_size = "8G"
is_mig_device = false

[[devices]]
mother_uuid = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d02"
model_name = "Mock GPU"
numa_node = 0
subproc_count = 108
memory_size = "8G"
is_mig_device = false
"#
        ),
    )
    .expect("write mock file");
    path.display().to_string()
}

fn start(mode: &str, extra: &[(&str, &str)]) -> (Server, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = mock_file(dir.path(), mode);
    let mut env = vec![
        ("BAI_MOCK_ACCELERATOR", file.as_str()),
        ("BAI_SCHEDULE_TICK_MS", "200"),
    ];
    env.extend_from_slice(extra);
    (Server::start_with(&env), dir)
}

/// Prints `expr` (Python) inside the running session `name`.
fn eval(s: &Server, who: &Account, name: &str, expr: &str) -> String {
    let code = format!("import os; print({expr})");
    let r = s.bai(who, &["run", "-t", name, "-c", &code, "python"]);
    r.expect_ok();
    // The last line is the output; the ones before are progress.
    r.stdout
        .trim()
        .lines()
        .last()
        .unwrap_or("")
        .trim()
        .to_string()
}

fn enqueue(s: &Server, name: &str, resources: &[&str]) {
    let mut args = vec!["start", "--enqueue-only", "-t", name];
    for r in resources {
        args.extend_from_slice(&["-r", r]);
    }
    args.push("python");
    s.bai(&s.user, &args).expect_ok();
}

fn wait_running(s: &Server, name: &str) {
    s.wait_for(90, &format!("{name} to run"), || {
        (s.status(&s.user, name) == "RUNNING").then_some(())
    });
}

#[test]
fn fractional_gpus_pack_wait_for_room_and_span_devices() {
    let (s, _dir) = start("fractional", &[]);
    // The agent reports two devices' worth of shares.
    let agents = s.bai(&s.user, &["agents"]);
    agents.expect_ok();
    assert!(agents.stdout.contains("cuda.shares 2"), "{agents:#?}");

    let small = ["cpu=0.25", "mem=128m", "gpu=0.5"];
    let names = ["half-1", "half-2", "half-3", "half-4"];
    for n in names {
        enqueue(&s, n, &small);
    }
    let mut per_device: BTreeMap<String, u32> = BTreeMap::new();
    for n in names {
        wait_running(&s, n);
        let seen = eval(
            &s,
            &s.user,
            n,
            "os.environ['BACKENDAI_MOCK_CUDA_DEVICES'], os.environ['BACKENDAI_MOCK_CUDA_DEVICE_COUNT']",
        );
        // `print(a, b)`: the device ids, then their count.
        let (devices, count) = seen.split_once(' ').unwrap_or_else(|| panic!("{seen}"));
        assert_eq!(count, "1", "a half fits on one device: {seen}");
        *per_device.entry(devices.to_string()).or_default() += 1;
    }
    // Two halves on each device: never more than a device holds.
    assert_eq!(
        per_device,
        BTreeMap::from([("0".to_string(), 2), ("1".to_string(), 2)])
    );

    // A fifth waits, and says why.
    enqueue(&s, "half-5", &small);
    let info = s.wait_for(30, "the fifth to be judged", || {
        let i = s.info(&s.user, "half-5");
        i["status_info"]
            .as_str()
            .is_some_and(|t| t.contains("short"))
            .then_some(i)
    });
    assert_eq!(info["status"], "PENDING", "{info}");
    let why = info["status_info"].as_str().unwrap_or("");
    assert!(why.contains("cuda.shares short on 1 of 1 agents"), "{info}");
    // It starts when one ends.
    s.bai(&s.user, &["rm", "half-1"]).expect_ok();
    wait_running(&s, "half-5");
    for n in ["half-2", "half-3", "half-4", "half-5"] {
        s.bai(&s.user, &["rm", n]).expect_ok();
    }

    // 1.5 GPUs span both devices.
    let wide = s.bai(
        &s.user,
        &[
            "run", "--rm", "-r", "cpu=0.25", "-r", "mem=128m", "-r", "gpu=1.5", "-c",
            "import os; print('devices', os.environ['BACKENDAI_MOCK_CUDA_DEVICES'], os.environ['BACKENDAI_MOCK_CUDA_DEVICE_COUNT'])",
            "python",
        ],
    );
    wide.expect_ok();
    assert!(wide.stdout.contains("devices 0,1 2"), "{wide:#?}");

    // Presets and keypair policies name GPUs the same way: a quota of one fGPU holds a third
    // half back, though the node has room.
    s.bai(
        &s.admin,
        &[
            "admin", "preset", "create", "halfgpu", "-r", "cpu=0.25", "-r", "mem=128m", "-r",
            "gpu=0.5",
        ],
    )
    .expect_ok();
    s.bai(
        &s.admin,
        &[
            "admin", "policy", "create", "onegpu", "-r", "cpu=8", "-r", "mem=8g", "-r", "gpu=1",
        ],
    )
    .expect_ok();
    let ak = s.user.get("BACKEND_ACCESS_KEY").to_string();
    s.bai(&s.admin, &["admin", "policy", "assign", &ak, "onegpu"])
        .expect_ok();
    for n in ["quota-1", "quota-2", "quota-3"] {
        s.bai(
            &s.user,
            &[
                "start",
                "--enqueue-only",
                "-t",
                n,
                "--preset",
                "halfgpu",
                "python",
            ],
        )
        .expect_ok();
    }
    let held = s.wait_for(60, "the quota to hold one back", || {
        let pending: Vec<Value> = ["quota-1", "quota-2", "quota-3"]
            .iter()
            .map(|n| s.info(&s.user, n))
            .filter(|i| {
                i["status"] == "PENDING"
                    && i["status_info"]
                        .as_str()
                        .is_some_and(|t| t.contains("quota"))
            })
            .collect();
        let running = ["quota-1", "quota-2", "quota-3"]
            .iter()
            .filter(|n| s.status(&s.user, n) == "RUNNING")
            .count();
        (running == 2 && pending.len() == 1).then(|| pending[0].clone())
    });
    assert!(
        held["status_info"]
            .as_str()
            .is_some_and(|t| t.contains("cuda.shares 1")),
        "{held}"
    );
    for n in ["quota-1", "quota-2", "quota-3"] {
        s.bai(&s.user, &["rm", n]).expect_ok();
    }

    // Shares come in steps of the quantum; more than the cluster has is refused at once.
    s.bai(
        &s.user,
        &["start", "-t", "quarter", "-r", "gpu=0.25", "python"],
    )
    .expect_fail("not a multiple of 0.1");
    s.bai(&s.user, &["start", "-t", "many", "-r", "gpu=3", "python"])
        .expect_fail("cuda.shares");
}

#[test]
fn discrete_gpus_refuse_fractions_and_whole_cores_are_pinned() {
    let (s, _dir) = start("discrete", &[]);
    s.bai(&s.user, &["start", "-t", "frac", "-r", "gpu=0.5", "python"])
        .expect_fail("counts whole devices");
    let whole = s.bai(
        &s.user,
        &[
            "run",
            "--rm",
            "-r",
            "cpu=0.5",
            "-r",
            "mem=128m",
            "-r",
            "gpu=1",
            "-c",
            "import os; print('count', os.environ['BACKENDAI_MOCK_CUDA_DEVICE_COUNT'])",
            "python",
        ],
    );
    whole.expect_ok();
    assert!(whole.stdout.contains("count 1"), "{whole:#?}");

    // cpu=1 on this node: the kernel sees one core, and two such kernels different ones.
    for n in ["pin-a", "pin-b"] {
        enqueue(&s, n, &["cpu=1", "mem=128m"]);
    }
    let mut cores = Vec::new();
    for n in ["pin-a", "pin-b"] {
        wait_running(&s, n);
        let nproc = s.bai(&s.user, &["run", "-t", n, "-c", "import subprocess; print('nproc', subprocess.run(['nproc'], capture_output=True, text=True).stdout.strip())", "python"]);
        nproc.expect_ok();
        assert!(nproc.stdout.contains("nproc 1"), "{nproc:#?}");
        cores.push(eval(&s, &s.user, n, "sorted(os.sched_getaffinity(0))"));
    }
    if num_cpus() >= 2 {
        assert_ne!(
            cores[0], cores[1],
            "two pinned kernels share a core: {cores:?}"
        );
    }
    // The thread pools follow the pinned cores unless the user says otherwise.
    assert_eq!(
        eval(&s, &s.user, "pin-a", "os.environ['OMP_NUM_THREADS']"),
        "1"
    );
    for n in ["pin-a", "pin-b"] {
        s.bai(&s.user, &["rm", n]).expect_ok();
    }
}

fn num_cpus() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

#[test]
fn an_idle_gpu_is_reclaimed_and_a_session_without_one_is_not_judged_by_it() {
    let (s, _dir) = start(
        "fractional",
        &[
            ("BAI_MONITOR_INTERVAL_MS", "300"),
            ("BAI_IDLE_UTILIZATION", "window=6,grace=3,cuda_util=1"),
        ],
    );
    enqueue(&s, "gpu-idle", &["cpu=0.25", "mem=128m", "gpu=0.5"]);
    enqueue(&s, "no-gpu", &["cpu=0.25", "mem=128m"]);
    wait_running(&s, "gpu-idle");
    // The samples carry the device's readings while it runs.
    let sample = s.wait_for(60, "a sample with GPU readings", || {
        let r = s.bai(&s.user, &["session", "stats", "--json", "gpu-idle"]);
        let v: Value = serde_json::from_str(&r.stdout).ok()?;
        v["samples"]
            .as_array()?
            .last()
            .filter(|l| l["cuda_util"].is_number())
            .cloned()
    });
    assert_eq!(sample["devices"][0]["mem_total"], 4u64 << 30, "{sample}");
    let ended = s.wait_terminated(&s.user, "gpu-idle", 90);
    assert_eq!(ended["status_info"], "idle-utilization", "{ended}");
    // The session without an accelerator skips the GPU threshold and lives on.
    assert_eq!(s.status(&s.user, "no-gpu"), "RUNNING");
    s.bai(&s.user, &["rm", "no-gpu"]).expect_ok();
}
