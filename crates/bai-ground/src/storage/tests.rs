//! Storage hosts, their configuration and folders on them.

use super::*;
use std::path::PathBuf;
use uuid::Uuid;

fn row(host: &str) -> VFolderRow {
    VFolderRow {
        id: Uuid::new_v4(),
        name: "f".into(),
        host: host.into(),
        user_id: "u".into(),
        project: None,
        permission: bai_core::FolderPermission::ReadWrite,
        usage_mode: "general".into(),
        status: "ready".into(),
        quota_bytes: None,
        created_at: String::new(),
    }
}

#[test]
fn host_names_are_proxy_colon_volume() {
    for ok in ["local:volume1", "nfs:shared", "a.b-c_d:E.9", "x:y"] {
        assert_eq!(check_host_name(ok), Ok(()), "{ok}");
    }
    for bad in [
        "",
        "nfs",
        ":vol",
        "nfs:",
        "a:b:c",
        "nfs:sh ared",
        "nfs/x:y",
        "nfs:ü",
        &format!("a:{}", "v".repeat(65)),
    ] {
        let e = check_host_name(bad).expect_err(bad);
        assert!(e.contains("PROXY:VOLUME"), "{e}");
    }
}

#[test]
fn host_specs_parse_from_flags_and_a_comma_list() {
    let got = parse_host_specs(&[
        "nfs:shared=/mnt/nfs".into(),
        " fast:ssd = /ssd/bai , other:v=/o ".into(),
        "".into(),
    ])
    .expect("valid");
    assert_eq!(
        got,
        vec![
            ("nfs:shared".to_string(), PathBuf::from("/mnt/nfs")),
            ("fast:ssd".to_string(), PathBuf::from("/ssd/bai")),
            ("other:v".to_string(), PathBuf::from("/o")),
        ]
    );
    assert_eq!(parse_host_specs(&[]), Ok(vec![]));
    let e = parse_host_specs(&["nfs:shared".into()]).expect_err("no path");
    assert!(e.contains("NAME=PATH") && !e.contains('\n'), "{e}");
    // What the specs say is checked where the hosts are opened.
    let data = tempfile::tempdir().expect("tempdir");
    let err = |items: &[&str]| {
        let hosts = parse_host_specs(&items.iter().map(|s| s.to_string()).collect::<Vec<_>>())
            .expect("parses");
        let config = StorageConfig {
            hosts,
            default: None,
        };
        Storage::open(data.path(), &config).expect_err("must fail")
    };
    assert!(err(&["nfs:shared=relative/dir"]).contains("must be absolute"));
    assert!(err(&["nfs=/x"]).contains("is invalid"));
    assert!(err(&["a:b=/x,a:b=/y"]).contains("configured twice"));
    assert!(err(&["local:volume1=/x"]).contains("built in"));
    for e in [err(&["nfs=/x"]), err(&["a:b=/x,a:b=/y"])] {
        assert!(!e.contains('\n'), "one line: {e}");
    }
}

