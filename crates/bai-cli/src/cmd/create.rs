//! Building `POST /session` from the command line, and `bai start`.

use crate::args::{CreateArgs, StartArgs, environ, resources};
use crate::output::spinner;
use anyhow::{Context, Result, anyhow, bail};
use bai_api::sessions::{ClusterMode, CreateStatus, NumberOrText};
use bai_client::{Client, CreateReply, CreateSession};

/// The create request for `a`; the name (when given) is checked against the naming rules.
pub fn build_request(
    a: &CreateArgs,
    image: &str,
    startup_command: Option<String>,
) -> Result<CreateSession> {
    if let Some(n) = &a.name {
        bai_core::SessionName::parse(n).map_err(|e| anyhow!("{e}"))?;
    }
    let (res, opts) = resources(&a.resources);
    let mut r = CreateSession::new(image);
    r.name = a.name.clone();
    r.session_type = a.session_type;
    let amounts = |m: std::collections::BTreeMap<String, String>| {
        m.into_iter()
            .map(|(k, v)| (k, NumberOrText::Text(v)))
            .collect()
    };
    r.resources = amounts(res);
    r.resource_opts = amounts(opts);
    r.environ = environ(&a.env);
    r.enqueue_only = a.enqueue_only;
    r.max_wait_secs = a.max_wait;
    r.reuse_if_exists = !a.no_reuse;
    r.startup_command = startup_command;
    r.starts_at = a.starts_at.clone();
    r.batch_timeout = a.batch_timeout.clone();
    r.requeue = a.requeue;
    r.tag = a.tag.clone();
    r.scaling_group = a.scaling_group.clone();
    r.owner_access_key = a.owner.clone();
    r.preset = a.preset.clone();
    r.group = a.project.clone();
    for m in &a.mounts {
        let (name, path) = match m.split_once(':') {
            Some((n, p)) => (n.to_string(), Some(p.to_string())),
            None => (m.clone(), None),
        };
        if name.is_empty() {
            return Err(anyhow!(
                "--mount {m:?}: give a folder name, NAME or NAME:PATH"
            ));
        }
        if let Some(p) = path {
            r.mount_map.insert(name.clone(), p);
        }
        if !r.mounts.contains(&name) {
            r.mounts.push(name);
        }
    }
    let mut ports: Vec<u16> = Vec::new();
    for word in a
        .preopen
        .iter()
        .flat_map(|s| s.split(|c: char| c == ',' || c.is_whitespace()))
        .filter(|w| !w.is_empty())
    {
        let p: u16 = word
            .parse()
            .map_err(|_| anyhow!("--preopen {word:?}: use port numbers from 1024 to 65535"))?;
        ports.push(p);
    }
    if !ports.is_empty() {
        r.preopen_ports = Some(ports);
    }
    r.count = a.count;
    r.agent = a.assign_agent.clone();
    r.cluster_size = a.cluster_size;
    r.cluster_mode = match a.cluster_mode.as_str() {
        "multi-node" => ClusterMode::MultiNode,
        _ => ClusterMode::SingleNode,
    };
    r.priority = a.priority;
    if !a.depends.is_empty() {
        r.dependencies = Some(a.depends.clone());
    }
    if let Some(p) = &a.bootstrap_script {
        r.bootstrap_script = Some(
            std::fs::read_to_string(p)
                .with_context(|| format!("cannot read the bootstrap script {}", p.display()))?,
        );
    }
    Ok(r)
}

/// `POST /session` with a spinner while the manager schedules and starts the session.
pub async fn create_with_progress(
    client: &Client,
    req: &CreateSession,
    quiet: bool,
) -> Result<CreateReply> {
    let what = req.name.as_deref().unwrap_or("the session");
    let pb = spinner(
        &format!("Starting {what} ({})", req.image),
        quiet || req.enqueue_only,
    );
    let r = client.create_session(req).await;
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    Ok(r?)
}

/// What a create reply means for the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Running: go on.
    Ready,
    /// Nothing more to do now: print this and exit 0.
    Done(String),
    /// It did not start (ERROR, CANCELLED, …): exit 1.
    Failed,
}

pub fn outcome(r: &CreateReply) -> Outcome {
    use CreateStatus as S;
    let id = &r.session_id;
    match r.status {
        S::Running | S::RunningDegraded => Outcome::Ready,
        S::Pending => Outcome::Done(format!("Session ID {id} is enqueued for scheduling.")),
        S::Scheduled | S::Preparing | S::Pulling | S::Prepared | S::Creating => {
            Outcome::Done(format!("Session ID {id} is scheduled and about to start."))
        }
        S::Timeout => Outcome::Done(format!("Session ID {id} is still on the job queue.")),
        S::Preempted | S::Terminating | S::Terminated => {
            Outcome::Done(format!("Session ID {id} has finished ({}).", r.status))
        }
        S::Restarting | S::Error | S::Cancelled => Outcome::Failed,
    }
}

/// The error for a session that did not start, with the server's reason when it has one.
pub async fn failure(client: &Client, r: &CreateReply) -> anyhow::Error {
    let info = client.info_rest(&r.session_id).await.ok();
    let why = info
        .as_ref()
        .and_then(|v| v.status_info.as_deref())
        .filter(|s| !s.is_empty())
        .map(|s| format!(" ({s})"))
        .unwrap_or_default();
    anyhow!(
        "session {} did not start: {}{why}; see `bai session info {}`",
        r.session_name,
        r.status,
        r.session_name
    )
}

