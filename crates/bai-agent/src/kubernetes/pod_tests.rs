use super::*;
use crate::krunner_proto::GATE_VAR;
use crate::kubernetes::test_spec::spec;
use bai_core::agent::Mount;
use uuid::Uuid;

pub(in crate::kubernetes) fn at() -> Placement {
    Placement {
        namespace: "bai".into(),
        agent_id: "k8s-1".into(),
        node: "node-a".into(),
        gpu_sharing: None,
        runner_listen: None,
        accounts: false,
        disk: Disk::OnNode(OnNode {
            krunner: "/usr/lib/bai/bai-krunner".into(),
            run_dir: "/var/lib/bai/kernels/1/run".into(),
            work_dir: "/var/lib/bai/kernels/1/work".into(),
            home_propagates: false,
            egress_gate: false,
            files: vec![(
                "/var/lib/bai/etc/profile.sh".into(),
                "/etc/profile.d/zz-bai-environ.sh".into(),
            )],
        }),
    }
}

pub(in crate::kubernetes) fn container(p: &Pod) -> &Container {
    &p.spec.as_ref().unwrap().containers[0]
}

fn q(s: &str) -> Quantity {
    Quantity(s.into())
}

#[test]
fn requests_equal_limits_from_the_slots() {
    let p = kernel_pod(&spec(), &at()).unwrap();
    let r = container(&p).resources.as_ref().unwrap();
    let want = BTreeMap::from([
        ("cpu".to_string(), q("500m")),
        ("memory".to_string(), q("268435456")),
    ]);
    assert_eq!(r.requests.as_ref(), Some(&want));
    assert_eq!(r.limits.as_ref(), Some(&want));
}

#[test]
fn whole_gpus_become_nvidia_gpu_and_shares_are_refused() {
    let mut s = spec();
    s.slots.accel.insert(CUDA_DEVICE.into(), 2000);
    let p = kernel_pod(&s, &at()).unwrap();
    let r = container(&p).resources.as_ref().unwrap();
    assert_eq!(r.limits.as_ref().unwrap()[NVIDIA_GPU], q("2"));
    assert_eq!(r.requests.as_ref().unwrap()[NVIDIA_GPU], q("2"));

    s.slots.accel.insert(CUDA_DEVICE.into(), 1500);
    assert_eq!(
        kernel_pod(&s, &at()).unwrap_err(),
        PodError::FractionalGpu {
            slot: CUDA_DEVICE.into(),
            value: "1.5".into()
        }
    );
    let mut s = spec();
    s.slots.accel.insert(CUDA_SHARES.into(), 500);
    let e = kernel_pod(&s, &at()).unwrap_err();
    assert_eq!(e, PodError::SharesUnsupported);
    assert!(e.to_string().contains("cuda.device instead"), "{e}");
    let mut s = spec();
    s.slots.accel.insert("mock.shares".into(), 1000);
    assert!(matches!(
        kernel_pod(&s, &at()),
        Err(PodError::UnsupportedSlot(_))
    ));
    // A slot asked at zero is no request.
    let mut s = spec();
    s.slots.accel.insert(CUDA_SHARES.into(), 0);
    assert!(kernel_pod(&s, &at()).is_ok());
}

#[test]
fn shares_on_a_time_sliced_node_become_its_slices() {
    let sliced = |resource: &str| Placement {
        gpu_sharing: Some(GpuSharing {
            resource: resource.into(),
            replicas: 4,
            mps: false,
        }),
        ..at()
    };
    let mut s = spec();
    s.slots.accel.insert(CUDA_SHARES.into(), 500);
    let p = kernel_pod(&s, &sliced("nvidia.com/gpu.shared")).unwrap();
    let r = container(&p).resources.as_ref().unwrap();
    assert_eq!(r.limits.as_ref().unwrap()["nvidia.com/gpu.shared"], q("2"));
    assert_eq!(
        r.requests.as_ref().unwrap()["nvidia.com/gpu.shared"],
        q("2")
    );
    assert!(!r.limits.as_ref().unwrap().contains_key(NVIDIA_GPU));
    // Not renamed: the slices are nvidia.com/gpu, and whole GPUs cannot be asked for.
    let p = kernel_pod(&s, &sliced(NVIDIA_GPU)).unwrap();
    let r = container(&p).resources.as_ref().unwrap();
    assert_eq!(r.limits.as_ref().unwrap()[NVIDIA_GPU], q("2"));
    let mut d = spec();
    d.slots.accel.insert(CUDA_DEVICE.into(), 1000);
    let e = kernel_pod(&d, &sliced(NVIDIA_GPU)).unwrap_err();
    assert_eq!(
        e,
        PodError::GpusSliced {
            how: "time-sliced",
            replicas: 4
        }
    );
    assert!(e.to_string().contains("ask for cuda.shares"), "{e}");
    // Not a whole number of slices: refused, naming the step.
    s.slots.accel.insert(CUDA_SHARES.into(), 300);
    let e = kernel_pod(&s, &sliced("nvidia.com/gpu.shared")).unwrap_err();
    assert!(
        e.to_string()
            .contains("time-sliced 4 ways, ask for a multiple of 0.25"),
        "{e}"
    );
}

