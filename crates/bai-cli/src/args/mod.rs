//! Command line arguments (clap derive) and the pure helpers that turn them into requests,
//! one module per command group.

mod accounts;
mod admin;
mod apps;
mod create;
mod dotfile;
mod images;
mod ps;
mod service;
mod session;
mod template;
mod values;
mod vfolder;

pub use accounts::{AdminDomainCmd, AdminUserCmd, UserFields};
pub use admin::{
    AdminAgentCmd, AdminAgentTokenCmd, AdminAuditArgs, AdminCmd, AdminFairshareArgs, AdminGroupCmd,
    AdminKeypairCmd, AdminPolicyCmd, AdminPresetCmd, AdminProjectCmd, AdminSessionCmd,
    AdminStorageCmd, AdminUserPolicyCmd, GroupFields, UserPolicyLimits,
};
pub use apps::{AppArgs, OpenArgs};
pub use create::{CreateArgs, ResourceMaps, RunArgs, StartArgs, environ, resources};
pub use dotfile::DotfileCmd;
pub use images::{AdminImageCmd, ImageCmd, ImagesArgs};
pub use ps::{AdminPsArgs, PsArgs};
pub use service::{
    RuleCmd, RuleCreateArgs, RuleRef, ServiceCmd, ServiceCreateArgs, ServiceRef, ServiceScaleArgs,
    ServiceTokenArgs,
};
pub use session::{
    DownloadArgs, EventsArgs, HistoryArgs, InfoArgs, LogsArgs, RefArg, RmArgs, SessionCmd,
    UploadArgs,
};
pub use template::{FromTemplateArgs, TemplateCmd, TemplateFormat};
pub use values::{parse_batch_timeout, parse_kv, parse_secs, parse_secs_i64, parse_starts_at};
pub use vfolder::VfolderCmd;

use clap::{Args, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "bai",
    version,
    about = "bai command line client (Backend.AI compatible; also installed as backend.ai)"
)]
pub struct Cli {
    /// `json`: listings print `{"items": [...]}`, as the official CLI's `--output json`.
    #[arg(long, global = true, value_enum, default_value_t = OutputForm::Console)]
    pub output: OutputForm,
    #[command(subcommand)]
    pub cmd: Cmd,
}

/// The official CLI's output forms.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OutputForm {
    #[default]
    Console,
    Json,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Start a session (or reuse one by name) and run code or files in it.
    Run(Box<RunArgs>),
    /// Start a session (interactive, or batch with a startup command).
    Start(Box<StartArgs>),
    /// List your sessions, most recently changed first.
    Ps(PsArgs),
    /// Print a session's lifecycle events as they happen.
    Events(EventsArgs),
    /// Print the logs of a session's container.
    Logs(LogsArgs),
    /// Terminate sessions (queued ones are cancelled).
    #[command(visible_alias = "kill")]
    Rm(RmArgs),
    /// Session commands.
    #[command(subcommand)]
    Session(SessionCmd),
    /// Administrator commands.
    #[command(subcommand)]
    Admin(AdminCmd),
    /// The resource groups you may launch in, with their free resources.
    #[command(visible_alias = "scaling-groups")]
    ResourceGroups,
    /// Resource presets (`--check`: which fit right now).
    Presets(PresetsArgs),
    /// Agents of your resource groups with their free resources.
    Agents,
    /// Your projects.
    Projects,
    /// Data folders: create, list, info, rename, delete, and their files.
    #[command(subcommand, visible_alias = "folder")]
    Vfolder(VfolderCmd),
    /// Images you may launch, and the images you made from sessions (`--customized`).
    Images(ImagesArgs),
    /// Your images made from sessions: list, forget, purge.
    #[command(subcommand)]
    Image(ImageCmd),
    /// Session templates: stored session requests to create sessions from.
    #[command(subcommand, visible_alias = "session-template")]
    Template(TemplateCmd),
    /// Your dotfiles (.tmux.conf, .bashrc, .vimrc, …): written into every new session's home.
    #[command(subcommand)]
    Dotfile(DotfileCmd),
    /// Model services: a model folder served by replicas behind one endpoint URL.
    #[command(subcommand)]
    Service(ServiceCmd),
    /// Forward a local TCP port to an app of a session (e.g. sshd) until Ctrl-C.
    App(AppArgs),
    /// The apps of a session.
    Apps(RefArg),
    /// Open a web app of a session (Jupyter, the web terminal `ttyd`, a preopen port): prints
    /// its URL, with a permit for your browser.
    Open(OpenArgs),
    /// Download files from a session's /home/work.
    Download(DownloadArgs),
    /// Upload files into a session's /home/work.
    Upload(UploadArgs),
    /// Check your keypair (BACKEND_ACCESS_KEY, BACKEND_SECRET_KEY), or say where to get one:
    /// the web UI's Settings → My keypair.
    Login,
    /// Print the client version.
    Version,
    /// Print a shell completion script: `bai completion bash > /etc/bash_completion.d/bai`,
    /// `bai completion zsh > "${fpath[1]}/_bai"`, `bai completion fish > ~/.config/fish/completions/bai.fish`.
    Completion { shell: clap_complete::Shell },
}

