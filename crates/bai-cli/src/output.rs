//! Tables and progress for the terminal.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

/// Prints rows as an aligned table.
pub fn table(headers: &[&str], rows: &[Vec<String>]) {
    let mut width: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            if let Some(w) = width.get_mut(i) {
                *w = (*w).max(c.chars().count());
            }
        }
    }
    let line = |cells: Vec<String>| {
        cells
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:<w$}", w = width.get(i).copied().unwrap_or(0)))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    println!("{}", line(headers.iter().map(|h| h.to_string()).collect()));
    println!("{}", line(width.iter().map(|w| "-".repeat(*w)).collect()));
    for r in rows {
        println!("{}", line(r.clone()));
    }
}

/// A spinner on stderr while waiting, only on a terminal and when not quiet.
pub fn spinner(msg: &str, quiet: bool) -> Option<ProgressBar> {
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let pb = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
        pb.set_style(style);
    }
    pb.set_message(msg.to_string());
    pb.enable_steady_tick(Duration::from_millis(100));
    Some(pb)
}

/// Progress notes go to stderr so stdout carries only the program's output.
pub fn note(quiet: bool, msg: &str) {
    if !quiet {
        eprintln!("∙ {msg}");
    }
}
