//! The NVIDIA driver's files a container needs to use a GPU, found on the host, so that
//! bai's GPU kernels need only the driver and not NVIDIA's container toolkit.
//!
//! A container that uses a GPU needs three things from the host, none of which an image
//! can carry (they must match the running kernel module exactly):
//! * the **device nodes**: `/dev/nvidiactl`, `/dev/nvidia-uvm` (and `-tools`, `nvidia-modeset`
//!   where present) for everyone, and `/dev/nvidiaN` (N = the GPU's minor number) for each
//!   GPU it holds. Docker makes only these nodes in the container and allows only them in
//!   its device cgroup, so a container cannot open a GPU it was not given, and one given
//!   none sees none;
//! * the driver's **user-space libraries** for compute and management (`libcuda`,
//!   `libnvidia-ml`, the PTX JIT, NVVM, …), of exactly the driver's version, bind mounted
//!   read-only under [`LIB_IN_CONTAINER`] with their sonames (`libcuda.so.1`);
//! * its **tools** (`nvidia-smi`, …), read-only under [`BIN_IN_CONTAINER`].
//!
//! [`LIB_IN_CONTAINER`] and [`BIN_IN_CONTAINER`] are where NVIDIA's CUDA images already look
//! (`LD_LIBRARY_PATH` and `PATH`); the agent appends them to the image's own values for
//! images that do not.
//!
//! Where the libraries are: the directory the dynamic loader took `libnvidia-ml.so.1`
//! from when NVML was loaded (read from `/proc/self/maps`), then the usual driver
//! directories. Only files of the running driver's version (NVML's) are taken, so a stale
//! library of an older driver is never mounted. Every path is read under a root
//! ([`Host`]), `/` in production and a fake driver tree in tests.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where a GPU kernel finds the driver's libraries.
pub const LIB_IN_CONTAINER: &str = "/usr/local/nvidia/lib64";
/// Where a GPU kernel finds the driver's tools.
pub const BIN_IN_CONTAINER: &str = "/usr/local/nvidia/bin";

/// The driver libraries a compute container needs (what the container toolkit calls the
/// `compute` and `utility` capabilities), by name before `.so`. Missing ones are skipped:
/// not every driver ships every one.
const LIBS: [&str; 12] = [
    "libcuda",
    "libcudadebugger",
    "libnvidia-ml",
    "libnvidia-ptxjitcompiler",
    "libnvidia-nvvm",
    "libnvidia-gpucomp",
    "libnvidia-cfg",
    "libnvidia-allocator",
    "libnvidia-opencl",
    "libnvidia-pkcs11",
    "libnvidia-pkcs11-openssl3",
    // Drivers before 495.
    "libnvidia-fatbinaryloader",
];

/// The driver's tools a container may run.
const BINS: [&str; 3] = ["nvidia-smi", "nvidia-debugdump", "nvidia-cuda-mps-control"];

/// Device nodes every GPU container needs besides its GPUs' own.
const CONTROL_NODES: [&str; 4] = [
    "nvidiactl",
    "nvidia-uvm",
    "nvidia-uvm-tools",
    "nvidia-modeset",
];

/// Directories searched after the loader's choice.
const LIB_DIRS: [&str; 6] = [
    "/usr/local/nvidia/lib64",
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib64",
    "/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib",
];
const BIN_DIRS: [&str; 3] = ["/usr/local/nvidia/bin", "/usr/bin", "/usr/local/bin"];

/// The host as the driver search sees it: every absolute path is read below `root`.
#[derive(Debug, Clone)]
pub struct Host {
    pub root: PathBuf,
}

impl Host {
    /// The real host.
    pub fn real() -> Host {
        Host { root: "/".into() }
    }

    pub(super) fn at(&self, path: &Path) -> PathBuf {
        self.root.join(path.strip_prefix("/").unwrap_or(path))
    }
}

