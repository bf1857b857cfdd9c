//! A CDI spec of the node's GPUs (`/etc/cdi/*.yaml` or `/var/run/cdi/*.yaml`, as
//! `nvidia-ctk cdi generate` writes it), read into the same [`DriverFiles`] the plugin's own
//! search makes, where a site keeps one: the spec then says which nodes, files and
//! variables a GPU container gets.
//!
//! Docker 20.10 cannot apply CDI itself and runs no OCI hooks from an API call, so the
//! spec's two NVIDIA hooks are done by other means: `create-symlinks --link T::L` becomes a
//! read-only mount of `T`'s host file at `L`, and `update-ldcache --folder D` puts `D` on
//! `LD_LIBRARY_PATH`. Other hooks are left out with a warning.

use super::driver::{DriverFiles, FileMount, Host};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where CDI specs live, in the order the CDI standard reads them.
pub const SPEC_DIRS: [&str; 2] = ["/etc/cdi", "/var/run/cdi"];
/// The kind of NVIDIA's GPU specs.
pub const KIND: &str = "nvidia.com/gpu";

#[derive(Debug, Deserialize)]
struct Spec {
    kind: String,
    #[serde(default)]
    devices: Vec<Device>,
    #[serde(default, rename = "containerEdits")]
    edits: Edits,
}

#[derive(Debug, Deserialize)]
struct Device {
    name: String,
    #[serde(default, rename = "containerEdits")]
    edits: Edits,
}

#[derive(Debug, Default, Deserialize)]
struct Edits {
    #[serde(default)]
    env: Vec<String>,
    #[serde(default, rename = "deviceNodes")]
    device_nodes: Vec<Node>,
    #[serde(default)]
    mounts: Vec<Mount>,
    #[serde(default)]
    hooks: Vec<Hook>,
}

#[derive(Debug, Deserialize)]
struct Node {
    path: String,
    #[serde(default, rename = "hostPath")]
    host_path: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Mount {
    #[serde(rename = "hostPath")]
    host_path: String,
    #[serde(rename = "containerPath")]
    container_path: String,
}

#[derive(Debug, Deserialize)]
struct Hook {
    #[serde(default)]
    args: Vec<String>,
}

/// `HOST` when a node is at the same path inside, else `HOST:CONTAINER`.
fn node(n: &Node) -> String {
    match &n.host_path {
        Some(h) if h != &n.path => format!("{h}:{}", n.path),
        _ => n.path.clone(),
    }
}

/// The first NVIDIA GPU spec under the spec directories of `host`, with its path; None
/// where there is none. A spec that does not parse is an error (a site that keeps one
/// means it).
pub fn find(host: &Host) -> Result<Option<(PathBuf, DriverFiles)>, String> {
    for dir in SPEC_DIRS {
        let Ok(entries) = std::fs::read_dir(host.at(Path::new(dir))) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.extension()
                    .is_some_and(|x| x == "yaml" || x == "yml" || x == "json")
            })
            .collect();
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(&f)
                .map_err(|e| format!("cannot read {}: {e}", f.display()))?;
            // JSON is YAML too.
            let spec: Spec = serde_yaml::from_str(&text)
                .map_err(|e| format!("CDI spec {}: {e}", f.display()))?;
            if spec.kind == KIND {
                return Ok(Some((f, files_of(&spec))));
            }
        }
    }
    Ok(None)
}

