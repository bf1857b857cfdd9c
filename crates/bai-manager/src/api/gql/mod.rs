//! `POST /admin/gql`: the legacy GraphQL listing endpoint (wire contract §5.1, §7).
//! The executor (bai-gql) projects exactly the selected fields; this module resolves the
//! root fields with the caller's permissions. Each group of root fields lives in a file of
//! this folder that says which fields it `handles` and `resolve`s them.

mod admin;
mod args;
mod cursor;
mod images;
mod keypairs;
mod policies;
mod rules;

use self::args::typed_args;
use super::session_info::session_info;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::Extension;
use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use bai_api::sessions::{GqlRequest, ModifySessionArgs, SchedulingHistoriesArgs};
use bai_core::Problem;
use bai_core::status::SessionStatus;
use bai_gql::{FieldError, OperationKind, Request, Resolver};
use bai_store::SessionFilter;
use base64::Engine;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use uuid::Uuid;

struct SessionResolver<'a> {
    m: &'a Arc<Manager>,
    caller: &'a Caller,
    /// Whether the caller signed the request with its keypair (not a web session's cookie):
    /// only then is that keypair's secret key answered ([`keypairs`]).
    signed: bool,
}

/// A field's error, in words (every file of this folder answers with these two).
fn err(msg: impl Into<String>) -> FieldError {
    FieldError {
        message: msg.into(),
    }
}

/// A store failure as a field error: logged once, worded as the REST side words it.
fn db(e: bai_store::StoreError) -> FieldError {
    err(bai_core::Problem::from(e).msg)
}

/// A problem as a field error: its words.
fn problem(p: bai_core::Problem) -> FieldError {
    err(p.msg)
}

fn arg_str<'a>(args: &'a Map<String, Value>, k: &str) -> Option<&'a str> {
    args.get(k)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// Decodes a Relay global id (`base64("compute_session_node:<uuid>")`) or a bare UUID.
pub fn decode_global_id(s: &str) -> Option<Uuid> {
    if let Ok(u) = Uuid::parse_str(s) {
        return Some(u);
    }
    let raw = base64::engine::general_purpose::STANDARD.decode(s).ok()?;
    let text = String::from_utf8(raw).ok()?;
    Uuid::parse_str(text.rsplit(':').next()?).ok()
}

impl SessionResolver<'_> {
    /// The project a folder listing's `group_id` names (its id, or its name), if any.
    fn project_arg(&self, args: &Map<String, Value>) -> Result<Option<String>, FieldError> {
        let Some(g) = arg_str(args, "group_id").filter(|g| !g.is_empty()) else {
            return Ok(None);
        };
        if let Some(p) = self.m.store.project_by_id(g).map_err(db)? {
            return Ok(Some(p.name));
        }
        if self.m.store.project_exists(g).map_err(db)? {
            return Ok(Some(g.to_string()));
        }
        Err(err(format!("no project {g:?}")))
    }

    fn visible(&self, id: Uuid) -> Result<Option<bai_store::SessionRow>, FieldError> {
        let row = self.m.store.session(id).map_err(db)?;
        Ok(row.filter(|r| self.caller.is_admin || r.spec.access_key == self.caller.access_key))
    }

    fn session_list(&self, args: &Map<String, Value>) -> Result<Value, FieldError> {
        let statuses: Vec<SessionStatus> = match arg_str(args, "status") {
            Some(s) => s
                .split(',')
                .map(|p| {
                    p.trim()
                        .parse::<SessionStatus>()
                        .map_err(|e| err(e.to_string()))
                })
                .collect::<Result<_, _>>()?,
            None => SessionStatus::ALL.to_vec(),
        };
        let access_key = match arg_str(args, "access_key") {
            Some(ak) if ak != self.caller.access_key && !self.caller.is_admin => {
                return Err(err("only administrators can list other users' sessions"));
            }
            Some(ak) => Some(ak.to_string()),
            None if self.caller.is_admin => None,
            None => Some(self.caller.access_key.clone()),
        };
        let limit = args
            .get("limit")
            .and_then(Value::as_i64)
            .unwrap_or(20)
            .clamp(0, 1000);
        let offset = args
            .get("offset")
            .and_then(Value::as_i64)
            .unwrap_or(0)
            .max(0);
        // Keyset paging (bai's extension): the page after the one whose `next_cursor` this is.
        let after = arg_str(args, "after")
            .filter(|a| !a.is_empty())
            .map(cursor::decode)
            .transpose()?;
        if after.is_some() && offset > 0 {
            return Err(err(
                "give either after (a cursor) or offset, not both: a cursor already says where the page starts",
            ));
        }
        let (rows, total) = self
            .m
            .store
            .list_sessions(&SessionFilter {
                statuses,
                access_key,
                // System sessions (SFTP) are listed only when asked for (`type: "system"`).
                system: arg_str(args, "type") == Some("system"),
                limit,
                offset,
                after,
            })
            .map_err(db)?;
        let items: Vec<Value> = rows.iter().map(|r| session_json(self.m, r)).collect();
        // A full page may have a next one; a short one is the last.
        let next = rows
            .last()
            .filter(|_| limit > 0 && rows.len() as i64 == limit)
            .map(|r| cursor::encode(&bai_store::SessionCursor::after(r)));
        Ok(json!({"items": items, "total_count": total, "next_cursor": next}))
    }
}