#[test]
fn open_creates_roots_checks_the_default_and_resolves_by_host() {
    let data = tempfile::tempdir().expect("tempdir");
    let extra = tempfile::tempdir().expect("tempdir");
    let nfs = extra.path().join("nfs/bai");
    let cfg = StorageConfig {
        hosts: vec![("nfs:shared".into(), nfs.clone())],
        default: Some("nfs:shared".into()),
    };
    let s = Storage::open(data.path(), &cfg).expect("open");
    assert!(nfs.is_dir(), "the host's root is created");
    assert!(data.path().join("volumes/volume1").is_dir());
    assert_eq!(s.default_host(), "nfs:shared");
    assert_eq!(s.names(), vec!["local:volume1", "nfs:shared"]);
    assert_eq!(
        s.host("local:volume1").map(Host::backend),
        Some(bai_core::storage::Backend::Local)
    );
    assert_eq!(
        s.host("nfs:shared").map(Host::backend),
        Some(bai_core::storage::Backend::Vfs)
    );

    let v = row("nfs:shared");
    let dir = s.create(&v).expect("create");
    assert_eq!(dir, nfs.join(v.id.simple().to_string()));
    std::fs::write(dir.join("a.txt"), "abc").expect("write");
    assert_eq!(s.usage(&v), Ok((1, 3)));
    assert_eq!(s.resolve(&v, "a.txt"), Ok(dir.join("a.txt")));
    s.remove(&v).expect("remove");
    assert!(!dir.exists());
    let local = row("local:volume1");
    assert!(
        s.folder_dir(&local)
            .expect("local")
            .starts_with(data.path().join("volumes/volume1"))
    );

    // A folder whose host is gone: a clear 503, nothing panics.
    let gone = row("old:vol");
    for e in [
        s.folder_dir(&gone).expect_err("gone"),
        s.create(&gone).expect_err("gone"),
        s.list(&gone, ".").expect_err("gone"),
        s.usage(&gone).expect_err("gone"),
        s.remove(&gone).expect_err("gone"),
    ] {
        assert_eq!(e.status, 503);
        assert!(e.kind.ends_with("storage-host-unavailable"), "{e:?}");
        assert!(e.msg.contains("\"old:vol\""), "{e:?}");
    }
    assert!(Storage::host_usage(&nfs).is_some_and(|(t, u)| t > 0 && u <= t));
}

#[test]
fn open_refuses_bad_configuration() {
    let data = tempfile::tempdir().expect("tempdir");
    let open = |hosts: Vec<(&str, PathBuf)>, default: Option<&str>| {
        Storage::open(
            data.path(),
            &StorageConfig {
                hosts: hosts.into_iter().map(|(n, p)| (n.to_string(), p)).collect(),
                default: default.map(str::to_string),
            },
        )
    };
    let e = open(vec![], Some("nfs:shared")).expect_err("unknown default");
    assert!(
        e.contains("default storage host \"nfs:shared\" is not configured")
            && e.contains("local:volume1"),
        "{e}"
    );
    let file = data.path().join("plain-file");
    std::fs::write(&file, "x").expect("write");
    let e = open(vec![("a:b", file)], None).expect_err("a file");
    assert!(e.contains("a:b"), "{e}");
    let e = open(vec![("a:b", PathBuf::from("rel"))], None).expect_err("relative");
    assert!(e.contains("absolute"), "{e}");
    let e = open(
        vec![
            ("a:b", data.path().join("x")),
            ("a:b", data.path().join("y")),
        ],
        None,
    )
    .expect_err("twice");
    assert!(e.contains("twice"), "{e}");
    let e = open(vec![("bad", data.path().join("x"))], None).expect_err("name");
    assert!(e.contains("PROXY:VOLUME"), "{e}");
    let s = open(vec![], None).expect("only the built-in host");
    assert_eq!(s.default_host(), LOCAL_HOST);
}

#[tokio::test(flavor = "current_thread")]
async fn the_async_variants_run_off_the_runtime_thread() {
    let data = tempfile::tempdir().expect("tempdir");
    let s = Storage::open(data.path(), &StorageConfig::default()).expect("open");
    let runtime_thread = std::thread::current().id();
    let worker = s
        .blocking(|_| Ok(std::thread::current().id()))
        .await
        .expect("blocking");
    assert_ne!(worker, runtime_thread);

    let v = row(LOCAL_HOST);
    let dir = s.create_async(&v).await.expect("create");
    std::fs::write(dir.join("a.txt"), "abcd").expect("write");
    assert_eq!(s.usage_async(&v).await, Ok((1, 4)));
    s.mount_quota_async(&v)
        .await
        .expect_err("no quota image to mount");
    s.remove_async(&v).await.expect("remove");
    assert!(!dir.exists());
    let gone = row("old:vol");
    assert_eq!(s.usage_async(&gone).await.expect_err("gone").status, 503);
}