/// A finished batch session's result, e.g. `result SUCCESS, exit code 0`.
async fn batch_result(client: &Client, r: &CreateReply) -> Option<String> {
    let v = client.info_rest(&r.session_id).await.ok()?;
    let result = v.result.as_str();
    Some(match v.exit_code {
        Some(c) => format!("result {result}, exit code {c}"),
        None => format!("result {result}"),
    })
}

/// Prints the stop message of a reply that is not ready (with a batch's result when known).
pub async fn print_done(client: &Client, r: &CreateReply, msg: &str) {
    if r.status == CreateStatus::Terminated
        && let Some(res) = batch_result(client, r).await
    {
        println!(
            "Session ID {} has finished ({}, {res}).",
            r.session_id, r.status
        );
        return;
    }
    println!("{msg}");
}

/// `bai start` / `bai session create`.
pub async fn start(client: &Client, a: &StartArgs) -> Result<i32> {
    let mut req = build_request(&a.create, &a.image, a.startup_command.clone())?;
    if req.dependencies.is_none() {
        req.dependencies = Some(Vec::new());
    }
    let reply = create_with_progress(client, &req, a.create.quiet).await?;
    if let Some(sessions) = reply.sessions.as_ref().filter(|s| !s.is_empty()) {
        println!("{} sessions are enqueued:", sessions.len());
        for s in sessions {
            println!("  {}  {}", s.session_name, s.session_id);
        }
        return Ok(0);
    }
    match outcome(&reply) {
        Outcome::Ready => {}
        Outcome::Done(msg) => {
            print_done(client, &reply, &msg).await;
            return Ok(0);
        }
        Outcome::Failed => return Err(failure(client, &reply).await),
    }
    if reply.created {
        println!("Session ID {} is created and ready.", reply.session_id);
    } else {
        println!(
            "Session ID {} is already running and was reused.",
            reply.session_id
        );
    }
    if !reply.service_ports.is_empty() && !a.create.quiet {
        println!(
            "This session provides the following app services: {}",
            reply
                .service_ports
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(0)
}

/// Files must exist before anything is created.
pub fn check_files(files: &[std::path::PathBuf]) -> Result<()> {
    for f in files {
        if !f.is_file() {
            bail!("{} is not a file", f.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(status: CreateStatus) -> CreateReply {
        CreateReply {
            session_id: "ID".into(),
            session_name: "n".into(),
            status,
            created: true,
            service_ports: vec![],
            sessions: None,
        }
    }

    #[test]
    fn statuses_map_to_outcomes() {
        use CreateStatus as S;
        assert_eq!(outcome(&reply(S::Running)), Outcome::Ready);
        assert_eq!(
            outcome(&reply(S::Pending)),
            Outcome::Done("Session ID ID is enqueued for scheduling.".into())
        );
        assert_eq!(
            outcome(&reply(S::Timeout)),
            Outcome::Done("Session ID ID is still on the job queue.".into())
        );
        assert_eq!(
            outcome(&reply(S::Terminated)),
            Outcome::Done("Session ID ID has finished (TERMINATED).".into())
        );
        assert_eq!(outcome(&reply(S::Error)), Outcome::Failed);
        assert_eq!(outcome(&reply(S::Cancelled)), Outcome::Failed);
    }

    #[test]
    fn requests_carry_the_options() {
        let cli = <crate::args::Cli as clap::Parser>::try_parse_from([
            "bai",
            "start",
            "-t",
            "mysess",
            "-r",
            "mem=4096",
            "-r",
            "shmem=64m",
            "-e",
            "A=1=2",
            "--type",
            "batch",
            "-c",
            "ls",
            "--batch-timeout",
            "5m",
            "--starts-at",
            "10s",
            "--enqueue-only",
            "--max-wait",
            "7",
            "--tag",
            "t",
            "--scaling-group",
            "g",
            "python",
        ])
        .unwrap();
        let crate::args::Cmd::Start(s) = cli.cmd else {
            panic!()
        };
        let r = build_request(&s.create, &s.image, s.startup_command.clone()).unwrap();
        assert_eq!(r.name.as_deref(), Some("mysess"));
        assert_eq!(r.resources["mem"], NumberOrText::Text("4096m".into()));
        assert_eq!(r.resource_opts["shmem"], NumberOrText::Text("64m".into()));
        assert_eq!(r.environ["A"], "1=2");
        assert_eq!(r.session_type, bai_core::SessionType::Batch);
        assert_eq!(r.startup_command.as_deref(), Some("ls"));
        assert_eq!(r.batch_timeout.as_deref(), Some("300"));
        assert_eq!(r.starts_at.as_deref(), Some("10s"));
        assert!(r.enqueue_only && r.reuse_if_exists);
        assert_eq!(r.max_wait_secs, 7);
        assert_eq!(r.tag.as_deref(), Some("t"));
        assert_eq!(r.scaling_group.as_deref(), Some("g"));

        let bad = crate::args::CreateArgs {
            name: Some("my session".into()),
            ..Default::default()
        };
        let e = build_request(&bad, "python", None).unwrap_err().to_string();
        assert!(e.contains("space"), "{e}");
    }
}
