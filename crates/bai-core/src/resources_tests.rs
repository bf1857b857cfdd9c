use super::*;
use crate::accel::AccelSlot;
use serde_json::json;

fn ask(r: serde_json::Value) -> ResourceAsk {
    ResourceAsk {
        slots: r
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), amount_text(v)))
            .collect(),
        shmem: None,
    }
}

fn req(r: serde_json::Value) -> Result<ResourceRequest, ResourceError> {
    ResourceRequest::parse(
        &ask(r),
        &[AccelSlot {
            name: "mock.shares".to_string(),
            quantum_milli: 1,
        }],
    )
}

fn with(
    slot: &str,
    quantum_milli: u64,
    r: serde_json::Value,
) -> Result<ResourceRequest, ResourceError> {
    ResourceRequest::parse(
        &ask(r),
        &[AccelSlot {
            name: slot.to_string(),
            quantum_milli,
        }],
    )
}

#[test]
fn a_kernel_takes_one_kind_of_gpu_and_one_mig_instance() {
    let mig = "cuda.device:1g.18gb-mig";
    let offered = AccelSlot::collect([], [&mig.to_string(), &"cuda.device".to_string()]);
    let mut offered = offered;
    offered.push(AccelSlot {
        name: "cuda.shares".to_string(),
        quantum_milli: 100,
    });
    let parse = |r| ResourceRequest::parse(&ask(r), &offered);
    assert_eq!(parse(json!({mig: 1})).unwrap().slots.accel[mig], 1000);
    assert_eq!(
        parse(json!({"cuda.device": 2})).unwrap().slots.accel["cuda.device"],
        2000
    );
    let two = parse(json!({mig: 2})).unwrap_err();
    assert_eq!(
        two.to_string(),
        "cuda.device:1g.18gb-mig=2: a kernel takes one MIG instance at most (CUDA sees one \
         MIG instance in a process); ask for 1, or for a cluster session with a kernel for \
         each instance"
    );
    let mixed = parse(json!({mig: 1, "cuda.device": 1})).unwrap_err();
    assert_eq!(
        mixed.to_string(),
        "a kernel takes one kind of GPU, but this asks for both cuda.device and \
         cuda.device:1g.18gb-mig: whole GPUs, fractional shares and each MIG profile's \
         instances are handed out apart; ask for one of them"
    );
    let e = parse(json!({"cuda.device": 1, "cuda.shares": 0.5})).unwrap_err();
    assert!(matches!(e, ResourceError::MixedGpus { .. }), "{e}");
    // A preset's GPUs give way to the kind the request names.
    let preset = ResourceSlots {
        cpu_milli: 2000,
        mem: 2 << 30,
        accel: [("cuda.device".to_string(), 1000)].into(),
    };
    let own = ask(json!({"cuda.shares": 0.5})).with_preset(&preset, None, &offered);
    let r = ResourceRequest::parse(&own, &offered).unwrap();
    assert_eq!(r.slots.accel, [("cuda.shares".to_string(), 500)].into());
    let none = ask(json!({"cpu": 1})).with_preset(&preset, None, &offered);
    let r = ResourceRequest::parse(&none, &offered).unwrap();
    assert_eq!(r.slots.accel, [("cuda.device".to_string(), 1000)].into());
    // Other accelerators are not CUDA's: the mock's shares beside a GPU are not refused.
    let mock = [
        AccelSlot {
            name: "mock.shares".to_string(),
            quantum_milli: 1,
        },
        AccelSlot {
            name: "cuda.device".to_string(),
            quantum_milli: 1000,
        },
    ];
    let r = ResourceRequest::parse(&ask(json!({"mock.shares": 1, "cuda.device": 1})), &mock);
    assert!(r.is_ok(), "{r:?}");
}

#[test]
fn gpu_aliases_whole_devices_and_quanta() {
    let r = with("cuda.shares", 100, json!({"gpu": "0.5"})).unwrap();
    assert_eq!(r.slots.accel["cuda.shares"], 500);
    let r = with("cuda.shares", 100, json!({"fgpu": 1.5})).unwrap();
    assert_eq!(r.slots.accel["cuda.shares"], 1500);
    let e = with("cuda.shares", 100, json!({"cuda.shares": "0.25"})).unwrap_err();
    assert!(matches!(e, ResourceError::Quantum { .. }), "{e}");
    let e = with("cuda.device", 1000, json!({"gpu": "0.5"})).unwrap_err();
    assert!(matches!(e, ResourceError::WholeDevices { .. }), "{e}");
    assert!(e.to_string().contains("gpu is cuda.device here"), "{e}");
    let r = with("cuda.device", 1000, json!({"gpu": 2})).unwrap();
    assert_eq!(r.slots.accel["cuda.device"], 2000);
}

