//! `bai run`: create (or reuse) a session, upload files, run code, optionally remove it.

use super::create::{
    Outcome, build_request, check_files, create_with_progress, failure, outcome, print_done,
};
use super::exec::stream_execution;
use crate::args::RunArgs;
use crate::output::note;
use anyhow::{Result, anyhow};
use bai_client::{Client, Mode};
use serde_json::{Value, json};

/// `pysdk-<10 hex>`, the official client's default name for `run`.
pub fn default_run_name() -> String {
    let hex = uuid::Uuid::new_v4().simple().to_string();
    format!("pysdk-{}", &hex[..10])
}

/// Batch-mode options: `"*"` (the kernel's default) for clean/build unless given; `exec` as
/// given, else `"*"` when files are given without a build command (`bai run python
/// ./mygpucode.py` runs the script, or main.py, as the official client's run does), else null
/// (build only).
pub fn batch_options(a: &RunArgs) -> Value {
    let exec = match (&a.exec, &a.build) {
        (Some(e), _) => Some(e.as_str()),
        (None, None) if !a.files.is_empty() => Some("*"),
        _ => None,
    };
    json!({
        "clean": a.clean.as_deref().unwrap_or("*"),
        "build": a.build.as_deref().unwrap_or("*"),
        "buildLog": false,
        "exec": exec,
    })
}

/// What to execute: query mode for `-c`, batch mode for `--exec`/FILES, or nothing.
pub fn plan(a: &RunArgs) -> Option<(Mode, String, Value)> {
    if let Some(code) = &a.code {
        return Some((Mode::Query, code.clone(), json!({})));
    }
    let batch = a.exec.is_some() || !a.files.is_empty() || a.build.is_some() || a.clean.is_some();
    batch.then(|| (Mode::Batch, String::new(), batch_options(a)))
}

pub async fn run(client: &Client, a: &RunArgs) -> Result<i32> {
    let quiet = a.create.quiet;
    if a.create.count.is_some_and(|n| n > 1) {
        anyhow::bail!("--count creates several sessions: use it with `bai start`, not `bai run`");
    }
    let mut req = build_request(&a.create, &a.image, a.startup_command.clone())?;
    let name = req.name.get_or_insert_with(default_run_name).clone();
    check_files(&a.files)?;

    let reply = tokio::select! {
        r = create_with_progress(client, &req, quiet) => r?,
        _ = tokio::signal::ctrl_c() => {
            if a.rm {
                let _ = client.destroy(&name, true).await;
                return Err(anyhow!("interrupted; session {name} was removed"));
            }
            return Err(anyhow!("interrupted; session {name} may still start (`bai rm {name}` removes it)"));
        }
    };
    match outcome(&reply) {
        Outcome::Ready => {}
        Outcome::Done(msg) => {
            print_done(client, &reply, &msg).await;
            return Ok(0);
        }
        Outcome::Failed => {
            let err = failure(client, &reply).await;
            if a.rm {
                let _ = client.destroy(&reply.session_id, true).await;
            }
            return Err(err);
        }
    }

    let id = reply.session_id.clone();
    let work = async {
        let Some((mode, code, options)) = plan(a) else {
            println!("Session ID {id} is created and ready.");
            return Ok(0);
        };
        if reply.created {
            note(quiet, &format!("Session {} is ready.", reply.session_name));
        } else {
            note(quiet, &format!("Reusing session {}.", reply.session_name));
        }
        if !a.files.is_empty() {
            client.upload(&id, &a.files, &a.basedir).await?;
            note(quiet, &format!("Uploaded {} file(s).", a.files.len()));
        }
        stream_execution(client, &id, mode, &code, options).await
    };
    let result = tokio::select! {
        r = work => r,
        _ = tokio::signal::ctrl_c() => Err(anyhow!("interrupted")),
    };
    if a.rm {
        match client.destroy(&id, false).await {
            Ok(_) => note(
                quiet,
                &format!("Session {} is terminated.", reply.session_name),
            ),
            Err(e) => eprintln!(
                "warning: could not terminate session {}: {e}",
                reply.session_name
            ),
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Cmd};
    use clap::Parser;

    fn run_args(args: &[&str]) -> RunArgs {
        let mut v = vec!["bai", "run"];
        v.extend_from_slice(args);
        match Cli::try_parse_from(v).unwrap().cmd {
            Cmd::Run(r) => *r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn default_names_follow_the_official_pattern() {
        let n = default_run_name();
        assert_eq!(n.len(), "pysdk-".len() + 10);
        assert!(n.starts_with("pysdk-"));
        assert!(bai_core::SessionName::parse(&n).is_ok());
        assert_ne!(n, default_run_name());
    }

    #[test]
    fn execution_plans() {
        let (m, code, opts) = plan(&run_args(&["-c", "print(1)", "python"])).unwrap();
        assert_eq!(
            (m, code.as_str(), opts),
            (Mode::Query, "print(1)", json!({}))
        );
        let (m, code, opts) = plan(&run_args(&[
            "--exec",
            "python myscript.py arg1 arg2",
            "python",
            "./myscript.py",
        ]))
        .unwrap();
        assert_eq!(m, Mode::Batch);
        assert_eq!(code, "");
        assert_eq!(
            opts,
            json!({"clean": "*", "build": "*", "buildLog": false, "exec": "python myscript.py arg1 arg2"})
        );
        let (_, _, opts) = plan(&run_args(&["--build", "make", "python", "a.c"])).unwrap();
        assert_eq!(opts["build"], "make");
        assert_eq!(opts["exec"], Value::Null);
        // A script alone: the kernel's default exec runs it.
        let (_, _, opts) = plan(&run_args(&["python", "./mygpucode.py"])).unwrap();
        assert_eq!(opts["exec"], "*");
        assert!(plan(&run_args(&["--rm", "python"])).is_none());
    }
}
