//! What the Kubernetes test binaries share: the cluster script, and one cluster held by the
//! tests of a binary while any of them runs.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

/// `scripts/kube-cluster.sh` of this checkout.
pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/kube-cluster.sh")
}

/// The `T` in `slot` while a test holds it, else a new one from `make`: tests run side by
/// side share one (one start), and it is dropped (stopped) with the last holder.
pub fn shared<T>(slot: &Mutex<Weak<T>>, make: impl FnOnce() -> T) -> Arc<T> {
    let mut held = slot.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(c) = held.upgrade() {
        return c;
    }
    let c = Arc::new(make());
    *held = Arc::downgrade(&c);
    c
}
