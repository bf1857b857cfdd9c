//! The kernel's user in a pod of an image that lacks it. On Docker the agent reads the
//! image's account files through the engine and writes completed ones into the container
//! (`docker/users.rs`); a pod's image cannot be read before it runs, on any runtime. So a pod
//! of an image this agent does not know names the user gets the init container `accounts`
//! ([`super::init::accounts`]): `bai-krunner accounts` in the kernel's own image, as the
//! kernel's user, writes the image's `/etc/passwd` and `/etc/group` (with `work` added where
//! missing, `bai_accounts`) into an emptyDir, which the kernel's container mounts over the
//! image's by `subPath`. Its termination message says what it found ([`ADDED`] or
//! [`UNCHANGED`]); the watch hands every pod it sees to [`Known::learn`], so an image that
//! names the user (bai's own) costs an init container only in its first pod on this agent,
//! and one that does not keeps it. Learning is by image reference as the pod names it, with
//! the image id the kubelet ran: a later pod of that reference that runs another image (a tag
//! moved) makes the agent forget it, so the next pod of it is asked again.

use super::layout::{ACCOUNTS_CONTAINER, CONTAINER, named};
use k8s_openapi::api::core::v1::Pod;
use std::collections::HashMap;
use std::sync::Mutex;

/// The init container that makes the kernel's account files.
pub const INIT: &str = ACCOUNTS_CONTAINER;
/// Its termination messages (the runner's, from `bai-accounts`).
pub use bai_accounts::{ADDED, UNCHANGED};

/// What this agent learnt of each image (by reference): whether its pods need the init
/// container, and the image id that said so. An image not in it gets one.
#[derive(Default)]
pub struct Known(Mutex<HashMap<String, Learnt>>);

/// What one pod's init container said of its image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Learnt {
    pub image: String,
    /// The image id the kubelet ran (empty where it gave none).
    pub image_id: String,
    pub needed: bool,
}

impl Known {
    /// Whether a pod of `image` gets the init container.
    pub fn wanted(&self, image: &str) -> bool {
        super::lock(&self.0).get(image).is_none_or(|l| l.needed)
    }

    /// Learns from a pod whose init container `accounts` has ended well; forgets an image
    /// whose reference a pod without it ran as another image.
    pub fn learn(&self, pod: &Pod) {
        // Read the pod first: most watch events say nothing of an image, and take no lock.
        if let Some(l) = learned(pod) {
            let mut known = super::lock(&self.0);
            if known.get(&l.image).map(|k| k.needed) != Some(l.needed) {
                tracing::debug!(image = %l.image, needed = l.needed,
                    "learnt whether the image names the kernel's user");
            }
            known.insert(l.image.clone(), l);
        } else if let Some((image, id)) = ran_without(pod) {
            let mut known = super::lock(&self.0);
            if known
                .get(&image)
                .is_some_and(|k| !k.image_id.is_empty() && k.image_id != id)
            {
                tracing::debug!(%image, "the image's reference names another image now; asking again");
                known.remove(&image);
            }
        }
    }
}

/// The kernel container's image reference in `pod`'s spec.
fn kernel_image(pod: &Pod) -> Option<String> {
    pod.spec
        .as_ref()?
        .containers
        .iter()
        .find(|c| c.name == CONTAINER)?
        .image
        .clone()
}

/// What `pod`'s `accounts` init container said, once it has ended well with a message that
/// says (pure).
pub fn learned(pod: &Pod) -> Option<Learnt> {
    let init = named(&pod.status.as_ref()?.init_container_statuses, INIT)?;
    let ended = init.state.as_ref()?.terminated.as_ref()?;
    if ended.exit_code != 0 {
        return None;
    }
    let needed = match ended.message.as_deref().map(str::trim) {
        Some(ADDED) => true,
        Some(UNCHANGED) => false,
        _ => return None,
    };
    Some(Learnt {
        image: kernel_image(pod)?,
        image_id: init.image_id.clone(),
        needed,
    })
}

