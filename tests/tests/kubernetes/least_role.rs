//! The agent with only the least role of `dist/kubernetes/rbac.yaml` (and, for detached
//! pods, `rbac-network.yaml`): its ServiceAccount's token alone, no admin certificate.

use bai_e2e::images::run_rm;
use bai_e2e::kube::{Cluster, dist, dist_objects, joined_with, runner_image};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The agent with only what `dist/kubernetes/rbac.yaml` grants (its ServiceAccount's token,
/// no admin certificate): it joins with `--network-policies enforced` (its NetworkPolicies
/// listed at its start), runs a session of a `default` group end to end (its NetworkPolicy
/// made, handed to the pod, deleted; the pod made, watched, its logs read, deleted), and the
/// service account really is that narrow (it may not list secrets). With
/// `rbac-network.yaml`'s Role added, a detached agent (`--runner-reach network`) runs a
/// session too, its kernel's Secret made, owned, read and deleted, nothing refused.
#[test]
fn the_agent_runs_with_only_the_least_role() {
    let cluster = Cluster::get();
    let _dist = dist_objects(&cluster);
    let rbac = dist("rbac.yaml");
    let applied = cluster.kubectl(&["apply", "-f", rbac.to_str().unwrap()]);
    assert!(
        applied.status.success(),
        "{}",
        String::from_utf8_lossy(&applied.stderr)
    );
    // The token controller gives the service account a token secret.
    let mut token = String::new();
    let got = bai_e2e::wait_until(Duration::from_secs(60), || {
        let sa = cluster.kubectl(&[
            "get",
            "serviceaccount",
            "bai-agent",
            "-n",
            "bai",
            "-o",
            "jsonpath={.secrets[0].name}",
        ]);
        let secret = String::from_utf8_lossy(&sa.stdout).trim().to_string();
        if secret.is_empty() {
            return false;
        }
        let t = cluster.kubectl(&[
            "get",
            "secret",
            &secret,
            "-n",
            "bai",
            "-o",
            "jsonpath={.data.token}",
        ]);
        let b64 = String::from_utf8_lossy(&t.stdout).trim().to_string();
        let decoded = Command::new("base64")
            .arg("-d")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin.take().unwrap().write_all(b64.as_bytes())?;
                c.wait_with_output()
            });
        token = decoded
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        !token.is_empty()
    });
    assert!(got, "no token for the service account bai-agent");
    // The admin kubeconfig's cluster (server, CA), the service account's token as the user.
    let admin = std::fs::read_to_string(&cluster.kubeconfig).unwrap();
    let field = |key: &str| {
        admin
            .lines()
            .find_map(|l| l.trim().strip_prefix(key).map(|v| v.trim().to_string()))
            .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    std::fs::write(
        &kc,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority-data: {}\nusers:\n- name: bai-agent\n  user:\n    token: {token}\ncontexts:\n- name: c\n  context: {{cluster: c, user: bai-agent}}\ncurrent-context: c\n",
            field("server:"),
            field("certificate-authority-data:")
        ),
    )
    .unwrap();
    let narrow = Command::new(&cluster.kubectl)
        .arg("--kubeconfig")
        .arg(&kc)
        .args(["get", "secrets", "-n", "bai"])
        .output()
        .unwrap();
    assert!(
        !narrow.status.success(),
        "the role lets the agent read secrets"
    );

    let enforced = ["--network-policies".to_string(), "enforced".to_string()];
    let (s, agent) = joined_with("kube-rbac", &[], &enforced, &kc, "bai");
    s.set_egress("default", "default");
    let r = run_rm(
        &s,
        &s.admin,
        &["cpu=0.25", "mem=256m"],
        "print('least role')",
        "python",
    );
    assert!(r.ok(), "{r:?}\nagent:\n{}", agent.log());
    assert!(r.stdout.contains("least role"), "{r:?}");
    assert!(
        agent.log().contains("NetworkPolicy made"),
        "no NetworkPolicy was made:\n{}",
        agent.log()
    );
    assert!(
        !agent.log().contains("Forbidden"),
        "the agent was refused something:\n{}",
        agent.log()
    );
    cluster.wait_no_pods("bai");
    let policies = cluster.kubectl(&["get", "networkpolicies", "-n", "bai", "-o", "name"]);
    assert!(
        policies.status.success() && policies.stdout.is_empty(),
        "NetworkPolicies left: {}",
        String::from_utf8_lossy(&policies.stdout)
    );
    drop(agent);
    drop(s);

    // Detached pods need the kernels' Secrets too: rbac-network.yaml's Role, and no more.
    let secrets_role = dist("rbac-network.yaml");
    let applied = cluster.kubectl(&["apply", "-f", secrets_role.to_str().unwrap()]);
    assert!(
        applied.status.success(),
        "{}",
        String::from_utf8_lossy(&applied.stderr)
    );
    let detached = [
        "--runner-reach".to_string(),
        "network".to_string(),
        "--runner-image".to_string(),
        runner_image(),
    ];
    let (s, agent) = joined_with("kube-rbac-net", &[], &detached, &kc, "bai");
    let r = run_rm(
        &s,
        &s.admin,
        &["cpu=0.25", "mem=256m"],
        "print('least role, detached')",
        "python",
    );
    assert!(r.ok(), "{r:?}\nagent:\n{}", agent.log());
    assert!(r.stdout.contains("least role, detached"), "{r:?}");
    assert!(
        !agent.log().contains("Forbidden"),
        "the agent was refused something:\n{}",
        agent.log()
    );
    cluster.wait_no_pods("bai");
    drop(agent);
    drop(s);
    cluster.kubectl(&[
        "delete",
        "-f",
        secrets_role.to_str().unwrap(),
        "--wait=false",
    ]);
    cluster.kubectl(&["delete", "-f", rbac.to_str().unwrap(), "--wait=false"]);
}
