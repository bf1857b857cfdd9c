//! `GET /events/session`: the `data` of each server-sent event.

use bai_core::event::{EventKind, SessionEvent};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The `event:` name of a server-sent event: a lifecycle event's kind (its names come from
/// [`EventKind`], the one list of them), or `server_close`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum EventName {
    /// A session or kernel event.
    Lifecycle(EventKind),
    /// The last event of a one-session stream, after the session ended; its data is `{}`.
    ServerClose,
}

const SERVER_CLOSE: &str = "server_close";

impl EventName {
    pub const fn as_str(self) -> &'static str {
        match self {
            EventName::Lifecycle(k) => k.as_str(),
            EventName::ServerClose => SERVER_CLOSE,
        }
    }
}

impl From<EventName> for String {
    fn from(n: EventName) -> String {
        n.as_str().to_string()
    }
}

impl TryFrom<String> for EventName {
    type Error = String;
    fn try_from(s: String) -> Result<EventName, String> {
        if s == SERVER_CLOSE {
            return Ok(EventName::ServerClose);
        }
        EventKind::try_from(s).map(EventName::Lifecycle)
    }
}

impl JsonSchema for EventName {
    fn schema_name() -> Cow<'static, str> {
        "EventName".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let names: Vec<&str> = EventKind::ALL
            .iter()
            .map(|k| k.as_str())
            .chain([SERVER_CLOSE])
            .collect();
        let meanings: Vec<String> = EventKind::ALL
            .iter()
            .map(|k| format!("`{}`: {}", k.as_str(), k.describe()))
            .chain([format!(
                "`{SERVER_CLOSE}`: the last event of a one-session stream, after the session ended; its data is `{{}}`."
            )])
            .collect();
        json_schema!({
            "type": "string",
            "enum": names,
            "description": format!("The `event:` name of a server-sent event. {}", meanings.join(" ")),
        })
    }
}

/// The `data` of a server-sent event: a lifecycle event, or `{}` for `server_close`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum EventData {
    /// A session or kernel event.
    Session(SessionEventData),
    /// `server_close`: nothing.
    Close(CloseData),
}

/// What happened to a session (or its kernel).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionEventData {
    /// Why, e.g. `user-requested`, `idle-timeout`, `task-finished`.
    pub reason: String,
    /// The session's name.
    #[serde(rename = "sessionName")]
    pub session_name: String,
    /// The owner's access key.
    #[serde(rename = "ownerAccessKey")]
    pub owner_access_key: String,
    /// The session's id.
    #[serde(rename = "sessionId")]
    pub session_id: String,
    /// The exit code of the session's command, when it ended with one.
    #[serde(rename = "exitCode")]
    pub exit_code: Option<i32>,
    /// Kernel events only: the kernel's id.
    #[serde(rename = "kernelId", default, skip_serializing_if = "Option::is_none")]
    pub kernel_id: Option<String>,
    /// Kernel events only: the kernel's role (`main`).
    #[serde(
        rename = "clusterRole",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub cluster_role: Option<String>,
    /// Kernel events only: the kernel's index in its role (1).
    #[serde(
        rename = "clusterIdx",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub cluster_idx: Option<u32>,
}

impl From<&SessionEvent> for SessionEventData {
    /// The data as the Backend.AI manager sends it; a kernel event names its kernel as the
    /// main one (index 1).
    fn from(ev: &SessionEvent) -> SessionEventData {
        let kernel = ev.kernel_id.map(|k| k.to_string());
        SessionEventData {
            reason: ev.reason.clone(),
            session_name: ev.session_name.clone(),
            owner_access_key: ev.access_key.clone(),
            session_id: ev.session_id.to_string(),
            exit_code: ev.exit_code,
            cluster_role: kernel.as_ref().map(|_| "main".to_string()),
            cluster_idx: kernel.as_ref().map(|_| 1),
            kernel_id: kernel,
        }
    }
}

/// The empty data of `server_close`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseData {}
