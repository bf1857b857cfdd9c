//! Session commands: `bai session …` and the top-level shortcuts that share their arguments
//! (`logs`, `events`, `rm`, `download`, `upload`).

use super::{PsArgs, StartArgs};
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum SessionCmd {
    /// Same as `bai start`.
    Create(Box<StartArgs>),
    /// Same as `bai ps`.
    List(PsArgs),
    /// Start a session from a template (see `bai template`); options replace its values.
    CreateFromTemplate(super::FromTemplateArgs),
    /// Show a session's fields (GET /session/REF).
    Info(InfoArgs),
    /// A session's recent resource use (CPU, memory, network, disk) and idle checks.
    Stats(InfoArgs),
    /// Rename a session.
    Rename {
        /// Session name or id.
        reference: String,
        /// The new name (4–64 letters, digits, '-', '_', '.').
        new_name: String,
    },
    /// Print the logs of a session's container.
    Logs(LogsArgs),
    /// List a directory of a running session (its /home/work when no path is given).
    #[command(visible_alias = "ls")]
    Files {
        /// Session name or id.
        reference: String,
        /// A directory, relative to /home/work or absolute.
        #[arg(default_value = ".")]
        path: String,
    },
    /// Print a session's lifecycle events as they happen.
    Events(EventsArgs),
    /// When the session entered each status.
    #[command(visible_alias = "status-history")]
    History(HistoryArgs),
    /// Same as `bai download`.
    Download(DownloadArgs),
    /// Same as `bai upload`.
    Upload(UploadArgs),
    /// Same as `bai apps`.
    Apps(RefArg),
    /// Same as `bai rm`.
    #[command(visible_alias = "rm")]
    Destroy(RmArgs),
    /// Save a running session's container as an image tarball on its agent.
    Commit {
        /// Session name or id.
        reference: String,
    },
    /// Make a private image of a running interactive session (its container's changes;
    /// /home/work and mounted folders are not included). Launch it by the printed reference.
    ConvertToImage {
        /// Session name or id.
        reference: String,
        /// The image's name: 4–32 letters, digits, '-', '_' (the same name replaces it).
        image_name: String,
    },
}

#[derive(Args, Debug, Clone)]
pub struct LogsArgs {
    /// Session name or id.
    pub reference: String,
    /// Which kernel of a cluster session: main1 (default), sub1, … or a kernel id.
    #[arg(long, value_name = "KERNEL")]
    pub kernel: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct RefArg {
    /// Session name or id.
    pub reference: String,
}

#[derive(Args, Debug, Clone)]
pub struct DownloadArgs {
    /// Session name or id.
    pub reference: String,
    /// Paths relative to /home/work (files or directories).
    #[arg(required = true)]
    pub files: Vec<String>,
    /// Where to put them.
    #[arg(long, default_value = ".")]
    pub dest: PathBuf,
}

#[derive(Args, Debug, Clone)]
pub struct UploadArgs {
    /// Session name or id.
    pub reference: String,
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Paths relative to this directory keep their directories under /home/work.
    #[arg(long, default_value = ".")]
    pub base_dir: PathBuf,
}

#[derive(Args, Debug, Clone)]
pub struct InfoArgs {
    /// Session name or id.
    pub reference: String,
    /// Print the raw JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct HistoryArgs {
    /// Session name or id.
    pub reference: String,
    /// Also print the scheduler's phase-by-phase history (implied by any filter).
    #[arg(long)]
    pub scheduling: bool,
    /// Scheduling history: only this phase (e.g. schedule, launch).
    #[arg(long)]
    pub phase: Option<String>,
    /// Scheduling history: SUCCESS, FAILURE, STALE, NEED_RETRY, EXPIRED, GIVE_UP or SKIPPED.
    #[arg(long)]
    pub result: Option<String>,
    /// Scheduling history: status before the step.
    #[arg(long)]
    pub from_status: Option<String>,
    /// Scheduling history: status after the step.
    #[arg(long)]
    pub to_status: Option<String>,
    /// Scheduling history: this error code.
    #[arg(long)]
    pub error_code: Option<String>,
    /// Scheduling history: messages containing this text.
    #[arg(long)]
    pub message: Option<String>,
    /// Scheduling history: only the record with this id (a UUID, as the table shows it).
    #[arg(long, value_parser = clap::value_parser!(uuid::Uuid))]
    pub id: Option<uuid::Uuid>,
    /// Scheduling history: also print each record's sub-steps.
    #[arg(long)]
    pub steps: bool,
}

impl HistoryArgs {
    /// The filter bar's fields that were given.
    pub fn filter(&self) -> Vec<(&'static str, String)> {
        let id = self.id.map(|i| i.to_string());
        [
            ("id", &id),
            ("phase", &self.phase),
            ("result", &self.result),
            ("from_status", &self.from_status),
            ("to_status", &self.to_status),
            ("error_code", &self.error_code),
            ("message", &self.message),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.clone().map(|v| (k, v)))
        .collect()
    }
}

#[derive(Args, Debug, Clone)]
pub struct RmArgs {
    /// Session names or ids.
    #[arg(required = true)]
    pub references: Vec<String>,
    /// Force termination.
    #[arg(short, long)]
    pub forced: bool,
}

#[derive(Args, Debug, Clone)]
pub struct EventsArgs {
    /// Session name or id (it may not exist yet).
    pub reference: String,
    /// session, kernel, session,kernel or * (all).
    #[arg(long, default_value = "*")]
    pub scope: String,
    /// Exit 0 when this event arrives; `batch_session_result` exits 0 on
    /// session_success and 1 on session_failure.
    #[arg(long, value_name = "EVENT")]
    pub wait: Option<String>,
}
