use super::*;
use bai_core::cluster::{ClusterInfo, ClusterKeys};
use bai_core::dotfile::Dotfile;

/// The test kernel with two dotfiles.
fn spec() -> KernelSpec {
    KernelSpec {
        dotfiles: vec![
            Dotfile {
                path: ".vimrc".into(),
                mode: 0o600,
                data: "set number\n".into(),
            },
            Dotfile {
                path: "./.config/git/config".into(),
                mode: 0o100644,
                data: "[user]\n".into(),
            },
        ],
        ..crate::kubernetes::test_spec::spec()
    }
}

fn text(s: &KernelSecret, key: &str) -> String {
    let data = s.secret.data.as_ref().unwrap();
    String::from_utf8(data[key].0.clone()).unwrap()
}

fn manifest(s: &KernelSecret) -> Vec<serde_json::Value> {
    serde_json::from_str(&text(s, MANIFEST)).unwrap()
}

#[test]
fn a_kernels_secret_holds_its_token_dotfiles_and_etc_files() {
    let s = kernel_secret(&spec(), "bai", "k8s-1", "t0k3n").unwrap();
    let meta = &s.secret.metadata;
    assert_eq!(
        meta.name.as_deref(),
        Some(pod_name(Uuid::from_u128(1)).as_str())
    );
    assert_eq!(meta.namespace.as_deref(), Some("bai"));
    let labels = meta.labels.as_ref().unwrap();
    assert_eq!(
        labels::kernel_of(Some(labels)),
        Some(Uuid::from_u128(1)),
        "{labels:?}"
    );
    assert_eq!(text(&s, TOKEN_KEY), "t0k3n\n");
    assert_eq!(text(&s, "dotfile-0"), "set number\n");
    assert_eq!(
        manifest(&s),
        vec![
            serde_json::json!({"key": "krunner.token", "place": "run", "path": "krunner.token", "mode": 0o600}),
            serde_json::json!({"key": "dotfile-0", "place": "home", "path": ".vimrc", "mode": 0o600}),
            // The path normalized, the mode's file-type bits dropped.
            serde_json::json!({"key": "dotfile-1", "place": "home", "path": ".config/git/config", "mode": 0o644}),
        ]
    );
    // Every kernel's /etc files, mounted read-only where the Docker backend binds them.
    assert_eq!(
        s.mounts,
        vec![
            ("tmux.conf".to_string(), "/etc/tmux.conf".to_string()),
            (
                "profile.sh".to_string(),
                "/etc/profile.d/zz-bai-environ.sh".to_string()
            ),
        ]
    );
    assert!(text(&s, "tmux.conf").contains("set -g mouse on"));
}

#[test]
fn a_dotfile_that_would_leave_the_home_is_refused() {
    let mut s = spec();
    s.dotfiles[1].path = "../.bashrc".into();
    let e = kernel_secret(&s, "bai", "k8s-1", "t").unwrap_err();
    assert!(e.to_string().contains("../.bashrc"), "{e}");
}

#[test]
fn a_cluster_sessions_keys_are_mounted_and_its_authorized_key_unpacked() {
    let mut s = spec();
    let mut c = ClusterInfo::single(s.kernel_id);
    c.size = 2;
    c.keys = Some(ClusterKeys {
        private_key: "-----BEGIN OPENSSH PRIVATE KEY-----\n".into(),
        public_key: "ssh-ed25519 AAAA bai".into(),
    });
    s.cluster = Some(c);
    let k = kernel_secret(&s, "bai", "k8s-1", "t").unwrap();
    let inside: Vec<&str> = k.mounts.iter().map(|(_, i)| i.as_str()).collect();
    assert_eq!(
        inside,
        vec![
            "/etc/tmux.conf",
            "/etc/profile.d/zz-bai-environ.sh",
            "/home/config/ssh/id_cluster",
            "/home/config/ssh/id_cluster.pub",
            "/etc/ssh/ssh_config.d/bai-cluster.conf"
        ]
    );
    assert_eq!(
        text(&k, "id_cluster"),
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    );
    assert!(
        manifest(&k).contains(&serde_json::json!({"key": "cluster_authorized_keys",
        "place": "run", "path": "cluster_authorized_keys", "mode": 0o600}))
    );
    assert_eq!(text(&k, "cluster_authorized_keys"), "ssh-ed25519 AAAA bai");
}
