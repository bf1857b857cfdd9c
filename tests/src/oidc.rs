//! A real OpenID provider for the OIDC login tests (tests/tests/oidc.rs): the certified
//! `oidc-provider` npm package (tests/oidc-provider/server.mjs, installed with `npm ci` when
//! missing), and a browser of our own over HTTP (one cookie jar, redirects followed by hand)
//! that goes through the provider's login and consent forms.

use crate::wait_until;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// `npm ci` in tests/oidc-provider once (skipped when its node_modules are there).
pub fn provider_dir() -> PathBuf {
    static READY: OnceLock<PathBuf> = OnceLock::new();
    READY
        .get_or_init(|| {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("oidc-provider");
            if !dir.join("node_modules/oidc-provider/package.json").exists() {
                let out = Command::new("npm")
                    .args(["ci", "--no-audit", "--no-fund"])
                    .current_dir(&dir)
                    .output()
                    .expect("npm (scripts/ensure-deps.sh installs node)");
                assert!(
                    out.status.success(),
                    "npm ci in {}: {}",
                    dir.display(),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            dir
        })
        .clone()
}

/// The OpenID provider on a loopback port; killed on drop.
pub struct Op {
    child: Child,
    pub port: u16,
    dir: tempfile::TempDir,
}

impl Op {
    /// Clients are `(id, secret, redirect URI)`; users `name → claims`.
    pub fn start(port: u16, kid: &str, clients: &[(&str, &str, &str)], users: &Value) -> Op {
        let dir = tempfile::Builder::new()
            .prefix("bai-op-")
            .tempdir()
            .unwrap();
        let clients: Vec<Value> = clients
            .iter()
            .map(|(id, secret, redirect)| {
                json!({"client_id": id, "client_secret": secret, "redirect_uris": [redirect],
                       "post_logout_redirect_uris": [redirect.replace("/server/oidc/callback", "/")],
                       // The provider's logout tells bai (Back-Channel Logout 1.0), with the
                       // provider session's sid (also put in the ID tokens then).
                       "backchannel_logout_uri":
                           redirect.replace("/server/oidc/callback", "/server/oidc/backchannel-logout"),
                       "backchannel_logout_session_required": true})
            })
            .collect();
        let users_file = dir.path().join("users.json");
        std::fs::write(&users_file, users.to_string()).unwrap();
        let conf = dir.path().join("config.json");
        std::fs::write(
            &conf,
            json!({"port": port, "kid": kid, "clients": clients, "users": users_file}).to_string(),
        )
        .unwrap();
        let log = std::fs::File::create(dir.path().join("op.log")).unwrap();
        let child = Command::new("node")
            .arg(provider_dir().join("server.mjs"))
            .arg(&conf)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("node (scripts/ensure-deps.sh installs it)");
        let mut op = Op { child, port, dir };
        // Until it listens or ends (node starts slowly on a busy machine: a generous limit).
        let up = wait_until(Duration::from_secs(180), || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
                || op.child.try_wait().ok().flatten().is_some()
        });
        assert!(up, "the provider did not listen: {}", op.log());
        assert!(op.child.try_wait().unwrap().is_none(), "{}", op.log());
        op
    }

    pub fn issuer(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("op.log")).unwrap_or_default()
    }

    /// The provider's directory changes: new claims for its users.
    pub fn set_users(&self, users: &Value) {
        std::fs::write(self.dir.path().join("users.json"), users.to_string()).unwrap();
    }
}

impl Drop for Op {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One answer as the browser saw it.
pub struct Page {
    pub status: u16,
    pub location: Option<String>,
    pub body: String,
}

/// A browser: one cookie jar, redirects followed by hand.
pub struct Browser {
    rt: tokio::runtime::Runtime,
    http: reqwest::Client,
    jar: BTreeMap<String, String>,
}

impl Default for Browser {
    fn default() -> Browser {
        Browser::new()
    }
}

impl Browser {
    pub fn new() -> Browser {
        Browser {
            rt: tokio::runtime::Runtime::new().unwrap(),
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            jar: BTreeMap::new(),
        }
    }

    pub fn cookie(&self, name: &str) -> Option<&String> {
        self.jar.get(name)
    }

    /// Puts a cookie in the jar (one kept from another browser).
    pub fn set_cookie(&mut self, name: &str, value: &str) {
        self.jar.insert(name.to_string(), value.to_string());
    }

    pub fn send(
        &mut self,
        method: &str,
        url: &str,
        form: Option<&[(&str, &str)]>,
        json: bool,
    ) -> Page {
        let mut req = match method {
            "POST" => self.http.post(url),
            _ => self.http.get(url),
        }
        .header(
            "accept",
            if json {
                "application/json"
            } else {
                "text/html,*/*"
            },
        );
        if let Some(f) = form {
            req = req.form(f);
        }
        self.exchange(url, req)
    }

