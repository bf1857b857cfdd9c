//! Login through Active Directory (issue 60), against a real AD domain controller: Debian's
//! Samba 4 (`samba`, `samba-ad-provision`; `scripts/ensure-deps.sh --test` installs them),
//! provisioned for each run in a temp dir and serving LDAP only, on a loopback address of its
//! own. It speaks AD's dialect where OpenLDAP cannot: `sAMAccountName` and `objectCategory`,
//! upper-case DNs, `userAccountControl`, AD's bind errors (`data 533`: disabled), search
//! references in every subtree search of the domain, and the transitive matching rule
//! LDAP_MATCHING_RULE_IN_CHAIN that `--ldap-active-directory` asks nested groups with.

use super::calls::{account_of, gql, login, one_error_line, role_and_projects};
use bai_e2e::{Server, wait_until};
use serde_json::json;
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The DC's address: a loopback address no other test uses, as AD's ports are fixed (389).
const AD_ADDR: &str = "127.0.38.9";
const BASE: &str = "DC=corp,DC=bai,DC=test";
const ADMIN_PW: &str = "Adm1n-pass!";

fn dn(cn: &str) -> String {
    format!("CN={cn},CN=Users,{BASE}")
}

/// A Samba AD DC with its domain in a temp dir; its processes killed on drop.
struct SambaDc {
    child: Child,
    dir: tempfile::TempDir,
}

