//! The sessions area's bodies and routes: creating, inspecting and ending sessions, their
//! events, GraphQL, their apps, and the web UI's login.

pub mod apps;
pub mod create;
mod create_spellings;
pub mod dotfiles;
mod either;
pub mod events;
pub mod execute;
mod from_template;
pub mod gql;
pub mod info;
mod read_create;
pub mod replies;
pub mod spec;
pub mod stats;
pub mod status;
mod template_payload;
pub mod templates;
pub mod web;

pub use apps::{App, AppProtocol, ProxyMode, StartServiceReply, StartServiceRequest};
pub use create::{
    CreateConfig, CreateReply, CreateRequest, CreatedSession, ListOrText, NumberOrText,
};
pub use create_spellings::canonical_create_body;
pub use dotfiles::{DotfileAnswer, DotfileBody, DotfileDeleted, DotfileItem, DotfileStored};
pub use events::{CloseData, EventData, EventName, SessionEventData};
pub use execute::{ExecuteReply, ExecuteRequest, ExecuteResult};
pub use from_template::TemplateCall;
pub use gql::{
    GqlAnswer, GqlError, GqlRequest, ModifySessionArgs, ModifySessionInput, SchedulingHistoriesArgs,
};
pub use info::{Dependency, Kernel, MountMode, Network, PendingInfo, SessionInfo};
pub use read_create::{CreateBody, read_create};
pub use replies::{
    DependencyNode, Destroyed, DestroyedStats, FileListing, HistoryRecord, HistoryResult, Logs,
    LogsResult, SchedulingHistory, SessionMatch, SessionMatches, StatusHistory, StepResult,
    SubStep,
};
pub use spec::SpecContext;
pub use stats::{
    Counters, IdleChecker, IdleReport, RemainingKind, StatSample, Stats, ThresholdOp,
    UtilizationExtra,
};
pub use status::{ClusterMode, CreateStatus, SessionResult, SessionStatus, SessionType};
pub use template_payload::read_template_payload;
pub use templates::{
    CreateFromTemplate, CreateTemplates, TaskTemplate, TemplateCreated, TemplateDone, TemplateGit,
    TemplateInfo, TemplateItem, TemplateListItem, UpdateTemplate,
};
pub use web::{
    LauncherHistory, LoginOptions, LoginRefusal, LoginRefusalData, LoginReply, LoginRequest,
    LogoutReply, Me, MyKeypair, MyKeypairs, NewSecret, OidcOption, WebRole,
};

use crate::route::{Body, Route, events, json};