impl SessionResolver<'_> {
    /// Scheduling history records of one session as a connection (`count`, `edges.node`),
    /// filtered like the Scheduling History modal.
    fn scheduling_histories(&self, args: &Map<String, Value>) -> Result<Value, FieldError> {
        let a: SchedulingHistoriesArgs = typed_args(args)?;
        let id = decode_global_id(&a.session_id)
            .ok_or_else(|| err("session_id must be a session id"))?;
        let row = self.visible(id)?.ok_or_else(|| err("no such session"))?;
        // An empty text filters nothing, as the filter bar sends it.
        let given = |s: Option<String>| s.filter(|s| !s.is_empty());
        let record = match given(a.id) {
            Some(text) => Some(
                uuid::Uuid::parse_str(text.trim())
                    .map_err(|_| err(format!("id {text:?} is not a record id (a UUID)")))?,
            ),
            None => None,
        };
        let filter = bai_core::history::HistoryFilter {
            id: record,
            phase: given(a.phase),
            result: given(a.result),
            from_status: given(a.from_status),
            to_status: given(a.to_status),
            error_code: given(a.error_code),
            message: given(a.message),
        };
        let all: Vec<Value> = self
            .m
            .store
            .history(row.id)
            .map_err(db)?
            .into_iter()
            .filter(|h| filter.matches(h))
            .map(|h| serde_json::to_value(h).unwrap_or(Value::Null))
            .collect();
        let count = all.len();
        let edges: Vec<Value> = all
            .into_iter()
            .skip(usize::try_from(a.offset.unwrap_or(0)).unwrap_or(usize::MAX))
            .take(
                a.first
                    .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX)),
            )
            .map(|n| json!({ "node": n }))
            .collect();
        Ok(json!({ "count": count, "edges": edges }))
    }
}

/// `name == "x"` (or `name ilike "%x%"`) of a Backend.AI filter expression.
fn name_filter(filter: &str) -> Result<Option<(bool, String)>, FieldError> {
    let f = filter.trim();
    if f.is_empty() {
        return Ok(None);
    }
    for (op, exact) in [("==", true), ("ilike", false), ("like", false)] {
        if let Some((field, value)) = f.split_once(op)
            && field.trim() == "name"
        {
            let v = value.trim().trim_matches('"').trim_matches('%').to_string();
            return Ok(Some((exact, v)));
        }
    }
    Err(err(format!(
        "filter {filter:?} is not supported: use name == \"NAME\""
    )))
}

impl SessionResolver<'_> {
    fn endpoint_list(&self, args: &Map<String, Value>) -> Result<Value, FieldError> {
        let filter = name_filter(arg_str(args, "filter").unwrap_or(""))?;
        let rows = self
            .m
            .store
            .live_endpoints(self.caller.owner_filter())
            .map_err(db)?;
        let all: Vec<Value> = rows
            .iter()
            .filter(|e| match &filter {
                None => true,
                Some((true, n)) => &e.name == n,
                Some((false, n)) => e.name.to_lowercase().contains(&n.to_lowercase()),
            })
            .map(|e| crate::api::views::services::endpoint_node(&self.m.serving, e))
            .collect();
        let total = all.len();
        let offset = args.get("offset").and_then(Value::as_u64).unwrap_or(0) as usize;
        let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(20) as usize;
        let items: Vec<Value> = all.into_iter().skip(offset).take(limit).collect();
        Ok(json!({"items": items, "total_count": total}))
    }
}

