//! The `bai` command line client as a library: parse with [`args::Cli`], run with
//! [`dispatch`] against any [`bai_client::Client`] (tests point it at their own server).
#![forbid(unsafe_code)]

pub mod args;
mod cmd;
pub mod output;

pub use cmd::create::{Outcome, outcome};
pub use cmd::dispatch;
pub use cmd::events::wait_outcome;
pub use cmd::run::{batch_options, default_run_name, plan};
pub use cmd::session::terminated_word;

/// Runs a parsed command line with the client from the environment; returns the exit
/// code, after printing any error as one `error: …` line on stderr.
pub async fn main_with(cli: args::Cli) -> i32 {
    output::set_json_output(cli.output == args::OutputForm::Json);
    let result = match cli.cmd {
        args::Cmd::Version => {
            println!(
                "bai {} (Backend.AI API {})",
                env!("CARGO_PKG_VERSION"),
                bai_core::API_VERSION
            );
            Ok(0)
        }
        args::Cmd::Completion { shell } => Ok(cmd::completion(shell)),
        cmd => match bai_client::Client::from_env() {
            Ok(client) => {
                // While the platform switches managers requests wait (bounded): one line says so.
                let client = client.with_notice(|line| eprintln!("{line}"));
                dispatch(
                    args::Cli {
                        output: cli.output,
                        cmd,
                    },
                    &client,
                )
                .await
            }
            // Without keys, every command says where to get them (as `bai login` does).
            Err(e) => Err(
                match crate::cmd::login::missing_keys(|k| std::env::var(k).ok()) {
                    Some(why) => anyhow::anyhow!(why),
                    None => e.into(),
                },
            ),
        },
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", error_line(&e));
            1
        }
    }
}

/// An error as one line: the problem's `msg` (or title) for API errors, with any context.
pub fn error_line(e: &anyhow::Error) -> String {
    format!("{e:#}")
        .split(['\n', '\r'])
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
