//! One `baid up` per data dir: it holds an exclusive lock on `DATA_DIR/baid.lock` for as long
//! as it runs (the kernel drops it when the process ends, however it ends). A second `baid
//! up` on the same dir waits for the first to stop; `baid db restore` refuses while one runs.

use anyhow::{Context, Result};
use rustix::fs::{FlockOperation, flock};
use std::fs::File;
use std::path::Path;

/// The held lock; dropping it (or the process ending) releases it.
pub struct DataDirLock {
    _file: File,
}

fn open(data_dir: &Path) -> Result<File> {
    let path = data_dir.join("baid.lock");
    File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))
}

/// Takes the lock, waiting (with a line saying so) while another `baid up` holds it.
pub fn wait(data_dir: &Path) -> Result<DataDirLock> {
    let file = open(data_dir)?;
    if flock(&file, FlockOperation::NonBlockingLockExclusive).is_err() {
        eprintln!(
            "another baid runs on {}; waiting for it to stop",
            data_dir.display()
        );
        flock(&file, FlockOperation::LockExclusive)
            .with_context(|| format!("cannot lock {}", data_dir.display()))?;
    }
    Ok(DataDirLock { _file: file })
}

/// Takes the lock if nobody holds it; `None` while a `baid up` runs on `data_dir`.
pub fn try_take(data_dir: &Path) -> Result<Option<DataDirLock>> {
    let file = open(data_dir)?;
    Ok(flock(&file, FlockOperation::NonBlockingLockExclusive)
        .ok()
        .map(|()| DataDirLock { _file: file }))
}
