//! Client errors, each with a message a person can act on.

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server answered with a problem (`type`, `title`, `msg`).
    #[error("{}", if msg.is_empty() { title } else { msg })]
    Api {
        status: u16,
        kind: String,
        title: String,
        msg: String,
        data: Option<serde_json::Value>,
    },
    #[error("cannot reach the manager at {endpoint}: {detail} (is `make up` running?)")]
    Connect { endpoint: String, detail: String },
    #[error("{0}")]
    Config(String),
    #[error("unexpected reply from the manager: {0}")]
    Protocol(String),
}

impl ClientError {
    /// Builds an API error from a non-2xx reply body.
    pub fn from_reply(status: u16, body: &[u8]) -> ClientError {
        match serde_json::from_slice::<serde_json::Value>(body) {
            Ok(v) => ClientError::Api {
                status,
                kind: v
                    .get("type")
                    .and_then(|x| x.as_str())
                    .unwrap_or("")
                    .to_string(),
                title: v
                    .get("title")
                    .and_then(|x| x.as_str())
                    .unwrap_or("request failed")
                    .to_string(),
                msg: v
                    .get("msg")
                    .and_then(|x| x.as_str())
                    .unwrap_or("")
                    .to_string(),
                data: v.get("data").cloned(),
            },
            Err(_) => ClientError::Api {
                status,
                kind: String::new(),
                title: format!("HTTP {status}"),
                msg: String::from_utf8_lossy(body).chars().take(300).collect(),
                data: None,
            },
        }
    }

    pub fn status(&self) -> Option<u16> {
        match self {
            ClientError::Api { status, .. } => Some(*status),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_become_readable_errors() {
        let e = ClientError::from_reply(404, br#"{"type":"https://api.backend.ai/probs/session-not-found","title":"No such session.","msg":"no session named \"x\""}"#);
        assert_eq!(e.to_string(), "no session named \"x\"");
        assert_eq!(e.status(), Some(404));
        let e = ClientError::from_reply(500, b"oops");
        assert!(e.to_string().contains("oops"));
    }
}