    /// `POST /server/login` at `endpoint` as the web UI sends it (a local or directory
    /// account): the status; the session's cookie is in the jar.
    pub fn web_login(&mut self, endpoint: &str, email: &str, password: &str) -> u16 {
        let url = format!("{endpoint}/server/login");
        let req = self
            .http
            .post(&url)
            .json(&json!({"username": email, "password": password}));
        self.exchange(&url, req).status
    }

    /// `POST /server/logout` at `endpoint` as the web UI sends it: the status.
    pub fn web_logout(&mut self, endpoint: &str) -> u16 {
        let url = format!("{endpoint}/server/logout");
        let req = self.http.post(&url).header("x-bai-web", "1");
        self.exchange(&url, req).status
    }

    /// Sends `req` (to `url`) with the jar's cookies; keeps the cookies it sets.
    fn exchange(&mut self, url: &str, mut req: reqwest::RequestBuilder) -> Page {
        let cookies: Vec<String> = self.jar.iter().map(|(k, v)| format!("{k}={v}")).collect();
        if !cookies.is_empty() {
            req = req.header("cookie", cookies.join("; "));
        }
        let r = self.rt.block_on(req.send()).expect("the request");
        for v in r.headers().get_all("set-cookie") {
            let v = v.to_str().unwrap();
            let pair = v.split(';').next().unwrap();
            let (name, value) = pair.split_once('=').unwrap();
            let lower = v.to_ascii_lowercase();
            if value.is_empty()
                || lower.contains("max-age=0")
                || lower.contains("expires=thu, 01 jan 1970")
            {
                self.jar.remove(name.trim());
            } else {
                self.jar.insert(name.trim().to_string(), value.to_string());
            }
        }
        let status = r.status().as_u16();
        let location = r
            .headers()
            .get("location")
            .map(|l| absolute(url, l.to_str().unwrap()));
        let body = self.rt.block_on(r.text()).unwrap_or_default();
        Page {
            status,
            location,
            body,
        }
    }

    pub fn get(&mut self, url: &str) -> Page {
        self.send("GET", url, None, false)
    }

    pub fn get_json(&mut self, url: &str) -> (u16, Value) {
        let p = self.send("GET", url, None, true);
        (
            p.status,
            serde_json::from_str(&p.body).unwrap_or(Value::Null),
        )
    }

    /// Through the provider as `user` (its login form and consent when it shows them), from
    /// `start` until the redirect to bai's callback: that URL, not yet visited.
    pub fn through_provider(&mut self, start: &str, user: &str, callback: &str) -> String {
        let mut url = start.to_string();
        for _ in 0..20 {
            if url.starts_with(callback) {
                return url;
            }
            let p = self.get(&url);
            if let Some(next) = p.location {
                url = next;
                continue;
            }
            assert_eq!(p.status, 200, "{url}: {}", p.body);
            let action = absolute(&url, &between(&p.body, "action=\"", "\""));
            let form: Vec<(&str, &str)> = if p.body.contains("name=\"prompt\" value=\"login\"") {
                vec![("prompt", "login"), ("login", user), ("password", "any")]
            } else if p.body.contains("name=\"prompt\" value=\"consent\"") {
                vec![("prompt", "consent")]
            } else {
                panic!("an unexpected page at {url}: {}", p.body)
            };
            let p = self.send("POST", &action, Some(&form), false);
            url = p
                .location
                .unwrap_or_else(|| panic!("no redirect after the form: {}", p.body));
        }
        panic!("the provider never sent the browser back to bai")
    }
}

/// Logs out at the provider as its logout page does (`end_session`, then "Yes, sign me
/// out"): the provider ends its session and sends its back-channel logouts before it answers.
pub fn provider_logout(b: &mut Browser, issuer: &str, client_id: &str) {
    let page = b.get(&format!("{issuer}/session/end?client_id={client_id}"));
    assert_eq!(page.status, 200, "{}", page.body);
    let action = absolute(issuer, &between(&page.body, "action=\"", "\""));
    let xsrf = between(&page.body, "name=\"xsrf\" value=\"", "\"");
    let done = b.send(
        "POST",
        &action,
        Some(&[("xsrf", xsrf.as_str()), ("logout", "yes")]),
        false,
    );
    assert!(
        matches!(done.status, 200 | 303),
        "{}: {}",
        done.status,
        done.body
    );
}

/// The text between `start` and `end` (the first of each), `&amp;` undone.
pub fn between(s: &str, start: &str, end: &str) -> String {
    let at = s.find(start).unwrap_or_else(|| panic!("no {start} in {s}")) + start.len();
    let rest = &s[at..];
    rest[..rest.find(end).unwrap()].replace("&amp;", "&")
}

/// `loc` (a Location, an action) made absolute against `base`.
pub fn absolute(base: &str, loc: &str) -> String {
    if loc.starts_with("http://") || loc.starts_with("https://") {
        return loc.to_string();
    }
    let origin_end = base[8..].find('/').map(|i| i + 8).unwrap_or(base.len());
    format!("{}{loc}", &base[..origin_end])
}
