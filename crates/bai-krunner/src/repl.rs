//! The persistent Python REPL behind query mode: one child process for the life of the
//! kernel, so state survives between executions.

use crate::proto::Event;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;

const HELPER: &str = include_str!("repl.py");

pub struct Repl {
    /// Held for a whole execution: one at a time.
    exec: Mutex<(Child, BufReader<ChildStdout>)>,
    /// Separate, so an input line can be delivered while an execution waits for it.
    stdin: Mutex<ChildStdin>,
}

/// How an execution ended.
pub enum Outcome {
    Done,
    /// The Python process died (e.g. killed by the kernel's OOM killer).
    ReplDied,
}

impl Repl {
    pub fn start(python: &str) -> std::io::Result<Repl> {
        let mut child = Command::new(python)
            .arg("-u")
            .arg("-c")
            .arg(HELPER)
            .current_dir("/home/work")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| std::io::Error::other("no REPL stdin"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("no REPL stdout"))?;
        Ok(Repl {
            exec: Mutex::new((child, BufReader::new(stdout))),
            stdin: Mutex::new(stdin),
        })
    }

    fn write(&self, v: &serde_json::Value) -> std::io::Result<()> {
        let mut w = self.stdin.lock().unwrap_or_else(|p| p.into_inner());
        writeln!(w, "{v}")?;
        w.flush()
    }

    /// Delivers a line typed by the user to a waiting `input()`.
    pub fn input(&self, line: &str) -> std::io::Result<()> {
        self.write(&serde_json::json!({ "input": line }))
    }

    /// Runs `code`, calling `emit` for each event up to and including `Finished`.
    pub fn run(&self, code: &str, emit: &mut dyn FnMut(&Event) -> bool) -> Outcome {
        let mut guard = self.exec.lock().unwrap_or_else(|p| p.into_inner());
        if self.write(&serde_json::json!({ "code": code })).is_err() {
            return Outcome::ReplDied;
        }
        let (child, out) = &mut *guard;
        let mut line = String::new();
        loop {
            line.clear();
            match out.read_line(&mut line) {
                Ok(0) | Err(_) => {
                    let _ = child.wait();
                    return Outcome::ReplDied;
                }
                Ok(_) => {}
            }
            let Ok(ev) = serde_json::from_str::<Event>(line.trim_end()) else {
                continue;
            };
            let finished = matches!(ev, Event::Finished { .. });
            // A client that went away does not stop the execution; keep draining.
            let _ = emit(&ev);
            if finished {
                return Outcome::Done;
            }
        }
    }
}
