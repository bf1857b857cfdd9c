//! `bai service …`: model services.

use super::values::parse_kv;
use clap::{Args, Subcommand};

#[derive(Subcommand, Debug)]
pub enum ServiceCmd {
    /// Serve a model folder: REPLICAS inference sessions behind one endpoint URL.
    Create(ServiceCreateArgs),
    /// Your services.
    #[command(visible_alias = "list")]
    Ls,
    /// A service's routes, their health and counters, and its URL.
    Info(ServiceRef),
    /// Set how many replicas a service runs.
    Scale(ServiceScaleArgs),
    /// Issue a token for a service's endpoint (prints only the token).
    Token(ServiceTokenArgs),
    /// Routes that failed to start, and why.
    Errors(ServiceRef),
    /// Remove a service (its replicas finish their requests first).
    Rm(ServiceRef),
}

#[derive(Args, Debug, Clone)]
pub struct ServiceRef {
    /// The service's name or id.
    pub service: String,
}

#[derive(Args, Debug, Clone)]
pub struct ServiceCreateArgs {
    /// The image (or alias) replicas run.
    pub image: String,
    /// The model folder (usage mode `model`) holding model-definition.yaml.
    pub model: String,
    /// Replicas to run.
    pub replicas: u32,
    /// The service's name (4–64 letters, digits, `_`, `-`).
    #[arg(short = 't', long = "name")]
    pub name: Option<String>,
    /// Per-replica resources, e.g. `-r cpu=1 -r mem=1g`.
    #[arg(short = 'r', long = "resources", value_parser = parse_kv)]
    pub resources: Vec<(String, String)>,
    /// Environment variables of every replica.
    #[arg(short = 'e', long = "env", value_parser = parse_kv)]
    pub env: Vec<(String, String)>,
    /// Resource group.
    #[arg(long = "group", alias = "scaling-group")]
    pub scaling_group: Option<String>,
    /// Project.
    #[arg(short = 'p', long)]
    pub project: Option<String>,
    /// The definition file inside the folder (default model-definition.yaml).
    #[arg(long)]
    pub model_definition_path: Option<String>,
    /// Anyone may call the endpoint, without a token.
    #[arg(long)]
    pub public: bool,
}

#[derive(Args, Debug, Clone)]
pub struct ServiceScaleArgs {
    pub service: String,
    pub replicas: u32,
}

#[derive(Args, Debug, Clone)]
pub struct ServiceTokenArgs {
    pub service: String,
    /// How long the token is valid: seconds, or 30m, 12h, 3d.
    #[arg(default_value = "1d")]
    pub duration: String,
}