#[test]
fn a_node_sharing_with_mps_gives_a_kernel_one_slice_at_most() {
    let mps = Placement {
        gpu_sharing: Some(GpuSharing {
            resource: "nvidia.com/gpu.shared".into(),
            replicas: 4,
            mps: true,
        }),
        ..at()
    };
    let mut s = spec();
    s.slots.accel.insert(CUDA_SHARES.into(), 250);
    let p = kernel_pod(&s, &mps).unwrap();
    let r = container(&p).resources.as_ref().unwrap();
    assert_eq!(r.limits.as_ref().unwrap()["nvidia.com/gpu.shared"], q("1"));
    // Two slices: the device plugin would refuse the pod at admission; bai refuses first.
    s.slots.accel.insert(CUDA_SHARES.into(), 500);
    let e = kernel_pod(&s, &mps).unwrap_err();
    assert!(
        matches!(e, PodError::SharesPastOneSlice { replicas: 4, .. }),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains("shared with MPS 4 ways, which gives a kernel one slice at most; ask for cuda.shares=0.25"),
        "{e}"
    );
    // Its other refusals say how the node shares its GPUs too.
    s.slots.accel.insert(CUDA_SHARES.into(), 300);
    let e = kernel_pod(&s, &mps).unwrap_err();
    assert!(
        e.to_string()
            .contains("shared with MPS 4 ways, ask for a multiple of 0.25"),
        "{e}"
    );
}

#[test]
fn shmem_is_a_memory_backed_dev_shm_of_that_size() {
    let p = kernel_pod(&spec(), &at()).unwrap();
    let vols = p.spec.as_ref().unwrap().volumes.as_ref().unwrap();
    let shm = vols.iter().find(|v| v.name == "shm").unwrap();
    let e = shm.empty_dir.as_ref().unwrap();
    assert_eq!(e.medium.as_deref(), Some("Memory"));
    assert_eq!(e.size_limit, Some(q("67108864")));
    let m = container(&p).volume_mounts.as_ref().unwrap();
    assert!(
        m.iter()
            .any(|m| m.name == "shm" && m.mount_path == "/dev/shm")
    );
}

#[test]
fn the_kernel_is_unprivileged_as_the_work_user() {
    let p = kernel_pod(&spec(), &at()).unwrap();
    let sc = container(&p).security_context.as_ref().unwrap();
    assert_eq!(sc.privileged, Some(false));
    assert_eq!(sc.allow_privilege_escalation, Some(false));
    assert_eq!(sc.run_as_user, Some(1000));
    assert_eq!(sc.run_as_group, Some(1000));
    assert_eq!(
        sc.capabilities.as_ref().unwrap().drop.as_deref(),
        Some(&["ALL".to_string()][..])
    );
    let ps = p.spec.as_ref().unwrap();
    assert_eq!(ps.automount_service_account_token, Some(false));
    assert_eq!(ps.termination_grace_period_seconds, Some(0));
    assert_eq!(ps.restart_policy.as_deref(), Some("Never"));
}

#[test]
fn kubernetes_never_evicts_a_kernel_from_a_node_that_is_down() {
    let p = kernel_pod(&spec(), &at()).unwrap();
    let t = p
        .spec
        .as_ref()
        .unwrap()
        .tolerations
        .clone()
        .unwrap_or_default();
    for key in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        let found = t.iter().find(|t| t.key.as_deref() == Some(key));
        let found = found.unwrap_or_else(|| panic!("no toleration of {key}: {t:?}"));
        assert_eq!(found.effect.as_deref(), Some("NoExecute"));
        assert_eq!(found.operator.as_deref(), Some("Exists"));
        // For ever: bai decides when the kernel ends.
        assert_eq!(found.toleration_seconds, None);
    }
}

