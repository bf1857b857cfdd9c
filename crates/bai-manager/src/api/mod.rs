//! The HTTP API: the Backend.AI v9 surface the official client uses.

pub(crate) mod apps;
mod commit;
mod dotfiles;
mod events;
mod execute;
pub mod execute_rest;
mod gql;
mod limits;
mod ops;
mod raw;
mod resources;
pub mod rule_input;
mod service_rules;
mod service_spec;
mod services;
mod session;
mod session_files;
mod session_info;
pub mod session_spec;
mod templates;
pub(crate) mod vfolder;
pub mod views;

use crate::auth::{Caller, authenticate};
use crate::error::ApiResult;
use crate::state::Manager;
use axum::Router;
use axum::extract::State;
use axum::middleware;
use axum::routing::{delete, get, patch, post, put};
use bai_api::sessions::{SessionMatch, SessionMatches};
use bai_core::Problem;
use bai_store::SessionRow;
use resources::{agent_admin, agents, fairshare, groups, policies, presets, projects, users};
use std::sync::Arc;

pub(crate) use bai_api::body::typed_body;

pub fn router(m: Arc<Manager>) -> Router {
    let signed = Router::new()
        .route(
            "/manager/announcement",
            get(|| async {
                axum::Json(bai_api::server::Announcement {
                    enabled: false,
                    message: String::new(),
                })
            }),
        )
        .route("/config/resource-slots", get(ops::resource_slots))
        .route("/session", post(session::create))
        .route(
            "/session/_/create-from-template",
            post(templates::create_from_template),
        )
        .route(
            "/user-config/dotfiles",
            get(dotfiles::get)
                .post(dotfiles::create)
                .patch(dotfiles::update)
                .delete(dotfiles::delete),
        )
        .route(
            "/template/session",
            post(templates::create).get(templates::list),
        )
        .route(
            "/template/session/{id}",
            get(templates::get)
                .put(templates::put)
                .delete(templates::delete),
        )
        .route("/services", get(services::list).post(services::create))
        .route("/services/_/search", post(services::search))
        .route("/services/_/runtimes", get(services::runtimes))
        .route(
            "/services/_/check-definition",
            post(services::check_definition),
        )
        .route(
            "/services/{id}/rules",
            get(service_rules::rules).post(service_rules::add_rule),
        )
        .route(
            "/services/{id}/rules/{rule}",
            patch(service_rules::change_rule).delete(service_rules::delete_rule),
        )
        .route("/services/{id}/decisions", get(service_rules::decisions))
        .route(
            "/services/{id}",
            get(services::info).delete(services::remove),
        )
        .route("/services/{id}/scale", post(services::scale))
        .route("/services/{id}/token", post(services::token))
        .route("/services/{id}/sync", post(services::sync))
        .route("/services/{id}/errors", get(services::errors))
        .route("/services/{id}/errors/clear", post(services::clear_errors))
        .route(
            "/services/{id}/routings/{route}",
            axum::routing::put(services::update_route).delete(services::remove_route),
        )
        .route(
            "/session/{reference}",
            get(session::info)
                .delete(session::destroy)
                .post(execute_rest::execute),
        )
        .route("/session/{reference}/logs", get(session::logs))
        .route("/session/{reference}/stats", get(session::stats))
        .route("/session/{reference}/rename", post(session::rename))
        .route(
            "/session/{reference}/commit",
            post(commit::commit).get(commit::commit_status),
        )
        .route("/session/{reference}/imagify", post(commit::imagify))
        // Multipart file data: the one signed route with a large body.
        .route(
            "/session/{reference}/upload",
            post(session::upload).layer(limits::file_data()),
        )
        .route(
            "/session/{reference}/status-history",
            get(session::status_history),
        )
        .route("/session/{reference}/files", get(session_files::list_files))
        .route(
            "/session/{reference}/dependency-graph",
            get(session_files::dependency_graph),
        )
        .route(
            "/session/{reference}/scheduling-history",
            get(session::scheduling_history),
        )
        .route(
            "/stream/session/{reference}/execute",
            get(execute::execute_ws),
        )
        .route("/stream/session/{reference}/apps", get(apps::list))
        .route("/stream/session/{reference}/tcpproxy", get(apps::tcpproxy))
        .route(
            "/stream/session/{reference}/httpproxy",
            get(apps::httpproxy),
        )
        .route("/session/{reference}/download", post(apps::download))
        .route(
            "/session/{reference}/start-service",
            post(apps::start_service),
        )
        .route("/events/session", get(events::session_events))
        .route("/events/background-task", get(commit::bgtask_events))
        .route("/admin/gql", post(gql::admin_gql))
        .route("/resource-groups", get(groups::list_groups))
        .route("/resource/presets", get(presets::list_presets))
        .route("/resource/check-presets", post(presets::check_presets))
        .route("/agents", get(agents::list_agents))
        .route(
            "/folders",
            post(vfolder::create)
                .get(vfolder::list)
                .delete(vfolder::delete),
        )
        .route("/folders/_/id", get(vfolder::id_of))
        .route("/folders/purge", post(vfolder::purge))
        .route("/folders/delete-from-trash-bin", post(vfolder::purge))
        .route("/folders/restore-from-trash-bin", post(vfolder::restore))
        .route("/folders/{id}/force", delete(vfolder::force_delete))
        .route("/folders/{id}/invite", post(vfolder::invite))
        .route("/folders/invitations/list", get(vfolder::invitations))
        .route(
            "/folders/invitations/list-sent",
            get(vfolder::sent_invitations),
        )
        .route(
            "/folders/invitations/accept",
            post(vfolder::accept_invitation),
        )
        .route(
            "/folders/invitations/delete",
            delete(vfolder::delete_invitation),
        )
        .route(
            "/folders/invitations/update/{inv_id}",
            post(vfolder::update_invitation),
        )
        .route("/folders/{id}/share", post(vfolder::share))
        .route("/folders/{id}/unshare", delete(vfolder::unshare))
        .route("/folders/{id}/leave", post(vfolder::leave))
        .route(
            "/folders/_/shared",
            get(vfolder::shared).post(vfolder::update_shared),
        )
        .route("/folders/{id}/clone", post(vfolder::clone))
        .route("/folders/_/hosts", get(vfolder::hosts))
        .route(
            "/folders/{id}",
            get(vfolder::info).delete(vfolder::delete_by_path),
        )
        .route("/folders/{id}/rename", post(vfolder::rename))
        .route("/folders/{id}/sftp", post(vfolder::sftp))
        .route("/folders/{id}/files", get(vfolder::files))
        .route("/folders/{id}/mkdir", post(vfolder::mkdir))
        .route("/folders/{id}/rename-file", post(vfolder::rename_file))
        .route("/folders/{id}/move-file", post(vfolder::move_file))
        .route("/folders/{id}/delete-files", delete(vfolder::delete_files))
        .route(
            "/folders/{id}/request-upload",
            post(vfolder::request_upload),
        )
        .route(
            "/folders/{id}/request-download",
            post(vfolder::request_download),
        )
        .route("/projects", get(projects::list_projects))
        .route(
            "/user/keypairs",
            get(crate::web::keypairs::list).post(crate::web::keypairs::create),
        )
        .route(
            "/user/keypairs/{access_key}/secret",
            post(crate::web::keypairs::new_secret),
        )
        .route(
            "/user/keypairs/{access_key}/revoke",
            post(crate::web::keypairs::revoke),
        )
        .route(
            "/user/launcher-history",
            get(crate::web::history::get).put(crate::web::history::put),
        )
        .merge(admin_routes())
        .layer(middleware::from_fn_with_state(m.clone(), authenticate));
    let api = Router::new()
        .route("/", get(hello))
        // Unsigned transfer URLs handed out by request-upload / request-download. The TUS
        // PATCH reads its body as a stream, which no body limit applies to.
        .route(
            "/storage/upload",
            axum::routing::patch(vfolder::tus_patch).head(vfolder::tus_head),
        )
        .route("/storage/download", get(vfolder::download))
        // The web UI's login (cookie sessions; the browser never holds a secret key).
        .route("/server/login", post(crate::web::login))
        .route("/server/logout", post(crate::web::logout))
        .route("/server/me", get(crate::web::me))
        // What the login page offers, and the OpenID Connect login (redirects both ways).
        .route("/server/login-options", get(crate::web::oidc::options))
        .route("/server/oidc/login", get(crate::web::oidc::login))
        .route("/server/oidc/callback", get(crate::web::oidc::callback))
        .route(
            "/server/oidc/backchannel-logout",
            post(crate::web::oidc_logout::backchannel_logout),
        )
        .route("/health", get(ops::health))
        .route("/metrics", get(ops::metrics))
        .merge(signed)
        .layer(middleware::map_response(limits::plain_errors_as_problems));
    Router::new()
        // The HTTP app proxy's path mode (permit cookies, not signatures). Its answers are the
        // app's own, so they do not go through the API's answer mapping.
        .route("/app/{session}/{app}", axum::routing::any(apps::path_proxy))
        .route(
            "/app/{session}/{app}/",
            axum::routing::any(apps::path_proxy),
        )
        .route(
            "/app/{session}/{app}/{*rest}",
            axum::routing::any(apps::path_proxy),
        )
        .merge(api)
        .fallback(fallback)
        .layer(limits::json_only())
        .layer(middleware::from_fn_with_state(m.clone(), observe))
        .with_state(m)
}