#[derive(Args, Debug, Clone)]
pub struct PresetsArgs {
    /// Also say which presets fit right now (for you, in the group).
    #[arg(long)]
    pub check: bool,
    /// Resource group to check in (default: default).
    #[arg(long)]
    pub group: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_parses_the_seed_commands() {
        let c = Cli::try_parse_from([
            "backend.ai",
            "run",
            "--rm",
            "-c",
            "print(\"hello world\")",
            "python:3.6-ubuntu18.04",
        ])
        .unwrap();
        assert!(
            matches!(c.cmd, Cmd::Run(ref r) if r.rm && r.code.as_deref() == Some("print(\"hello world\")"))
        );
        let c = Cli::try_parse_from([
            "bai",
            "run",
            "--rm",
            "--exec",
            "python myscript.py arg1 arg2",
            "python",
            "./myscript.py",
        ])
        .unwrap();
        assert!(matches!(c.cmd, Cmd::Run(ref r) if r.files.len() == 1 && r.image == "python"));
        let c =
            Cli::try_parse_from(["bai", "run", "--rm", "-r", "gpu=0.5", "img", "./a.py"]).unwrap();
        assert!(matches!(c.cmd, Cmd::Run(ref r) if r.create.resources[0].1 == "0.5"));
        let c = Cli::try_parse_from([
            "bai", "start", "--type", "batch", "-c", "ls", "-t", "mysess", "python",
        ])
        .unwrap();
        assert!(
            matches!(c.cmd, Cmd::Start(ref s) if s.startup_command.as_deref() == Some("ls")
            && s.create.session_type == bai_core::SessionType::Batch)
        );
        for args in [
            &["bai", "admin", "sessions", "--access-key", "AK"][..],
            &["bai", "admin", "session", "list", "--all"],
            &["bai", "ps"],
            &["bai", "events", "sess", "--wait", "batch_session_result"],
            &[
                "bai",
                "session",
                "events",
                "sess",
                "--scope",
                "session,kernel",
            ],
            &["bai", "logs", "sess"],
            &["bai", "session", "logs", "sess"],
            &["bai", "session", "rename", "a", "b"],
            &["bai", "session", "info", "--json", "s"],
            &["bai", "session", "history", "s"],
            &["bai", "rm", "a", "b", "-f"],
            &["bai", "kill", "a"],
            &["bai", "session", "destroy", "a"],
            &["bai", "session", "create", "-t", "x1234", "python"],
            &[
                "bai",
                "start",
                "--starts-at",
                "10s",
                "--type",
                "batch",
                "-c",
                "date",
                "python",
            ],
            &[
                "bai",
                "run",
                "--enqueue-only",
                "--max-wait",
                "5",
                "-q",
                "python",
            ],
            &["bai", "version"],
        ] {
            assert!(Cli::try_parse_from(args).is_ok(), "{args:?}");
        }
        assert!(Cli::try_parse_from(["bai", "rm"]).is_err());
        assert!(Cli::try_parse_from(["bai", "start", "--type", "weird", "python"]).is_err());
        assert!(Cli::try_parse_from(["bai", "start", "--starts-at", "soon", "python"]).is_err());
    }
}
