//! The kernel's SSH server on port 2200, run as the work user (no privilege separation is
//! needed to log in as oneself): the image's own OpenSSH where it has `/usr/sbin/sshd`, with
//! a host key made fresh for this kernel, else bai's static Dropbear mounted beside the
//! runner (any image: busybox, Alpine, one made for Backend.AI). Who may log in: the key
//! pair made as `/home/work/id_container` unless the user's `.ssh` folder brings its own
//! `authorized_keys`, or the key the platform gave the session (`BAI_AUTHORIZED_KEY`: SFTP).
//! Its output goes to the container log.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
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
    match server(Path::new(&sshd).exists(), Path::new(DROPBEAR).is_file()) {
        Server::OpenSsh => start_sshd_with(&sshd, workdir, run, env),
        Server::Dropbear => start_dropbear(workdir, run, env),
        Server::None => Err(format!("{sshd} is not in this image; no SSH app")),
    }
}

/// The SSH server bai brings for images without their own (the agent mounts it beside the
/// runner where it has one: `scripts/build-sshd.sh`).
const DROPBEAR: &str = "/opt/bai/bin/dropbear";

#[derive(Debug, PartialEq, Eq)]
enum Server {
    OpenSsh,
    Dropbear,
    None,
}

/// The image's own sshd where it has one, else bai's.
fn server(image_has_sshd: bool, have_dropbear: bool) -> Server {
    match (image_has_sshd, have_dropbear) {
        (true, _) => Server::OpenSsh,
        (false, true) => Server::Dropbear,
        (false, false) => Server::None,
    }
}

/// Who may log in: the user's own `.ssh/authorized_keys` where the home has one, else the
/// session's key (`id_container`, made here) or the one the platform gave (`BAI_AUTHORIZED_KEY`),
/// in `run/authorized_keys`; a cluster's key in `run/cluster_authorized_keys` either way.
/// Both servers read these files (Dropbear: bai's patch).
fn authorize(workdir: &Path, run: &Path) -> Result<(), String> {
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
    Ok(())
}

/// Dropbear (bai's, static): host keys made at the first connection in the run directory
/// (its build's paths), public keys only, the kernel's environment passed on to every login
/// and command (`-e`; the patch keeps its `PATH`), sftp by bai's static sftp-server.
fn start_dropbear(workdir: &Path, run: &Path, env: &[(String, String)]) -> Result<(), String> {
    authorize(workdir, run)?;
    let child = Command::new(DROPBEAR)
        .args(dropbear_args(run))
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .current_dir(workdir)
        .stdin(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {DROPBEAR}: {e}"))?;
    reap(child, "dropbear");
    Ok(())
}

fn dropbear_args(run: &Path) -> Vec<String> {
    vec![
        "-F".into(), // in the foreground: krunner reaps it
        "-E".into(), // its log to the container's
        "-R".into(), // host keys made when first needed
        "-e".into(), // the kernel's environment for every session
        "-p".into(),
        SSHD_PORT.to_string(),
        "-P".into(),
        run.join("dropbear.pid").display().to_string(),
    ]
}

fn start_sshd_with(
    sshd: &str,
    workdir: &Path,
    run: &Path,
    env: &[(String, String)],
) -> Result<(), String> {
    keygen(&run.join("ssh_host_ed25519_key"), "bai-session-host")?;
    authorize(workdir, run)?;
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
    let child = Command::new(sshd)
        .arg("-D")
        .arg("-e")
        .arg("-f")
        .arg(&cfg)
        .stdin(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {sshd}: {e}"))?;
    reap(child, "sshd");
    Ok(())
}

/// Reaps the server when it ends (krunner is not PID 1), saying so in the log.
fn reap(mut child: std::process::Child, name: &'static str) {
    std::thread::spawn(move || {
        if let Ok(st) = child.wait() {
            say!("krunner: {name} exited: {st}");
        }
    });
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

    #[test]
    fn the_images_sshd_first_else_bais_dropbear() {
        assert_eq!(server(true, true), Server::OpenSsh);
        assert_eq!(server(true, false), Server::OpenSsh);
        assert_eq!(server(false, true), Server::Dropbear);
        assert_eq!(server(false, false), Server::None);
        let a = dropbear_args(Path::new("/opt/bai/run"));
        assert_eq!(
            a.join(" "),
            "-F -E -R -e -p 2200 -P /opt/bai/run/dropbear.pid"
        );
    }
}
