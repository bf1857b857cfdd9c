//! The legacy GraphQL endpoint `POST /admin/gql` (wire contract §5.1, §7).

use crate::{Client, ClientError};
use reqwest::Method;
use serde::Deserialize;
use serde_json::{Value, json};

/// The caller's keypair (`query { keypair { … } }`).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct KeypairInfo {
    #[serde(default)]
    pub user_id: Option<String>,
    pub access_key: String,
    #[serde(default)]
    pub is_active: bool,
    #[serde(default)]
    pub is_admin: bool,
    /// Requests per 15 minutes (0: no limit).
    #[serde(default)]
    pub rate_limit: i64,
}

/// One `compute_session_list` page request.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionListQuery {
    /// Comma-separated statuses, e.g. `CREATING,RUNNING,RUNNING_DEGRADED`.
    pub status: String,
    /// Administrators: only this keypair's sessions.
    pub access_key: Option<String>,
    pub limit: i64,
    pub offset: i64,
    /// Selected item fields, in order.
    pub fields: Vec<String>,
    /// System sessions (SFTP) instead of the user's own.
    pub system: bool,
    /// Keyset paging (bai's extension, for walking a whole listing): select `next_cursor`
    /// and send `after` (None: the first page). None: the official query, by offset.
    pub cursor: Option<Option<String>>,
}

impl SessionListQuery {
    /// The item fields `ps` selects (without `access_key`, which only admins add).
    pub const DEFAULT_FIELDS: &'static [&'static str] = &[
        "name",
        "priority",
        "id",
        "group_name",
        "type",
        "image",
        "status",
        "status_info",
        "status_changed",
        "result",
    ];

    /// The query text, laid out as the official client sends it.
    pub fn query_text(&self) -> String {
        let (mut decl, mut arg) = if self.system {
            (", $type: String".to_string(), ", type:$type".to_string())
        } else {
            (String::new(), String::new())
        };
        let mut extra = "";
        if self.cursor.is_some() {
            decl.push_str(", $after: String");
            arg.push_str(", after:$after");
            extra = " next_cursor";
        }
        format!(
            "query($limit:Int!, $offset:Int!, $status: String, $access_key: String, $filter: String, $order: String{decl}) {{\n  \
             compute_session_list(\n      \
             limit:$limit, offset:$offset, status:$status, access_key:$access_key, filter:$filter, order:$order{arg}) {{\n    \
             items {{ {} }}\n    total_count{extra}\n  }}\n}}\n",
            self.fields.join(" ")
        )
    }

    pub fn variables(&self) -> Value {
        let mut v = json!({
            "status": self.status,
            "access_key": self.access_key,
            "filter": null,
            "order": null,
            "limit": self.limit,
            "offset": self.offset,
        });
        if self.system {
            v["type"] = json!("system");
        }
        if let Some(after) = &self.cursor {
            v["after"] = json!(after);
        }
        v
    }
}

/// One page of sessions.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionList {
    /// Each item has the selected fields.
    pub items: Vec<Value>,
    pub total_count: i64,
    /// Where the next page starts ([`SessionListQuery::cursor`]); None after the last page.
    pub next_cursor: Option<String>,
}

impl Client {
    /// `POST /admin/gql`; returns `data`. A non-empty `errors` list is an error (as the
    /// official client turns it into a 400 `graphql-error`).
    pub async fn gql(&self, query: &str, variables: Value) -> Result<Value, ClientError> {
        let v = self
            .send_json(
                Method::POST,
                "/admin/gql",
                Some(&json!({"query": query, "variables": variables})),
            )
            .await?;
        check_gql_reply(v)
    }

    /// The caller's keypair; `is_admin` tells whether admin commands are allowed.
    pub async fn keypair_info(&self) -> Result<KeypairInfo, ClientError> {
        self.keypair_of(None).await
    }