fn files_of(spec: &Spec) -> DriverFiles {
    let mut out = DriverFiles {
        version: "cdi".into(),
        ..Default::default()
    };
    let mut by_container: BTreeMap<String, PathBuf> = BTreeMap::new();
    for m in &spec.edits.mounts {
        by_container.insert(m.container_path.clone(), PathBuf::from(&m.host_path));
        out.mounts.push(FileMount {
            host: PathBuf::from(&m.host_path),
            container: m.container_path.clone(),
        });
    }
    out.control_nodes = spec.edits.device_nodes.iter().map(node).collect();
    for hook in &spec.edits.hooks {
        let mut args = hook.args.iter();
        while let Some(a) = args.next() {
            match a.as_str() {
                "--link" => {
                    let Some((target, link)) = args.next().and_then(|l| l.split_once("::")) else {
                        continue;
                    };
                    let dir = Path::new(link).parent().unwrap_or(Path::new("/"));
                    let full = dir.join(target);
                    let key = full.to_string_lossy().into_owned();
                    match by_container.get(&key).or_else(|| by_container.get(target)) {
                        Some(h) => out.mounts.push(FileMount {
                            host: h.clone(),
                            container: link.to_string(),
                        }),
                        None => {
                            tracing::warn!(%link, %target, "CDI link to a file the spec does not mount: left out")
                        }
                    }
                }
                "--folder" => {
                    if let Some(d) = args.next() {
                        out.lib_dirs.push(d.clone());
                    }
                }
                _ => {}
            }
        }
    }
    for e in &spec.edits.env {
        if let Some((k, v)) = e.split_once('=') {
            out.env.insert(k.to_string(), v.to_string());
        }
    }
    for d in &spec.devices {
        out.gpu_nodes.insert(
            d.name.clone(),
            d.edits.device_nodes.iter().map(node).collect(),
        );
    }
    out.mounts.sort();
    out.mounts.dedup_by(|a, b| a.container == b.container);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape `nvidia-ctk cdi generate` writes (trimmed).
    const SPEC: &str = r#"
cdiVersion: 0.5.0
kind: nvidia.com/gpu
devices:
- name: "0"
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
- name: GPU-e0c9dd95-22f8-e395-3fde-923aa1b96632
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
- name: all
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
containerEdits:
  env:
  - NVIDIA_VISIBLE_DEVICES=void
  deviceNodes:
  - path: /dev/nvidiactl
  - path: /dev/nvidia-uvm
    hostPath: /dev/nvidia-uvm
  hooks:
  - hookName: createContainer
    path: /usr/bin/nvidia-ctk
    args:
    - nvidia-ctk
    - hook
    - create-symlinks
    - --link
    - libcuda.so.580.159.04::/usr/lib/x86_64-linux-gnu/libcuda.so.1
  - hookName: createContainer
    path: /usr/bin/nvidia-ctk
    args: [nvidia-ctk, hook, update-ldcache, --folder, /usr/lib/x86_64-linux-gnu]
  mounts:
  - hostPath: /usr/local/nvidia/lib64/libcuda.so.580.159.04
    containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04
    options: [ro, nosuid, nodev, bind]
  - hostPath: /usr/local/nvidia/bin/nvidia-smi
    containerPath: /usr/bin/nvidia-smi
    options: [ro, nosuid, nodev, bind]
"#;

    fn host_with(spec: Option<&str>) -> (tempfile::TempDir, Host) {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("etc/cdi")).unwrap();
        std::fs::write(
            t.path().join("etc/cdi/other.yaml"),
            "cdiVersion: 0.5.0\nkind: vendor.com/fpga\n",
        )
        .unwrap();
        if let Some(s) = spec {
            std::fs::write(t.path().join("etc/cdi/nvidia.yaml"), s).unwrap();
        }
        let host = Host {
            root: t.path().to_path_buf(),
        };
        (t, host)
    }

    #[test]
    fn an_nvidia_spec_becomes_nodes_mounts_links_and_library_folders() {
        let (_t, host) = host_with(Some(SPEC));
        let (path, d) = find(&host).unwrap().unwrap();
        assert!(path.ends_with("etc/cdi/nvidia.yaml"));
        assert_eq!(d.control_nodes, ["/dev/nvidiactl", "/dev/nvidia-uvm"]);
        assert_eq!(d.gpu_nodes["0"], ["/dev/nvidia0"]);
        assert_eq!(
            d.gpu_nodes["GPU-e0c9dd95-22f8-e395-3fde-923aa1b96632"],
            ["/dev/nvidia0"]
        );
        let binds = d.binds();
        for want in [
            "/usr/local/nvidia/lib64/libcuda.so.580.159.04:/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04:ro",
            // The create-symlinks hook, as a mount of the link's target.
            "/usr/local/nvidia/lib64/libcuda.so.580.159.04:/usr/lib/x86_64-linux-gnu/libcuda.so.1:ro",
            "/usr/local/nvidia/bin/nvidia-smi:/usr/bin/nvidia-smi:ro",
        ] {
            assert!(binds.contains(&want.to_string()), "{want} not in {binds:?}");
        }
        assert_eq!(d.lib_dirs, ["/usr/lib/x86_64-linux-gnu"]);
        assert_eq!(d.env["NVIDIA_VISIBLE_DEVICES"], "void");
    }

    #[test]
    fn no_spec_is_none_and_a_broken_one_is_an_error() {
        let (_t, host) = host_with(None);
        assert!(find(&host).unwrap().is_none());
        let (_t, host) = host_with(Some("kind: nvidia.com/gpu\ndevices: 7\n"));
        let e = find(&host).unwrap_err();
        assert!(e.contains("nvidia.yaml"), "{e}");
    }

    #[test]
    fn a_node_at_another_path_inside_keeps_both() {
        let n = Node {
            path: "/dev/nvidia0".into(),
            host_path: Some("/dev/nvidia3".into()),
        };
        assert_eq!(node(&n), "/dev/nvidia3:/dev/nvidia0");
    }
}
