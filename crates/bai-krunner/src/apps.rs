//! Intrinsic apps started with the kernel. For now: sshd on port 2200, run as the work user
//! (no privilege separation is needed to log in as oneself), with host keys made fresh for
//! this kernel and `/home/work/id_container`, a fresh key pair whose public half is authorized
//! unless the user's `.ssh` folder (mounted at /home/work/.ssh) brings its own
//! `authorized_keys`, or the platform gave the session its key (`BAI_AUTHORIZED_KEY`: SFTP). Its output goes to the container log.

use std::collections::HashMap;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Where sshd listens inside the container (the manager's app list says the same).
pub const SSHD_PORT: u16 = 2200;

fn keygen(path: &Path, comment: &str) -> Result<(), String> {
    if path.exists() {
        return Ok(()); // a restarted kernel keeps its keys
    }
    // Made in-process: two `ssh-keygen` runs were about 12 ms of every start.
    let k = bai_sshkey::ed25519(comment).map_err(|e| e.to_string())?;
    write_private(path, &k.private_key)?;
    // `<path>.pub`, as ssh-keygen names it.
    let mut public = path.as_os_str().to_owned();
    public.push(".pub");
    let public = PathBuf::from(public);
    std::fs::write(&public, &k.public_key)
        .map_err(|e| format!("cannot write {}: {e}", public.display()))
}

/// Writes a private key readable by its owner alone from the first byte on.
fn write_private(path: &Path, key: &str) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut f| f.write_all(key.as_bytes()))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode));
}

/// The sshd configuration: keys from `run`, users' keys from `.ssh/authorized_keys` or the
/// generated one; the kernel's environment for every login and command (`setenv`: sshd
/// starts them with its own); SFTP starting in `sftp_dir` where the session serves a folder.
fn sshd_config(run: &Path, setenv: &str, sftp_dir: Option<&str>) -> String {
    let r = run.display();
    let sftp = match sftp_dir {
        // `-d` takes the directory as one word: a folder's path has no blank (its name
        // is checked by the manager), and is quoted all the same.
        Some(d) => format!("internal-sftp -d \"{}\"", d.replace('"', "")),
        None => "internal-sftp".to_string(),
    };
    format!(
        "Port {SSHD_PORT}\n\
         HostKey {r}/ssh_host_ed25519_key\n\
         PidFile {r}/sshd.pid\n\
         AuthorizedKeysFile .ssh/authorized_keys {r}/authorized_keys {r}/cluster_authorized_keys\n\
         PasswordAuthentication no\n\
         KbdInteractiveAuthentication no\n\
         UsePAM no\n\
         StrictModes no\n\
         PrintMotd no\n\
         AcceptEnv LANG LC_*\n\
         {setenv}\
         Subsystem sftp {sftp}\n"
    )
}

/// Prepares keys and starts sshd in the background; an image without sshd simply has no
/// SSH app. Returns why it did not start, if it did not.
pub fn start_sshd(workdir: &Path, run: &Path, env: &[(String, String)]) -> Result<(), String> {
    let sshd = std::env::var("BAI_SSHD").unwrap_or_else(|_| "/usr/sbin/sshd".into());
    start_sshd_with(&sshd, workdir, run, env)
}