    /// A keypair: the caller's (None), or any by access key (administrators).
    pub async fn keypair_of(&self, access_key: Option<&str>) -> Result<KeypairInfo, ClientError> {
        let d = match access_key {
            // The official client's own query.
            None => {
                self.gql(
                    "query { keypair { user_id access_key secret_key is_active is_admin } }",
                    json!({}),
                )
                .await?
            }
            Some(ak) => {
                self.gql(
                    "query($ak: String) { keypair(access_key: $ak) { user_id access_key is_active is_admin rate_limit } }",
                    json!({"ak": ak}),
                )
                .await?
            }
        };
        serde_json::from_value(d.get("keypair").cloned().unwrap_or(Value::Null))
            .map_err(|e| ClientError::Protocol(format!("bad keypair reply: {e}")))
    }

    /// One page of `compute_session_list` (the server lists the most recently changed first).
    pub async fn list_sessions(&self, q: &SessionListQuery) -> Result<SessionList, ClientError> {
        let d = self.gql(&q.query_text(), q.variables()).await?;
        let list = d
            .get("compute_session_list")
            .ok_or_else(|| ClientError::Protocol(format!("no compute_session_list in {d}")))?;
        Ok(SessionList {
            items: list
                .get("items")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            total_count: list.get("total_count").and_then(Value::as_i64).unwrap_or(0),
            next_cursor: list
                .get("next_cursor")
                .and_then(Value::as_str)
                .map(str::to_string),
        })
    }
}

/// A mutation's answer `{ok, msg}` (Backend.AI's shape): `ok: false` is an error with its
/// message. Returns the answer.
pub(crate) fn mutation_ok(data: &Value, field: &str) -> Result<Value, ClientError> {
    let out = data[field].clone();
    if out["ok"].as_bool() == Some(false) {
        return Err(ClientError::Protocol(
            out["msg"].as_str().unwrap_or("refused").to_string(),
        ));
    }
    Ok(out)
}

fn check_gql_reply(v: Value) -> Result<Value, ClientError> {
    if let Some(errs) = v.get("errors").and_then(Value::as_array)
        && !errs.is_empty()
    {
        let msg = errs
            .iter()
            .map(|e| match e.get("message").and_then(Value::as_str) {
                Some(m) => m.to_string(),
                None => e.to_string(),
            })
            .collect::<Vec<_>>()
            .join("; ");
        return Err(ClientError::Api {
            status: 400,
            kind: "https://api.backend.ai/probs/graphql-error".into(),
            title: "GraphQL-generated error".into(),
            msg,
            data: Some(Value::Array(errs.clone())),
        });
    }
    Ok(v.get("data").cloned().unwrap_or(Value::Null))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_query_is_the_official_text() {
        let q = SessionListQuery {
            status: "CANCELLED,TERMINATED".into(),
            access_key: None,
            limit: 10,
            offset: 0,
            system: false,
            cursor: None,
            fields: SessionListQuery::DEFAULT_FIELDS
                .iter()
                .map(|s| s.to_string())
                .collect(),
        };
        assert_eq!(
            q.query_text(),
            "query($limit:Int!, $offset:Int!, $status: String, $access_key: String, $filter: String, $order: String) {\n  compute_session_list(\n      limit:$limit, offset:$offset, status:$status, access_key:$access_key, filter:$filter, order:$order) {\n    items { name priority id group_name type image status status_info status_changed result }\n    total_count\n  }\n}\n"
        );
        assert_eq!(
            q.variables(),
            json!({"status": "CANCELLED,TERMINATED", "access_key": null, "filter": null,
                   "order": null, "limit": 10, "offset": 0})
        );
    }

    #[test]
    fn graphql_errors_are_errors() {
        let e =
            check_gql_reply(json!({"data": null, "errors": [{"message": "boom"}]})).unwrap_err();
        assert_eq!(e.to_string(), "boom");
        assert!(e.is_kind("graphql-error"));
        assert_eq!(
            check_gql_reply(json!({"data": {"a": 1}, "errors": []})).unwrap(),
            json!({"a": 1})
        );
    }
}
