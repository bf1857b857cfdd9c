//! Session templates (`/template/session`, Backend.AI's task templates) and creating a session
//! from one (`POST /session/_/create-from-template`).
//!
//! A template is a stored session request: image, type, resources, mounts, environment,
//! startup and bootstrap commands. A session created from it takes the template's values and
//! the create call's on top of them (a field the call gives replaces the template's).

use super::status::SessionType;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The template's kind: a task template (the only kind bai stores).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum TemplateKind {
    /// Also read as `task_template`.
    #[serde(rename = "taskTemplate", alias = "task_template")]
    TaskTemplate,
}

/// A template's name and tag.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TemplateMetadata {
    /// The template's name (also the template's listed name unless the item names one).
    pub name: String,
    /// The tag given to sessions made from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

/// Commands run in the session.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct TemplateRun {
    /// Shell text run once before the session is ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap: Option<String>,
    /// The startup command (a batch session's job). Also read as `startup` and
    /// `startupCommand`.
    #[serde(
        default,
        alias = "startup",
        alias = "startupCommand",
        skip_serializing_if = "Option::is_none"
    )]
    pub startup_command: Option<String>,
}

/// The credential of a Git repository.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GitCredential {
    pub username: String,
    pub password: String,
}

/// A Git repository cloned into the session's work directory before it is ready.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TemplateGit {
    /// The repository's URL.
    pub repository: String,
    /// A commit to check out after cloning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The branch to clone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// A username and password for an HTTPS repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential: Option<GitCredential>,
    /// The directory to clone into, relative to the work directory; the repository's last
    /// path component when absent. Also read as `destination_dir` and `destinationDir`.
    #[serde(
        default,
        alias = "destination_dir",
        alias = "destinationDir",
        skip_serializing_if = "Option::is_none"
    )]
    pub dest_dir: Option<String>,
}

/// The kernel a session made from the template runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TemplateKernel {
    /// The image or an alias of it.
    pub image: String,
    /// The image's architecture (`x86_64` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub architecture: Option<String>,
    /// Environment variables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environ: Option<BTreeMap<String, String>>,
    /// The bootstrap script and startup command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<TemplateRun>,
    /// A repository to clone before the session is ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<TemplateGit>,
}

/// What a session made from the template asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TemplateSpec {
    /// `interactive` (the default), `batch` or `inference`. Also read as `type` and
    /// `sessionType`.
    #[serde(
        default,
        alias = "type",
        alias = "sessionType",
        skip_serializing_if = "Option::is_none"
    )]
    pub session_type: Option<SessionType>,
    /// The kernel.
    pub kernel: TemplateKernel,
    /// The resource group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling_group: Option<String>,
    /// Folders to mount: folder name → mount path (`null` or empty: `/home/work/NAME`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mounts: Option<BTreeMap<String, Option<String>>>,
    /// Resource slots, as in `POST /session`'s `config.resources`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Map<String, Value>>,
    /// Agents to place the session on (administrators only). Also read as `agentList`.
    #[serde(default, alias = "agentList", skip_serializing_if = "Option::is_none")]
    pub agent_list: Option<Vec<String>>,
}

/// A task template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskTemplate {
    /// The template format's version, e.g. `"6"` or `"v1"`. Also read as `apiVersion`.
    #[serde(alias = "apiVersion", deserialize_with = "text_or_number")]
    pub api_version: String,
    /// `taskTemplate`.
    pub kind: TemplateKind,
    /// Name and tag.
    pub metadata: TemplateMetadata,
    /// What sessions made from it ask for.
    pub spec: TemplateSpec,
}

/// One template of a create or update payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TemplateItem {
    /// The template's listed name; the template's `metadata.name` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The template.
    pub template: TaskTemplate,
}

/// `POST /template/session`: store templates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CreateTemplates {
    /// A list of [`TemplateItem`] as JSON or YAML text (YAML may also be a stream of
    /// documents, one item each).
    pub payload: String,
    /// The project the templates belong to (`default` when absent). Also read as
    /// `group_name` and `groupName`.
    #[serde(
        default,
        alias = "group_name",
        alias = "groupName",
        skip_serializing_if = "Option::is_none"
    )]
    pub group: Option<String>,
    /// The domain (`default` when absent). Also read as `domain_name` and `domainName`.
    #[serde(
        default,
        alias = "domain_name",
        alias = "domainName",
        skip_serializing_if = "Option::is_none"
    )]
    pub domain: Option<String>,
    /// Another keypair to own the templates (administrators only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_access_key: Option<String>,
}

/// `PUT /template/session/{id}`: replace a template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UpdateTemplate {
    /// One [`TemplateItem`] (or a list of exactly one) as JSON or YAML text.
    pub payload: String,
    /// Ignored: the template's owner does not change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_access_key: Option<String>,
}

/// A stored template's id and owner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TemplateCreated {
    /// The template's id (hex).
    pub id: String,
    /// The owning user's id.
    pub user: String,
}

/// A template as `GET /template/session` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TemplateListItem {
    pub name: String,
    pub id: String,
    pub created_at: String,
    /// Whether the caller owns it.
    pub is_owner: bool,
    /// The owning user's id.
    pub user: String,
    /// The project's id, or `None`.
    pub group: Option<String>,
    pub user_email: Option<String>,
    pub group_name: Option<String>,
    pub domain_name: String,
    /// `task`.
    #[serde(rename = "type")]
    pub kind: String,
    pub template: TaskTemplate,
}

/// `GET /template/session/{id}`: a template (`?format=yaml`: the same as YAML text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TemplateInfo {
    pub template: TaskTemplate,
    pub name: String,
    pub user_uuid: String,
    pub group_id: Option<String>,
    pub domain_name: String,
}

/// The answer of updating and deleting a template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TemplateDone {
    /// Always true.
    pub success: bool,
}

/// `POST /session/_/create-from-template`: `template_id` (also `templateId`) and any field of
/// `POST /session`, which replaces the template's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CreateFromTemplate {
    /// The template's id.
    #[serde(alias = "templateId")]
    pub template_id: String,
    /// The rest: `POST /session`'s fields.
    #[serde(flatten)]
    pub overrides: Map<String, Value>,
}

/// A text, or a number read as its text (YAML reads `api_version: 6` as a number).
fn text_or_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    match Value::deserialize(d)? {
        Value::String(s) => Ok(s),
        Value::Number(n) => Ok(n.to_string()),
        other => Err(serde::de::Error::custom(format!(
            "expected a text or a number, not {other}"
        ))),
    }
}
