//! Session listings: `bai ps` and `bai admin sessions`, and the status lists they ask for.

use bai_core::status::SessionStatus as S;
use clap::Args;

#[derive(Args, Debug, Clone, Default)]
pub struct PsArgs {
    /// Sessions placed on an agent and not ending: PREPARING, PULLING, PREPARED, CREATING,
    /// RUNNING, RESTARTING and RUNNING_DEGRADED (not PENDING, SCHEDULED, TERMINATING, ERROR).
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
    /// System sessions (SFTP to a folder, made by `bai vfolder sftp`) instead of your own.
    #[arg(long)]
    pub system: bool,
}

#[derive(Args, Debug, Clone)]
pub struct AdminPsArgs {
    #[command(flatten)]
    pub ps: PsArgs,
    /// Only this keypair's sessions.
    #[arg(long)]
    pub access_key: Option<String>,
}

impl PsArgs {
    /// The `status` variable of `compute_session_list` (wire contract §5.1).
    pub fn statuses(&self) -> String {
        match &self.status {
            Some(s) if s.trim().eq_ignore_ascii_case("all") => S::join(&S::ALL),
            Some(s) => s
                .split(',')
                .map(|p| p.trim().to_ascii_uppercase())
                .filter(|p| !p.is_empty())
                .collect::<Vec<_>>()
                .join(","),
            // The sets are defined once, in bai_core::status.
            None if self.running => S::join(&S::LIST_RUNNING),
            None if self.dead => S::join(&S::LIST_DEAD),
            None if self.all => S::join(&S::ALL),
            None => S::join(&S::LIST_DEFAULT),
        }
    }
}

#[cfg(test)]
mod tests {
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
        let default = ps(&[]).statuses();
        assert!(default.contains("PENDING") && default.contains("RESTARTING"));
        let running = ps(&["--running"]).statuses();
        assert!(
            [
                "PREPARING",
                "PULLING",
                "RUNNING",
                "CREATING",
                "RUNNING_DEGRADED"
            ]
            .iter()
            .all(|s| running.split(',').any(|r| r == *s)),
            "{running}"
        );
        assert_eq!(ps(&["--dead"]).statuses(), "CANCELLED,TERMINATED");
        let all = ps(&["--all"]).statuses();
        assert_eq!(all.split(',').count(), 14, "{all}");
        assert_eq!(ps(&["-s", "ALL"]).statuses(), all);
        assert_eq!(ps(&["-s", "running, error"]).statuses(), "RUNNING,ERROR");
        assert_eq!(ps(&[]).limit, 10);
        assert!(!default.contains("TERMINATED") && !default.contains("CANCELLED"));
        assert!(Cli::try_parse_from(["bai", "ps", "--running", "--dead"]).is_err());
        assert!(Cli::try_parse_from(["bai", "ps", "--limit", "0"]).is_err());
    }

    /// `bai ps --help` names exactly the statuses `--running` asks for.
    #[test]
    fn the_help_of_running_names_its_statuses() {
        use clap::CommandFactory;
        let mut cmd = Cli::command();
        let help = cmd
            .find_subcommand_mut("ps")
            .map(|c| c.render_long_help().to_string())
            .unwrap_or_default();
        let text = help
            .split("--running")
            .nth(1)
            .and_then(|t| t.split("--dead").next())
            .unwrap_or_default()
            .replace(char::is_whitespace, " ");
        let (included, excluded) = text.split_once("(not").unwrap_or((&text, ""));
        for s in super::S::LIST_RUNNING {
            assert!(included.contains(s.as_str()), "{s} missing from: {text}");
        }
        for s in super::S::ALL
            .iter()
            .filter(|s| !super::S::LIST_RUNNING.contains(s))
        {
            let named = included
                .split(|c: char| !c.is_ascii_uppercase() && c != '_')
                .any(|w| w == s.as_str());
            assert!(!named, "{s} is not in --running: {text}");
        }
        assert!(excluded.contains("PENDING"), "{text}");
    }
}
