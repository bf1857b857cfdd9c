//! Session listings: `bai ps` and `bai admin sessions`, and the status lists they ask for.

use clap::Args;

#[derive(Args, Debug, Clone, Default)]
pub struct PsArgs {
    /// Running sessions only (CREATING, RUNNING, RUNNING_DEGRADED).
    #[arg(long, conflicts_with_all = ["dead", "all", "status"])]
    pub running: bool,
    /// Ended sessions only (CANCELLED, TERMINATED).
    #[arg(long, conflicts_with_all = ["all", "status"])]
    pub dead: bool,
    /// Sessions in every status, every page.
    #[arg(long, conflicts_with = "status")]
    pub all: bool,
    /// Comma-separated statuses (ALL for every status).
    #[arg(short, long)]
    pub status: Option<String>,
    /// How many sessions to show.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(i64).range(1..))]
    pub limit: i64,
    /// Skip this many sessions.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(i64).range(0..))]
    pub offset: i64,
    /// Also show the tag, creation time and occupied resources.
    #[arg(long)]
    pub detail: bool,
}

#[derive(Args, Debug, Clone)]
pub struct AdminPsArgs {
    #[command(flatten)]
    pub ps: PsArgs,
    /// Only this keypair's sessions.
    #[arg(long)]
    pub access_key: Option<String>,
}

pub const DEFAULT_STATUSES: &str = "PENDING,SCHEDULED,PULLING,PREPARED,PREPARING,CREATING,RUNNING,RUNNING_DEGRADED,TERMINATING,ERROR";
pub const RUNNING_STATUSES: &str = "CREATING,RUNNING,RUNNING_DEGRADED";
pub const DEAD_STATUSES: &str = "CANCELLED,TERMINATED";
pub const ALL_STATUSES: &str = "PENDING,SCHEDULED,PULLING,PREPARED,PREPARING,CREATING,RUNNING,RESTARTING,RUNNING_DEGRADED,TERMINATING,TERMINATED,ERROR,CANCELLED";

impl PsArgs {
    /// The `status` variable of `compute_session_list` (wire contract §5.1).
    pub fn statuses(&self) -> String {
        match &self.status {
            Some(s) if s.trim().eq_ignore_ascii_case("all") => ALL_STATUSES.into(),
            Some(s) => s
                .split(',')
                .map(|p| p.trim().to_ascii_uppercase())
                .filter(|p| !p.is_empty())
                .collect::<Vec<_>>()
                .join(","),
            None if self.running => RUNNING_STATUSES.into(),
            None if self.dead => DEAD_STATUSES.into(),
            None if self.all => ALL_STATUSES.into(),
            None => DEFAULT_STATUSES.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Cmd};
    use clap::Parser;

    #[test]
    fn status_lists_per_flag() {
        let ps = |args: &[&str]| {
            let mut v = vec!["bai", "ps"];
            v.extend_from_slice(args);
            match Cli::try_parse_from(v).unwrap().cmd {
                Cmd::Ps(p) => p,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(ps(&[]).statuses(), DEFAULT_STATUSES);
        assert_eq!(
            ps(&["--running"]).statuses(),
            "CREATING,RUNNING,RUNNING_DEGRADED"
        );
        assert_eq!(ps(&["--dead"]).statuses(), "CANCELLED,TERMINATED");
        assert_eq!(ps(&["--all"]).statuses(), ALL_STATUSES);
        assert_eq!(ps(&["-s", "ALL"]).statuses(), ALL_STATUSES);
        assert_eq!(ps(&["-s", "running, error"]).statuses(), "RUNNING,ERROR");
        assert_eq!(ps(&[]).limit, 10);
        assert!(!DEFAULT_STATUSES.contains("TERMINATED"));
        assert!(Cli::try_parse_from(["bai", "ps", "--running", "--dead"]).is_err());
        assert!(Cli::try_parse_from(["bai", "ps", "--limit", "0"]).is_err());
    }
}
