//! `bai`: the command line client (also installed as `backend.ai`).
#![forbid(unsafe_code)]

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    bai_cli::output::quiet_on_broken_pipe();
    // Usage errors exit 2 (clap's default), --help / --version exit 0.
    let cli = bai_cli::args::Cli::parse();
    let code = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(bai_cli::main_with(cli)),
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            1
        }
    };
    ExitCode::from(u8::try_from(code.clamp(0, 255)).unwrap_or(1))
}
