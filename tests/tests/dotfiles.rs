//! Dotfiles end to end on `baid up` with its Docker engine: stored, listed, shown, replaced
//! and deleted with `bai dotfile` and the official client's `backend.ai dotfile`; bad paths and
//! modes refused with one line; a new session finds them in its home with their modes and
//! owner, and tmux's mouse on by the system's configuration (a user's own `.tmux.conf` adds
//! to it); a dotfile where a folder would be mounted refuses the create.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::{Account, Run, Server, official_client};

fn ba(s: &Server, account: &Account, args: &[&str]) -> Run {
    s.run_as(official_client(), account, args)
}

/// Runs Python `code` in a new batch session of `account` and returns its output.
fn inside(s: &Server, account: &Account, code: &str) -> String {
    let r = s.bai(account, &["run", "--rm", "-c", code, "python"]);
    r.expect_ok();
    r.stdout.clone()
}

const PROBE: &str = r#"
import os, subprocess
home = os.path.expanduser("~")
for p in (".vimrc", ".config/nvim/init.vim", ".bashrc"):
    f = os.path.join(home, p)
    if os.path.exists(f):
        st = os.stat(f)
        print("file", p, oct(st.st_mode & 0o777), "mine" if st.st_uid == os.getuid() else "not-mine", repr(open(f).read()))
    else:
        print("file", p, "missing")
subprocess.run(["tmux", "new-session", "-d", "-s", "probe"], check=True)
show = lambda o: subprocess.run(["tmux", "show", "-gv", o], capture_output=True, text=True).stdout.strip()
print("tmux", show("mouse"), show("prefix"))
"#;

#[test]
fn dotfiles_are_written_into_every_new_session() {
    let s = Server::start();
    let w = s.work.path();
    std::fs::write(w.join("vimrc"), "set number\n").expect("write");
    std::fs::write(w.join("init.vim"), "set hidden\n").expect("write");

    // Stored with bai (a file in a sub-directory too), and with the official client.
    s.bai(
        &s.user,
        &["dotfile", "create", ".vimrc", "-f", "vimrc", "-p", "600"],
    )
    .expect_ok();
    s.bai(
        &s.user,
        &[
            "dotfile",
            "create",
            "~/.config/nvim/init.vim",
            "-f",
            "init.vim",
        ],
    )
    .expect_ok();
    std::fs::write(w.join("bashrc"), "export FROM_DOTFILE=1\n").expect("write");
    ba(
        &s,
        &s.user,
        &[
            "dotfile", "create", ".bashrc", "-f", "bashrc", "--perm", "644",
        ],
    )
    .expect_ok();

    let list = s.bai(&s.user, &["dotfile", "list"]);
    list.expect_ok();
    for p in [".bashrc", ".config/nvim/init.vim", ".vimrc"] {
        assert!(list.stdout.contains(p), "{list:#?}");
    }
    let official = ba(&s, &s.user, &["dotfile", "list"]);
    official.expect_ok();
    assert!(
        official.stdout.contains(".vimrc") && official.stdout.contains("600"),
        "{official:#?}"
    );
    let got = ba(&s, &s.user, &["dotfile", "get", ".vimrc"]);
    got.expect_ok();
    assert!(got.stdout.contains("set number"), "{got:#?}");
    // Another user sees none of them.
    let other = s.bai(&s.user2, &["dotfile", "list"]);
    other.expect_ok();
    assert!(!other.stdout.contains(".vimrc"), "{other:#?}");

    // Bad input: one line each, nothing stored.
    s.bai(
        &s.user,
        &["dotfile", "create", "/etc/profile", "-f", "vimrc"],
    )
    .expect_fail("outside the home directory");
    s.bai(&s.user, &["dotfile", "create", "../x", "-f", "vimrc"])
        .expect_fail("'..'");
    s.bai(
        &s.user,
        &["dotfile", "create", ".x", "-f", "vimrc", "-p", "999"],
    )
    .expect_fail("file mode");
    s.bai(
        &s.user,
        &["dotfile", "create", ".ssh/authorized_keys", "-f", "vimrc"],
    )
    .expect_fail("reserved");
    s.bai(&s.user, &["dotfile", "create", ".vimrc", "-f", "vimrc"])
        .expect_fail("exists");
    s.bai(&s.user, &["dotfile", "update", ".nothere", "-f", "vimrc"])
        .expect_fail("no dotfile");
    std::fs::write(w.join("big"), "x".repeat(70 * 1024)).expect("write");
    s.bai(&s.user, &["dotfile", "create", ".big", "-f", "big"])
        .expect_fail("64 KiB");
    let list = s.bai(&s.user, &["dotfile", "list"]);
    for p in ["/etc/profile", ".x", ".big", "authorized_keys"] {
        assert!(!list.stdout.contains(p), "{p} was stored: {list:#?}");
    }

    // A new session has them, the kernel user's, with their modes; tmux's mouse is on.
    let out = inside(&s, &s.user, PROBE);
    assert!(
        out.contains("file .vimrc 0o600 mine 'set number\\n'"),
        "{out}"
    );
    assert!(
        out.contains("file .config/nvim/init.vim 0o644 mine 'set hidden\\n'"),
        "{out}"
    );
    assert!(out.contains("file .bashrc 0o644 mine"), "{out}");
    assert!(out.contains("tmux on C-b"), "{out}");
    // The other user's session has none of them, and the mouse on all the same.
    let theirs = inside(&s, &s.user2, PROBE);
    assert!(theirs.contains("file .vimrc missing"), "{theirs}");
    assert!(theirs.contains("tmux on C-b"), "{theirs}");

    // Replaced and deleted (the official client's update, bai's delete): the next session
    // follows; the user's own .tmux.conf adds to the system's (the mouse stays on when it
    // only changes the prefix).
    std::fs::write(w.join("vimrc2"), "set nonumber\n").expect("write");
    ba(
        &s,
        &s.user,
        &[
            "dotfile", "update", ".vimrc", "-f", "vimrc2", "--perm", "640",
        ],
    )
    .expect_ok();
    s.bai(&s.user, &["dotfile", "delete", ".bashrc"])
        .expect_ok();
    std::fs::write(w.join("tmux"), "set -g prefix C-a\n").expect("write");
    s.bai(&s.user, &["dotfile", "create", ".tmux.conf", "-f", "tmux"])
        .expect_ok();
    let out = inside(&s, &s.user, PROBE);
    assert!(
        out.contains("file .vimrc 0o640 mine 'set nonumber\\n'"),
        "{out}"
    );
    assert!(out.contains("file .bashrc missing"), "{out}");
    assert!(out.contains("tmux on C-a"), "{out}");

    // A dotfile where a folder would be mounted: the create is refused, naming both.
    s.bai(&s.user, &["vfolder", "create", "proj"]).expect_ok();
    s.bai(&s.user, &["dotfile", "create", "proj/notes", "-f", "vimrc"])
        .expect_ok();
    s.bai(
        &s.user,
        &["run", "--rm", "-m", "proj", "-c", "print(1)", "python"],
    )
    .expect_fail("proj/notes");
}