impl Resolver for SessionResolver<'_> {
    fn resolve(
        &self,
        kind: OperationKind,
        field: &str,
        args: &Map<String, Value>,
    ) -> Result<Value, FieldError> {
        let out = self.resolve_field(kind, field, args);
        if kind == OperationKind::Mutation {
            let target = ["name", "email", "access_key", "id", "endpoint"]
                .iter()
                .find_map(|k| args.get(*k).and_then(Value::as_str))
                .unwrap_or("");
            bai_ground::audit::record(
                &self.m.store,
                &self.caller.email,
                Some(&self.caller.access_key),
                &format!("graphql {field}"),
                target,
                match &out {
                    Err(e) => Err(e.message.as_str()),
                    Ok(v) if v.get("ok") == Some(&Value::Bool(false)) => {
                        Err(v.get("msg").and_then(Value::as_str).unwrap_or("not ok"))
                    }
                    Ok(_) => Ok(()),
                },
            );
        }
        out
    }
}

impl SessionResolver<'_> {
    fn resolve_field(
        &self,
        kind: OperationKind,
        field: &str,
        args: &Map<String, Value>,
    ) -> Result<Value, FieldError> {
        if self::images::handles(field) {
            return self::images::resolve(self.m, self.caller, kind, field, args);
        }
        if self::keypairs::handles(field) {
            return self::keypairs::resolve(self.m, self.caller, self.signed, kind, field, args);
        }
        if self::admin::handles(field) {
            return self::admin::resolve(self.m, self.caller, kind, field, args);
        }
        if self::policies::handles(field) {
            return self::policies::resolve(self.m, self.caller, kind, field, args);
        }
        match (kind, field) {
            (OperationKind::Query, "compute_session_list") => self.session_list(args),
            (
                OperationKind::Query,
                "vfolder_list"
                | "vfolder_own_list"
                | "vfolder_invited_list"
                | "vfolder_project_list",
            ) => {
                // `vfolder_invited_list`: user folders shared with the caller.
                let visible = if field == "vfolder_list" && self.caller.is_admin {
                    // Backend.AI's `admin vfolder list`: every folder, everyone's.
                    self.m.store.vfolders(None).map_err(db)?
                } else {
                    self.m
                        .store
                        .visible_vfolders(&self.caller.user_id, self.caller.is_admin)
                        .map_err(db)?
                };
                let project = self.project_arg(args)?;
                let all: Vec<Value> = visible
                    .iter()
                    .filter(|v| project.is_none() || v.project == project)
                    .filter(|v| match field {
                        "vfolder_own_list" => {
                            v.project.is_none() && v.user_id == self.caller.user_id
                        }
                        "vfolder_project_list" => v.project.is_some(),
                        "vfolder_invited_list" => {
                            v.project.is_none() && v.user_id != self.caller.user_id
                        }
                        _ => true,
                    })
                    .map(|v| {
                        let mut j = folder_json(self.m, v, &self.caller.user_id);
                        let email = if v.user_id == self.caller.user_id {
                            Some(self.caller.email.clone())
                        } else {
                            self.m
                                .store
                                .user_by_id(&v.user_id)
                                .ok()
                                .flatten()
                                .map(|u| u.email)
                        };
                        if let Some(email) = email {
                            j["creator"] = json!(email);
                            j["user_email"] = json!(email);
                        }
                        j
                    })
                    .collect();
                let total = all.len();
                let offset = args.get("offset").and_then(Value::as_u64).unwrap_or(0) as usize;
                let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(20) as usize;
                let items: Vec<Value> = all.into_iter().skip(offset).take(limit).collect();
                Ok(json!({"items": items, "total_count": total}))
            }
            (
                OperationKind::Query,
                "session_scheduling_histories" | "admin_session_scheduling_histories",
            ) => {
                if field.starts_with("admin_") && !self.caller.is_admin {
                    return Err(err(
                        "only administrators may query admin_session_scheduling_histories",
                    ));
                }
                self.scheduling_histories(args)
            }
            (OperationKind::Query, "endpoint") => {
                let id = arg_str(args, "endpoint_id").unwrap_or_default();
                let e = super::services::visible_service(self.m, self.caller, id)
                    .map_err(|p| err(p.0.msg))?;
                Ok(crate::api::views::services::endpoint_node(
                    &self.m.serving,
                    &e,
                ))
            }
            (OperationKind::Query, "endpoint_list") => self.endpoint_list(args),
            (OperationKind::Query, "endpoint_auto_scaling_rule_nodes")
            | (OperationKind::Query, "endpoint_auto_scaling_rule_node")
            | (OperationKind::Mutation, "create_endpoint_auto_scaling_rule_node")
            | (OperationKind::Mutation, "modify_endpoint_auto_scaling_rule_node")
            | (OperationKind::Mutation, "delete_endpoint_auto_scaling_rule_node") => {
                self::rules::resolve(self.m, self.caller, field, args)
            }
            (OperationKind::Query, "compute_session") => {
                let id = arg_str(args, "id")
                    .and_then(|s| Uuid::parse_str(s).ok())
                    .ok_or_else(|| err("id must be a UUID"))?;
                Ok(self
                    .visible(id)?
                    .map(|r| session_json(self.m, &r))
                    .unwrap_or(Value::Null))
            }
            (OperationKind::Query, "compute_session_node") => {
                let id = arg_str(args, "id")
                    .and_then(decode_global_id)
                    .ok_or_else(|| err("id must be a global id or UUID"))?;
                Ok(self
                    .visible(id)?
                    .map(|r| {
                        let mut v = session_json(self.m, &r);
                        let kernels = v["kernels"].as_array().cloned().unwrap_or_default();
                        let count = kernels.len();
                        let edges: Vec<Value> =
                            kernels.into_iter().map(|k| json!({"node": k})).collect();
                        v["kernel_nodes"] = json!({"edges": edges, "count": count});
                        v
                    })
                    .unwrap_or(Value::Null))
            }
            (OperationKind::Mutation, "modify_compute_session") => {
                let ModifySessionArgs { input } = typed_args(args)?;
                let id = decode_global_id(&input.id)
                    .ok_or_else(|| err("input.id must be a session id"))?;
                let row = self.visible(id)?.ok_or_else(|| err("no such session"))?;
                // Refused before anything changes.
                if input.priority.is_some() {
                    return Err(err(
                        "changing the priority is not available on this server yet",
                    ));
                }
                if let Some(name) = &input.name {
                    let n = bai_core::SessionName::parse(name).map_err(|e| err(e.to_string()))?;
                    self.m
                        .store
                        .rename_session(row.id, n.as_str())
                        .map_err(db)?;
                }
                let row = self.visible(id)?.ok_or_else(|| err("no such session"))?;
                Ok(
                    json!({"item": session_json(self.m, &row), "clientMutationId": input.client_mutation_id}),
                )
            }
            _ => Err(err(format!(
                "field {field:?} is not available on this server"
            ))),
        }
    }
}

