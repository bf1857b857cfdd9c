//! Data folders are bound to their host paths when a session launches, not when it was
//! queued: a session that waited through a change of its folder's storage host sees the
//! host as it is at launch.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

mod harness;

use bai_core::Reason;
use bai_core::spec::{FolderRef, MountAsk};
use bai_core::status::SessionStatus as S;
use bai_ground::config::ManagerConfig;
use bai_ground::storage::{Storage, StorageConfig};
use bai_store::VFolderRow;
use harness::Plane;
use std::path::Path;
use std::sync::Arc;
use uuid::Uuid;

fn config(data_dir: &Path, host_root: Option<&Path>, launch: bool) -> ManagerConfig {
    let hosts = host_root
        .map(|r| vec![("nfs:shared".to_string(), r.to_path_buf())])
        .unwrap_or_default();
    let storage = Storage::open(
        data_dir,
        &StorageConfig {
            hosts,
            default: None,
        },
    )
    .expect("storage");
    ManagerConfig {
        data_dir: data_dir.to_path_buf(),
        storage: Some(storage),
        launch_disabled: !launch,
        ..harness::config()
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("runtime")
}

/// A first control plane queues a session that mounts a folder on `nfs:shared` and places it, then
/// dies before launching it (its runtime is dropped with every task). Returns the session.
fn queue_then_crash(
    store: &Arc<bai_store::Store>,
    agent: &bai_agent::DummyAgent,
    data: &Path,
    root: &Path,
) -> Uuid {
    let rt = runtime();
    rt.block_on(async {
        let h = Plane::start_on(
            store.clone(),
            agent.clone(),
            config(data, Some(root), false),
        )
        .await;
        let v = VFolderRow {
            id: Uuid::new_v4(),
            name: "shared-data".into(),
            host: "nfs:shared".into(),
            user_id: "u1".into(),
            project: None,
            permission: bai_core::FolderPermission::ReadWrite,
            usage_mode: "general".into(),
            status: "ready".into(),
            quota_bytes: None,
            created_at: bai_store::now_str(),
        };
        assert!(store.insert_vfolder(&v).expect("folder"));
        h.storage.create(&v).expect("folder dir");
        let s = h.create("waits-long", |s| {
            s.mounts = vec![MountAsk {
                folder: FolderRef::Name("shared-data".into()),
                target: None,
            }];
        });
        let row = h.wait_status(s.id, S::Scheduled).await;
        assert!(
            row.spec.mounts[0]
                .host_path
                .starts_with(root.to_str().unwrap())
        );
        s.id
    })
}

#[test]
fn a_moved_storage_host_is_used_where_it_is_at_launch() {
    let data = tempfile::tempdir().unwrap();
    let (old_root, new_root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let store = harness::store();
    let agent = harness::agent();
    let id = queue_then_crash(&store, &agent, data.path(), old_root.path());
    // The administrator moved the host (say, a new NFS mount point) before the restart.
    runtime().block_on(async {
        let h = Plane::start_on(
            store.clone(),
            agent.clone(),
            config(data.path(), Some(new_root.path()), true),
        )
        .await;
        let row = h.wait_status(id, S::Running).await;
        let spec = h.agent.spec(row.main_kernel_id).expect("kernel");
        assert_eq!(spec.mounts.len(), 1);
        assert!(
            spec.mounts[0]
                .host_path
                .starts_with(new_root.path().to_str().unwrap()),
            "{} is not under the host's new root",
            spec.mounts[0].host_path
        );
        assert_eq!(spec.mounts[0].kernel_path, "/home/work/shared-data");
    });
}

#[test]
fn a_storage_host_gone_at_launch_is_a_clear_error() {
    let data = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let store = harness::store();
    let agent = harness::agent();
    let id = queue_then_crash(&store, &agent, data.path(), root.path());
    runtime().block_on(async {
        let h = Plane::start_on(
            store.clone(),
            agent.clone(),
            config(data.path(), None, true),
        )
        .await;
        let row = h.wait_status(id, S::Error).await;
        match row.state.status_info.as_deref().map(Reason::parse) {
            Some(Reason::MountFailed(why)) => assert!(why.contains("shared-data"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert!(h.agent.live().is_empty());
    });
}
