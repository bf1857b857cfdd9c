//! `bai template …` (session templates) and `bai session create-from-template`.

use super::{parse_kv, parse_secs, values::parse_type};
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum TemplateCmd {
    /// Store the templates of a YAML or JSON file (`-f -` or no -f: standard input).
    Create {
        #[arg(short = 'f', long = "file", value_name = "FILE")]
        file: Option<PathBuf>,
        /// The project the templates belong to (default: the configured one).
        #[arg(short = 'g', long = "project", visible_alias = "group")]
        project: Option<String>,
    },
    /// Your templates (`--all`: everyone's; administrators).
    #[command(visible_alias = "ls")]
    List {
        #[arg(short = 'a', long = "all")]
        all: bool,
    },
    /// Print a template: YAML (the default) or JSON.
    Get {
        /// The template's id.
        id: String,
        #[arg(short = 'f', long = "format", value_enum, default_value_t = TemplateFormat::Yaml)]
        format: TemplateFormat,
    },
    /// Replace a template with the one in a file (`-f -` or no -f: standard input).
    Update {
        /// The template's id.
        id: String,
        #[arg(short = 'f', long = "file", value_name = "FILE")]
        file: Option<PathBuf>,
    },
    /// Delete a template.
    #[command(visible_alias = "rm")]
    Delete {
        /// The template's id.
        id: String,
    },
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemplateFormat {
    Yaml,
    Json,
}

/// A session of a template; each option given replaces the template's value.
#[derive(Args, Debug, Clone)]
pub struct FromTemplateArgs {
    /// The template's id (see `bai template list`).
    pub template_id: String,
    /// Session name (4–64 letters, digits, '-', '_', '.').
    #[arg(short = 't', long = "name")]
    pub name: Option<String>,
    /// interactive, batch or inference.
    #[arg(long = "type", value_parser = parse_type)]
    pub session_type: Option<bai_core::SessionType>,
    /// Image name or alias.
    #[arg(short = 'i', long)]
    pub image: Option<String>,
    /// Batch sessions: the command that makes up the session.
    #[arg(short = 'c', long = "startup-command", value_name = "CMD")]
    pub startup_command: Option<String>,
    /// Resources, e.g. -r cpu=2 -r mem=1g (replace all of the template's).
    #[arg(short = 'r', long = "resources", value_name = "KEY=VALUE", value_parser = parse_kv)]
    pub resources: Vec<(String, String)>,
    /// Environment variables, e.g. -e K=V (replace all of the template's).
    #[arg(short = 'e', long = "env", value_name = "KEY=VALUE", value_parser = parse_kv)]
    pub env: Vec<(String, String)>,
    /// Mount a data folder: NAME or NAME:PATH (replace the template's mounts).
    #[arg(short = 'm', long = "mount", value_name = "NAME[:PATH]")]
    pub mounts: Vec<String>,
    /// Number of kernels.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub cluster_size: Option<u32>,
    /// single-node or multi-node.
    #[arg(long, value_name = "MODE", value_parser = ["single-node", "multi-node"])]
    pub cluster_mode: Option<String>,
    /// Project to create the session in.
    #[arg(short = 'g', long = "project", visible_alias = "group")]
    pub project: Option<String>,
    /// Resource group.
    #[arg(long)]
    pub scaling_group: Option<String>,
    /// A tag kept with the session.
    #[arg(long)]
    pub tag: Option<String>,
    /// Return right after the session is queued.
    #[arg(long)]
    pub enqueue_only: bool,
    /// Wait at most this many seconds for the session to start (0: no limit).
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub max_wait: Option<u64>,
}