/// Counts every answer for `/metrics` by the route it matched (its template, so no name
/// or id becomes a label) and times it.
async fn observe(
    State(m): State<Arc<Manager>>,
    req: axum::extract::Request,
    next: middleware::Next,
) -> axum::response::Response {
    let started = std::time::Instant::now();
    let method = req.method().as_str().to_string();
    let route = req
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".into());
    let r = next.run(req).await;
    m.metrics.api(
        &method,
        &route,
        r.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    r
}

/// The administrators' routes, behind one layer that refuses everyone else (403).
fn admin_routes() -> Router<Arc<Manager>> {
    Router::new()
        .route("/admin/resource-groups", post(groups::create_group))
        .route(
            "/admin/resource-groups/{name}",
            patch(groups::update_group).delete(groups::delete_group),
        )
        .route(
            "/admin/resource-groups/{name}/access",
            post(groups::group_access),
        )
        .route("/admin/fairshare", get(fairshare::report))
        .route("/admin/fairshare/shares", put(fairshare::set_shares))
        .route("/admin/resource-presets", post(presets::put_preset))
        .route(
            "/admin/resource-presets/{name}",
            delete(presets::delete_preset),
        )
        .route(
            "/admin/resource-policies",
            get(policies::list_policies).post(policies::put_policy),
        )
        .route(
            "/admin/resource-policies/{name}",
            delete(policies::delete_policy),
        )
        .route(
            "/admin/keypairs/{access_key}/resource-policy",
            post(policies::assign_policy),
        )
        .route("/admin/users/{email}", get(users::user_by_email))
        .route("/admin/audit", get(ops::audit))
        .route("/manager/status", get(ops::manager_status))
        .route("/folders/_/all_hosts", get(vfolder::hosts))
        .route(
            "/admin/agent-tokens",
            post(agent_admin::create_token).get(agent_admin::list_tokens),
        )
        .route(
            "/admin/agent-tokens/{id}",
            delete(agent_admin::revoke_token),
        )
        .route("/admin/agents/{id}/drain", post(agent_admin::drain))
        .route("/admin/agents/{id}/undrain", post(agent_admin::undrain))
        .route("/admin/agents/{id}", delete(agent_admin::remove))
        .route("/admin/projects", post(projects::create_project))
        .route("/admin/projects/{name}", delete(projects::delete_project))
        .route(
            "/admin/projects/{name}/members",
            post(projects::project_member),
        )
        .route_layer(middleware::from_fn(resources::admin_only))
}

/// `GET /`: the API version for clients; the web UI for a browser.
async fn hello(uri: axum::http::Uri, headers: axum::http::HeaderMap) -> axum::response::Response {
    use axum::response::IntoResponse;
    if crate::web::wants_html(&headers)
        && let Some(page) = crate::web::ui_file(&uri, &headers).await
    {
        return page;
    }
    axum::Json(bai_api::server::Version {
        version: bai_core::API_VERSION.into(),
        manager: bai_core::MANAGER_VERSION.into(),
    })
    .into_response()
}

/// Anything else: a file or page of the web UI, or a JSON 404.
async fn fallback(
    uri: axum::http::Uri,
    headers: axum::http::HeaderMap,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    if let Some(page) = crate::web::ui_file(&uri, &headers).await {
        return page;
    }
    crate::error::ApiError(Problem::not_found("api", "no such API endpoint")).into_response()
}

/// Finds the one session `reference` names that the caller may see (404 otherwise, also
/// for other users' sessions, as if they did not exist).
pub fn visible_session(m: &Manager, caller: &Caller, reference: &str) -> ApiResult<SessionRow> {
    let rows = m.store.find_session(reference, caller.owner_filter())?;
    let chosen = match rows.first() {
        None => return Err(Problem::session_not_found(reference).into()),
        Some(first) => rows.len() == 1 || first.name == reference,
    };
    if !chosen {
        return Err(Problem::new(
            400,
            "too-many-sessions-matched",
            "Too many sessions matched.",
            format!("{reference:?} matches several sessions; give more of the id"),
        )
        .with_data_of(&SessionMatches {
            matches: rows
                .iter()
                .map(|r| SessionMatch {
                    id: r.id.to_string(),
                    name: r.name.clone(),
                    status: r.state.status.as_str().to_string(),
                })
                .collect(),
        })
        .into());
    }
    rows.into_iter()
        .next()
        .ok_or_else(|| Problem::session_not_found(reference).into())
}
