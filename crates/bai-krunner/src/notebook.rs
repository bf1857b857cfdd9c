//! "Notebook for Backend.AI": a Jupyter kernel that runs the image's own Python, so a
//! notebook sees the image's system packages (`/usr/lib/python3/dist-packages`), the ones an
//! image or session installed into `/usr/local`, and the user's own (`~/.local`), where
//! Jupyter's default kernel sees only Jupyter's virtual environment.
//!
//! krunner writes its kernelspec when it starts Jupyter and puts it on `JUPYTER_PATH`; the
//! kernel borrows `ipykernel` from Jupyter's environment, added at the end of `sys.path` so
//! the image's and the user's packages win. Only when both Pythons are the same version (its
//! compiled parts must load); otherwise Jupyter keeps its default kernel alone.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The kernel's name in Jupyter (its folder under `kernels/`).
pub const NAME: &str = "backendai";
/// What Jupyter's New menu calls it.
pub const DISPLAY_NAME: &str = "Notebook for Backend.AI";

/// Run by the image's Python: ipykernel from Jupyter's environment, after everything else.
const BOOT: &str = "import os, sys; sys.path.append(os.environ['BAI_IPYKERNEL_SITE']); \
                    from ipykernel import kernelapp; kernelapp.launch_new_instance()";

/// Runs `python -c code` and returns its standard output's lines.
///
/// It runs at the lowest CPU priority (`nice -n 19`, where the image has `nice`): the spec is
/// written in the background as the kernel starts, and two Pythons starting beside the
/// REPL's own start slowed a session's first execution by about 20 ms on a busy machine.
fn ask(python: &str, code: &str) -> Result<Vec<String>, String> {
    let mut cmd = match on_path("nice") {
        Some(nice) => {
            let mut c = Command::new(nice);
            c.args(["-n", "19", python]);
            c
        }
        None => Command::new(python),
    };
    let out = cmd
        .args(["-c", code])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {python}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{python} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect())
}

/// The first file named `name` on `PATH`.
pub fn on_path(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The Python that runs `jupyter` (its script's `#!` line).
pub fn jupyters_python() -> Result<String, String> {
    let script = on_path("jupyter").ok_or("jupyter is not on PATH")?;
    let text =
        std::fs::read(&script).map_err(|e| format!("cannot read {}: {e}", script.display()))?;
    let first = text.split(|b| *b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(first);
    line.strip_prefix("#!")
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty() && !s.contains(' '))
        .ok_or_else(|| format!("{} has no plain #! line", script.display()))
}

/// The kernelspec's JSON for `python` borrowing ipykernel from `site`.
pub fn spec_json(python: &str, site: &str) -> String {
    serde_json::json!({
        "argv": [python, "-c", BOOT, "-f", "{connection_file}"],
        "display_name": DISPLAY_NAME,
        "language": "python",
        "env": { "BAI_IPYKERNEL_SITE": site },
        "metadata": { "debugger": false },
    })
    .to_string()
}

/// Writes the kernelspec under `dir` (`dir/kernels/backendai/kernel.json`) for the image's
/// `python`; returns `dir`, the entry for `JUPYTER_PATH`, or why there is none.
pub fn write(dir: &Path, python: &str) -> Result<PathBuf, String> {
    const VERSION: &str = "import sys; print('%d.%d' % sys.version_info[:2])";
    let jpy = jupyters_python()?;
    let theirs = ask(
        &jpy,
        // Found, not imported (a tenth of the time): `find_spec` reads no module's code.
        "import os, sys, importlib.util as u; print(os.path.dirname(os.path.dirname(u.find_spec('ipykernel').origin))); print('%d.%d' % sys.version_info[:2])",
    )?;
    let (site, jv) = match theirs.as_slice() {
        [site, v, ..] => (site.clone(), v.clone()),
        _ => return Err(format!("{jpy} did not say where ipykernel is")),
    };
    let ours = ask(python, VERSION)?;
    let pv = ours.first().cloned().unwrap_or_default();
    if pv != jv {
        return Err(format!(
            "the image's Python is {pv}, Jupyter's is {jv}: no {DISPLAY_NAME} kernel"
        ));
    }
    let kdir = dir.join("kernels").join(NAME);
    std::fs::create_dir_all(&kdir).map_err(|e| format!("cannot create {}: {e}", kdir.display()))?;
    std::fs::write(kdir.join("kernel.json"), spec_json(python, &site))
        .map_err(|e| format!("cannot write the kernelspec: {e}"))?;
    Ok(dir.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_runs_the_images_python_with_ipykernel_last() {
        let v: serde_json::Value =
            serde_json::from_str(&spec_json("/usr/bin/python3", "/opt/jupyter/site")).unwrap();
        assert_eq!(v["display_name"], DISPLAY_NAME);
        assert_eq!(v["argv"][0], "/usr/bin/python3");
        assert_eq!(v["argv"][4], "{connection_file}");
        assert!(v["argv"][2].as_str().unwrap().contains("sys.path.append"));
        assert_eq!(v["env"]["BAI_IPYKERNEL_SITE"], "/opt/jupyter/site");
    }
}
