//! The persistent Python REPL behind query mode: one child process for the life of the
//! kernel, so state survives between executions. Executions run one at a time.

use crate::proto::Event;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;

const HELPER: &str = include_str!("repl.py");

pub struct Repl {
    /// Held for a whole execution: one at a time.
    exec: Mutex<Running>,
    /// Separate, so an input line can be delivered while an execution waits for it.
    stdin: Mutex<ChildStdin>,
    /// Which execution (if any) waits in `input()`.
    waiting: Mutex<Option<u64>>,
}

struct Running {
    child: Child,
    out: BufReader<ChildStdout>,
    /// Counts executions, so a late cancel cannot hit a newer one.
    generation: u64,
}

/// How an execution ended.
pub enum Outcome {
    Done,
    /// The Python process died (e.g. killed by the kernel's OOM killer).
    ReplDied,
}

/// Why an input line was not delivered.
#[derive(Debug)]
pub enum InputError {
    NotWaiting,
    Io(std::io::Error),
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputError::NotWaiting => f.write_str("no execution is waiting for input"),
            InputError::Io(e) => write!(f, "cannot reach the Python process: {e}"),
        }
    }
}

impl Repl {
    /// Starts the Python process (its start-up overlaps with the rest of ours).
    pub fn start(python: &str, workdir: &str) -> std::io::Result<Repl> {
        let mut child = Command::new(python)
            .arg("-u")
            .arg("-c")
            .arg(HELPER)
            .current_dir(workdir)
            .env("PYTHONIOENCODING", "utf-8")
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
            exec: Mutex::new(Running {
                child,
                out: BufReader::new(stdout),
                generation: 0,
            }),
            stdin: Mutex::new(stdin),
            waiting: Mutex::new(None),
        })
    }

    fn send(&self, v: &serde_json::Value) -> std::io::Result<()> {
        let mut w = self.stdin.lock().unwrap_or_else(|p| p.into_inner());
        writeln!(w, "{v}")?;
        w.flush()
    }

    fn take_waiting(&self, generation: Option<u64>) -> bool {
        let mut w = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        match (*w, generation) {
            (Some(_), None) => w.take().is_some(),
            (Some(g), Some(want)) if g == want => w.take().is_some(),
            _ => false,
        }
    }

    /// Delivers a line typed by the user to the waiting `input()`.
    pub fn input(&self, line: &str) -> Result<(), InputError> {
        if !self.take_waiting(None) {
            return Err(InputError::NotWaiting);
        }
        self.send(&serde_json::json!({ "input": line }))
            .map_err(InputError::Io)
    }

    /// The client of execution `generation` went away: a waiting `input()` gets EOF
    /// instead of blocking the REPL forever.
    pub fn cancel_input(&self, generation: u64) {
        if self.take_waiting(Some(generation)) {
            let _ = self.send(&serde_json::json!({ "eof": true }));
        }
    }

    /// Runs `code`, calling `started` with the execution's generation and `emit` for each
    /// event up to and including `Finished`.
    pub fn run(
        &self,
        code: &str,
        started: &mut dyn FnMut(u64),
        emit: &mut dyn FnMut(&Event) -> bool,
    ) -> Outcome {
        let mut guard = self.exec.lock().unwrap_or_else(|p| p.into_inner());
        let run = &mut *guard;
        run.generation += 1;
        started(run.generation);
        if self.send(&serde_json::json!({ "code": code })).is_err() {
            let _ = run.child.wait();
            return Outcome::ReplDied;
        }
        let mut line = String::new();
        loop {
            line.clear();
            match run.out.read_line(&mut line) {
                Ok(0) | Err(_) => {
                    let _ = run.child.wait();
                    return Outcome::ReplDied;
                }
                Ok(_) => {}
            }
            let Ok(ev) = serde_json::from_str::<Event>(line.trim_end()) else {
                continue;
            };
            match ev {
                Event::WaitingInput { .. } => {
                    *self.waiting.lock().unwrap_or_else(|p| p.into_inner()) = Some(run.generation);
                }
                Event::Finished { .. } => {
                    self.take_waiting(None);
                }
                _ => {}
            }
            // A client that went away does not stop the execution; keep draining.
            let _ = emit(&ev);
            if matches!(ev, Event::Finished { .. }) {
                return Outcome::Done;
            }
        }
    }
}
