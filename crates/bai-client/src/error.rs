//! Client errors, each with a message a person can act on.

use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server answered non-2xx with a problem body (`type`, `title`, `msg`).
    /// Displays `msg`, or `title` when there is no `msg`.
    #[error("{}", if msg.is_empty() { title } else { msg })]
    Api {
        status: u16,
        /// The problem `type`, e.g. `https://api.backend.ai/probs/session-not-found`.
        kind: String,
        title: String,
        msg: String,
        data: Option<Value>,
    },
    #[error("cannot reach the manager at {endpoint}: is `make up` running? ({detail})")]
    Connect { endpoint: String, detail: String },
    #[error("{0}")]
    Config(String),
    /// A bad argument, refused before anything was sent.
    #[error("{0}")]
    Invalid(String),
    /// A local file (read to upload, written by a download). The cause is in the message,
    /// not a `source`, so an error chain (`{:#}`) names it once.
    #[error("cannot {what} {path}: {err}")]
    File {
        /// `read` or `write`.
        what: &'static str,
        path: String,
        err: std::io::Error,
    },
    #[error("unexpected reply from the manager: {0}")]
    Protocol(String),
}

impl ClientError {
    /// Builds an API error from a non-2xx reply body.
    pub fn from_reply(status: u16, body: &[u8]) -> ClientError {
        let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        match serde_json::from_slice::<Value>(body) {
            Ok(v) if v.is_object() => ClientError::Api {
                status,
                kind: text(&v, "type").unwrap_or_default(),
                title: text(&v, "title").unwrap_or_else(|| format!("HTTP {status}")),
                msg: text(&v, "msg").unwrap_or_default(),
                data: v.get("data").cloned(),
            },
            _ => {
                let body: String = String::from_utf8_lossy(body)
                    .trim()
                    .chars()
                    .take(300)
                    .collect();
                ClientError::Api {
                    status,
                    kind: String::new(),
                    title: format!("HTTP {status}"),
                    msg: if body.is_empty() {
                        String::new()
                    } else {
                        format!("HTTP {status}: {body}")
                    },
                    data: None,
                }
            }
        }
    }

    /// The HTTP status of an API error.
    pub fn status(&self) -> Option<u16> {
        match self {
            ClientError::Api { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Whether this is an API problem whose `type` ends with `/slug` (or equals `slug`).
    pub fn is_kind(&self, slug: &str) -> bool {
        match self {
            ClientError::Api { kind, .. } => {
                kind == slug || kind.rsplit('/').next().is_some_and(|k| k == slug)
            }
            _ => false,
        }
    }

    /// A transport error, described by its root cause (e.g. "Connection refused").
    pub(crate) fn connect(endpoint: &str, e: &(dyn std::error::Error + 'static)) -> ClientError {
        let mut root: &dyn std::error::Error = e;
        while let Some(s) = root.source() {
            root = s;
        }
        ClientError::Connect {
            endpoint: endpoint.to_string(),
            detail: root.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_become_readable_errors() {
        let e = ClientError::from_reply(
            404,
            br#"{"type":"https://api.backend.ai/probs/session-not-found","title":"No such session.","msg":"no session named \"x\""}"#,
        );
        assert_eq!(e.to_string(), "no session named \"x\"");
        assert_eq!(e.status(), Some(404));
        assert!(e.is_kind("session-not-found"));
        match e {
            ClientError::Api { kind, title, .. } => {
                assert_eq!(kind, "https://api.backend.ai/probs/session-not-found");
                assert_eq!(title, "No such session.");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn title_when_no_msg_and_raw_text_when_not_json() {
        let e = ClientError::from_reply(403, br#"{"type":"x","title":"Forbidden."}"#);
        assert_eq!(e.to_string(), "Forbidden.");
        let e = ClientError::from_reply(500, b"oops");
        assert_eq!(e.to_string(), "HTTP 500: oops");
        let e = ClientError::from_reply(502, b"");
        assert_eq!(e.to_string(), "HTTP 502");
        let e = ClientError::from_reply(
            400,
            br#"{"type":"t","title":"T","msg":"m","data":{"existingSessionId":"u"}}"#,
        );
        assert!(matches!(e, ClientError::Api { data: Some(_), .. }));
    }
}
