//! Administrator commands: `bai admin …` (sessions, resource groups, presets, policies,
//! projects, agents and their join tokens).

use super::{AdminPsArgs, parse_kv, parse_secs, parse_secs_i64};
use clap::{Args, Subcommand};

#[derive(Subcommand, Debug)]
pub enum AdminCmd {
    /// Every user's sessions (administrators only).
    Sessions(AdminPsArgs),
    /// Session administration.
    #[command(subcommand)]
    Session(AdminSessionCmd),
    /// Resource groups: create, update, delete, allow keypairs.
    #[command(subcommand, visible_alias = "scaling-group")]
    ResourceGroup(AdminGroupCmd),
    /// Resource presets: create or replace, delete.
    #[command(subcommand)]
    Preset(AdminPresetCmd),
    /// Keypair resource policies: list, create or replace, delete, assign.
    #[command(subcommand, visible_alias = "resource-policy")]
    Policy(AdminPolicyCmd),
    /// Projects and their members.
    #[command(subcommand)]
    Project(AdminProjectCmd),
    /// Join tokens for remote agents (`baid agent --token`).
    #[command(subcommand)]
    AgentToken(AdminAgentTokenCmd),
    /// Agents: drain, undrain, remove.
    #[command(subcommand)]
    Agent(AdminAgentCmd),
    /// Images: list, alias, dealias, forget, purge, rescan.
    #[command(subcommand)]
    Image(super::AdminImageCmd),
    /// User resource policies (per-user limits): list, create, update, delete, assign.
    #[command(subcommand, visible_alias = "user-resource-policy")]
    UserPolicy(AdminUserPolicyCmd),
    /// The audit log: who did what and when, newest first.
    Audit(AdminAuditArgs),
    /// Keypairs: list, add one to a user, show, change, delete.
    #[command(subcommand)]
    Keypair(AdminKeypairCmd),
    /// Users: list, add, update, purge.
    #[command(subcommand)]
    User(super::AdminUserCmd),
    /// Domains: list, add, update, purge.
    #[command(subcommand)]
    Domain(super::AdminDomainCmd),
    /// Storage hosts (Backend.AI's storage volumes): list, info.
    #[command(subcommand)]
    Storage(AdminStorageCmd),
    /// Fair share: each resource group's tree (domain → project → user) with shares,
    /// decayed usage and fair-share factor, as Slurm's sshare prints it.
    Fairshare(AdminFairshareArgs),
}

