//! Printing an execution as it runs: stdout records to stdout, stderr records to stderr,
//! verbatim; input lines on `waiting-input`. A line left open at the end (a REPL value such
//! as `2`, which kernels send without a newline, as Backend.AI's do) is closed.

use anyhow::{Context, Result, anyhow};
use bai_client::{Client, Mode};
use futures::StreamExt;
use serde_json::Value;
use std::io::Write;

/// Prints the records; `open_line` tracks whether stdout's last text left a line open.
fn print_console(records: &[(String, String)], open_line: &mut bool) {
    let mut out = std::io::stdout().lock();
    let mut err = std::io::stderr().lock();
    for (kind, text) in records {
        if kind == "stdout" && !text.is_empty() {
            *open_line = !text.ends_with('\n');
        }
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
    let mut open_line = false;
    while let Some(frame) = ex.next().await {
        let frame = frame?;
        print_console(&frame.console, &mut open_line);
        match frame.status.as_str() {
            "waiting-input" => {
                let line = read_line().await?;
                ex.send_input(&line).await?;
            }
            "finished" => {
                if open_line {
                    println!();
                }
                exit = Some(frame.exit_code.unwrap_or(0));
                break;
            }
            _ => {}
        }
    }
    ex.close().await;
    exit.ok_or_else(|| anyhow!("the session closed the execution before it finished"))
}
