//! API errors as JSON problems (`type`, `title`, `msg`), the shape the Backend.AI client reads.

use serde::{Deserialize, Serialize};

// One spelling: what the server answers and what the wire documents (its schema behind the
// `schema` feature). `status` is the HTTP status; it is not serialized (a problem read back
// has 0 there).
/// An error, as every route answers one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Problem {
    #[serde(skip)]
    pub status: u16,
    /// A URI naming the kind of problem, e.g. `https://api.backend.ai/probs/invalid-api-params`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The kind in words, e.g. "Invalid API parameters.".
    pub title: String,
    /// What went wrong with this request, for a person.
    pub msg: String,
    /// Backend.AI's error code, e.g. `api_generic_invalid-parameters`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// Details (e.g. the sessions a reference matched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
}

const PROBS: &str = "https://api.backend.ai/probs/";

impl Problem {
    pub fn new(status: u16, slug: &str, title: &str, msg: impl Into<String>) -> Problem {
        Problem {
            status,
            kind: format!("{PROBS}{slug}"),
            title: title.to_string(),
            msg: msg.into(),
            error_code: None,
            data: None,
        }
    }

    pub fn with_code(mut self, code: &str) -> Problem {
        self.error_code = Some(code.to_string());
        self
    }

    /// The same problem with `what` said first: `"{what}: {msg}"`.
    pub fn context(mut self, what: impl std::fmt::Display) -> Problem {
        self.msg = format!("{what}: {}", self.msg);
        self
    }

    pub fn with_data(mut self, data: serde_json::Value) -> Problem {
        self.data = Some(data);
        self
    }

    /// `value` as JSON text: a value of the server's own that cannot be written is its bug
    /// (500).
    pub fn json_text<T: serde::Serialize>(value: &T) -> Result<String, Problem> {
        serde_json::to_string(value)
            .map_err(|e| Problem::internal(format!("cannot write a value as JSON: {e}")))
    }

    /// [`Problem::with_data`] of a typed value (none when it cannot be JSON).
    pub fn with_data_of<T: serde::Serialize>(mut self, data: &T) -> Problem {
        self.data = serde_json::to_value(data).ok();
        self
    }

    pub fn invalid(msg: impl Into<String>) -> Problem {
        Problem::new(400, "invalid-api-params", "Invalid API parameters.", msg)
            .with_code("api_generic_invalid-parameters")
    }

    pub fn session_not_found(reference: &str) -> Problem {
        Problem::new(
            404,
            "session-not-found",
            "No such session.",
            format!("no session named or with the id {reference:?} is visible to you"),
        )
    }

    pub fn image_not_found(image: &str, known: &[String]) -> Problem {
        let hint = if known.is_empty() {
            "no images are registered yet; run `make up` to build them".to_string()
        } else {
            format!("known images and aliases: {}", known.join(", "))
        };
        Problem::new(
            400,
            "image-not-found",
            "Unknown image.",
            format!("the image {image:?} is not available here; {hint}"),
        )
        .with_code("session_create_image-not-found")
    }

    pub fn unauthorized(msg: impl Into<String>) -> Problem {
        Problem::new(401, "auth-failed", "Authentication failed.", msg)
    }

    pub fn forbidden(msg: impl Into<String>) -> Problem {
        Problem::new(403, "forbidden", "Forbidden operation.", msg)
    }

    pub fn conflict(slug: &str, title: &str, msg: impl Into<String>) -> Problem {
        Problem::new(409, slug, title, msg)
    }

    pub fn internal(msg: impl Into<String>) -> Problem {
        Problem::new(500, "internal-server-error", "Internal server error.", msg)
    }

    pub fn not_found(what: &str, msg: impl Into<String>) -> Problem {
        Problem::new(404, &format!("{what}-not-found"), "Not found.", msg)
    }

    /// 507: the server's disk is full, so nothing was changed.
    pub fn disk_full() -> Problem {
        Problem::new(
            507,
            "insufficient-storage",
            "The server is out of disk space.",
            "the disk holding bai's data is full, so nothing was changed; an administrator must free space",
        )
    }

    /// The database server cannot be reached from this manager now; nothing was changed.
    pub fn database_unavailable() -> Problem {
        Problem::new(
            503,
            "database-unavailable",
            "The database cannot be reached.",
            "this manager cannot reach its database now, so nothing was changed; try again (another manager may answer)",
        )
    }

    /// This manager's lease was taken over by another manager: nothing was changed here.
    pub fn not_leader() -> Problem {
        Problem::new(
            503,
            "not-leader",
            "This manager no longer leads the cluster.",
            "another manager took over the lead, so this manager changed nothing; try again (it answers through the new leader in a moment)",
        )
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.title, self.status, self.msg)
    }
}

impl std::error::Error for Problem {}

/// The `data` of a 409 whose session exists already (`session-already-exists`,
/// `idempotency-key-reused`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ExistingSession {
    #[serde(rename = "existingSessionId")]
    pub existing_session_id: String,
}

/// The `data` of a 400 `quota-exceeded`: the quota and what is used of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct QuotaData {
    pub limit: u64,
    pub current: u64,
}
