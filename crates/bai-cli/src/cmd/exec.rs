//! Printing an execution as it runs: stdout records to stdout, stderr records to stderr,
//! verbatim; input lines on `waiting-input`.

use anyhow::{Context, Result, anyhow};
use bai_client::{Client, Mode};
use futures::StreamExt;
use serde_json::Value;
use std::io::Write;

fn print_console(records: &[(String, String)]) {
    let mut out = std::io::stdout().lock();
    let mut err = std::io::stderr().lock();
    for (kind, text) in records {
        // Write errors (a closed pipe) must not abort the execution.
        let _ = match kind.as_str() {
            "stdout" => out.write_all(text.as_bytes()),
            "stderr" => err.write_all(text.as_bytes()),
            other => writeln!(out, "----- output record (type: {other}) -----\n{text}"),
        };
    }
    let _ = out.flush();
    let _ = err.flush();
}

/// One line from stdin (without its newline); empty at end of input.
async fn read_line() -> Result<String> {
    tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map(|_| line)
    })
    .await
    .context("cannot read input")?
    .context("cannot read input")
    .map(|l| l.trim_end_matches(['\n', '\r']).to_string())
}

/// Runs `code` and prints its output as it arrives; returns the code's exit code.
pub async fn stream_execution(
    client: &Client,
    session_id: &str,
    mode: Mode,
    code: &str,
    options: Value,
) -> Result<i32> {
    let mut ex = client.execute_ws(session_id, code, mode, options).await?;
    let mut exit = None;
    while let Some(frame) = ex.next().await {
        let frame = frame?;
        print_console(&frame.console);
        match frame.status.as_str() {
            "waiting-input" => {
                let line = read_line().await?;
                ex.send_input(&line).await?;
            }
            "finished" => {
                exit = Some(frame.exit_code.unwrap_or(0));
                break;
            }
            _ => {}
        }
    }
    ex.close().await;
    exit.ok_or_else(|| anyhow!("the session closed the execution before it finished"))
}