#[derive(Args, Debug)]
pub struct AdminFairshareArgs {
    /// Only this resource group.
    #[arg(long)]
    pub group: Option<String>,
    /// Set shares first, in every group: `domain:NAME=N`, `project:NAME=N` or
    /// `user:EMAIL=N` (N `default` resets to 1); repeatable.
    #[arg(long, value_name = "LEVEL:NAME=N")]
    pub set: Vec<String>,
    /// Print the answer as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand, Debug)]
pub enum AdminStorageCmd {
    /// Every storage host with its backend and usage.
    List {
        #[arg(long)]
        json: bool,
    },
    /// One storage host.
    Info { name: String },
}

#[derive(Args, Debug)]
pub struct AdminAuditArgs {
    /// Only what this user (e-mail) did.
    #[arg(long)]
    pub actor: Option<String>,
    /// Only this action (`login`, `POST /session`, `graphql modify_keypair`); end it with
    /// `*` for every action starting so.
    #[arg(long)]
    pub action: Option<String>,
    /// Only what was done to this (a session id, a path, a name).
    #[arg(long)]
    pub target: Option<String>,
    /// Only entries at or after this RFC 3339 time.
    #[arg(long)]
    pub since: Option<String>,
    /// At most this many entries (1–1000).
    #[arg(long, default_value_t = 50)]
    pub limit: i64,
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand, Debug)]
pub enum AdminKeypairCmd {
    /// Keypairs, newest first (of one user with --email).
    List {
        #[arg(long)]
        email: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Another keypair for a user; its secret is printed once.
    Add {
        email: String,
        /// An administrator's keypair.
        #[arg(long)]
        admin: bool,
        /// Created inactive.
        #[arg(long)]
        inactive: bool,
        #[arg(long, value_name = "N")]
        rate_limit: Option<i64>,
    },
    /// Delete a keypair with no session that has not ended.
    Delete { access_key: String },
    /// A keypair's owner, state and rate limit (never its secret).
    Info { access_key: String },
    /// Change a keypair.
    Update {
        access_key: String,
        /// Requests it may make in any 15 minutes (0: no limit).
        #[arg(long, value_name = "N")]
        rate_limit: Option<i64>,
        /// Revoke it: its next request is refused.
        #[arg(long, conflicts_with = "activate")]
        deactivate: bool,
        /// Let it sign requests again.
        #[arg(long)]
        activate: bool,
    },
}

/// The limits of a user resource policy (unset: Backend.AI's default on create, unchanged
/// on update).
#[derive(Args, Debug)]
pub struct UserPolicyLimits {
    /// Images the user may make from sessions (`max_customized_image_count`).
    #[arg(long, value_name = "N")]
    pub max_customized_images: Option<i64>,
    /// Replicas one model service may run (`max_session_count_per_model_session`).
    #[arg(long, value_name = "N")]
    pub max_model_replicas: Option<i64>,
    /// Data folders the user may own (`max_vfolder_count`; 0: no limit).
    #[arg(long, value_name = "N")]
    pub max_folders: Option<i64>,
    /// Largest quota of one folder, e.g. 10g (`max_quota_scope_size`; -1: no limit).
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub max_folder_size: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum AdminUserPolicyCmd {
    /// Every user resource policy.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Create a policy.
    Create {
        name: String,
        #[command(flatten)]
        limits: UserPolicyLimits,
    },
    /// Change a policy's limits.
    Update {
        name: String,
        #[command(flatten)]
        limits: UserPolicyLimits,
    },
    /// Delete a policy no user holds.
    Delete { name: String },
    /// Give a user (by email) a policy.
    Assign { email: String, policy: String },
}

#[derive(Subcommand, Debug)]
pub enum AdminAgentTokenCmd {
    /// Make a join token; prints the token alone on one line.
    Create {
        /// The resource group its agents join (default: `default`).
        #[arg(long)]
        group: Option<String>,
    },
    /// Every join token (never the tokens themselves).
    List,
    /// Revoke a token: its agents are disconnected and cannot join again.
    Revoke { id: String },
}

#[derive(Subcommand, Debug)]
pub enum AdminAgentCmd {
    /// No new sessions on the agent; running ones stay.
    Drain { id: String },
    /// New sessions may go to the agent again.
    Undrain { id: String },
    /// Forget a remote agent that holds no sessions.
    Remove { id: String },
}

/// Fields of a resource group; only those given are set.
#[derive(Args, Debug, Clone, Default)]
pub struct GroupFields {
    #[arg(long)]
    pub description: Option<String>,
    /// Queue order: fifo, lifo, drf or fairshare (usage-decayed fair share).
    #[arg(long)]
    pub scheduler: Option<String>,
    /// Agent choice: dispersed, concentrated or round-robin.
    #[arg(long)]
    pub selector: Option<String>,
    /// Open to every keypair (true) or only to those allowed (false).
    #[arg(long)]
    pub public: Option<bool>,
    /// Seconds a session may be passed over by smaller ones before it holds the queue.
    #[arg(long, value_name = "SECS", value_parser = parse_secs_i64)]
    pub starvation: Option<i64>,
    /// Cancel sessions PENDING longer than this (0: never).
    #[arg(long, value_name = "SECS", value_parser = parse_secs_i64)]
    pub pending_timeout: Option<i64>,
    /// Where its kernels may open connections: default (the host, link-local/metadata
    /// addresses and the cluster's nodes closed), closed (only --egress-allow) or open
    /// (nothing closed: kernels reach the host's control ports and cloud credentials).
    #[arg(long, value_name = "POLICY")]
    pub egress: Option<String>,
    /// Destinations opened under default and closed, comma-separated or repeated:
    /// 10.0.0.0/8, 10.1.2.3:3128, [fd00::1]:443.
    #[arg(long, value_name = "CIDR[:PORT]", requires = "egress")]
    pub egress_allow: Vec<String>,
    /// Kernels its agents keep started, claimed by a create of exactly that image and those
    /// resources: `IMAGE[,cpu=N][,mem=SIZE][,shm=SIZE][,count=N]`, several separated by `;`
    /// (`python,cpu=1,mem=1g,count=2`); "" for none.
    #[arg(long, value_name = "SHAPES")]
    pub warm_pool: Option<String>,
    /// Kernels kept started for each of the group's two most launched shapes of the last
    /// hour (0: the automatic mode off; default 1).
    #[arg(long, value_name = "N")]
    pub warm_pool_auto: Option<u32>,
    /// Fair share: seconds after which recorded usage counts half (default 7 days; 0: never
    /// decays).
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub fairshare_half_life: Option<u64>,
    /// Fair share: per-slot weights, `cpu=1,mem=0.1,cuda.device=50,accel=50` (per core, per
    /// GiB, per accelerator unit; `accel`: the slots not named).
    #[arg(long, value_name = "SLOT=W,...")]
    pub fairshare_weights: Option<String>,
    /// Fair share: how the factors weigh in a pending session's priority, and two
    /// durations: `fairshare=10000,age=1000,size=1000,priority=1000,max-age=7d,burst-window=1h`
    /// (those left out keep their value; `burst-window=0`: no burst penalty).
    #[arg(long, value_name = "NAME=V,...")]
    pub fairshare_priority: Option<String>,
    /// Preemption: off, priority (a pending session may end running ones of a lower
    /// priority) or fairshare (of accounts far over their share).
    #[arg(long, value_name = "MODE")]
    pub preemption: Option<String>,
    /// Preemption: time between SIGTERM and the end (default 60s).
    #[arg(long, value_name = "DURATION", value_parser = parse_secs)]
    pub preemption_grace: Option<u64>,
    /// Preemption: a session runs at least this long before it may be preempted (default 0).
    #[arg(long, value_name = "DURATION", value_parser = parse_secs)]
    pub preemption_min_runtime: Option<u64>,
    /// Preemption: interactive sessions may be preempted too (batch sessions always may).
    #[arg(long, value_name = "BOOL")]
    pub preempt_interactive: Option<bool>,
}

#[derive(Subcommand, Debug)]
pub enum AdminGroupCmd {
    /// Every resource group.
    List,
    /// Create a resource group.
    Create {
        name: String,
        #[command(flatten)]
        fields: GroupFields,
    },
    /// Change a resource group.
    Update {
        name: String,
        #[command(flatten)]
        fields: GroupFields,
    },
    /// Delete a resource group without agents and sessions.
    Delete { name: String },
    /// Let a keypair (or, with --project, every member of a project) use a non-public group.
    Allow {
        name: String,
        #[arg(required_unless_present = "project")]
        access_key: Option<String>,
        #[arg(long, conflicts_with = "access_key")]
        project: Option<String>,
    },
    /// Stop letting a keypair (or a project) use a non-public group.
    Deny {
        name: String,
        #[arg(required_unless_present = "project")]
        access_key: Option<String>,
        #[arg(long, conflicts_with = "access_key")]
        project: Option<String>,
    },
}

#[derive(Subcommand, Debug)]
pub enum AdminProjectCmd {
    /// Every project and its members.
    List,
    /// Create a project.
    Create {
        name: String,
        #[arg(long, default_value = "")]
        description: String,
    },
    /// Delete a project.
    Delete { name: String },
    /// Add a user (by email) to a project.
    AddMember { name: String, email: String },
    /// Remove a user (by email) from a project.
    RemoveMember { name: String, email: String },
}

#[derive(Subcommand, Debug)]
pub enum AdminPresetCmd {
    /// Create or replace a preset, e.g. `bai admin preset create small -r cpu=1 -r mem=2g`.
    Create {
        name: String,
        /// cpu=N, mem=SIZE, shmem=SIZE, or an accelerator slot.
        #[arg(short = 'r', long = "resources", value_name = "KEY=VALUE", value_parser = parse_kv, required = true)]
        resources: Vec<(String, String)>,
    },
    /// Delete a preset.
    Delete { name: String },
}

#[derive(Subcommand, Debug)]
pub enum AdminPolicyCmd {
    /// Every policy and the keypairs that use it.
    List,
    /// Create or replace a policy.
    Create {
        name: String,
        #[arg(long, value_name = "N")]
        max_concurrent: Option<i64>,
        #[arg(long, value_name = "N")]
        max_pending: Option<i64>,
        /// Total slots of all the keypair's sessions, e.g. -r cpu=8 -r mem=32g.
        #[arg(short = 'r', long = "resources", value_name = "KEY=VALUE", value_parser = parse_kv)]
        total: Vec<(String, String)>,
        /// Seconds a session may live (0: no limit).
        #[arg(long, value_name = "SECS", value_parser = parse_secs_i64)]
        max_lifetime: Option<i64>,
        /// Seconds of inactivity before a session is reclaimed (0: never).
        #[arg(long, value_name = "SECS", value_parser = parse_secs_i64)]
        idle_timeout: Option<i64>,
        /// Most kernels (containers) one session may have (cluster sessions).
        #[arg(long, value_name = "N")]
        max_containers_per_session: Option<i64>,
    },
    /// Delete a policy no keypair uses.
    Delete { name: String },
    /// Give a keypair a policy.
    Assign { access_key: String, policy: String },
}

#[derive(Subcommand, Debug)]
pub enum AdminSessionCmd {
    /// Every user's sessions (administrators only).
    List(AdminPsArgs),
}