pub async fn admin_gql(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    signed: Option<Extension<crate::auth::Signed>>,
    body: Bytes,
) -> ApiResult<Json<Value>> {
    let signed = signed.is_some();
    let GqlRequest {
        query,
        variables,
        operation_name,
    } = super::typed_body(&body)?;
    let req = Request {
        query,
        variables: variables.unwrap_or_default(),
        operation_name,
    };
    // Resolvers read the store and walk data folders for their usage: off the runtime.
    let answer = tokio::task::spawn_blocking(move || {
        let resolver = SessionResolver {
            m: &m,
            caller: &caller,
            signed,
        };
        bai_gql::execute(&req, &resolver)
    })
    .await
    .map_err(|e| Problem::internal(format!("the GraphQL query stopped: {e}")))?;
    Ok(Json(answer))
}

/// A session as GraphQL's `compute_session` nodes read it.
fn session_json(m: &Manager, row: &bai_store::SessionRow) -> Value {
    serde_json::to_value(session_info(m, row)).unwrap_or(Value::Null)
}

/// A folder as GraphQL's `vfolder_*_list` items read it.
fn folder_json(m: &Manager, v: &bai_store::VFolderRow, caller_id: &str) -> Value {
    serde_json::to_value(super::vfolder::folder_view(m, v, caller_id)).unwrap_or(Value::Null)
}