#[test]
fn a_preset_fills_what_the_request_leaves_out() {
    let shares = [AccelSlot {
        name: "cuda.shares".to_string(),
        quantum_milli: 100,
    }];
    let preset = ResourceSlots {
        cpu_milli: 4000,
        mem: 8 << 30,
        accel: BTreeMap::from([("cuda.shares".to_string(), 1000)]),
    };
    // `gpu` is cuda.shares here: the request's own amount stays, under either name.
    let a = ask(json!({"cpu": "1", "gpu": "0.5"})).with_preset(&preset, Some(1 << 30), &shares);
    let r = ResourceRequest::parse(&a, &shares).unwrap();
    assert_eq!(r.slots.cpu_milli, 1000);
    assert_eq!(r.slots.mem, 8 << 30);
    assert_eq!(r.slots.accel["cuda.shares"], 500);
    assert_eq!(r.shmem, 1 << 30);
    // A request's own shared memory wins over the preset's.
    let mut a = ask(json!({}));
    a.shmem = Some("128m".into());
    let r =
        ResourceRequest::parse(&a.with_preset(&preset, Some(1 << 30), &shares), &shares).unwrap();
    assert_eq!((r.slots.cpu_milli, r.shmem), (4000, 128 << 20));
}

#[test]
fn parses_cli_forms() {
    let r = req(json!({"cpu": "2", "mem": "1g", "shmem": "128m"})).unwrap();
    assert_eq!(r.slots.cpu_milli, 2000);
    assert_eq!(r.slots.mem, 1 << 30);
    assert_eq!(r.shmem, 128 << 20);
    let r = req(json!({"cpu": 1, "mem": "512mb"})).unwrap();
    assert_eq!(r.slots.mem, 512 << 20);
    let r = req(json!({"mem": "4096m", "gpu": "0.5"})).unwrap();
    assert_eq!(r.slots.mem, 4096 << 20);
    assert_eq!(r.slots.accel["mock.shares"], 500);
}

#[test]
fn rejects_bad_values_with_reasons() {
    assert!(matches!(
        req(json!({"cpu": "-1"})),
        Err(ResourceError::Invalid { .. })
    ));
    assert!(matches!(
        req(json!({"cpu": "0"})),
        Err(ResourceError::Invalid { .. })
    ));
    assert!(matches!(
        req(json!({"mem": "lots"})),
        Err(ResourceError::Invalid { .. })
    ));
    assert!(matches!(
        req(json!({"mem": "1g", "shmem": "2g"})),
        Err(ResourceError::ShmemOverMem { .. })
    ));
    // 64 MiB of memory holds no more than the default 64 MiB of shared memory.
    assert!(matches!(
        req(json!({"mem": "64m"})),
        Err(ResourceError::ShmemOverMem { .. })
    ));
    assert!(req(json!({"mem": "64m", "shmem": "16m"})).is_ok());
    assert!(matches!(
        req(json!({"tpu": "1"})),
        Err(ResourceError::UnknownSlot(..))
    ));
    assert!(matches!(
        req(json!({"mem": "1m"})),
        Err(ResourceError::TooSmall { .. })
    ));
}

#[test]
fn fitting_and_shortage() {
    let want = ResourceSlots {
        cpu_milli: 2000,
        mem: 4 << 30,
        accel: BTreeMap::new(),
    };
    let have = ResourceSlots {
        cpu_milli: 1000,
        mem: 8 << 30,
        accel: BTreeMap::new(),
    };
    assert!(!want.fits_in(&have));
    assert_eq!(want.short_of(&have), vec!["cpu".to_string()]);
    let left = have.checked_sub(&ResourceSlots {
        cpu_milli: 500,
        mem: 1 << 30,
        ..Default::default()
    });
    assert_eq!(left.cpu_milli, 500);
    assert_eq!(format_cpu(1500), "1.5");
    assert_eq!(format_bytes(1 << 30), "1 GiB");
}
