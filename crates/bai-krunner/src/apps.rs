//! Web apps started on request (Jupyter, JupyterLab, TensorBoard, an image's own from its
//! recipe) and kept while they run. The SSH server is [`crate::sshd`].

use crate::sshd::SSHD_PORT;
use std::collections::HashMap;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long an app may take to accept connections after it was started.
const APP_START_TIMEOUT: Duration = Duration::from_secs(90);

/// An app krunner knows how to start: its command and the port it serves on. Web apps are
/// served under `/app/<session id>/<name>/`, the path the manager's proxy uses in both of
/// its modes; they need no token of their own (the proxy's permit guards them).
pub fn app_command(name: &str, session_id: &str, workdir: &Path) -> Option<(Vec<String>, u16)> {
    let jupyter = |sub: &str, port: u16| {
        let args = vec![
            "jupyter".to_string(),
            sub.to_string(),
            "--no-browser".into(),
            "--ip=0.0.0.0".into(),
            format!("--port={port}"),
            "--port-retries=0".into(),
            format!("--ServerApp.base_url=/app/{session_id}/{name}/"),
            "--IdentityProvider.token=".into(),
            "--ServerApp.password=".into(),
            "--ServerApp.allow_origin=*".into(),
            "--ServerApp.allow_remote_access=True".into(),
            "--ServerApp.disable_check_xsrf=True".into(),
            format!("--ServerApp.root_dir={}", workdir.display()),
        ];
        (args, port)
    };
    // TensorBoard reads the logs under /home/work/logs (its page says so while it is empty).
    let tensorboard = || {
        let args = vec![
            "tensorboard".to_string(),
            format!("--logdir={}/logs", workdir.display()),
            "--host=0.0.0.0".into(),
            "--port=8093".into(),
            format!("--path_prefix=/app/{session_id}/{name}"),
            "--reload_interval=5".into(),
        ];
        (args, 8093)
    };
    match name {
        "jupyter" => Some(jupyter("notebook", 8091)),
        "jupyterlab" => Some(jupyter("lab", 8092)),
        "tensorboard" => Some(tensorboard()),
        "sshd" => Some((Vec::new(), SSHD_PORT)),
        "ttyd" => Some((Vec::new(), crate::terminal::TERMINAL_PORT)),
        _ => None,
    }
}

/// The `JUPYTER_PATH` that offers "Notebook for Backend.AI" (the image's own Python) to
/// Jupyter, its kernelspec written the first time it is asked for (two Python runs, a few
/// hundred milliseconds: [`prepare_notebook`] takes them off the first opening's path).
pub fn notebook_path() -> Option<String> {
    static PATH: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    PATH.get_or_init(write_notebook).clone()
}

/// Writes the Notebook kernel's spec in the background when the image has Jupyter.
pub fn prepare_notebook() {
    if crate::notebook::jupyters_python().is_ok() {
        std::thread::spawn(notebook_path);
    }
}

fn write_notebook() -> Option<String> {
    let python = crate::runtime::python();
    let python = crate::notebook::on_path(&python)
        .map(|f| f.display().to_string())
        .unwrap_or(python);
    let dir = std::env::temp_dir().join("bai-jupyter");
    match crate::notebook::write(&dir, &python) {
        Ok(d) => {
            let mut paths = vec![d];
            if let Some(old) = std::env::var_os("JUPYTER_PATH") {
                paths.extend(std::env::split_paths(&old));
            }
            std::env::join_paths(paths)
                .ok()
                .map(|j| j.to_string_lossy().into_owned())
        }
        Err(e) => {
            say!("krunner: {e}");
            None
        }
    }
}

/// An app's process: started by this runner, or pre-started in the pool kernel it was
/// ([`crate::zygote`]) and adopted by pid: waiting on its socket for the session until the
/// app is first opened, then serving.
enum App {
    Spawned(Child),
    Waiting(u32, PathBuf),
    Adopted(u32),
}

impl App {
    /// `Some(why)` once it ended.
    fn ended(&mut self) -> Option<String> {
        match self {
            App::Spawned(c) => match c.try_wait() {
                Ok(Some(st)) => Some(st.to_string()),
                _ => None,
            },
            // Not this process image's child: its state in /proc (a zombie has ended).
            App::Waiting(pid, _) | App::Adopted(pid) => {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
                let state = stat
                    .as_deref()
                    .and_then(|s| s.rsplit_once(')'))
                    .and_then(|(_, rest)| rest.split_whitespace().next());
                match state {
                    Some("Z") | Some("X") | None => Some("it ended".into()),
                    _ => None,
                }
            }
        }
    }
}

/// Apps started on demand, by name.
#[derive(Default)]
pub struct Running(Mutex<HashMap<String, App>>);

