//! A cluster image registry for tests: Debian's `docker-registry` (distribution) serving
//! plain HTTP on `0.0.0.0:PORT` with its storage in a temporary directory (killed and removed
//! on drop). The host's engine reaches it at `127.0.0.1:PORT` (loopback registries need no
//! TLS); test machines at their host address, which their engines trust (see `netns`).

use crate::free_port;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Registry {
    pub port: u16,
    child: Child,
    _dir: tempfile::TempDir,
}

impl Registry {
    pub fn start() -> Registry {
        let dir = tempfile::Builder::new()
            .prefix("bai-registry-")
            .tempdir()
            .expect("tempdir");
        let port = free_port();
        let config = dir.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 0.0.0.0:{port}\n",
                dir.path().join("data").display()
            ),
        )
        .expect("registry config");
        let log = std::fs::File::create(dir.path().join("registry.log")).expect("log");
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("docker-registry (Debian package docker-registry; make test installs it)");
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "the registry did not listen within 60 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Registry {
            port,
            child,
            _dir: dir,
        }
    }

    /// The registry as the host reaches it.
    pub fn local(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Pushes `image` of the host's engine to the registry (as `<registry>/<image>`).
    pub fn push(&self, image: &str) {
        let remote = format!("{}/{image}", self.local());
        let run = |args: &[&str]| {
            let out = Command::new("docker").args(args).output().expect("docker");
            assert!(
                out.status.success(),
                "docker {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            );
        };
        run(&["tag", image, &remote]);
        run(&["push", "-q", &remote]);
        run(&["rmi", &remote]);
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
