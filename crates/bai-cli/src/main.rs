//! `bai`: the command line client (also installed as `backend.ai`).
#![forbid(unsafe_code)]

mod args;
mod cmd;
mod output;

use clap::Parser;
use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = args::Cli::parse();
    match cmd::dispatch(cli).await {
        Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
        Err(e) => {
            let msg = e.to_string().replace('\n', " ");
            eprintln!("error: {msg}");
            ExitCode::from(1)
        }
    }
}