#[test]
fn the_pod_goes_to_the_chosen_node_by_required_affinity_not_node_name() {
    let p = kernel_pod(&spec(), &at()).unwrap();
    let ps = p.spec.as_ref().unwrap();
    assert_eq!(ps.node_name, None);
    let terms = &ps
        .affinity
        .as_ref()
        .unwrap()
        .node_affinity
        .as_ref()
        .unwrap()
        .required_during_scheduling_ignored_during_execution
        .as_ref()
        .unwrap()
        .node_selector_terms;
    let f = &terms[0].match_fields.as_ref().unwrap()[0];
    assert_eq!(
        (f.key.as_str(), f.operator.as_str()),
        ("metadata.name", "In")
    );
    assert_eq!(f.values.as_deref(), Some(&["node-a".to_string()][..]));
}

#[test]
fn labels_name_session_and_kernel_and_the_runner_is_mounted() {
    let p = kernel_pod(&spec(), &at()).unwrap();
    assert_eq!(
        p.metadata.name.as_deref(),
        Some(&*pod_name(Uuid::from_u128(1)))
    );
    assert_eq!(p.metadata.namespace.as_deref(), Some("bai"));
    let l = p.metadata.labels.as_ref().unwrap();
    assert_eq!(l[crate::LABEL_KERNEL], Uuid::from_u128(1).to_string());
    assert_eq!(l[crate::LABEL_SESSION], Uuid::from_u128(2).to_string());
    assert_eq!(l[crate::LABEL_AGENT], "k8s-1");
    let c = container(&p);
    assert_eq!(
        c.command.as_deref(),
        Some(&[KRUNNER_INSIDE.to_string()][..])
    );
    let env = c.env.as_ref().unwrap();
    let get = |k: &str| {
        env.iter()
            .find(|e| e.name == k)
            .and_then(|e| e.value.clone())
    };
    assert_eq!(get("FOO").as_deref(), Some("bar"));
    assert_eq!(get("BAI_KERNEL_ID"), Some(Uuid::from_u128(1).to_string()));
    assert_eq!(get("OMP_NUM_THREADS").as_deref(), Some("1"));
    let vols = p.spec.as_ref().unwrap().volumes.as_ref().unwrap();
    let kr = vols.iter().find(|v| v.name == "krunner").unwrap();
    assert_eq!(
        kr.host_path.as_ref().unwrap().type_.as_deref(),
        Some("File")
    );
    // The login-shell hook (the session's PATH in the web terminal) as on Docker: a file of
    // the node, read-only.
    let hook = vols.iter().find(|v| v.name == "file-0").unwrap();
    assert_eq!(
        hook.host_path.as_ref().unwrap().path,
        "/var/lib/bai/etc/profile.sh"
    );
    let m = c
        .volume_mounts
        .as_ref()
        .unwrap()
        .iter()
        .find(|m| m.name == "file-0")
        .unwrap();
    assert_eq!(m.mount_path, "/etc/profile.d/zz-bai-environ.sh");
    assert_eq!(m.read_only, Some(true));
}

#[test]
fn data_folders_are_host_paths_and_relative_ones_are_refused() {
    let mut s = spec();
    s.mounts.push(Mount {
        vfolder_id: Uuid::from_u128(9),
        name: "data".into(),
        host_path: "/srv/nfs/data".into(),
        kernel_path: "/home/work/data".into(),
        read_only: true,
    });
    let p = kernel_pod(&s, &at()).unwrap();
    let m = container(&p).volume_mounts.as_ref().unwrap();
    let d = m
        .iter()
        .find(|m| m.mount_path == "/home/work/data")
        .unwrap();
    assert_eq!(d.read_only, Some(true));
    s.mounts[0].host_path = "srv".into();
    assert!(matches!(
        kernel_pod(&s, &at()),
        Err(PodError::BadMount { .. })
    ));
}

