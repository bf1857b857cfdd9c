//! Projects and their members.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A project with its members.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Project {
    /// The project's name.
    pub name: String,
    /// Free text about the project (may be empty).
    pub description: String,
    /// The members' emails.
    pub members: Vec<String>,
}

/// `GET /projects`: the caller's projects (administrators: every project).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProjectList {
    /// The projects.
    pub projects: Vec<Project>,
}

/// `POST /admin/projects`: a new project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NewProject {
    /// 1 to 64 letters, digits, `-`, `_` or `.`.
    pub name: String,
    /// Free text about the project (left out: empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The project created, still without members.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CreatedProject {
    /// The project's name.
    pub name: String,
    /// Free text about the project (may be empty).
    pub description: String,
}

/// `POST /admin/projects/{name}/members`: add a user to the project or take them out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MembershipChange {
    /// The user's email.
    pub email: String,
    /// `true` adds, `false` takes out (default `true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<bool>,
}

/// Whether the user is a member of the project now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Membership {
    /// The project's name.
    pub project: String,
    /// The user's email.
    pub email: String,
    /// Whether they are a member now.
    pub member: bool,
}