fn start_sshd_with(
    sshd: &str,
    workdir: &Path,
    run: &Path,
    env: &[(String, String)],
) -> Result<(), String> {
    if !Path::new(sshd).exists() {
        return Err(format!("{sshd} is not in this image; no SSH app"));
    }
    keygen(&run.join("ssh_host_ed25519_key"), "bai-session-host")?;
    let key = workdir.join("id_container");
    keygen(&key, "work@bai-session")?;
    chmod(&key, 0o600);
    let user_keys = workdir.join(".ssh/authorized_keys");
    let ours = run.join("authorized_keys");
    if let Ok(given) = std::env::var("BAI_AUTHORIZED_KEY")
        && !given.trim().is_empty()
    {
        // The key the platform made for this session (SFTP): it alone opens it.
        std::fs::write(&ours, format!("{}\n", given.trim()))
            .map_err(|e| format!("cannot write {}: {e}", ours.display()))?;
        chmod(&ours, 0o600);
    } else if user_keys.exists() {
        // The user's `.ssh` folder decides who may log in; only tidy its permissions.
        chmod(&workdir.join(".ssh"), 0o700);
        chmod(&user_keys, 0o600);
        let _ = std::fs::remove_file(&ours);
    } else {
        let public = std::fs::read(workdir.join("id_container.pub"))
            .map_err(|e| format!("cannot read id_container.pub: {e}"))?;
        std::fs::write(&ours, public)
            .map_err(|e| format!("cannot write {}: {e}", ours.display()))?;
        chmod(&ours, 0o600);
    }
    let cfg = run.join("sshd_config");
    let sftp_dir = std::env::var("BAI_SFTP_DIR")
        .ok()
        .filter(|d| d.starts_with('/'));
    let text = sshd_config(run, &crate::environ::sshd_setenv(env), sftp_dir.as_deref());
    std::fs::write(&cfg, text).map_err(|e| format!("cannot write sshd_config: {e}"))?;
    if sftp_dir.is_some() {
        // The scratch home around the folder ends with the session: nothing is uploaded there.
        chmod(workdir, 0o555);
    }
    let mut child = Command::new(sshd)
        .arg("-D")
        .arg("-e")
        .arg("-f")
        .arg(&cfg)
        .stdin(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {sshd}: {e}"))?;
    // Reap it when it ends (krunner is not PID 1).
    std::thread::spawn(move || {
        if let Ok(st) = child.wait() {
            say!("krunner: sshd exited: {st}");
        }
    });
    Ok(())
}

/// How long sshd may take to listen before the runner answers without it.
const SSHD_START_TIMEOUT: Duration = Duration::from_secs(30);

/// Waits until sshd accepts connections on its port (at most [`SSHD_START_TIMEOUT`]; it
/// says so when it gives up).
pub fn wait_sshd() {
    let deadline = Instant::now() + SSHD_START_TIMEOUT;
    while TcpStream::connect(("127.0.0.1", SSHD_PORT)).is_err() {
        if Instant::now() > deadline {
            say!(
                "krunner: sshd did not listen on port {SSHD_PORT} within {}s",
                SSHD_START_TIMEOUT.as_secs()
            );
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

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
    fn config_points_at_the_kernels_own_keys() {
        let c = sshd_config(Path::new("/opt/bai/run"), "", None);
        assert!(c.contains("Port 2200\n"));
        assert!(c.contains("HostKey /opt/bai/run/ssh_host_ed25519_key\n"));
        assert!(
            c.contains("AuthorizedKeysFile .ssh/authorized_keys /opt/bai/run/authorized_keys /opt/bai/run/cluster_authorized_keys\n")
        );
        assert!(c.contains("PasswordAuthentication no\n"));
        assert!(c.contains("Subsystem sftp internal-sftp\n"));
    }

    #[test]
    fn sshd_carries_the_kernels_environment_and_sftp_starts_in_the_folder() {
        let env = [("PATH".to_string(), "/opt/x/bin:/usr/bin".to_string())];
        let setenv = crate::environ::sshd_setenv(&env);
        let c = sshd_config(Path::new("/opt/bai/run"), &setenv, Some("/home/work/data"));
        assert!(c.contains("\nSetEnv PATH=\"/opt/x/bin:/usr/bin\"\n"), "{c}");
        assert!(
            c.ends_with("Subsystem sftp internal-sftp -d \"/home/work/data\"\n"),
            "{c}"
        );
    }

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

    #[test]
    fn a_missing_sshd_means_no_ssh_app() {
        let dir = std::env::temp_dir();
        let e = start_sshd_with("/nonexistent/sshd", &dir, &dir, &[]).unwrap_err();
        assert!(e.contains("not in this image"), "{e}");
    }

    /// The keys sshd and the user get: the private half readable by its owner alone, the
    /// public line beside it as `<name>.pub`, and a restarted kernel keeps both.
    #[test]
    fn keys_are_made_once_private_and_beside_their_public_line() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("krunner-keys-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let key = dir.join("id_container");
        keygen(&key, "work@bai-session").unwrap();
        let private = std::fs::read_to_string(&key).unwrap();
        assert!(private.starts_with("-----BEGIN OPENSSH PRIVATE KEY-----\n"));
        let mode = std::fs::metadata(&key).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let public = std::fs::read_to_string(dir.join("id_container.pub")).unwrap();
        assert!(public.starts_with("ssh-ed25519 "), "{public}");
        assert!(public.trim_end().ends_with(" work@bai-session"), "{public}");
        keygen(&key, "work@bai-session").unwrap();
        assert_eq!(std::fs::read_to_string(&key).unwrap(), private);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