/// The image reference and the image id a pod without the init container ran its kernel
/// as (pure).
fn ran_without(pod: &Pod) -> Option<(String, String)> {
    let spec = pod.spec.as_ref()?;
    if spec
        .init_containers
        .iter()
        .flatten()
        .any(|c| c.name == INIT)
    {
        return None;
    }
    let id = &named(&pod.status.as_ref()?.container_statuses, CONTAINER)?.image_id;
    if id.is_empty() {
        return None;
    }
    Some((kernel_image(pod)?, id.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(message: Option<&str>, exit_code: i32) -> Pod {
        let mut terminated = json!({"exitCode": exit_code});
        if let Some(m) = message {
            terminated["message"] = json!(m);
        }
        serde_json::from_value(json!({
            "metadata": {"name": "bai-k-1"},
            "spec": {
                "initContainers": [{"name": "runner"}, {"name": "accounts"}],
                "containers": [{"name": "kernel", "image": "site/torch:2"}]
            },
            "status": {"initContainerStatuses": [
                {"name": "runner", "ready": true, "restartCount": 0, "image": "r", "imageID": "",
                 "state": {"terminated": {"exitCode": 0, "message": ADDED}}},
                {"name": "accounts", "ready": true, "restartCount": 0, "image": "site/torch:2",
                 "imageID": "docker-pullable://site/torch@sha256:aa",
                 "state": {"terminated": terminated}}
            ]}
        }))
        .unwrap()
    }

    /// A pod of `site/torch:2` without the init container, whose kernel ran image `id`.
    fn plain(id: &str) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "bai-k-2"},
            "spec": {"containers": [{"name": "kernel", "image": "site/torch:2"}]},
            "status": {"containerStatuses": [
                {"name": "kernel", "ready": true, "restartCount": 0, "image": "site/torch:2",
                 "imageID": id, "state": {"running": {}}}
            ]}
        }))
        .unwrap()
    }

    #[test]
    fn the_init_containers_message_says_whether_the_image_needs_it() {
        let said = |p: &Pod| learned(p).map(|l| (l.image, l.needed));
        assert_eq!(
            said(&pod(Some("work added\n"), 0)),
            Some(("site/torch:2".into(), true))
        );
        assert_eq!(
            said(&pod(Some(UNCHANGED), 0)),
            Some(("site/torch:2".into(), false))
        );
        assert_eq!(
            learned(&pod(Some(UNCHANGED), 0)).unwrap().image_id,
            "docker-pullable://site/torch@sha256:aa"
        );
        // No message (no termination log), another one, or a failure: nothing learnt.
        assert_eq!(learned(&pod(None, 0)), None);
        assert_eq!(learned(&pod(Some("?"), 0)), None);
        assert_eq!(learned(&pod(Some(UNCHANGED), 70)), None);
    }

    #[test]
    fn a_tag_moved_to_another_image_is_asked_again() {
        let k = Known::default();
        k.learn(&pod(Some(UNCHANGED), 0));
        assert!(!k.wanted("site/torch:2"));
        // The same image again: still known; not yet started (no id): nothing changes.
        k.learn(&plain("docker-pullable://site/torch@sha256:aa"));
        k.learn(&plain(""));
        assert!(!k.wanted("site/torch:2"));
        k.learn(&plain("docker-pullable://site/torch@sha256:bb"));
        assert!(k.wanted("site/torch:2"));
    }

    #[test]
    fn an_image_gets_the_init_container_until_it_is_known_to_name_the_user() {
        let k = Known::default();
        assert!(k.wanted("site/torch:2"));
        k.learn(&pod(Some(UNCHANGED), 0));
        assert!(!k.wanted("site/torch:2"));
        assert!(k.wanted("other:1"));
        k.learn(&pod(Some(ADDED), 0));
        assert!(k.wanted("site/torch:2"));
        // A pod that says nothing changes nothing.
        k.learn(&pod(None, 0));
        assert!(k.wanted("site/torch:2"));
    }
}
