//! What the agent owns in a kernel's container: the variables of bai's runtime namespaces
//! (`BAI_…`, `BACKENDAI_…`) and the labels under `ai.bai.`. An image may carry some of them
//! (one committed by an older build kept its container's runtime configuration), and the
//! engine merges an image's variables and labels into every container made from it. So at
//! every create the agent sets or clears each one it owns: one it does not set is given an
//! empty value, which krunner drops from the kernel's environment before anything runs
//! (`bai-krunner`'s `scrub`) and which the agent's own readings take as absent
//! ([`label`]). No variable or label baked into an image can change what a kernel is.
//! A commit leaves them out of the image it makes ([`strip_env`], [`strip_labels`]).

use std::collections::{BTreeMap, HashMap};

/// Prefixes of the variables the platform sets in a kernel.
const ENV_PREFIXES: [&str; 2] = ["BAI_", "BACKENDAI_"];
/// Prefix of the labels the agent puts on its containers.
const LABEL_PREFIX: &str = "ai.bai.";

/// Whether `name` is a variable of bai's runtime namespaces.
pub fn is_owned_var(name: &str) -> bool {
    ENV_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Whether `name` is one of the agent's labels.
pub fn is_owned_label(name: &str) -> bool {
    name.starts_with(LABEL_PREFIX)
}

/// What of the agent's an image carries: the names the create must set or clear.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Carried {
    pub vars: Vec<String>,
    pub labels: Vec<String>,
}

impl Carried {
    /// The owned variables and labels among an image's.
    pub fn of(env: &BTreeMap<String, String>, labels: &HashMap<String, String>) -> Self {
        let mut labels: Vec<String> = labels
            .keys()
            .filter(|k| is_owned_label(k))
            .cloned()
            .collect();
        labels.sort();
        Carried {
            vars: env.keys().filter(|k| is_owned_var(k)).cloned().collect(),
            labels,
        }
    }

    /// Clears (sets empty) each carried variable that `env` (`NAME=value` lines) does not set.
    pub fn clear_env(&self, env: &mut Vec<String>) {
        for name in &self.vars {
            let set = env
                .iter()
                .any(|kv| kv.split_once('=').is_some_and(|(k, _)| k == name));
            if !set {
                env.push(format!("{name}="));
            }
        }
    }

    /// Clears (sets empty) each carried label that `labels` does not set.
    pub fn clear_labels(&self, labels: &mut HashMap<String, String>) {
        for name in &self.labels {
            labels.entry(name.clone()).or_default();
        }
    }
}

/// An owned label's value, `None` when it is absent or cleared (empty).
pub fn label<'a>(labels: &'a HashMap<String, String>, name: &str) -> Option<&'a str> {
    labels
        .get(name)
        .map(String::as_str)
        .filter(|v| !v.is_empty())
}

/// An image's environment (`NAME=value` lines) without bai's runtime variables.
pub fn strip_env(env: Vec<String>) -> Vec<String> {
    env.into_iter()
        .filter(|kv| !is_owned_var(kv.split_once('=').map_or(kv.as_str(), |(k, _)| k)))
        .collect()
}

/// An image's labels without the agent's.
pub fn strip_labels(labels: HashMap<String, String>) -> HashMap<String, String> {
    labels
        .into_iter()
        .filter(|(k, _)| !is_owned_label(k))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn polluted() -> Carried {
        let env = BTreeMap::from([
            ("PATH".to_string(), "/usr/bin".to_string()),
            ("BAI_POOL".to_string(), "1".to_string()),
            ("BAI_KERNEL_ID".to_string(), "k-old".to_string()),
            ("BACKENDAI_CLUSTER_ROLE".to_string(), "main".to_string()),
        ]);
        let labels = HashMap::from([
            ("ai.bai.pool".to_string(), "python".to_string()),
            ("ai.bai.cpuset".to_string(), "0".to_string()),
            ("ai.backend.kernelspec".to_string(), "1".to_string()),
        ]);
        Carried::of(&env, &labels)
    }

    #[test]
    fn an_images_runtime_variables_are_cleared_unless_the_create_sets_them() {
        let mut env = vec!["BAI_KERNEL_ID=k-new".to_string(), "PATH=/x".to_string()];
        polluted().clear_env(&mut env);
        assert_eq!(
            env,
            [
                "BAI_KERNEL_ID=k-new",
                "PATH=/x",
                "BACKENDAI_CLUSTER_ROLE=",
                "BAI_POOL=",
            ]
        );
    }

    #[test]
    fn an_images_agent_labels_are_cleared_and_read_as_absent() {
        let mut labels = HashMap::from([("ai.bai.cpuset".to_string(), "3".to_string())]);
        polluted().clear_labels(&mut labels);
        assert_eq!(labels["ai.bai.pool"], "");
        assert_eq!(labels["ai.bai.cpuset"], "3");
        assert!(!labels.contains_key("ai.backend.kernelspec"));
        assert_eq!(label(&labels, "ai.bai.pool"), None);
        assert_eq!(label(&labels, "ai.bai.cpuset"), Some("3"));
    }

    #[test]
    fn a_commit_keeps_the_images_own_config_only() {
        let env = strip_env(vec![
            "PATH=/usr/bin".into(),
            "BAI_POOL=1".into(),
            "BACKENDAI_KERNEL_ID=x".into(),
            "LANG=C.UTF-8".into(),
        ]);
        assert_eq!(env, ["PATH=/usr/bin", "LANG=C.UTF-8"]);
        let labels = strip_labels(HashMap::from([
            ("ai.bai.session".to_string(), "s".to_string()),
            ("ai.backend.kernelspec".to_string(), "1".to_string()),
        ]));
        assert_eq!(labels.len(), 1);
        assert!(labels.contains_key("ai.backend.kernelspec"));
    }
}
