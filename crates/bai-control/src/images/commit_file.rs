//! `POST /session/{name}/commit`: the main kernel saved as a gzip'ed image tarball in the
//! agent's commit directory (`<data-dir>/commit/<owner>/<file>.tar.gz`), as a background task.

use super::ctx::Images;
use bai_core::Problem;
use bai_core::agent::CommitRequest;
use bai_store::SessionRow;
use std::collections::BTreeMap;
use std::sync::Arc;
use uuid::Uuid;

/// What the commit request answers (Backend.AI's agent reply).
pub struct Started {
    pub task_id: Uuid,
    pub kernel: Uuid,
    pub path: String,
}

/// The tarball's path under the commit directory: the owner's email with `@` as `_`, then
/// the time, the session's name and the image's name and tag (`:` as `-`).
pub fn tarball_path(
    email: &str,
    session: &str,
    image: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> String {
    let sub: String = email
        .chars()
        .map(|c| match c {
            '@' => '_',
            c if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') => c,
            _ => '_',
        })
        .collect();
    // Never `.` or `..`: the agent also refuses such paths.
    let sub = if sub.starts_with('.') || sub.is_empty() {
        format!("_{sub}")
    } else {
        sub
    };
    let image_name = image.rsplit('/').next().unwrap_or(image).replace(':', "-");
    let session: String = session.chars().take(64).collect();
    format!(
        "{sub}/{}_{session}_{image_name}.tar.gz",
        now.format("%Y-%m-%dT%HH%MM%SS")
    )
}

pub fn start(
    images: &Arc<Images>,
    owner_access_key: &str,
    owner_email: &str,
    row: &SessionRow,
) -> Result<Started, Problem> {
    let agent = super::commit_target(images, row)?;
    let path = tarball_path(owner_email, &row.name, &row.spec.image, chrono::Utc::now());
    let task = images.bgtasks.start(owner_access_key);
    if !images.commits.begin(row.id, task.clone()) {
        return Err(super::convert::busy(row));
    }
    let req = CommitRequest {
        kernel_id: row.main_kernel_id,
        reference: format!("bai/commit:{}", task.id.simple()),
        base_image: row.spec.image.clone(),
        labels: BTreeMap::new(),
        tarball: Some(path.clone()),
    };
    let (images, session, started) = (
        images.clone(),
        row.id,
        Started {
            task_id: task.id,
            kernel: row.main_kernel_id,
            path,
        },
    );
    task.update(0, 1, format!("saving session {} to a tarball", row.name));
    tokio::spawn(async move {
        let r = agent.rpc.commit_kernel(req).await;
        if task.is_cancelled() {
            task.cancelled("the session was terminated while it was being committed");
        } else {
            match r {
                Ok(_) => task.done("committed"),
                Err(e) => task.failed(format!("cannot commit the session: {e}")),
            }
        }
        images.commits.end(session);
    });
    Ok(started)
}

#[cfg(test)]
mod tests {
    use super::tarball_path;

    #[test]
    fn the_tarball_path_names_owner_time_session_and_image() {
        let t = chrono::DateTime::parse_from_rfc3339("2026-11-24T01:02:03Z")
            .map(|t| t.with_timezone(&chrono::Utc))
            .ok();
        let Some(t) = t else { panic!("bad time") };
        assert_eq!(
            tarball_path("a.b@x.org", "s1", "bai/python:3.11-bookworm", t),
            "a.b_x.org/2026-11-24T01H02M03S_s1_python-3.11-bookworm.tar.gz"
        );
        let odd = tarball_path("..", "s", "i:t", t);
        assert_eq!(odd.matches('/').count(), 1);
        assert!(!odd.starts_with(".."), "{odd}");
    }
}