/// The sessions area's operations.
pub fn routes() -> Vec<Route> {
    const S: &str = "/session/{reference}";
    let upgrade = (101, Body::Upgrade);
    vec![
        Route::new("post", "/session")
            .takes(json::<CreateRequest>())
            .answers(201, json::<CreateReply>())
            // The session the request names exists already (`created: false`).
            .also("200", json::<CreateReply>()),
        Route::new("post", "/session/_/create-from-template")
            .takes(json::<CreateFromTemplate>())
            .answers(201, json::<CreateReply>())
            .also("200", json::<CreateReply>()),
        Route::new("post", "/template/session")
            .takes(json::<CreateTemplates>())
            .answers(200, json::<Vec<TemplateCreated>>()),
        Route::new("get", "/user-config/dotfiles").answers(200, json::<DotfileAnswer>()),
        Route::new("post", "/user-config/dotfiles")
            .takes(json::<DotfileBody>())
            .answers(200, json::<DotfileStored>()),
        Route::new("patch", "/user-config/dotfiles")
            .takes(json::<DotfileBody>())
            .answers(200, json::<DotfileStored>()),
        Route::new("delete", "/user-config/dotfiles").answers(200, json::<DotfileDeleted>()),
        Route::new("get", "/template/session").answers(200, json::<Vec<TemplateListItem>>()),
        Route::new("get", "/template/session/{id}").answers(200, json::<TemplateInfo>()),
        Route::new("put", "/template/session/{id}")
            .takes(json::<UpdateTemplate>())
            .answers(200, json::<TemplateDone>()),
        Route::new("delete", "/template/session/{id}").answers(200, json::<TemplateDone>()),
        Route::new("get", S).answers(200, json::<SessionInfo>()),
        Route::new("delete", S).answers(200, json::<Destroyed>()),
        Route::new("post", S)
            .takes(json::<ExecuteRequest>())
            .answers(200, json::<ExecuteReply>()),
        Route::new("get", "/session/{reference}/logs").answers(200, json::<Logs>()),
        Route::new("get", "/session/{reference}/stats").answers(200, json::<Stats>()),
        Route::new("post", "/session/{reference}/rename").answers(204, Body::Empty),
        Route::new("post", "/session/{reference}/upload")
            .takes(Body::Multipart("multipart/form-data"))
            .answers(204, Body::Empty),
        Route::new("get", "/session/{reference}/status-history")
            .answers(200, json::<StatusHistory>()),
        Route::new("get", "/session/{reference}/scheduling-history")
            .answers(200, json::<SchedulingHistory>()),
        Route::new("get", "/session/{reference}/files").answers(200, json::<FileListing>()),
        Route::new("get", "/session/{reference}/dependency-graph")
            .answers(200, json::<DependencyNode>()),
        Route::new("get", "/stream/session/{reference}/execute").answers(upgrade.0, upgrade.1),
        Route::new("get", "/events/session").answers(200, events::<EventData>()),
        Route::new("post", "/admin/gql")
            .takes(json::<GqlRequest>())
            .answers(200, json::<GqlAnswer>()),
        Route::new("get", "/stream/session/{reference}/apps").answers(200, json::<Vec<App>>()),
        Route::new("get", "/stream/session/{reference}/tcpproxy").answers(upgrade.0, upgrade.1),
        Route::new("get", "/stream/session/{reference}/httpproxy").answers(upgrade.0, upgrade.1),
        Route::new("post", "/session/{reference}/download")
            .answers(200, Body::Multipart("multipart/mixed")),
        Route::new("post", "/session/{reference}/start-service")
            .takes(json::<StartServiceRequest>())
            .answers(200, json::<StartServiceReply>()),
        Route::new("post", "/server/login")
            .takes(json::<LoginRequest>())
            .answers(200, json::<LoginReply>())
            .also("401", json::<LoginRefusal>())
            // Too many refused logins for the name or from the client (Retry-After).
            .also("429", json::<LoginRefusal>()),
        Route::new("post", "/server/logout").answers(200, json::<LogoutReply>()),
        Route::new("get", "/server/me").answers(200, json::<Me>()),
        Route::new("get", "/server/login-options").answers(200, json::<LoginOptions>()),
        // The OpenID Connect login: redirects to the provider and back (a refusal is a
        // problem, or a page for a browser).
        Route::new("get", "/server/oidc/login").answers(303, Body::Empty),
        Route::new("get", "/server/oidc/callback").answers(303, Body::Empty),
        // Back-Channel Logout 1.0: the provider POSTs a form with `logout_token` (a refused
        // token is a 400 problem).
        Route::new("post", "/server/oidc/backchannel-logout")
            .takes(Body::Bytes("application/x-www-form-urlencoded"))
            .answers(200, Body::Empty),
        Route::new("get", "/user/keypairs").answers(200, json::<MyKeypairs>()),
        Route::new("post", "/user/keypairs").answers(201, json::<NewSecret>()),
        Route::new("post", "/user/keypairs/{access_key}/secret").answers(200, json::<NewSecret>()),
        Route::new("post", "/user/keypairs/{access_key}/revoke").answers(200, json::<MyKeypair>()),
        Route::new("get", "/user/launcher-history").answers(200, json::<LauncherHistory>()),
        Route::new("put", "/user/launcher-history")
            .takes(json::<LauncherHistory>())
            .answers(200, json::<LauncherHistory>()),
    ]
}
