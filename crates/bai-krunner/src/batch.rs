//! Batch mode: clean, build and exec steps as shell commands in /home/work.

use crate::proto::Event;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;

/// The command of one step. `"*"` means the kernel's default for that step (nothing to
/// clean or build; for `exec`, [`default_exec`]); empty or absent skips the step.
pub fn resolve_step(step: &str, value: Option<&str>, workdir: &Path) -> Option<String> {
    match value.map(str::trim) {
        None | Some("") => None,
        Some("*") => match step {
            "exec" => default_exec(workdir).ok(),
            _ => None,
        },
        Some(cmd) => Some(cmd.to_string()),
    }
}

/// Scripts the default `exec` runs by their interpreter (`run IMAGE ./mygpucode.py`).
const INTERPRETERS: [(&str, &str); 2] = [("py", "python3"), ("sh", "bash")];

/// `'name'` for the shell.
fn quoted(name: &str) -> String {
    format!("'{}'", name.replace('\'', "'\\''"))
}

/// The default `exec`: `python3 main.py` when there is a `main.py`, else the one script in
/// the working directory (`.py`, `.sh`) by its interpreter; why not when there is none or
/// more than one.
pub fn default_exec(workdir: &Path) -> Result<String, String> {
    if workdir.join("main.py").is_file() {
        return Ok("python3 main.py".into());
    }
    let mut scripts: Vec<(String, &str)> = std::fs::read_dir(workdir)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let ext = Path::new(&name).extension()?.to_str()?.to_string();
                    let interp = INTERPRETERS.iter().find(|(x, _)| *x == ext)?.1;
                    (!name.starts_with('.')).then_some((name, interp))
                })
                .collect()
        })
        .unwrap_or_default();
    scripts.sort();
    match scripts.as_slice() {
        [(name, interp)] => Ok(format!("{interp} {}", quoted(name))),
        [] => Err("nothing to execute: no main.py and no script (.py, .sh) in /home/work; give the command with --exec".into()),
        many => Err(format!(
            "nothing to execute: no main.py and several scripts ({}); give the command with --exec",
            many.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// Runs one shell command, streaming its output; returns its exit code.
pub fn run_command(cmd: &str, cwd: &Path, emit: &mut dyn FnMut(&Event) -> bool) -> i32 {
    let child = Command::new("/bin/sh")
        .arg("-c")
        .arg(cmd)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            emit(&Event::stderr(format!("cannot run {cmd:?}: {e}\n")));
            return 127;
        }
    };
    let (tx, rx) = mpsc::channel::<Event>();
    let mut readers = Vec::new();
    if let Some(out) = child.stdout.take() {
        readers.push(spawn_reader(out, false, tx.clone()));
    }
    if let Some(err) = child.stderr.take() {
        readers.push(spawn_reader(err, true, tx.clone()));
    }
    drop(tx);
    for ev in rx {
        emit(&ev);
    }
    for r in readers {
        let _ = r.join();
    }
    match child.wait() {
        Ok(st) => exit_code(st),
        Err(_) => 1,
    }
}

pub fn exit_code(st: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    st.code().unwrap_or_else(|| 128 + st.signal().unwrap_or(0))
}

fn spawn_reader(
    mut r: impl Read + Send + 'static,
    is_err: bool,
    tx: mpsc::Sender<Event>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 65536];
        let mut pending: Vec<u8> = Vec::new();
        loop {
            let n = match r.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            pending.extend_from_slice(&buf[..n]);
            // Send whole UTF-8 sequences only.
            let valid = match std::str::from_utf8(&pending) {
                Ok(_) => pending.len(),
                Err(e) if e.error_len().is_none() => e.valid_up_to(),
                Err(_) => pending.len(),
            };
            let chunk: Vec<u8> = pending.drain(..valid).collect();
            let data = String::from_utf8_lossy(&chunk).into_owned();
            if !data.is_empty() {
                let ev = if is_err {
                    Event::Stderr { data }
                } else {
                    Event::Stdout { data }
                };
                if tx.send(ev).is_err() {
                    break;
                }
            }
        }
        if !pending.is_empty() {
            let data = String::from_utf8_lossy(&pending).into_owned();
            let _ = tx.send(if is_err {
                Event::Stderr { data }
            } else {
                Event::Stdout { data }
            });
        }
    })
}
