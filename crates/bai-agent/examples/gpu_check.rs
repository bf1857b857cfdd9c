//! gpu_check: proves the cuda plugin on a real GPU machine that has the NVIDIA driver, the
//! MPS tools and PyTorch (`python3`) but no Docker. It uses only the plugin's public code:
//!
//! 1. discovers the GPUs in fractional mode (quantum 0.05, MPS under a temp dir) and prints
//!    each device as a JSON line;
//! 2. allocates 0.25 fGPU twice and runs two PyTorch processes at once with each
//!    allocation's container environment (translated for the host: the MPS pipe directory
//!    is the host's, `CUDA_VISIBLE_DEVICES` the host's indices); each prints what
//!    `torch.cuda.mem_get_info()` says and fills 1 GiB tensors until out of memory;
//! 3. runs a third process on a whole GPU (the plugin in discrete mode, no MPS) that sees
//!    the whole memory;
//! 4. stops the MPS daemon through the plugin and prints a summary JSON line.
//!
//! Build: `cargo build --profile release -p bai-agent --example gpu_check`.
//! Exit status: 0 when the shares were held to their limits, 2 when no GPU was found, 1 on
//! any other failure.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may stop on a failure

use bai_agent::accel::alloc::AllocMap;
use bai_agent::accel::cuda::{CudaAccelerator, CudaConfig, MPS_PIPE_IN_CONTAINER, mem_limit_mib};
use bai_agent::accel::{Accelerator, DeviceAlloc};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// The PyTorch side: `info` only prints the free/total memory; otherwise it also fills
/// 1 GiB tensors until out of memory (200 at most) and holds them two seconds.
const SCRIPT: &str = r#"
import json, sys, time, torch
free, total = torch.cuda.mem_get_info()
print(json.dumps({"free": free, "total": total}), flush=True)
if sys.argv[1:] != ["info"]:
    kept, err = [], ""
    try:
        while len(kept) < 200:
            kept.append(torch.empty(1 << 30, dtype=torch.uint8, device="cuda"))
    except Exception as e:
        err = type(e).__name__ + ": " + (str(e).splitlines() or [""])[0]
    print(json.dumps({"free": free, "total": total, "gib": len(kept), "error": err}), flush=True)
    time.sleep(2)
"#;

const SHARE_MILLI: u64 = 250;
const MIB: u64 = 1 << 20;

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(Found::Nothing) => {
            eprintln!("gpu_check: no NVIDIA GPU found (no driver, or 0 devices)");
            ExitCode::from(2)
        }
        Err(Found::Error(e)) => {
            eprintln!("gpu_check: {e}");
            ExitCode::FAILURE
        }
    }
}

enum Found {
    Nothing,
    Error(String),
}

impl From<String> for Found {
    fn from(e: String) -> Found {
        Found::Error(e)
    }
}

fn run() -> Result<bool, Found> {
    let tmp = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
    let script = tmp.path().join("fill.py");
    std::fs::write(&script, SCRIPT).map_err(|e| format!("cannot write the script: {e}"))?;
    let mut config = CudaConfig::fractional(tmp.path().join("mps"));
    config.quantum_milli = 50;
    let acc = CudaAccelerator::discover(config)?.ok_or(Found::Nothing)?;
    for g in acc.gpus() {
        let d = json!({"device": g.index, "model": g.model, "memory": g.memory,
            "memory_mib": g.memory / MIB, "uuid": g.uuid, "numa_node": g.numa_node,
            "slot": acc.slot()});
        println!("{d}");
    }
    let checks = shares_and_whole(&acc, &script);
    let stopped = acc.stop();
    println!("{}", json!({"mps_stop": stopped.as_ref().err()}));
    let (shares, whole) = checks?;
    let ok = stopped.is_ok()
        && shares.iter().all(|s| {
            let gib = s["gib"].as_u64().unwrap_or(0);
            let limit = s["limit_mib"].as_u64().unwrap_or(0);
            gib > 0 && gib * 1024 <= limit && s["free"].as_u64().unwrap_or(0) <= limit * MIB
        })
        && whole["total"].as_u64().unwrap_or(0) > 2 * SHARE_MILLI * 1024 * MIB / 1000
        && whole["free"].as_u64().unwrap_or(0) > whole["total"].as_u64().unwrap_or(0) / 2;
    println!(
        "{}",
        json!({"summary": true, "ok": ok, "share_milli": SHARE_MILLI, "shares": shares,
            "whole_gpu": whole})
    );
    Ok(ok)
}

