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
    /// Being started by an open of it (its recipe's steps, its spawn).
    Starting,
    Spawned(Child),
    Waiting(u32, PathBuf),
    Adopted(u32),
}

impl App {
    /// `Some(why)` once it ended.
    fn ended(&mut self) -> Option<String> {
        match self {
            App::Starting => None,
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
        self.lock()
            .insert(PRESTART.to_string(), App::Waiting(pid, socket));
    }

    /// Starts `name` unless it runs, then waits until its port accepts connections.
    pub fn start(&self, name: &str, workdir: &Path) -> Result<(), String> {
        let ports = std::env::var(crate::recipe::PORTS_VAR).unwrap_or_default();
        self.start_from(Path::new(crate::recipe::DIR), &ports, name, workdir)
    }

    /// [`Running::start`] with the image's recipes in `recipes` and the session's apps
    /// `ports` (a [`crate::recipe::PORTS_VAR`] value).
    fn start_from(
        &self,
        recipes: &Path,
        ports: &str,
        name: &str,
        workdir: &Path,
    ) -> Result<(), String> {
        let session = std::env::var("BAI_SESSION_ID").unwrap_or_default();
        // krunner's own apps, else the image's recipe for it (`crate::recipe`).
        let (cmd, port, recipe) = match app_command(name, &session, workdir) {
            Some((cmd, port)) => (cmd, port, None),
            None => {
                let r = crate::recipe::Recipe::find(recipes, name, ports)?;
                (Vec::new(), r.port, Some(r))
            }
        };
        let spawns = !cmd.is_empty() || recipe.as_ref().is_some_and(|r| r.spawns());
        if spawns && self.claim(name, &cmd, workdir) {
            // The recipe's steps and the spawn run outside the lock: the app's slot says
            // Starting meanwhile, so a second open of it waits for this start, and other
            // apps are not held up by its steps.
            let launched = launch(name, cmd, recipe.as_ref(), workdir);
            let mut running = self.lock();
            match launched {
                Ok(child) => {
                    running.insert(name.to_string(), App::Spawned(child));
                }
                Err(e) => {
                    running.remove(name);
                    return Err(e);
                }
            }
        }
        let deadline = Instant::now() + APP_START_TIMEOUT;
        loop {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(());
            }
            match self.lock().get_mut(name).map(App::ended) {
                Some(Some(st)) => return Err(format!("{name} exited while starting: {st}")),
                // Its start, by another open of it, failed (that open said why).
                None if spawns => return Err(format!("{name} could not be started")),
                _ => {}
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

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, App>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether this open is the one to start `name` (its slot then says Starting): not when
    /// it runs or is being started, nor when the pre-started Jupyter became it.
    fn claim(&self, name: &str, cmd: &[String], workdir: &Path) -> bool {
        let mut running = self.lock();
        if running.get_mut(name).is_some_and(|a| a.ended().is_none()) {
            return false;
        }
        // The first of the Jupyters opened becomes the pre-started one, if it still waits.
        if crate::zygote::serves(name)
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
                None => crate::zygote::order(&socket, cmd, &env, workdir),
            };
            match ordered {
                Ok(()) => {
                    say!("krunner: started {name} from its pre-start (pid {pid})");
                    running.insert(name.to_string(), App::Adopted(pid));
                    return false;
                }
                Err(e) => say!("krunner: the pre-started Jupyter is gone ({e}); starting {name}"),
            }
        }
        running.insert(name.to_string(), App::Starting);
        true
    }
}

/// Runs the recipe's steps, if it is one, and spawns the app (`cmd` for krunner's own).
fn launch(
    name: &str,
    cmd: Vec<String>,
    recipe: Option<&crate::recipe::Recipe>,
    workdir: &Path,
) -> Result<Child, String> {
    let (cmd, env) = match recipe {
        Some(r) => {
            let runtime = crate::runtime::python();
            let l = r
                .prepare(workdir, &runtime)
                .map_err(|e| format!("cannot start {name}: {e}"))?;
            (l.args, l.env)
        }
        None => (cmd, Vec::new()),
    };
    let Some(program) = cmd.first() else {
        return Err(format!("cannot start {name}: its command is empty"));
    };
    let mut command = Command::new(program);
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
        .map_err(|e| format!("cannot start {name} ({program}): {e}"))?;
    say!("krunner: started {name} (pid {})", child.id());
    Ok(child)
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

    fn free_port() -> u16 {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    }

    /// Waits (at most two minutes, a failure's bound) for `f`.
    fn until(what: &str, f: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(120);
        while !f() {
            assert!(Instant::now() < deadline, "never: {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// An app whose recipe's steps wait (here: until the test lets them go) holds up neither
    /// another app's start nor a second open of itself, which waits for the same process.
    #[test]
    fn an_apps_steps_hold_up_neither_another_app_nor_a_second_open_of_it() {
        use std::sync::{Arc, mpsc};
        let dir = tempfile::tempdir().unwrap();
        let (began, go) = (dir.path().join("began"), dir.path().join("go"));
        let serve = r#"["python3", "-m", "http.server", "--bind", "127.0.0.1", "{ports[0]}"]"#;
        // (The loop ends with the test's directory too, should the test fail first.)
        let steps = format!(
            "echo once >> {b}; while [ ! -e {g} ] && [ -d {d} ]; do sleep 0.02; done",
            b = began.display(),
            g = go.display(),
            d = dir.path().display()
        );
        std::fs::write(
            dir.path().join("slow.json"),
            format!(
                r#"{{"prestart": [{{"action": "run_command", "args": {{"command": ["sh", "-c", {}]}}}}],
                    "command": {serve}}}"#,
                serde_json::to_string(&steps).unwrap()
            ),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("quick.json"),
            format!(r#"{{"command": {serve}}}"#),
        )
        .unwrap();
        let ports = format!("slow:http:{},quick:http:{}", free_port(), free_port());
        let apps = Arc::new(Running::default());
        let _stop = Stop(apps.clone(), go.clone());
        let (tx, rx) = mpsc::channel();
        let open = |name: &'static str| {
            let (apps, tx, ports) = (apps.clone(), tx.clone(), ports.clone());
            let dir = dir.path().to_path_buf();
            std::thread::spawn(move || {
                let r = apps.start_from(&dir, &ports, name, &dir);
                let _ = tx.send((name, r));
            });
        };
        open("slow");
        until("the slow app's steps began", || began.exists());
        open("slow");
        open("quick");
        let wait = || rx.recv_timeout(Duration::from_secs(120)).unwrap();
        assert_eq!(wait(), ("quick", Ok(())), "held up by the other's steps");
        assert!(!go.exists());
        std::fs::write(&go, "").unwrap();
        assert_eq!(wait(), ("slow", Ok(())));
        assert_eq!(wait(), ("slow", Ok(())));
        assert_eq!(std::fs::read_to_string(&began).unwrap(), "once\n");
    }

    /// Lets waiting steps go (the file `.1`) and ends the apps a test started, also when
    /// it fails.
    struct Stop(std::sync::Arc<Running>, PathBuf);

    impl Drop for Stop {
        fn drop(&mut self) {
            let _ = std::fs::write(&self.1, "");
            for app in self.0.lock().values_mut() {
                if let App::Spawned(c) = app {
                    let _ = c.kill();
                    let _ = c.wait();
                }
            }
        }
    }
}
