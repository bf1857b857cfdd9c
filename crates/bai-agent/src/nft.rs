//! Loading an nftables script: Debian's `nft -f -`, run as the agent, either in its own
//! network namespace (the Docker backend's bridges) or entered into a pod's (the Kubernetes
//! backend's `--network-policies node`, through `nsenter`).

use tokio::io::AsyncWriteExt;

/// Runs `program args…` (ending in `nft -f -`) with `script` on its standard input; `hint`
/// says what to install when the program is missing.
pub async fn load(program: &str, args: &[&str], script: &str, hint: &str) -> Result<(), String> {
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {program} ({e}); {hint}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(script.as_bytes())
            .await
            .map_err(|e| format!("cannot write to nft: {e}"))?;
    }
    let out = child
        .wait_with_output()
        .await
        .map_err(|e| format!("nft did not finish: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "nft refused the rules: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}
