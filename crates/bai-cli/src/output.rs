//! Tables, progress notes and spinners for the terminal. Progress goes to stderr, so
//! stdout carries only results (and the program's own output for `run`).

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;
use std::io::IsTerminal;
use std::time::Duration;

/// A JSON value as a table cell / `key: value` value.
pub fn cell(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) if s.is_empty() => "-".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Formats rows as an aligned table with a header rule.
pub fn table_text(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut width: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            if let Some(w) = width.get_mut(i) {
                *w = (*w).max(c.chars().count());
            }
        }
    }
    let line = |cells: &[String]| {
        cells
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:<w$}", w = width.get(i).copied().unwrap_or(0)))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    let mut out = String::new();
    out.push_str(&line(
        &headers.iter().map(|h| h.to_string()).collect::<Vec<_>>(),
    ));
    out.push('\n');
    out.push_str(&line(
        &width.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>(),
    ));
    out.push('\n');
    for r in rows {
        out.push_str(&line(r));
        out.push('\n');
    }
    out
}

pub fn table(headers: &[&str], rows: &[Vec<String>]) {
    if json_output() {
        print_items(&table_items(headers, rows));
        return;
    }
    print!("{}", table_text(headers, rows));
}

/// A spinner on stderr while waiting; only on a terminal and when not quiet.
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

/// Progress note on stderr: `∙ msg`.
pub fn note(quiet: bool, msg: &str) {
    if !quiet {
        eprintln!("∙ {msg}");
    }
}

/// The exit status of a process that wrote into a closed pipe (the shell's 128 + SIGPIPE).
pub const BROKEN_PIPE_EXIT: i32 = 141;

/// Whether a panic message is std's "failed printing to stdout/stderr" for a closed pipe.
pub fn is_broken_pipe_panic(message: &str) -> bool {
    message.starts_with("failed printing to std") && message.contains("os error 32")
}

/// `bai … | head` closes stdout early, and std's print macros then panic. Ends the process
/// quietly with [`BROKEN_PIPE_EXIT`] instead, as `ls | head` does; every other panic is
/// reported as before. (SIGPIPE itself stays ignored: the tunnels write to sockets whose
/// peer may be gone, and must see EPIPE rather than die.)
pub fn quiet_on_broken_pipe() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if is_broken_pipe_panic(message) {
            std::process::exit(BROKEN_PIPE_EXIT);
        }
        report(info)
    }));
}

static JSON_OUTPUT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `--output json` (the official CLI's global option): listings print `{"items": [...]}`.
pub fn set_json_output(on: bool) {
    JSON_OUTPUT.store(on, std::sync::atomic::Ordering::Relaxed);
}

pub fn json_output() -> bool {
    JSON_OUTPUT.load(std::sync::atomic::Ordering::Relaxed)
}

/// A table's rows as JSON objects keyed by its headers in snake case (`AT (UTC)` → `at_utc`),
/// for `--output json` on listings that print tables.
pub fn table_items(headers: &[&str], rows: &[Vec<String>]) -> Vec<Value> {
    let keys: Vec<String> = headers
        .iter()
        .map(|h| {
            let k: String = h
                .to_lowercase()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            k.split('_')
                .filter(|p| !p.is_empty())
                .collect::<Vec<_>>()
                .join("_")
        })
        .collect();
    rows.iter()
        .map(|r| {
            Value::Object(
                keys.iter()
                    .cloned()
                    .zip(r.iter().map(|c| Value::String(c.clone())))
                    .collect(),
            )
        })
        .collect()
}

/// `--output json` for a listing of API objects: true when it printed them (the caller is
/// done), false when the output is a table.
pub fn json_items<T: serde::Serialize>(list: &[T]) -> bool {
    if !json_output() {
        return false;
    }
    let items: Vec<Value> = list
        .iter()
        .map(|i| serde_json::to_value(i).unwrap_or(Value::Null))
        .collect();
    print_items(&items);
    true
}

/// A listing as the official CLI's `--output json` prints it: `{"items": [...]}`.
pub fn print_items(items: &[Value]) {
    let v = serde_json::json!({ "items": items });
    println!(
        "{}",
        serde_json::to_string_pretty(&v).unwrap_or_else(|_| v.to_string())
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_rows_become_items_keyed_by_their_headers() {
        let items = table_items(
            &["Name", "AT (UTC)", "Fits now"],
            &[vec!["a".into(), "2026".into(), "yes".into()]],
        );
        assert_eq!(
            items,
            vec![serde_json::json!({"name": "a", "at_utc": "2026", "fits_now": "yes"})]
        );
    }

    #[test]
    fn only_a_closed_pipe_on_stdout_or_stderr_is_quiet() {
        assert!(is_broken_pipe_panic(
            "failed printing to stdout: Broken pipe (os error 32)"
        ));
        assert!(is_broken_pipe_panic(
            "failed printing to stderr: Broken pipe (os error 32)"
        ));
        assert!(!is_broken_pipe_panic(
            "failed printing to stdout: No space left on device (os error 28)"
        ));
        assert!(!is_broken_pipe_panic("index out of bounds"));
    }

    #[test]
    fn tables_align() {
        let t = table_text(&["A", "Bee"], &[vec!["long-cell".into(), "x".into()]]);
        assert_eq!(t, "A          Bee\n---------  ---\nlong-cell  x\n");
        assert_eq!(cell(&Value::Null), "-");
        assert_eq!(cell(&serde_json::json!(3)), "3");
    }
}