/// Steps 2 and 3: the two concurrent share processes and the whole-GPU one.
fn shares_and_whole(
    acc: &CudaAccelerator,
    script: &std::path::Path,
) -> Result<(Vec<Value>, Value), String> {
    let mut map = AllocMap::new(acc.mode(), acc.devices());
    let mut running = Vec::new();
    for name in ["share-a", "share-b"] {
        let alloc = map.allocate(uuid::Uuid::new_v4(), SHARE_MILLI)?;
        let args = acc.container_args(&alloc);
        println!(
            "{}",
            json!({"process": name, "alloc": alloc, "env": args.env,
                "devices": args.devices, "binds": args.binds,
                "ipc_host": args.ipc_host})
        );
        let host_pipe = args
            .binds
            .iter()
            .find_map(|b| b.strip_suffix(&format!(":{MPS_PIPE_IN_CONTAINER}:rw")))
            .ok_or("the share's container arguments bind no MPS pipe directory")?;
        let mut env = args.env.clone();
        env.insert("CUDA_MPS_PIPE_DIRECTORY".into(), host_pipe.into());
        env.insert("CUDA_VISIBLE_DEVICES".into(), host_indices(&alloc));
        let child = python(script, &env, false)?;
        running.push((name, alloc, env, child));
    }
    // Readings while both run: the peak memory each allocation's devices show.
    let mut peak = vec![0u64; running.len()];
    let deadline = Instant::now() + Duration::from_secs(600);
    while running
        .iter_mut()
        .any(|r| matches!(r.3.try_wait(), Ok(None)))
    {
        if Instant::now() > deadline {
            for r in &mut running {
                let _ = r.3.kill();
            }
            return Err("the share processes took over 10 minutes".into());
        }
        for (i, r) in running.iter().enumerate() {
            let used = acc.readings(&r.1, None).iter().map(|x| x.mem_used).max();
            peak[i] = peak[i].max(used.unwrap_or(0));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut shares = Vec::new();
    for ((name, alloc, env, child), peak) in running.into_iter().zip(peak) {
        let mut out = finish(name, child)?;
        let limit: u64 = alloc
            .iter()
            .filter_map(|(d, m)| {
                acc.gpus()
                    .iter()
                    .find(|g| g.index.to_string() == *d)
                    .map(|g| mem_limit_mib(g.memory, *m, 1000))
            })
            .sum();
        out["process"] = json!(name);
        out["limit_mib"] = json!(limit);
        out["limit_env"] = json!(env.get("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"));
        out["threads_env"] = json!(env.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"));
        out["reading_peak_mem_used"] = json!(peak);
        out["reading_mem_total"] = json!(acc.readings(&alloc, None).first().map(|r| r.mem_total));
        println!("{out}");
        shares.push(out);
    }
    let discrete = CudaAccelerator::discover(CudaConfig::discrete())?
        .ok_or("the GPUs vanished between two discoveries")?;
    let mut whole_map = AllocMap::new(discrete.mode(), discrete.devices());
    let alloc = whole_map.allocate(uuid::Uuid::new_v4(), 1000)?;
    let mut env = discrete.container_args(&alloc).env;
    env.insert("CUDA_VISIBLE_DEVICES".into(), host_indices(&alloc));
    let mut whole = finish("whole-gpu", python(script, &env, true)?)?;
    whole["process"] = json!("whole-gpu");
    whole["alloc"] = json!(alloc);
    println!("{whole}");
    Ok((shares, whole))
}

/// The host's indices of an allocation's devices, in index order (what the nvidia runtime
/// would renumber 0, 1, … in a container).
fn host_indices(alloc: &DeviceAlloc) -> String {
    let mut ids: Vec<u32> = alloc.keys().filter_map(|d| d.parse().ok()).collect();
    ids.sort_unstable();
    ids.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

/// `python3 SCRIPT` with exactly the kernel's CUDA/MPS environment (none inherited).
fn python(
    script: &std::path::Path,
    env: &BTreeMap<String, String>,
    info: bool,
) -> Result<Child, String> {
    let mut c = Command::new("python3");
    c.arg(script);
    if info {
        c.arg("info");
    }
    for (k, _) in std::env::vars() {
        if k.starts_with("CUDA_") || k.starts_with("NVIDIA_") {
            c.env_remove(k);
        }
    }
    c.envs(env)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run python3: {e}"))
}

/// Waits for a python process; the last JSON line it printed.
fn finish(name: &str, child: Child) -> Result<Value, String> {
    let out = child
        .wait_with_output()
        .map_err(|e| format!("{name}: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<Value>(l).ok());
    match last {
        Some(v) if out.status.success() => Ok(v),
        _ => Err(format!(
            "{name} failed ({}): {} {}",
            out.status,
            stdout.trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}
