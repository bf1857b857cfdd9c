//! Converting a running interactive session to a private image of its owner (Backend.AI's
//! "imagify"): the main kernel's writable layer on its base image, labelled with the owner,
//! the name and the image id, recorded in the catalogue and launchable by its owner. A second
//! conversion with the same name replaces the image (same id, same reference).

use super::catalogue::{LABEL_EMAIL, LABEL_ID, LABEL_NAME, LABEL_OWNER};
use super::ctx::Images;
use super::reference::{check_name, customized_reference};
use bai_core::Problem;
use bai_core::agent::CommitRequest;
use bai_core::status::SessionType;
use bai_ground::bgtask::BgTask;
use bai_store::{CustomizedImageRow, SessionRow};
use std::collections::BTreeMap;
use std::sync::Arc;
use uuid::Uuid;

/// Who asks: the session's owner as the catalogue records them.
#[derive(Debug, Clone)]
pub struct Owner {
    pub user_id: String,
    pub email: String,
    pub access_key: String,
}

/// Checks the request and starts the conversion; returns the background task's id.
pub fn start(
    images: &Arc<Images>,
    owner: Owner,
    row: &SessionRow,
    image_name: &str,
    visibility: Option<&str>,
) -> Result<Uuid, Problem> {
    check_name(image_name)?;
    if let Some(v) = visibility.filter(|v| *v != "user") {
        return Err(Problem::invalid(format!(
            "image_visibility {v:?} is not supported: images made from sessions are private \
             to their owner (\"user\")"
        )));
    }
    if row.spec.session_type != SessionType::Interactive {
        return Err(Problem::invalid(format!(
            "session {:?} is a {} session: only interactive sessions can be converted to an image",
            row.name,
            row.spec.session_type.as_str()
        )));
    }
    let agent = super::commit_target(images, row)?;
    let existing = images
        .store
        .customized_image_named(&owner.user_id, image_name)?;
    if existing.is_none() {
        let current = images.store.count_customized_images(&owner.user_id)?;
        let limit = images
            .store
            .user_policy_of(&owner.user_id)?
            .max_customized_image_count
            .max(0) as u64;
        if current >= limit {
            return Err(Problem::new(
                400,
                "quota-exceeded",
                "Quota exceeded.",
                format!(
                    "you have reached your customized image count quota (current: {current}, \
                     limit: {limit}); forget or purge one of your images, or \
                     convert again with the name of one to replace it"
                ),
            )
            .with_data_of(&bai_core::problem::QuotaData { limit, current }));
        }
    }
    let task = images.bgtasks.start(&owner.access_key);
    if !images.commits.begin(row.id, task.clone()) {
        return Err(busy(row));
    }
    let id = existing.as_ref().map(|e| e.id).unwrap_or_else(Uuid::new_v4);
    let reference = customized_reference(&row.spec.image, id);
    let features = base_features(images, &row.spec.image);
    let mut labels = BTreeMap::new();
    labels.insert(LABEL_OWNER.to_string(), format!("user:{}", owner.user_id));
    labels.insert(LABEL_NAME.to_string(), image_name.to_string());
    labels.insert(LABEL_ID.to_string(), id.to_string());
    labels.insert(LABEL_EMAIL.to_string(), owner.email.clone());
    labels.insert("ai.backend.features".to_string(), features);
    // Committed under a pending reference first: a cancelled commit then never touches an
    // image of the same name that it was to replace.
    let req = CommitRequest {
        kernel_id: row.main_kernel_id,
        reference: format!("{reference}-pending"),
        base_image: row.spec.image.clone(),
        labels,
        tarball: None,
    };
    let record = CustomizedImageRow {
        id,
        reference,
        name: image_name.to_string(),
        owner_user_id: owner.user_id,
        owner_email: owner.email,
        base_image: row.spec.image.clone(),
        agent_id: agent.id.clone(),
        size_bytes: 0,
        created_at: String::new(),
    };
    let (images, session, task_id) = (images.clone(), row.id, task.id);
    task.update(0, 2, format!("committing session {}", row.name));
    tokio::spawn(async move {
        run(&images, &agent, &task, req, record).await;
        images.commits.end(session);
    });
    Ok(task_id)
}

