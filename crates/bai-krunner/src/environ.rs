//! The kernel's environment kept for its shells. Login shells (the web terminal's tmux
//! windows, an SSH login) run Debian's `/etc/profile`, which sets `PATH` anew; sshd starts a
//! command with an environment of its own. So krunner writes what the kernel runs with — the
//! image's variables, the user's (`-e PATH=…`) and the platform's (the GPU driver's `PATH`
//! and `LD_LIBRARY_PATH`) — into `environ.sh` in its run directory, which the agent's hook in
//! `/etc/profile.d` sources, and gives sshd the same as `SetEnv` lines.

use std::path::Path;

/// Variables that belong to one shell or process, never carried over.
const OWN_TO_A_SHELL: [&str; 10] = [
    "HOME",
    "PWD",
    "OLDPWD",
    "SHLVL",
    "_",
    "TERM",
    "HOSTNAME",
    "TMUX",
    "TMUX_PANE",
    "SHELL",
];

/// Whether `name` can be a shell variable.
fn shell_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The variables a shell of the kernel should have, sorted by name.
pub fn kept(vars: impl Iterator<Item = (String, String)>) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = vars
        .filter(|(k, _)| shell_name(k) && !OWN_TO_A_SHELL.contains(&k.as_str()))
        .filter(|(k, _)| !k.starts_with("SSH_"))
        .collect();
    v.sort();
    v
}

/// `export NAME='value'` lines (a `'` written as `'\''`).
pub fn script(vars: &[(String, String)]) -> String {
    let mut s = String::from("# Written by krunner: the kernel's environment.\n");
    for (k, v) in vars {
        s.push_str(&format!("export {k}='{}'\n", v.replace('\'', r"'\''")));
    }
    s
}

/// sshd's `SetEnv` line: one for all (sshd keeps the first `SetEnv` it reads and ignores the
/// others); a value with a line break cannot be in it and is left out.
pub fn sshd_setenv(vars: &[(String, String)]) -> String {
    let pairs: Vec<String> = vars
        .iter()
        .filter(|(_, v)| !v.contains(['\n', '\r']))
        .map(|(k, v)| {
            let quoted = v.replace('\\', r"\\").replace('"', "\\\"");
            format!("{k}=\"{quoted}\"")
        })
        .collect();
    if pairs.is_empty() {
        String::new()
    } else {
        format!("SetEnv {}\n", pairs.join(" "))
    }
}

/// Writes `environ.sh` into `run`, readable by the kernel's user alone.
pub fn write(run: &Path, vars: &[(String, String)]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let path = run.join("environ.sh");
    let tmp = run.join(".environ.sh.new");
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(script(vars).as_bytes())?;
    std::fs::rename(tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(list: &[(&str, &str)]) -> Vec<(String, String)> {
        kept(list.iter().map(|(k, v)| (k.to_string(), v.to_string())))
    }

    #[test]
    fn a_shells_own_variables_and_bad_names_are_left_out() {
        let v = vars(&[
            ("PATH", "/opt/x/bin:/usr/bin"),
            ("HOME", "/home/work"),
            ("SHLVL", "1"),
            ("SSH_CONNECTION", "x"),
            ("A-B", "1"),
            ("LD_LIBRARY_PATH", "/usr/lib/nvidia"),
        ]);
        let names: Vec<&str> = v.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["LD_LIBRARY_PATH", "PATH"]);
    }

    #[test]
    fn the_script_quotes_every_value_for_sh() {
        let s = script(&vars(&[("MSG", "it's $HOME `x`"), ("PATH", "/a b:/c")]));
        assert!(s.contains("export MSG='it'\\''s $HOME `x`'\n"), "{s}");
        assert!(s.contains("export PATH='/a b:/c'\n"), "{s}");
        // What sh makes of it.
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{s}\nprintf '%s|%s' \"$MSG\" \"$PATH\""))
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "it's $HOME `x`|/a b:/c"
        );
    }

    #[test]
    fn sshd_gets_one_quoted_setenv_line_without_line_breaks() {
        let s = sshd_setenv(&vars(&[
            ("PATH", "/opt/x/bin:/usr/bin"),
            ("Q", "say \"hi\" \\o/ #not a comment"),
            ("ML", "two\nlines"),
        ]));
        assert_eq!(
            s,
            "SetEnv PATH=\"/opt/x/bin:/usr/bin\" Q=\"say \\\"hi\\\" \\\\o/ #not a comment\"\n"
        );
        assert_eq!(sshd_setenv(&[]), "");
    }
}