/// A multi-node session's kernel is a pod like a single-node one's, whether its siblings
/// are on this agent or on others: the overlay's fixed address is not used (the pod gets the
/// cluster's), and its hostname is its place in the session.
#[test]
fn a_multi_node_cluster_sessions_kernel_is_a_pod_on_the_pod_network() {
    let mut s = spec();
    let mut c = bai_core::cluster::ClusterInfo::single(s.kernel_id);
    c.mode = bai_core::cluster::ClusterMode::MultiNode;
    let overlay = |peers: Vec<String>| bai_core::cluster::Overlay {
        vni: 1,
        subnet: "10.224.0.0/24".into(),
        gateway: "10.224.0.254".parse().unwrap(),
        address: "10.224.0.10".parse().unwrap(),
        hosts: vec![("main1".into(), "10.224.0.10".parse().unwrap())],
        peers,
    };
    for peers in [vec!["10.0.0.2".to_string()], Vec::new()] {
        c.overlay = Some(overlay(peers));
        s.cluster = Some(c.clone());
        let pod = kernel_pod(&s, &at()).unwrap();
        let spec = pod.spec.unwrap();
        assert_eq!(spec.hostname.as_deref(), Some("main1"));
        assert_ne!(spec.host_network, Some(true));
        let text = serde_json::to_string(&spec).unwrap();
        assert!(
            !text.contains("10.224.0."),
            "no overlay address in the pod: {text}"
        );
    }
}

/// A MIG profile's slot becomes that profile's resource, requests = limits, in whole
/// instances.
#[test]
fn mig_instances_become_their_profiles_resource() {
    let mut s = spec();
    s.slots.accel.insert("cuda.device:1g.18gb-mig".into(), 2000);
    let p = kernel_pod(&s, &at()).unwrap();
    let r = container(&p).resources.as_ref().unwrap();
    assert_eq!(r.limits.as_ref().unwrap()["nvidia.com/mig-1g.18gb"], q("2"));
    assert_eq!(
        r.requests.as_ref().unwrap()["nvidia.com/mig-1g.18gb"],
        q("2")
    );
    assert!(!r.limits.as_ref().unwrap().contains_key(NVIDIA_GPU));
    s.slots.accel.insert("cuda.device:1g.18gb-mig".into(), 500);
    assert!(matches!(
        kernel_pod(&s, &at()),
        Err(PodError::FractionalGpu { slot, .. }) if slot == "cuda.device:1g.18gb-mig"
    ));
}

#[test]
fn the_runner_listens_on_the_pod_network_only_where_the_agent_reaches_it_there() {
    let listen = |p: &Pod| {
        container(p)
            .env
            .as_ref()
            .unwrap()
            .iter()
            .filter(|e| e.name == "BAI_KRUNNER_LISTEN")
            .map(|e| e.value.clone().unwrap_or_default())
            .collect::<Vec<_>>()
    };
    assert!(listen(&kernel_pod(&spec(), &at()).unwrap()).is_empty());
    let network = Placement {
        runner_listen: Some("0.0.0.0:2001".into()),
        ..at()
    };
    // The agent's value, once, whatever the session's variables say.
    let mut s = spec();
    s.environ
        .insert("BAI_KRUNNER_LISTEN".into(), "0.0.0.0:9".into());
    assert_eq!(
        listen(&kernel_pod(&s, &network).unwrap()),
        vec!["0.0.0.0:2001".to_string()]
    );
}

