//! The kernel's environment without what the agent cleared. An image may carry variables of
//! bai's runtime namespaces (`BAI_…`, `BACKENDAI_…`: one committed by an older build kept its
//! kernel's `BAI_POOL` and ids); the agent gives each one it does not set an empty value at
//! the create, and krunner, before anything else, executes itself again without them, so no
//! process of the kernel sees them.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;

/// Whether `name` is a variable of bai's runtime namespaces.
fn owned(name: &[u8]) -> bool {
    name.starts_with(b"BAI_") || name.starts_with(b"BACKENDAI_")
}

/// The cleared variables among `vars`: owned and empty.
pub fn cleared(vars: impl Iterator<Item = (OsString, OsString)>) -> Vec<OsString> {
    vars.filter(|(k, v)| v.is_empty() && owned(k.as_bytes()))
        .map(|(k, _)| k)
        .collect()
}

/// Executes krunner again without `names`; returns only when that fails.
pub fn exec_without(names: &[OsString]) -> std::io::Error {
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => return e,
    };
    let mut cmd = std::process::Command::new(exe);
    for n in names {
        cmd.env_remove(n);
    }
    cmd.args(std::env::args_os().skip(1)).exec()
}

#[cfg(test)]
mod tests {
    use super::cleared;
    use std::ffi::OsString;

    #[test]
    fn only_empty_variables_of_bais_namespaces_are_dropped() {
        let vars = [
            ("BAI_POOL", ""),
            ("BACKENDAI_KERNEL_ID", ""),
            ("BAI_SESSION_ID", "s1"),
            ("MY_EMPTY", ""),
            ("PATH", "/usr/bin"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        assert_eq!(
            cleared(vars.into_iter()),
            [
                OsString::from("BAI_POOL"),
                OsString::from("BACKENDAI_KERNEL_ID")
            ]
        );
    }
}
