//! The storage operations for async code. Creating a folder with a quota runs `mkfs.ext4`
//! and `mount`, removing one runs `umount` and deletes a tree, and usage walks a tree: each
//! can take seconds, so from async code they run on a blocking thread, never on a runtime
//! worker. The plain methods stay for blocking contexts.

use super::Storage;
use bai_core::Problem;
use bai_store::VFolderRow;
use std::path::PathBuf;

impl Storage {
    /// Runs `f` with this storage on a blocking thread and waits for it without holding a
    /// runtime worker.
    pub async fn blocking<T, F>(&self, f: F) -> Result<T, Problem>
    where
        T: Send + 'static,
        F: FnOnce(&Storage) -> Result<T, Problem> + Send + 'static,
    {
        let storage = self.clone();
        tokio::task::spawn_blocking(move || f(&storage))
            .await
            .map_err(|e| Problem::internal(format!("a storage task failed: {e}")))?
    }

    /// [`Storage::create`] on a blocking thread.
    pub async fn create_async(&self, v: &VFolderRow) -> Result<PathBuf, Problem> {
        let v = v.clone();
        self.blocking(move |s| s.create(&v)).await
    }

    /// [`Storage::mount_quota`] on a blocking thread.
    pub async fn mount_quota_async(&self, v: &VFolderRow) -> Result<(), Problem> {
        let v = v.clone();
        self.blocking(move |s| s.mount_quota(&v)).await
    }

    /// [`Storage::remove`] on a blocking thread.
    pub async fn remove_async(&self, v: &VFolderRow) -> Result<(), Problem> {
        let v = v.clone();
        self.blocking(move |s| s.remove(&v)).await
    }

    /// [`Storage::usage`] on a blocking thread.
    pub async fn usage_async(&self, v: &VFolderRow) -> Result<(u64, u64), Problem> {
        let v = v.clone();
        self.blocking(move |s| s.usage(&v)).await
    }
}
