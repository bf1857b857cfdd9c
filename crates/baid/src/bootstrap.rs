//! First start: the superadmin and two normal users, their keypairs and env files; image
//! aliases from the agent's images.

use anyhow::{Context, Result};
use bai_store::{Store, UserRow};
use std::io::Write;
use std::path::{Path, PathBuf};

pub struct Account {
    pub email: String,
    pub role: String,
    pub access_key: String,
    pub secret_key: String,
    pub env_file: PathBuf,
    /// The web UI password made at first start (kept in `web-login.txt`, mode 0600).
    pub password: Option<String>,
}

pub struct Accounts {
    pub created_now: bool,
    pub list: Vec<Account>,
}

impl Accounts {
    pub fn print(&self) {
        for a in &self.list {
            println!("  {:<12} : {} ({})", a.role, a.email, a.access_key);
            if self.created_now {
                println!("                 secret key {}", a.secret_key);
            }
            println!("                 . {}", a.env_file.display());
            if let Some(p) = &a.password {
                println!("                 web password {p}");
            }
        }
    }
}

fn write_env_file(
    path: &Path,
    endpoint: &str,
    trust: Option<&Path>,
    ak: &str,
    sk: &str,
) -> Result<()> {
    let mut text = format!(
        "export BACKEND_ENDPOINT={endpoint} BACKEND_ENDPOINT_TYPE=api BACKEND_ACCESS_KEY={ak} BACKEND_SECRET_KEY={sk}\n"
    );
    // A self-signed certificate: `bai` trusts it by this variable.
    if let Some(cert) = trust {
        text.push_str(&format!("export BAI_CA_CERT={}\n", cert.display()));
    }
    write_private(path, &text)
}

/// Writes `text` to `path`, readable by its owner only.
pub fn write_private(path: &Path, text: &str) -> Result<()> {
    let mut f = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .mode(0o600)
            .open(path)
            .with_context(|| format!("cannot write {}", path.display()))?
    };
    f.write_all(text.as_bytes())?;
    Ok(())
}

/// Creates the two accounts on first start and (re)writes their env files, so that a
/// changed listen address is reflected. `trust`: the self-signed certificate clients need.
pub fn ensure_accounts(
    store: &Store,
    data_dir: &Path,
    endpoint: &str,
    trust: Option<&Path>,
) -> Result<Accounts> {
    let specs = [
        ("admin@bai.local", "superadmin", true, "env-admin.sh"),
        ("user@bai.local", "user", false, "env-user.sh"),
        // A second user: sharing, privacy and quotas are about more than one person.
        ("user2@bai.local", "user", false, "env-user2.sh"),
    ];
    let created_now = store.user_count()? == 0;
    if created_now {
        default_idle_timeout(store)?;
    }
    let mut list = Vec::new();
    for (email, role, admin, file) in specs {
        let kp = match store.keypair_by_email(email)? {
            Some(kp) => kp,
            None => {
                let (ak, sk) = bai_core::sign::new_keypair();
                store.create_user_with_keypair(
                    &UserRow {
                        id: uuid_like(),
                        email: email.into(),
                        role: role.into(),
                    },
                    &ak,
                    &sk,
                    admin,
                )?;
                store
                    .keypair(&ak)?
                    .context("keypair vanished right after it was created")?
            }
        };
        let env_file = data_dir.join(file);
        write_env_file(&env_file, endpoint, trust, &kp.access_key, &kp.secret_key)?;
        let password = web_password(store, data_dir, email)?;
        list.push(Account {
            email: email.into(),
            role: role.into(),
            access_key: kp.access_key,
            secret_key: kp.secret_key,
            env_file,
            password,
        });
    }
    Ok(Accounts { created_now, list })
}

/// Sessions that nobody uses for this long are reclaimed unless an administrator changes the
/// default policy (seeds, "Terminating or cancelling sessions": 30 minutes by default).
pub const DEFAULT_IDLE_TIMEOUT_SECS: i64 = 30 * 60;

/// Gives the default resource policy its network idle timeout on a new installation.
fn default_idle_timeout(store: &Store) -> Result<()> {
    for mut p in store.policies()? {
        if p.name == "default" && p.idle_timeout == 0 {
            p.idle_timeout = DEFAULT_IDLE_TIMEOUT_SECS;
            store.put_policy(&p)?;
        }
    }
    Ok(())
}

fn uuid_like() -> String {
    let b: [u8; 16] = rand::random();
    let h = hex::encode(b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// The kernel image every agent offers (dummy agents claim it too).
pub const PYTHON_IMAGE: &str = "bai/python:3.11-bookworm";

/// The web password of `email`: made (and hashed into the store) the first time, and kept in
/// `web-login.txt` (`EMAIL PASSWORD` lines, mode 0600) so every start can print it.
fn web_password(store: &Store, data_dir: &Path, email: &str) -> Result<Option<String>> {
    let file = data_dir.join("web-login.txt");
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let known = text
        .lines()
        .filter_map(|l| l.split_once(' '))
        .find(|(e, _)| *e == email)
        .map(|(_, p)| p.trim().to_string());
    if store.login_of(email)?.is_some() {
        return Ok(known);
    }
    let password = bai_core::sign::random_string(
        16,
        b"abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789",
    );
    let hash = bai_manager::web::hash_password(&password).map_err(|e| anyhow::anyhow!(e))?;
    store.set_password_hash(email, &hash)?;
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| !l.starts_with(&format!("{email} ")))
        .map(str::to_string)
        .collect();
    lines.push(format!("{email} {password}"));
    write_private(&file, &(lines.join("\n") + "\n"))?;
    Ok(Some(password))
}
