//! Account administration: `bai admin user …`, `bai admin keypair …`, `bai admin domain …`
//! (Backend.AI's admin GraphQL).

use clap::{Args, Subcommand};

#[derive(Args, Debug)]
pub struct UserFields {
    /// The user's name (default: the part of the email before '@').
    #[arg(short = 'u', long)]
    pub username: Option<String>,
    #[arg(short = 'n', long)]
    pub full_name: Option<String>,
    /// superadmin, admin, user or monitor.
    #[arg(short = 'r', long)]
    pub role: Option<String>,
    /// active, inactive, deleted or before-verification.
    #[arg(short = 's', long)]
    pub status: Option<String>,
    #[arg(short = 'd', long)]
    pub domain: Option<String>,
    /// A user resource policy.
    #[arg(long)]
    pub resource_policy: Option<String>,
    /// The user must change the password at the next login.
    #[arg(long)]
    pub need_password_change: bool,
}

#[derive(Subcommand, Debug)]
pub enum AdminUserCmd {
    /// Every user (or those matching FIELD == "VALUE").
    List {
        #[arg(long)]
        filter: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Create a user with a first keypair.
    Add {
        email: String,
        #[arg(long)]
        password: String,
        #[command(flatten)]
        fields: UserFields,
    },
    /// Change a user.
    Update {
        email: String,
        #[arg(long)]
        password: Option<String>,
        #[command(flatten)]
        fields: UserFields,
    },
    /// Delete a user with nothing left running and no folders of their own.
    Purge { email: String },
}

#[derive(Subcommand, Debug)]
pub enum AdminDomainCmd {
    /// Every domain.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Create a domain.
    Add {
        name: String,
        #[arg(long)]
        description: Option<String>,
        #[arg(long)]
        inactive: bool,
    },
    /// Change a domain (`--new-name` renames it with its users and projects).
    Update {
        name: String,
        #[arg(long)]
        new_name: Option<String>,
        #[arg(long)]
        description: Option<String>,
        /// Its users' keypairs stop working while it is inactive.
        #[arg(long, value_name = "BOOL")]
        active: Option<bool>,
    },
    /// Delete a domain with no users or projects.
    Purge { name: String },
}
