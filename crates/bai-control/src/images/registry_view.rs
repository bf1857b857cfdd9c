//! What the cluster's registry holds, as the manager last read it (`registry.rs` reads it;
//! the manager's state holds this view, so it imports nothing of the manager).

use std::collections::BTreeSet;
use std::sync::Mutex;

#[derive(Default)]
pub struct RegistryView {
    held: Mutex<BTreeSet<String>>,
}

impl RegistryView {
    pub fn holds(&self, reference: &str) -> bool {
        self.held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(reference)
    }

    pub fn references(&self) -> Vec<String> {
        self.held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    pub fn set(&self, refs: BTreeSet<String>) {
        *self.held.lock().unwrap_or_else(|p| p.into_inner()) = refs;
    }
}
