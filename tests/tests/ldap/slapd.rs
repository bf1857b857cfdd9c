//! The test directory: Debian's `slapd` on a loopback port with a tree of its own (two
//! people, an admin group, a group mapped to a project), started for one test and removed
//! at its end.

use bai_e2e::{free_port, wait_until};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub const SUFFIX: &str = "dc=example,dc=org";
pub const ROOT_DN: &str = "cn=root,dc=example,dc=org";
pub const ROOT_PW: &str = "root-secret";
pub const ADMINS: &str = "cn=bai-admins,ou=groups,dc=example,dc=org";
pub const VISION: &str = "cn=vision,ou=groups,dc=example,dc=org";

/// A `slapd` of our own on a loopback port, with its database in a temp dir; killed on drop.
pub struct Slapd {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

pub fn sbin(name: &str) -> PathBuf {
    let p = Path::new("/usr/sbin").join(name);
    assert!(
        p.exists(),
        "{} is missing: run scripts/ensure-deps.sh --test (Debian's slapd and ldap-utils)",
        p.display()
    );
    p
}

fn directory_ldif() -> String {
    format!(
        "dn: {SUFFIX}
objectClass: dcObject
objectClass: organization
o: Example
dc: example

dn: ou=people,{SUFFIX}
objectClass: organizationalUnit
ou: people

dn: ou=groups,{SUFFIX}
objectClass: organizationalUnit
ou: groups

dn: cn=bai-search,{SUFFIX}
objectClass: organizationalRole
objectClass: simpleSecurityObject
cn: bai-search
userPassword: search-secret

dn: uid=ada,ou=people,{SUFFIX}
objectClass: inetOrgPerson
uid: ada
cn: Ada Lovelace
sn: Lovelace
mail: Ada@Example.org
userPassword: ada-pass

dn: uid=bob,ou=people,{SUFFIX}
objectClass: inetOrgPerson
uid: bob
cn: Bob Vision
sn: Vision
mail: bob@example.org
userPassword: bob-pass

dn: {ADMINS}
objectClass: groupOfNames
cn: bai-admins
member: uid=ada,ou=people,{SUFFIX}

dn: {VISION}
objectClass: groupOfNames
cn: vision
member: uid=bob,ou=people,{SUFFIX}
"
    )
}

impl Slapd {
    pub fn start() -> Slapd {
        let dir = tempfile::Builder::new()
            .prefix("bai-slapd-")
            .tempdir()
            .unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("db")).unwrap();
        // A soft size limit far below the 300 groups of the many-groups test (a search
        // without paging is cut there); paged searches may return them all.
        let conf = format!(
            "include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
sizelimit size.soft=100 size.hard=unlimited
pidfile {d}/slapd.pid
modulepath /usr/lib/ldap
moduleload back_mdb
database mdb
maxsize 16777216
suffix \"{SUFFIX}\"
rootdn \"{ROOT_DN}\"
rootpw {ROOT_PW}
directory {d}/db
access to attrs=userPassword by anonymous auth by self write by * none
access to * by users read by * none
",
            d = d.display()
        );
        std::fs::write(d.join("slapd.conf"), conf).unwrap();
        std::fs::write(d.join("data.ldif"), directory_ldif()).unwrap();
        let out = Command::new(sbin("slapadd"))
            .arg("-f")
            .arg(d.join("slapd.conf"))
            .arg("-l")
            .arg(d.join("data.ldif"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "slapadd: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let port = free_port();
        let child = Self::spawn(d, port);
        let mut s = Slapd { child, port, dir };
        s.wait_up();
        s
    }

    pub fn spawn(d: &Path, port: u16) -> Child {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(d.join("slapd.log"))
            .unwrap();
        // -d 0: stay in the foreground (the test owns the process), log nothing extra.
        Command::new(sbin("slapd"))
            .arg("-f")
            .arg(d.join("slapd.conf"))
            .arg("-h")
            .arg(format!("ldap://127.0.0.1:{port}/"))
            .args(["-d", "0"])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap()
    }

    pub fn wait_up(&mut self) {
        let port = self.port;
        let up = wait_until(Duration::from_secs(15), || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        assert!(up, "slapd did not listen: {}", self.log());
        assert!(self.child.try_wait().unwrap().is_none(), "{}", self.log());
    }

    /// Starts the stopped directory again, with the same data and port.
    pub fn restart(&mut self) {
        self.stop();
        self.child = Self::spawn(self.dir.path(), self.port);
        self.wait_up();
    }

    /// The directory's own folder (its database, its log; the tests' password files).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn url(&self) -> String {
        format!("ldap://127.0.0.1:{}", self.port)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("slapd.log")).unwrap_or_default()
    }

    /// `ldapmodify` as the directory's root (the site's admin changing the directory).
    pub fn modify(&self, ldif: &str) {
        let file = self.dir.path().join("change.ldif");
        std::fs::write(&file, ldif).unwrap();
        let out = Command::new("ldapmodify")
            .args(["-x", "-H", &self.url(), "-D", ROOT_DN, "-w", ROOT_PW, "-f"])
            .arg(&file)
            .output()
            .expect("ldapmodify (ldap-utils)");
        assert!(
            out.status.success(),
            "ldapmodify: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Slapd {
    fn drop(&mut self) {
        self.stop();
    }
}