/// A detached pod (`--runner-reach network`) needs nothing of its node's disk: the runner
/// copied in by an init container of the runner's image (as the kernel runs, with its CPU and
/// memory, no GPU), emptyDirs for the runner, its directory and the home, the kernel's Secret
/// mounted whole and key by key, the host table from the run directory; only data folders
/// are hostPaths.
#[test]
fn a_detached_pod_mounts_nothing_of_its_node_but_data_folders() {
    let mut s = spec();
    s.slots.accel.insert(CUDA_DEVICE.into(), 1000);
    s.mounts = vec![Mount {
        vfolder_id: Uuid::from_u128(7),
        name: "data".into(),
        host_path: "/srv/nfs/data".into(),
        kernel_path: "/home/work/data".into(),
        read_only: false,
    }];
    let mut at = at();
    at.disk = Disk::Detached(Detached {
        runner_image: "bai/agent:1".into(),
        secret: "bai-k-1".into(),
        mounts: vec![("tmux.conf".into(), "/etc/tmux.conf".into())],
        hosts: true,
    });
    let p = kernel_pod(&s, &at).unwrap();
    let spec = p.spec.as_ref().unwrap();
    let volumes = spec.volumes.as_ref().unwrap();
    let host_paths: Vec<&str> = volumes
        .iter()
        .filter_map(|v| v.host_path.as_ref().map(|h| h.path.as_str()))
        .collect();
    assert_eq!(host_paths, vec!["/srv/nfs/data"]);
    let secret = volumes.iter().find(|v| v.name == "secret").unwrap();
    let sv = secret.secret.as_ref().unwrap();
    assert_eq!(sv.secret_name.as_deref(), Some("bai-k-1"));
    assert_eq!(sv.default_mode, Some(0o440));
    for name in ["krunner", "run", "work"] {
        let v = volumes.iter().find(|v| v.name == name).unwrap();
        assert!(v.empty_dir.is_some(), "{v:?}");
    }
    assert_eq!(
        spec.security_context.as_ref().unwrap().fs_group,
        Some(i64::from(crate::kernel_files::WORK_UID))
    );
    let c = container(&p);
    let mounts = c.volume_mounts.as_ref().unwrap();
    let at_path = |path: &str| mounts.iter().find(|m| m.mount_path == path).unwrap();
    assert_eq!(at_path("/opt/bai/bin").name, "krunner");
    assert_eq!(at_path("/opt/bai/bin").read_only, Some(true));
    assert_eq!(
        c.command.as_deref(),
        Some(&[KRUNNER_INSIDE.to_string()][..])
    );
    assert_eq!(at_path("/opt/bai/secret").name, "secret");
    let tmux = at_path("/etc/tmux.conf");
    assert_eq!(
        (tmux.name.as_str(), tmux.sub_path.as_deref()),
        ("secret", Some("tmux.conf"))
    );
    let hosts = at_path("/etc/hosts");
    assert_eq!(
        (hosts.name.as_str(), hosts.sub_path.as_deref()),
        ("run", Some("hosts"))
    );
    assert_eq!(at_path("/home/work").name, "work");
    assert_eq!(at_path("/home/work/data").name, "vfolder-0");

    let init = &spec.init_containers.as_ref().unwrap()[0];
    assert_eq!(init.name, INIT_CONTAINER);
    assert_eq!(init.image.as_deref(), Some("bai/agent:1"));
    assert_eq!(
        init.command.as_deref().unwrap(),
        &[
            "/usr/local/bin/bai-krunner".to_string(),
            "install".into(),
            KRUNNER_INSIDE.into(),
            "/opt/bai/run".into()
        ]
    );
    let r = init.resources.as_ref().unwrap();
    let want = BTreeMap::from([
        ("cpu".to_string(), q("500m")),
        ("memory".to_string(), q("268435456")),
    ]);
    assert_eq!(r.requests.as_ref(), Some(&want), "no GPU for the copy");
    assert_eq!(r.limits.as_ref(), Some(&want));
    assert_eq!(init.security_context, c.security_context);

    // Not detached: no init container, no fsGroup, the runner from the node.
    let p = kernel_pod(&super::tests::spec(), &super::tests::at()).unwrap();
    let spec = p.spec.as_ref().unwrap();
    assert!(spec.init_containers.is_none());
    assert_eq!(spec.security_context.as_ref().unwrap().fs_group, None);
}

#[test]
fn under_node_enforcement_the_kernels_runner_waits_at_its_gate_for_the_agents_rules() {
    let gate = |p: &Pod| {
        container(p)
            .env
            .as_ref()
            .unwrap()
            .iter()
            .filter(|e| e.name == GATE_VAR)
            .map(|e| e.value.clone().unwrap_or_default())
            .collect::<Vec<_>>()
    };
    // A session's own variable of that name never reaches the runner.
    let mut own = spec();
    own.environ.insert(GATE_VAR.into(), "/tmp/x".into());
    let p = kernel_pod(&own, &at()).unwrap();
    assert!(gate(&p).is_empty());
    assert!(p.spec.unwrap().init_containers.is_none());
    let mut gated = at();
    if let Disk::OnNode(n) = &mut gated.disk {
        n.egress_gate = true;
    }
    let p = kernel_pod(&own, &gated).unwrap();
    // The runner (the pod's one container, no init container to start first) waits for
    // the file the agent writes into the run directory, mounted at /opt/bai/run.
    assert_eq!(gate(&p), ["/opt/bai/run/egress-ready"]);
    let run = container(&p)
        .volume_mounts
        .as_ref()
        .unwrap()
        .iter()
        .find(|m| m.name == "run")
        .unwrap()
        .mount_path
        .clone();
    assert_eq!(run, "/opt/bai/run");
    assert!(p.spec.unwrap().init_containers.is_none());
}
