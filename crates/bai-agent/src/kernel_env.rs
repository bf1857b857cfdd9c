//! The variables a kernel gets from its spec on either backend (`docker/place.rs`,
//! `kubernetes/pod.rs`): its cluster's, its own ids and names, and the startup command and
//! bootstrap script krunner runs. They come after the user's variables and replace them.

use bai_core::agent::KernelSpec;
use std::collections::BTreeMap;

/// Adds the session's and the kernel's own variables to `env` (a user's value of one of
/// them is replaced; a startup command or bootstrap script the spec lacks is removed).
pub(crate) fn add_session_vars(env: &mut BTreeMap<String, String>, spec: &KernelSpec) {
    env.extend(spec.cluster_info().environment(spec.session_id));
    env.insert("BAI_SESSION_ID".into(), spec.session_id.to_string());
    env.insert("BAI_KERNEL_ID".into(), spec.kernel_id.to_string());
    env.insert("BAI_SESSION_NAME".into(), spec.session_name.clone());
    env.insert("BAI_SESSION_TYPE".into(), spec.session_type.as_str().into());
    env.remove("BAI_STARTUP_COMMAND");
    env.remove("BAI_BOOTSTRAP_SCRIPT");
    if let Some(c) = &spec.startup_command {
        env.insert("BAI_STARTUP_COMMAND".into(), c.clone());
    }
    if let Some(s) = &spec.bootstrap_script {
        env.insert("BAI_BOOTSTRAP_SCRIPT".into(), s.clone());
    }
}