/// One read-only file mount, host path (as the host knows it) → container path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct FileMount {
    pub host: PathBuf,
    pub container: String,
}

/// What every GPU container gets from the driver, found once at discovery.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DriverFiles {
    /// The driver's version (`580.159.04`).
    pub version: String,
    /// Libraries and tools, read-only.
    pub mounts: Vec<FileMount>,
    /// `/dev/nvidiactl`, … (`HOST`, the same path inside, or `HOST:CONTAINER`).
    pub control_nodes: Vec<String>,
    /// Each GPU's own nodes by the name a CDI spec gives it (its index or UUID); empty
    /// where the plugin found the driver itself (`/dev/nvidia<minor>`).
    pub gpu_nodes: BTreeMap<String, Vec<String>>,
    /// Directories the container's `LD_LIBRARY_PATH` gets.
    pub lib_dirs: Vec<String>,
    /// Directories the container's `PATH` gets.
    pub bin_dirs: Vec<String>,
    /// Variables every GPU container gets (a CDI spec's).
    pub env: BTreeMap<String, String>,
}

impl DriverFiles {
    /// Finds the files of driver `version` on `host`; `loaded` is the directory the loader
    /// took NVML from, searched first. An error when `libcuda` of that version is nowhere:
    /// a container could not run CUDA.
    pub fn find(host: &Host, version: &str, loaded: Option<&Path>) -> Result<DriverFiles, String> {
        if version.is_empty() || version.contains('/') {
            return Err(format!("driver version {version:?} is not a version"));
        }
        let dirs: Vec<PathBuf> = loaded
            .map(Path::to_path_buf)
            .into_iter()
            .chain(LIB_DIRS.iter().map(PathBuf::from))
            .collect();
        let mut mounts = Vec::new();
        for stem in LIBS {
            let file = format!("{stem}.so.{version}");
            let Some(dir) = dirs.iter().find(|d| host.at(d).join(&file).is_file()) else {
                continue;
            };
            for name in names_of(host, dir, &file) {
                mounts.push(FileMount {
                    host: dir.join(&file),
                    container: format!("{LIB_IN_CONTAINER}/{name}"),
                });
            }
        }
        if !mounts
            .iter()
            .any(|m| m.container.ends_with(&format!("/libcuda.so.{version}")))
        {
            return Err(format!(
                "libcuda.so.{version} (the running driver's) is in none of {}",
                dirs.iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let bin_dirs: Vec<PathBuf> = loaded
            .and_then(Path::parent)
            .map(|p| p.join("bin"))
            .into_iter()
            .chain(BIN_DIRS.iter().map(PathBuf::from))
            .collect();
        for bin in BINS {
            if let Some(dir) = bin_dirs.iter().find(|d| host.at(d).join(bin).is_file()) {
                mounts.push(FileMount {
                    host: real_path(host, &dir.join(bin)),
                    container: format!("{BIN_IN_CONTAINER}/{bin}"),
                });
            }
        }
        mounts.sort();
        mounts.dedup_by(|a, b| a.container == b.container);
        let control_nodes = CONTROL_NODES
            .iter()
            .map(|n| format!("/dev/{n}"))
            .filter(|p| host.at(Path::new(p)).exists())
            .collect();
        Ok(DriverFiles {
            version: version.to_string(),
            mounts,
            control_nodes,
            lib_dirs: vec![LIB_IN_CONTAINER.into()],
            bin_dirs: vec![BIN_IN_CONTAINER.into()],
            ..Default::default()
        })
    }

    /// The nodes of GPU `index` with `uuid` and device node minor `minor`.
    pub fn nodes_of(&self, index: u32, uuid: &str, minor: u32) -> Vec<String> {
        if self.gpu_nodes.is_empty() {
            return vec![gpu_node(minor)];
        }
        self.gpu_nodes
            .get(&index.to_string())
            .or_else(|| self.gpu_nodes.get(uuid))
            .cloned()
            .unwrap_or_default()
    }

    /// The binds for a container, `HOST:CONTAINER:ro`.
    pub fn binds(&self) -> Vec<String> {
        self.mounts
            .iter()
            .map(|m| format!("{}:{}:ro", m.host.display(), m.container))
            .collect()
    }
}

/// The device node of the GPU with `minor`.
pub fn gpu_node(minor: u32) -> String {
    format!("/dev/nvidia{minor}")
}

/// `file` and every link in `dir` that leads to it (`libcuda.so.1`, `libcuda.so`), so the
/// container finds it by its soname and its link name.
fn names_of(host: &Host, dir: &Path, file: &str) -> Vec<String> {
    let mut names = vec![file.to_string()];
    let Ok(entries) = std::fs::read_dir(host.at(dir)) else {
        return names;
    };
    let target = std::fs::canonicalize(host.at(dir).join(file)).ok();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let is_link = e.file_type().map(|t| t.is_symlink()).unwrap_or(false);
        if is_link
            && name != file
            && !name.contains(':')
            && target.is_some()
            && std::fs::canonicalize(e.path()).ok() == target
        {
            names.push(name);
        }
    }
    names.sort();
    names
}

/// The file a tool's path leads to, as a host path (the bind mount's source).
fn real_path(host: &Host, path: &Path) -> PathBuf {
    match std::fs::canonicalize(host.at(path)) {
        Ok(p) if host.root == Path::new("/") => p,
        Ok(p) => match p.strip_prefix(std::fs::canonicalize(&host.root).unwrap_or_default()) {
            Ok(rel) => Path::new("/").join(rel),
            Err(_) => path.to_path_buf(),
        },
        Err(_) => path.to_path_buf(),
    }
}

/// The directory this process loaded `libnvidia-ml` from (after NVML was loaded), from
/// `/proc/self/maps`.
pub fn loaded_nvml_dir() -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps_nvml_dir(&maps)
}

fn maps_nvml_dir(maps: &str) -> Option<PathBuf> {
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| {
            Path::new(p)
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("libnvidia-ml.so"))
        })
        .and_then(|p| Path::new(p).parent().map(Path::to_path_buf))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    const V: &str = "580.159.04";

    /// A driver laid out as on the lent H200 (/usr/local/nvidia/{lib64,bin}), with an old
    /// driver's libcuda left in the system directory.
    fn fake_driver() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let lib = t.path().join("usr/local/nvidia/lib64");
        let bin = t.path().join("usr/local/nvidia/bin");
        let sys = t.path().join("usr/lib/x86_64-linux-gnu");
        for d in [&lib, &bin, &sys, &t.path().join("dev")] {
            std::fs::create_dir_all(d).unwrap();
        }
        for (stem, soname) in [
            ("libcuda", Some("libcuda.so.1")),
            ("libnvidia-ml", Some("libnvidia-ml.so.1")),
            (
                "libnvidia-ptxjitcompiler",
                Some("libnvidia-ptxjitcompiler.so.1"),
            ),
            ("libnvidia-nvvm", Some("libnvidia-nvvm.so.4")),
            ("libnvidia-gpucomp", None),
            ("libnvidia-glcore", None),
        ] {
            let f = format!("{stem}.so.{V}");
            std::fs::write(lib.join(&f), b"elf").unwrap();
            if let Some(s) = soname {
                symlink(&f, lib.join(s)).unwrap();
                symlink(s, lib.join(format!("{stem}.so"))).unwrap();
            }
        }
        std::fs::write(sys.join("libcuda.so.470.1"), b"old").unwrap();
        symlink("libcuda.so.470.1", sys.join("libcuda.so.1")).unwrap();
        std::fs::write(bin.join("nvidia-smi"), b"elf").unwrap();
        for n in ["nvidiactl", "nvidia-uvm", "nvidia0"] {
            std::fs::write(t.path().join("dev").join(n), b"").unwrap();
        }
        t
    }

    #[test]
    fn finds_the_running_drivers_libraries_by_soname_and_its_tools() {
        let t = fake_driver();
        let host = Host {
            root: t.path().to_path_buf(),
        };
        let loaded = Path::new("/usr/local/nvidia/lib64");
        let d = DriverFiles::find(&host, V, Some(loaded)).unwrap();
        let names: Vec<&str> = d.mounts.iter().map(|m| m.container.as_str()).collect();
        for want in [
            "/usr/local/nvidia/lib64/libcuda.so.1",
            "/usr/local/nvidia/lib64/libcuda.so",
            "/usr/local/nvidia/lib64/libcuda.so.580.159.04",
            "/usr/local/nvidia/lib64/libnvidia-ml.so.1",
            "/usr/local/nvidia/lib64/libnvidia-nvvm.so.4",
            "/usr/local/nvidia/lib64/libnvidia-ptxjitcompiler.so.1",
            "/usr/local/nvidia/lib64/libnvidia-gpucomp.so.580.159.04",
            "/usr/local/nvidia/bin/nvidia-smi",
        ] {
            assert!(names.contains(&want), "{want} missing from {names:?}");
        }
        // Graphics libraries are not a compute container's, and nothing of the old driver.
        assert!(
            !names
                .iter()
                .any(|n| n.contains("glcore") || n.contains("470"))
        );
        // Each link is mounted from the real file, as the host names it.
        let cuda1 = d
            .mounts
            .iter()
            .find(|m| m.container.ends_with("libcuda.so.1"))
            .unwrap();
        assert_eq!(
            cuda1.host,
            Path::new("/usr/local/nvidia/lib64/libcuda.so.580.159.04")
        );
        assert_eq!(d.control_nodes, ["/dev/nvidiactl", "/dev/nvidia-uvm"]);
        assert!(d.binds().iter().all(|b| b.ends_with(":ro")));
        assert!(d.binds().contains(
            &"/usr/local/nvidia/bin/nvidia-smi:/usr/local/nvidia/bin/nvidia-smi:ro".to_string()
        ));
    }

    #[test]
    fn without_the_loaders_hint_the_usual_directories_are_searched() {
        let t = fake_driver();
        let host = Host {
            root: t.path().to_path_buf(),
        };
        let d = DriverFiles::find(&host, V, None).unwrap();
        assert!(
            d.mounts
                .iter()
                .any(|m| m.container.ends_with("/libcuda.so.1"))
        );
    }

    #[test]
    fn a_driver_whose_libcuda_is_missing_is_an_error_not_an_empty_mount_list() {
        let t = fake_driver();
        let host = Host {
            root: t.path().to_path_buf(),
        };
        let e = DriverFiles::find(&host, "999.1", None).unwrap_err();
        assert!(e.contains("libcuda.so.999.1"), "{e}");
        assert!(DriverFiles::find(&host, "../x", None).is_err());
        assert!(DriverFiles::find(&host, "", None).is_err());
    }

    #[test]
    fn the_loaded_nvml_is_read_from_the_process_maps() {
        let maps = "7f0-7f1 r-xp 00000000 00:1f 42 /usr/lib/x86_64-linux-gnu/libc.so.6\n\
                    7f2-7f3 r-xp 00000000 00:1f 43 /usr/local/nvidia/lib64/libnvidia-ml.so.580.159.04\n\
                    7f4-7f5 rw-p 00000000 00:00 0 \n";
        assert_eq!(
            maps_nvml_dir(maps),
            Some(PathBuf::from("/usr/local/nvidia/lib64"))
        );
        assert_eq!(maps_nvml_dir("7f0-7f1 r-xp 0 0 0 /lib/libc.so.6\n"), None);
        assert_eq!(gpu_node(3), "/dev/nvidia3");
    }
}
