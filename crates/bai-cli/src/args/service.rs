//! `bai service …`: model services.

use super::values::parse_kv;
use bai_api::services::{Comparator, MetricSource, RuleMode};
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
    /// Print a service's endpoint URL.
    GetEndpoint(ServiceRef),
    /// Auto-scaling rules of a service.
    #[command(subcommand, visible_alias = "auto-scaling-rule")]
    Rule(RuleCmd),
    /// The autoscaler's decisions for a service, newest first.
    Decisions(ServiceRef),
}

#[derive(Subcommand, Debug)]
pub enum RuleCmd {
    /// Add a rule: a threshold rule (`--threshold --comparator --step-size`) or a target rule
    /// (`--mode target --target`, with min and max replicas).
    Create(RuleCreateArgs),
    /// A service's rules.
    #[command(visible_alias = "list")]
    Ls(ServiceRef),
    /// Turn a rule on.
    Enable(RuleRef),
    /// Turn a rule off (it is kept).
    Disable(RuleRef),
    /// Remove a rule.
    Rm(RuleRef),
}

#[derive(Args, Debug, Clone)]
pub struct RuleRef {
    pub service: String,
    pub rule: String,
}

#[derive(Args, Debug, Clone)]
pub struct RuleCreateArgs {
    pub service: String,
    /// threshold (Backend.AI's) or target (target tracking).
    #[arg(long, default_value = "threshold")]
    pub mode: RuleMode,
    /// KERNEL or INFERENCE_FRAMEWORK (any case).
    #[arg(long)]
    pub metric_source: MetricSource,
    /// KERNEL: cpu_util, mem; INFERENCE_FRAMEWORK: inflight, requests_per_second, latency_ms.
    #[arg(long)]
    pub metric_name: String,
    #[arg(long)]
    pub threshold: Option<String>,
    /// LESS_THAN, LESS_THAN_OR_EQUAL, GREATER_THAN, GREATER_THAN_OR_EQUAL (any case).
    #[arg(long)]
    pub comparator: Option<Comparator>,
    #[arg(long, allow_hyphen_values = true)]
    pub step_size: Option<i32>,
    /// Target mode: the metric's value each replica should see.
    #[arg(long)]
    pub target: Option<f64>,
    #[arg(long)]
    pub scale_up_delay_seconds: Option<f64>,
    #[arg(long)]
    pub scale_down_delay_seconds: Option<f64>,
    #[arg(long, default_value_t = 300)]
    pub cooldown_seconds: u32,
    #[arg(long)]
    pub min_replicas: Option<u32>,
    #[arg(long)]
    pub max_replicas: Option<u32>,
    /// Higher first; the first rule that changes the count wins.
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    pub priority: i32,
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