pub fn busy(row: &SessionRow) -> Problem {
    Problem::conflict(
        "session-busy",
        "The session is being committed.",
        format!(
            "session {:?} is being committed now; wait until it is done (GET /session/{}/commit)",
            row.name, row.name
        ),
    )
}

/// The base image's features, less `private` (an image made from a private one must still be
/// launchable by its owner).
fn base_features(images: &Images, base: &str) -> String {
    let labels = images
        .agents
        .all()
        .iter()
        .flat_map(|a| a.info().images)
        .find(|i| i.name == base)
        .map(|i| i.labels)
        .unwrap_or_default();
    let mut f: Vec<&str> = labels
        .get("ai.backend.features")
        .map(|s| s.split_whitespace().filter(|f| *f != "private").collect())
        .unwrap_or_default();
    if !f.contains(&"uid-match") {
        f.push("uid-match");
    }
    f.join(" ")
}

async fn run(
    images: &Arc<Images>,
    agent: &bai_ground::agents::AgentHandle,
    task: &BgTask,
    req: CommitRequest,
    mut record: CustomizedImageRow,
) {
    let pending = req.reference.clone();
    let result = agent.rpc.commit_kernel(req).await;
    if task.is_cancelled() {
        // A forced terminate: no half image is left behind (the engine may have finished
        // the image even when the call failed as the container went away).
        if let Err(e) = agent.rpc.remove_image(pending.clone()).await {
            tracing::warn!(image = %pending, error = %e, "cannot remove a cancelled commit");
        }
        super::refresh_agent(&images.agents, &agent.id).await;
        task.cancelled("the session was terminated while it was being committed");
        return;
    }
    let image = match result {
        Ok(i) => i,
        Err(e) => {
            let _ = agent.rpc.remove_image(pending).await;
            task.failed(format!("cannot commit the session: {e}"));
            return;
        }
    };
    task.update(1, 2, format!("recording image {}", record.name));
    let previous = images
        .agents
        .all()
        .iter()
        .flat_map(|a| a.info().images)
        .find(|i| i.name == record.reference)
        .map(|i| i.digest);
    let named = agent
        .rpc
        .tag_image(pending.clone(), record.reference.clone())
        .await;
    // The pending reference goes either way (only the tag, when the image is named).
    let _ = agent.rpc.remove_image(pending).await;
    if let Err(e) = named {
        super::refresh_agent(&images.agents, &agent.id).await;
        task.failed(format!("cannot name the image: {e}"));
        return;
    }
    // The image this one replaced (same reference) has lost its tag: remove it unless in use.
    if let Some(old) = previous.filter(|d| !d.is_empty() && *d != image.digest) {
        let _ = agent.rpc.remove_image(old).await;
    }
    // With a cluster registry the image travels: other agents pull it for its owner.
    if agent.info().registry.is_some() {
        task.update(
            1,
            2,
            format!("pushing image {} to the registry", record.name),
        );
        match agent.rpc.push_image(record.reference.clone()).await {
            Ok(()) => super::registry::refresh(images).await,
            Err(e) => tracing::warn!(image = %record.reference, error = %e,
                "cannot push a converted image; it stays on its agent"),
        }
    }
    record.size_bytes = image.size_bytes;
    if let Err(e) = images.store.put_customized_image(&record) {
        let _ = agent.rpc.remove_image(record.reference.clone()).await;
        super::refresh_agent(&images.agents, &agent.id).await;
        task.failed(format!("cannot record the image: {e}"));
        return;
    }
    super::refresh_agent(&images.agents, &agent.id).await;
    tracing::info!(image = %record.reference, name = %record.name, owner = %record.owner_email,
        "a session was converted to an image");
    // Backend.AI's clients read the new image's id as the done message.
    task.done(record.id.to_string());
}
