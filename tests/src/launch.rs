//! Starting one `baid up` for a test: spawned, its output copied into its data dir, and
//! waited for until it is up (or stands by); an early end is returned with what it printed.

use crate::{BAID_BINARY, Server, bin};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Every line `r` gives until it ends, bytes that are not UTF-8 replaced: a reader that
/// stopped early would leave baid writing into a pipe nobody reads (and then into a closed
/// one, which ends it).
fn lines_of(r: impl std::io::Read) -> impl Iterator<Item = String> {
    BufReader::new(r)
        .split(b'\n')
        .map_while(Result::ok)
        .map(|l| {
            String::from_utf8_lossy(&l)
                .trim_end_matches('\r')
                .to_string()
        })
}

/// Writes every line of `r` into a new file at `path` (a file that cannot be made is
/// skipped, the reading goes on) and hands it to `each`.
fn copy_lines(r: impl std::io::Read, path: &std::path::Path, mut each: impl FnMut(String)) {
    use std::io::Write;
    let mut f = std::fs::File::create(path).ok();
    for line in lines_of(r) {
        if let Some(f) = f.as_mut() {
            let _ = writeln!(f, "{line}");
        }
        each(line);
    }
}

/// What starting baid waits for.
#[derive(Clone, Copy)]
pub(crate) enum Ready<'a> {
    /// It leads and serves ("Stop with Ctrl-C").
    Up,
    /// It stands by for the manager of this server ("bai stands by").
    StandingBy(&'a Server),
}

/// A baid that is up, before its accounts are read.
pub(crate) struct Started {
    pub(crate) child: Child,
    pub(crate) log_thread: std::thread::JoinHandle<()>,
    pub(crate) agent_id: String,
    pub(crate) agent_listen: Option<std::net::SocketAddr>,
}

/// Why a start of baid failed: what it printed, and whether its port was taken.
pub(crate) struct Early {
    pub(crate) text: String,
    pub(crate) port_taken: bool,
}

impl Early {
    /// What `data_dir`'s baid printed once `log_thread` copied all of it (baid ended).
    fn of(
        data_dir: &tempfile::TempDir,
        log_thread: &std::thread::JoinHandle<()>,
        what: &str,
    ) -> Early {
        for _ in 0..50 {
            if log_thread.is_finished() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let read = |f: &str| std::fs::read_to_string(data_dir.path().join(f)).unwrap_or_default();
        let log = read("baid.log");
        Early {
            port_taken: log.contains("cannot listen on") && log.contains("in use"),
            text: format!("{what}:\n{}\n{log}", read("baid.out")),
        }
    }
}

/// One start of baid: spawned, and waited for until it is up as `ready` says.
pub(crate) fn spawn_until(
    data_dir: &tempfile::TempDir,
    env: &[(&str, &str)],
    port: u16,
    ready: Ready<'_>,
) -> Result<Started, Early> {
    // A test may run baid from a copy of its own (BAID_BINARY, not passed on).
    let exe = env
        .iter()
        .find(|(k, _)| *k == BAID_BINARY)
        .map_or_else(|| bin("baid"), |(_, v)| PathBuf::from(v));
    let mut cmd = Command::new(exe);
    cmd.arg("up")
        .env("BAI_DATA_DIR", data_dir.path())
        .env("BAI_LISTEN", format!("127.0.0.1:{port}"))
        .env("BAI_KRUNNER", bin("bai-krunner"))
        .env("RUST_LOG", "info,bollard=warn")
        // Tests run side by side: each manager takes any free port for agents.
        .env("BAI_AGENT_LISTEN", "127.0.0.1:0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env.iter().filter(|(k, _)| *k != BAID_BINARY) {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn baid");
    let stdout = child.stdout.take().expect("stdout");
    let stderr = child.stderr.take().expect("stderr");
    let log_path = data_dir.path().join("baid.log");
    let log_thread = std::thread::spawn(move || copy_lines(stderr, &log_path, |_| {}));
    let (tx, rx) = std::sync::mpsc::channel();
    let out_path = data_dir.path().join("baid.out");
    std::thread::spawn(move || {
        copy_lines(stdout, &out_path, |line| {
            let _ = tx.send(line);
        })
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut agent_id = String::new();
    let mut agent_listen = None;
    let mut up = false;
    while Instant::now() < deadline {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(line) => {
                if let Some(rest) = line.trim().strip_prefix("agent        : ") {
                    agent_id = rest.split_whitespace().next().unwrap_or("").to_string();
                }
                if let Some(rest) = line.trim().strip_prefix("agents join  : ") {
                    agent_listen = rest.split_whitespace().next().and_then(|a| a.parse().ok());
                }
                let done = match ready {
                    Ready::Up => line.starts_with("Stop with Ctrl-C"),
                    Ready::StandingBy(_) => line.starts_with("bai stands by"),
                };
                if done {
                    up = true;
                    break;
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if let Ok(Some(status)) = child.try_wait() {
                    return Err(Early::of(
                        data_dir,
                        &log_thread,
                        &format!("baid exited early ({status})"),
                    ));
                }
            }
            // Its output closed: it ended (or is ending) before it was up.
            Err(_) => {
                // Up to 10 s for its exit status.
                let mut status = None;
                for _ in 0..100 {
                    status = child.try_wait().ok().flatten();
                    if status.is_some() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
                let _ = child.kill();
                let _ = child.wait();
                return Err(Early::of(
                    data_dir,
                    &log_thread,
                    &format!("baid closed its output before it was up ({status:?})"),
                ));
            }
        }
    }
    if !up {
        let _ = child.kill();
        let _ = child.wait();
        return Err(Early::of(
            data_dir,
            &log_thread,
            "baid did not come up within 60s",
        ));
    }
    Ok(Started {
        child,
        log_thread,
        agent_id,
        agent_listen,
    })
}
