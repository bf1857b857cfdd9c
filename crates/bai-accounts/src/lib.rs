//! The kernel's user in an image's account files. Kernels run as `work` (uid and gid
//! [`WORK_UID`]); bai's images have that user, most others do not (an image made for
//! Backend.AI expects its entrypoint to add it as root; bai never runs anything in a kernel
//! as root). Without a `/etc/passwd` line for its uid, a kernel's user has no name: `whoami`
//! fails, the shell says "I have no name!", and sshd refuses every login as `work`.
//!
//! So a kernel of such an image gets account files with the user in them: the image's own
//! lines, less any other claim on the name `work` or the uid, plus `work`'s line with home
//! `/home/work` and the image's bash, else `/bin/sh`. A group with the gid is added only
//! where the image has none. On Docker the agent writes them into the container before it
//! starts (`bai-agent`'s `docker/users.rs`); on Kubernetes the runner makes them in the
//! pod's init container (`bai-krunner accounts`) from the image's own files, and the
//! kernel's container mounts them. Pure text here; unit-tested.

/// The kernel's user and group id, on every backend.
pub const WORK_UID: u32 = 1000;

/// The user's name in every kernel.
pub const WORK_USER: &str = "work";

/// What the runner's `accounts` init container says (its termination message), read by the
/// Kubernetes agent: the image lacked the user, and the files have it added.
pub const ADDED: &str = "work added";
/// What it says when the image names the user already.
pub const UNCHANGED: &str = "work present";

/// The account files a container of the image gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accounts {
    pub passwd: String,
    pub group: String,
}

/// The image's `/etc/passwd`, `/etc/group` and `/etc/shells` (empty where it has none) made
/// to name the kernel's user; `None` when they do already.
pub fn with_work_user(passwd: &str, group: &str, shells: &str) -> Option<Accounts> {
    let uid = WORK_UID.to_string();
    let has_user = lines(passwd).any(|f| f.first() == Some(&WORK_USER) && f.get(2) == Some(&&*uid));
    let has_group = lines(group).any(|f| f.get(2) == Some(&&*uid));
    if has_user && has_group {
        return None;
    }
    let passwd = if has_user {
        passwd.to_string()
    } else {
        let mut out = keep(passwd, |f| {
            f.first() != Some(&WORK_USER) && f.get(2) != Some(&&*uid)
        });
        out.push_str(&format!(
            "{WORK_USER}:x:{uid}:{uid}::/home/{WORK_USER}:{}\n",
            shell(shells)
        ));
        out
    };
    let group = if has_group {
        group.to_string()
    } else {
        let mut out = keep(group, |f| f.first() != Some(&WORK_USER));
        out.push_str(&format!("{WORK_USER}:x:{uid}:\n"));
        out
    };
    Some(Accounts { passwd, group })
}

/// The fields of each account line (comments and blank lines left out).
fn lines(text: &str) -> impl Iterator<Item = Vec<&str>> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split(':').collect())
}

/// The text's lines that `keep` keeps (comments and blank lines kept), each ending in a
/// newline.
fn keep(text: &str, keep: impl Fn(&[&str]) -> bool) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    for l in text.lines() {
        let account = !l.trim().is_empty() && !l.starts_with('#');
        if account && !keep(&l.split(':').collect::<Vec<_>>()) {
            continue;
        }
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// The image's bash when `/etc/shells` lists one, else `/bin/sh`.
fn shell(shells: &str) -> &'static str {
    let listed = |s: &str| shells.lines().any(|l| l.trim() == s);
    if listed("/bin/bash") {
        "/bin/bash"
    } else if listed("/usr/bin/bash") {
        "/usr/bin/bash"
    } else {
        "/bin/sh"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEBIAN: &str = "root:x:0:0:root:/root:/bin/bash\n\
                          daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n";
    const GROUPS: &str = "root:x:0:\ndaemon:x:1:\n";

    #[test]
    fn an_image_without_the_user_gets_it_with_its_bash() {
        let a = with_work_user(DEBIAN, GROUPS, "# shells\n/bin/sh\n/bin/bash\n").unwrap();
        assert_eq!(
            a.passwd,
            format!("{DEBIAN}work:x:1000:1000::/home/work:/bin/bash\n")
        );
        assert_eq!(a.group, format!("{GROUPS}work:x:1000:\n"));
    }

    #[test]
    fn without_bash_or_any_file_the_user_has_sh() {
        let a = with_work_user("", "", "").unwrap();
        assert_eq!(a.passwd, "work:x:1000:1000::/home/work:/bin/sh\n");
        assert_eq!(a.group, "work:x:1000:\n");
        // A last line without its newline is kept whole.
        let a = with_work_user("root:x:0:0::/root:/bin/sh", "root:x:0:", "/usr/bin/bash").unwrap();
        assert_eq!(
            a.passwd,
            "root:x:0:0::/root:/bin/sh\nwork:x:1000:1000::/home/work:/usr/bin/bash\n"
        );
    }

    #[test]
    fn bais_own_images_are_left_as_they_are() {
        let passwd = format!("{DEBIAN}work:x:1000:1000::/home/work:/bin/bash\n");
        let group = format!("{GROUPS}work:x:1000:\n");
        assert_eq!(with_work_user(&passwd, &group, "/bin/bash\n"), None);
    }

    #[test]
    fn another_user_with_the_uid_or_the_name_gives_way() {
        // Ubuntu's images have `ubuntu` at 1000 (with its group, which stays).
        let passwd = format!(
            "{DEBIAN}ubuntu:x:1000:1000:Ubuntu:/home/ubuntu:/bin/bash\nwork:x:1500:1500::/w:/bin/sh\n"
        );
        let group = format!("{GROUPS}ubuntu:x:1000:\nwork:x:1500:\n");
        let a = with_work_user(&passwd, &group, "/bin/bash\n").unwrap();
        assert_eq!(
            a.passwd,
            format!("{DEBIAN}work:x:1000:1000::/home/work:/bin/bash\n")
        );
        assert_eq!(a.group, group);
    }
}
