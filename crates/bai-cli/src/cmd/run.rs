//! `bai run` and `bai start`.

use crate::args::{CreateArgs, RunArgs, StartArgs, environ, resources};
use crate::output::{note, spinner};
use anyhow::{Context, Result, anyhow, bail};
use bai_client::{Client, CreateReply, CreateSession};
use serde_json::json;
use std::io::Write;

fn build_request(a: &CreateArgs, image: &str, startup: Option<String>) -> Result<CreateSession> {
    let name = a.name.clone();
    if let Some(n) = &name {
        bai_core::SessionName::parse(n).map_err(|e| anyhow!("{e}"))?;
    }
    let (res, opts) = resources(&a.resources).map_err(|e| anyhow!(e))?;
    let env = environ(&a.env).map_err(|e| anyhow!(e))?;
    let bootstrap = match &a.bootstrap_script {
        Some(p) => Some(
            std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?,
        ),
        None => None,
    };
    Ok(CreateSession {
        name,
        image: image.to_string(),
        session_type: a.session_type.clone(),
        resources: res,
        resource_opts: opts,
        environ: env,
        enqueue_only: a.enqueue_only,
        max_wait_secs: a.max_wait,
        reuse_if_exists: !a.no_reuse,
        startup_command: startup,
        starts_at: a.starts_at.clone(),
        batch_timeout: a.batch_timeout.clone(),
        tag: a.tag.clone(),
        bootstrap_script: bootstrap,
        scaling_group: a.scaling_group.clone(),
        owner_access_key: a.owner.clone(),
    })
}

async fn create(client: &Client, req: &CreateSession, quiet: bool) -> Result<CreateReply> {
    let pb = spinner("starting the session", quiet || req.enqueue_only);
    let r = client.create_session(req).await;
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    Ok(r?)
}

/// What the create reply means for the caller: Some(exit code) = stop here.
fn report_status(reply: &CreateReply) -> Result<Option<i32>> {
    match reply.status.as_str() {
        "RUNNING" => Ok(None),
        "PENDING" => {
            println!(
                "Session ID {} is enqueued for scheduling.",
                reply.session_id
            );
            Ok(Some(0))
        }
        "SCHEDULED" | "PREPARING" | "PULLING" | "PREPARED" | "CREATING" => {
            println!(
                "Session ID {} is scheduled and about to start.",
                reply.session_id
            );
            Ok(Some(0))
        }
        "TIMEOUT" => {
            println!("Session ID {} is still on the job queue.", reply.session_id);
            Ok(Some(0))
        }
        "TERMINATED" | "TERMINATING" => {
            println!(
                "Session ID {} has finished ({}).",
                reply.session_id, reply.status
            );
            Ok(Some(0))
        }
        other => bail!(
            "session {} ended up {other}; see `bai session info {}`",
            reply.session_name,
            reply.session_name
        ),
    }
}

pub async fn start(client: &Client, a: StartArgs) -> Result<i32> {
    let req = build_request(&a.create, &a.image, a.startup_command.clone())?;
    let reply = create(client, &req, a.create.quiet).await?;
    if let Some(code) = report_status(&reply)? {
        return Ok(code);
    }
    if reply.created {
        println!("Session ID {} is created and ready.", reply.session_id);
    } else {
        println!(
            "Session ID {} is already running and reused.",
            reply.session_id
        );
    }
    Ok(0)
}

pub async fn run(client: &Client, a: RunArgs) -> Result<i32> {
    let quiet = a.create.quiet;
    let startup = a.startup_command.clone();
    let req = build_request(&a.create, &a.image, startup)?;
    for f in &a.files {
        if !f.is_file() {
            bail!("{} is not a file", f.display());
        }
    }
    let reply = create(client, &req, quiet).await?;
    if let Some(code) = report_status(&reply)? {
        return Ok(code);
    }
    let id = reply.session_id.clone();
    note(quiet, &format!("Session {} is ready.", reply.session_name));
    let outcome = tokio::select! {
        r = execute(client, &id, &a) => r,
        _ = tokio::signal::ctrl_c() => Err(anyhow!("interrupted")),
    };
    if a.rm {
        match client.destroy(&id, false).await {
            Ok(_) => note(
                quiet,
                &format!("Session {} is terminated.", reply.session_name),
            ),
            Err(e) => eprintln!("error: could not terminate {}: {e}", reply.session_name),
        }
    }
    outcome
}

async fn execute(client: &Client, id: &str, a: &RunArgs) -> Result<i32> {
    if !a.files.is_empty() {
        client.upload(id, &a.files, &a.basedir).await?;
        note(
            a.create.quiet,
            &format!("Uploaded {} file(s).", a.files.len()),
        );
    }
    let (mode, code, options) = if let Some(code) = &a.code {
        ("query", code.clone(), json!({}))
    } else if a.exec.is_some() || !a.files.is_empty() || a.build.is_some() || a.clean.is_some() {
        let opts = json!({
            "clean": a.clean.clone().unwrap_or_else(|| "*".into()),
            "build": a.build.clone().unwrap_or_else(|| "*".into()),
            "buildLog": false,
            "exec": a.exec.clone().unwrap_or_else(|| "*".into()),
        });
        ("batch", String::new(), opts)
    } else {
        return Ok(0);
    };
    let mut exec = client.execute(id, mode, &code, options).await?;
    let mut exit = 0;
    let stdin = std::io::stdin();
    while let Some(frame) = exec.next().await? {
        {
            let mut out = std::io::stdout().lock();
            let mut err = std::io::stderr().lock();
            for (kind, text) in &frame.console {
                match kind.as_str() {
                    "stdout" => {
                        let _ = out.write_all(text.as_bytes());
                    }
                    "stderr" => {
                        let _ = err.write_all(text.as_bytes());
                    }
                    other => {
                        let _ = writeln!(out, "----- output record (type: {other}) -----\n{text}");
                    }
                }
            }
            let _ = out.flush();
        }
        match frame.status.as_str() {
            "waiting-input" => {
                let mut line = String::new();
                stdin.read_line(&mut line).context("cannot read input")?;
                exec.send_input(line.trim_end_matches(['\n', '\r'])).await?;
            }
            "finished" => {
                exit = frame.exit_code.unwrap_or(0);
                break;
            }
            _ => {}
        }
    }
    exec.close().await;
    Ok(exit)
}