/// Where the pre-started Jupyter waits among the apps until one of those it can become
/// ([`crate::zygote::serves`]) is first opened.
const PRESTART: &str = "(pre-started jupyter)";

impl Running {
    /// Takes over the Jupyter pre-started before this runner began, waiting on `socket`.
    pub fn adopt(&self, pid: u32, socket: PathBuf) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(PRESTART.to_string(), App::Waiting(pid, socket));
    }

    /// Starts `name` unless it runs, then waits until its port accepts connections.
    pub fn start(&self, name: &str, workdir: &Path) -> Result<(), String> {
        let session = std::env::var("BAI_SESSION_ID").unwrap_or_default();
        // krunner's own apps, else the image's recipe for it (`crate::recipe`).
        let (cmd, port, recipe) = match app_command(name, &session, workdir) {
            Some((cmd, port)) => (cmd, port, None),
            None => {
                let ports = std::env::var(crate::recipe::PORTS_VAR).unwrap_or_default();
                let r = crate::recipe::Recipe::find(Path::new(crate::recipe::DIR), name, &ports)?;
                (Vec::new(), r.port, Some(r))
            }
        };
        if !cmd.is_empty() || recipe.as_ref().is_some_and(|r| r.spawns()) {
            let mut running = self.0.lock().unwrap_or_else(|p| p.into_inner());
            let mut alive = running.get_mut(name).is_some_and(|a| a.ended().is_none());
            // The first of the Jupyters opened becomes the pre-started one, if it still waits.
            if !alive
                && crate::zygote::serves(name)
                && let Some(mut waiting) = running.remove(PRESTART)
                && let App::Waiting(pid, socket) = &waiting
            {
                let (pid, socket) = (*pid, socket.clone());
                let mut env: Vec<(String, String)> = std::env::vars().collect();
                if let Some(path) = notebook_path() {
                    env.push(("JUPYTER_PATH".into(), path));
                }
                let ordered = match waiting.ended() {
                    Some(why) => Err(std::io::Error::other(why)),
                    None => crate::zygote::order(&socket, &cmd, &env, workdir),
                };
                match ordered {
                    Ok(()) => {
                        say!("krunner: started {name} from its pre-start (pid {pid})");
                        running.insert(name.to_string(), App::Adopted(pid));
                        alive = true;
                    }
                    Err(e) => {
                        say!("krunner: the pre-started Jupyter is gone ({e}); starting {name}")
                    }
                }
            }
            if !alive {
                let (cmd, env) = match &recipe {
                    Some(r) => {
                        let runtime = crate::runtime::python();
                        let l = r
                            .prepare(workdir, &runtime)
                            .map_err(|e| format!("cannot start {name}: {e}"))?;
                        (l.args, l.env)
                    }
                    None => (cmd, Vec::new()),
                };
                let mut command = Command::new(&cmd[0]);
                command
                    .args(&cmd[1..])
                    .envs(env)
                    .current_dir(workdir)
                    .stdin(Stdio::null());
                if name.starts_with("jupyter")
                    && let Some(path) = notebook_path()
                {
                    command.env("JUPYTER_PATH", path);
                }
                let child = command
                    .spawn()
                    .map_err(|e| format!("cannot start {name} ({}): {e}", cmd[0]))?;
                say!("krunner: started {name} (pid {})", child.id());
                running.insert(name.to_string(), App::Spawned(child));
            }
        }
        let deadline = Instant::now() + APP_START_TIMEOUT;
        loop {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(());
            }
            if let Some(c) = self
                .0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_mut(name)
                && let Some(st) = c.ended()
            {
                return Err(format!("{name} exited while starting: {st}"));
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "{name} did not answer on port {port} within {}s",
                    APP_START_TIMEOUT.as_secs()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jupyter_serves_under_the_proxy_path_without_a_token() {
        let (cmd, port) = app_command("jupyter", "s1", Path::new("/home/work")).unwrap();
        assert_eq!(port, 8091);
        assert!(cmd.contains(&"--ServerApp.base_url=/app/s1/jupyter/".to_string()));
        assert!(cmd.contains(&"--IdentityProvider.token=".to_string()));
        let (cmd, port) = app_command("tensorboard", "s1", Path::new("/home/work")).unwrap();
        assert_eq!(port, 8093);
        assert!(cmd.contains(&"--path_prefix=/app/s1/tensorboard".to_string()));
        assert!(cmd.contains(&"--logdir=/home/work/logs".to_string()));
        assert!(app_command("rm -rf", "s1", Path::new("/")).is_none());
        let e = Running::default()
            .start("nosuch", Path::new("/"))
            .unwrap_err();
        assert!(e.contains("does not know"), "{e}");
    }
}