fn samba_tool(dir: &Path, args: &[&str]) {
    let out = Command::new("samba-tool")
        .args(args)
        .arg("-H")
        .arg(dir.join("private/sam.ldb"))
        .arg("-s")
        .arg(dir.join("etc/smb.conf"))
        .output()
        .expect("samba-tool: run scripts/ensure-deps.sh --test (Debian's samba)");
    assert!(
        out.status.success(),
        "samba-tool {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl SambaDc {
    /// Provisions the domain CORP (corp.bai.test) and fills it, then starts the DC:
    /// - `svc-bai`, the service account bai searches with;
    /// - ada in `lab-a`; `lab-a` in `faculty` and in `Vision Lab`; `faculty` in `bai-admins`
    ///   (ada is an administrator two groups deep, and in the project `vision` one deep);
    /// - carol directly in `Vision Lab`; bob, disabled.
    fn start() -> SambaDc {
        assert!(
            TcpStream::connect((AD_ADDR, 389)).is_err(),
            "something already listens on {AD_ADDR}:389"
        );
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path();
        std::fs::create_dir_all(d.join("run")).unwrap();
        let out = Command::new("samba-tool")
            .args([
                "domain",
                "provision",
                "--realm=CORP.BAI.TEST",
                "--domain=CORP",
                "--server-role=dc",
                "--dns-backend=NONE",
                "--use-rfc2307",
            ])
            .arg(format!("--adminpass={ADMIN_PW}"))
            .arg(format!("--targetdir={}", d.display()))
            .output()
            .expect("samba-tool: run scripts/ensure-deps.sh --test (Debian's samba)");
        assert!(
            out.status.success(),
            "provision: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // LDAP only, on our address; simple binds on plain LDAP (a site would use ldaps or
        // StartTLS, as docs/AUTH.md says); logs and pids in the temp dir.
        let conf = d.join("etc/smb.conf");
        let text = std::fs::read_to_string(&conf).unwrap();
        let ours = format!(
            "[global]\n\tinterfaces = {AD_ADDR}/8\n\tbind interfaces only = yes\n\
             \tserver services = ldap\n\tldap server require strong auth = no\n\
             \tpid directory = {run}\n\tlog file = {log}\n\tdns proxy = no\n",
            run = d.join("run").display(),
            log = d.join("log.%m").display()
        );
        let kept: Vec<&str> = text
            .lines()
            .filter(|l| {
                let k = l.trim_start();
                !(k.starts_with("interfaces")
                    || k.starts_with("bind interfaces")
                    || k.starts_with("server services")
                    || k.starts_with("log file")
                    || k.starts_with("pid directory"))
            })
            .collect();
        let text = kept.join("\n").replacen("[global]\n", &ours, 1);
        std::fs::write(&conf, text).unwrap();

        for (user, pw, mail) in [
            ("svc-bai", "Svc-pass-1", None),
            ("ada", "Ada-pass-1", Some("ada@corp.bai.test")),
            ("bob", "Bob-pass-1", Some("bob@corp.bai.test")),
            ("carol", "Carol-pass-1", Some("carol@corp.bai.test")),
        ] {
            let mut args = vec!["user", "create", user, pw];
            let mail_arg = mail.map(|m| format!("--mail-address={m}"));
            if let Some(m) = &mail_arg {
                args.push(m);
            }
            samba_tool(d, &args);
        }
        for g in ["lab-a", "faculty", "bai-admins", "Vision Lab"] {
            samba_tool(d, &["group", "add", g]);
        }
        for (group, member) in [
            ("lab-a", "ada"),
            ("faculty", "lab-a"),
            ("bai-admins", "faculty"),
            ("Vision Lab", "lab-a"),
            ("Vision Lab", "carol"),
        ] {
            samba_tool(d, &["group", "addmembers", group, member]);
        }
        samba_tool(d, &["user", "disable", "bob"]);

        let child = Command::new("samba")
            .process_group(0)
            .arg("-i")
            .arg("-s")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("samba");
        let mut dc = SambaDc { child, dir };
        let up = wait_until(Duration::from_secs(60), || {
            dc.search("svc-bai", "Svc-pass-1", "(sAMAccountName=svc-bai)")
                .is_some()
        });
        if !up {
            let log = dc.log();
            dc.stop();
            panic!("the AD DC did not answer: {log}");
        }
        dc
    }

    fn url(&self) -> String {
        format!("ldap://{AD_ADDR}:389")
    }

    /// `ldapsearch` as `user` (by its UPN) over the domain; its output, None on failure.
    fn search(&self, user: &str, password: &str, filter: &str) -> Option<String> {
        let out = Command::new("ldapsearch")
            .args(["-x", "-LLL", "-H", &self.url()])
            .args(["-D", &format!("{user}@corp.bai.test"), "-w", password])
            .args(["-b", BASE, filter, "dn"])
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// An LDIF change applied as the domain's Administrator.
    fn modify(&self, ldif: &str) {
        let mut child = Command::new("ldapmodify")
            .args(["-x", "-H", &self.url()])
            .args(["-D", &dn("Administrator"), "-w", ADMIN_PW])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("ldapmodify");
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(ldif.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "ldapmodify: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("log.samba")).unwrap_or_default()
    }

    /// `samba -i` leads a process group of its own with its prefork family: the whole
    /// group is ended.
    fn stop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
        let _ = self.child.wait();
        let _ = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stderr(Stdio::null())
            .status();
    }
}

impl Drop for SambaDc {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A manager whose directory is the DC, set up as docs/AUTH.md tells an AD site (the
/// configured group DNs written in lower case, as people type them), its directory sync
/// every second.
fn server_for(ad: &SambaDc) -> Server {
    let pw_file = ad.dir.path().join("bind-password");
    std::fs::write(&pw_file, "Svc-pass-1\n").unwrap();
    let projects = format!("{}=vision", dn("Vision Lab"));
    let admins = dn("bai-admins").to_lowercase();
    Server::start_with(&[
        ("BAI_NO_DOCKER", "true"),
        ("BAI_DUMMY_AGENTS", "1"),
        ("BAI_LDAP_URL", &ad.url()),
        ("BAI_LDAP_BIND_DN", &dn("svc-bai")),
        ("BAI_LDAP_BIND_PASSWORD_FILE", pw_file.to_str().unwrap()),
        ("BAI_LDAP_USER_BASE", &format!("CN=Users,{BASE}")),
        (
            "BAI_LDAP_USER_FILTER",
            "(&(objectCategory=person)(sAMAccountName={user}))",
        ),
        ("BAI_LDAP_ACTIVE_DIRECTORY", "true"),
        ("BAI_LDAP_ADMIN_GROUP", &admins),
        ("BAI_LDAP_GROUP_PROJECTS", &projects),
        ("BAI_LDAP_SYNC_INTERVAL", "1s"),
    ])
}

/// People log in with their AD account names; nested groups are followed through AD's own
/// transitive rule; a disabled account cannot log in, and one disabled later loses its keys.
#[test]
fn active_directory_people_log_in_and_follow_it() {
    let ad = SambaDc::start();
    // The rule the manager relies on, asked of the DC directly: ada is in bai-admins two
    // groups deep, carol is not.
    let chain = |who: &str| {
        format!(
            "(&(objectCategory=group)(cn=bai-admins)(member:1.2.840.113556.1.4.1941:={}))",
            dn(who)
        )
    };
    let found = ad.search("svc-bai", "Svc-pass-1", &chain("ada")).unwrap();
    assert!(found.contains("CN=bai-admins"), "{found}");
    let found = ad.search("svc-bai", "Svc-pass-1", &chain("carol")).unwrap();
    assert!(!found.contains("CN=bai-admins"), "{found}");

    let s = server_for(&ad);
    // ada: her sAMAccountName and password; an administrator (lab-a → faculty → bai-admins)
    // in `vision` (lab-a → Vision Lab).
    let (status, ada) = login(&s, "ada", "Ada-pass-1");
    assert_eq!(status, 200, "{ada}\n{}", s.log());
    assert_eq!(ada["data"]["email"], "ada@corp.bai.test", "{ada}");
    assert_eq!(ada["data"]["is_admin"], true, "{ada}");
    let (role, projects) = role_and_projects(&s, "ada@corp.bai.test");
    assert_eq!(role, "admin");
    assert!(projects.contains(&"vision".to_string()), "{projects:?}");
    // carol: a user, in `vision` directly.
    let (status, carol) = login(&s, "carol", "Carol-pass-1");
    assert_eq!(status, 200, "{carol}\n{}", s.log());
    assert_eq!(carol["data"]["is_admin"], false, "{carol}");
    let (role, projects) = role_and_projects(&s, "carol@corp.bai.test");
    assert_eq!(role, "user");
    assert!(projects.contains(&"vision".to_string()), "{projects:?}");

    // A wrong password, a disabled account, an unknown name, an injected filter: each
    // refused with the same clear message (which of them it was is not told), never a 500.
    let (status, wrong) = login(&s, "ada", "wrong-pass");
    assert_eq!(status, 401, "{wrong}");
    assert!(
        wrong["data"]["details"]
            .as_str()
            .is_some_and(|d| d.contains("wrong")),
        "{wrong}"
    );
    for (name, pw) in [
        ("bob", "Bob-pass-1"),
        ("nobody", "x"),
        ("*)(sAMAccountName=*", "Ada-pass-1"),
    ] {
        let (status, body) = login(&s, name, pw);
        assert_eq!(status, 401, "{name}: {body}");
        assert_eq!(body, wrong, "{name}");
    }
    let log = s.log();
    assert!(
        !log.contains("Bob-pass-1") && !log.contains("Ada-pass-1") && !log.contains("Svc-pass-1"),
        "a password reached the log"
    );

    // ada leaves faculty: her next login makes her a user again (groups are read at each
    // login, through the chain).
    ad.modify(&format!(
        "dn: {}\nchangetype: modify\ndelete: member\nmember: {}\n",
        dn("faculty"),
        dn("lab-a")
    ));
    let (status, ada) = login(&s, "ada", "Ada-pass-1");
    assert_eq!(status, 200, "{ada}");
    assert_eq!(ada["data"]["is_admin"], false, "{ada}");

    // carol is disabled in AD (ACCOUNTDISABLE): her keys stop at the next sync, and she
    // cannot log in.
    let carol_cli = account_of(&s, "carol@corp.bai.test");
    s.bai(&carol_cli, &["ps"]).expect_ok();
    ad.modify(&format!(
        "dn: {}\nchangetype: modify\nreplace: userAccountControl\nuserAccountControl: 514\n",
        dn("carol")
    ));
    let gone = wait_until(Duration::from_secs(30), || !s.bai(&carol_cli, &["ps"]).ok());
    assert!(gone, "carol's key still works: {}", s.log());
    let line = one_error_line(&s.bai(&carol_cli, &["ps"]));
    assert!(line.contains("deactivated"), "{line}");
    let (status, body) = login(&s, "carol", "Carol-pass-1");
    assert_eq!(status, 401, "{body}");
    let r = gql(
        &s,
        "query($email: String) { user(email: $email) { status } }",
        json!({"email": "carol@corp.bai.test"}),
    );
    assert_eq!(r["data"]["user"]["status"], "inactive", "{r}");
}
