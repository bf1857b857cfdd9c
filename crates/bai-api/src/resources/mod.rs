//! The resources area's bodies and routes: resource groups, presets, keypair resource
//! policies, agents, users and projects.

pub mod agents;
pub mod fairshare;
pub mod gql_inputs;
pub mod groups;
pub mod policies;
pub mod presets;
pub mod projects;
pub mod slots;
pub mod users;

pub use agents::{
    Agent, AgentDevice, AgentKernelMost, AgentList, AgentToken, AgentTokenList, NewAgentToken,
};
pub use fairshare::{FairShareChange, FairShareGroup, FairShareNode, FairShareReport};
pub use groups::{
    GroupAccess, GroupAccessChange, NewResourceGroup, ResourceGroup, ResourceGroupList,
    ResourceGroupSettings, Scheduler, Selector,
};
pub use policies::{
    AssignedPolicy, NewResourcePolicy, PolicyAssignment, PolicyChoice, ResourcePolicy,
    ResourcePolicyList,
};
pub use presets::{NewPreset, Preset, PresetCheck, PresetFit, PresetFits, PresetList};
pub use projects::{
    CreatedProject, Membership, MembershipChange, NewProject, Project, ProjectList,
};
pub use slots::{Amount, ResourceSlots, ResourceSlotsSpec};
pub use users::UserKeypair;

use crate::route::{Body, Route, json};

/// The resources area's operations.
pub fn routes() -> Vec<Route> {
    vec![
        // Resource groups.
        Route::new("get", "/resource-groups").answers(200, json::<ResourceGroupList>()),
        Route::new("post", "/admin/resource-groups")
            .takes(json::<NewResourceGroup>())
            .answers(201, json::<ResourceGroup>()),
        Route::new("patch", "/admin/resource-groups/{name}")
            .takes(json::<ResourceGroupSettings>())
            .answers(200, json::<ResourceGroup>()),
        Route::new("delete", "/admin/resource-groups/{name}").answers(204, Body::Empty),
        Route::new("post", "/admin/resource-groups/{name}/access")
            .takes(json::<GroupAccessChange>())
            .answers(200, json::<GroupAccess>()),
        // Fair share.
        Route::new("get", "/admin/fairshare").answers(200, json::<FairShareReport>()),
        Route::new("put", "/admin/fairshare/shares")
            .takes(json::<FairShareChange>())
            .answers(204, Body::Empty),
        // Presets.
        Route::new("get", "/resource/presets").answers(200, json::<PresetList>()),
        Route::new("post", "/resource/check-presets")
            .takes(json::<PresetCheck>())
            .answers(200, json::<PresetFits>()),
        Route::new("post", "/admin/resource-presets")
            .takes(json::<NewPreset>())
            .answers(201, json::<Preset>()),
        Route::new("delete", "/admin/resource-presets/{name}").answers(204, Body::Empty),
        // Keypair resource policies.
        Route::new("get", "/admin/resource-policies").answers(200, json::<ResourcePolicyList>()),
        Route::new("post", "/admin/resource-policies")
            .takes(json::<NewResourcePolicy>())
            .answers(201, json::<ResourcePolicy>()),
        Route::new("delete", "/admin/resource-policies/{name}").answers(204, Body::Empty),
        Route::new("post", "/admin/keypairs/{access_key}/resource-policy")
            .takes(json::<PolicyChoice>())
            .answers(200, json::<PolicyAssignment>()),
        // Agents and users.
        Route::new("get", "/agents").answers(200, json::<AgentList>()),
        Route::new("post", "/admin/agent-tokens")
            .takes(json::<NewAgentToken>())
            .answers(201, json::<AgentToken>()),
        Route::new("get", "/admin/agent-tokens").answers(200, json::<AgentTokenList>()),
        Route::new("delete", "/admin/agent-tokens/{id}").answers(204, Body::Empty),
        Route::new("post", "/admin/agents/{id}/drain").answers(204, Body::Empty),
        Route::new("post", "/admin/agents/{id}/undrain").answers(204, Body::Empty),
        Route::new("delete", "/admin/agents/{id}").answers(204, Body::Empty),
        Route::new("get", "/admin/users/{email}").answers(200, json::<UserKeypair>()),
        // Projects.
        Route::new("get", "/projects").answers(200, json::<ProjectList>()),
        Route::new("post", "/admin/projects")
            .takes(json::<NewProject>())
            .answers(201, json::<CreatedProject>()),
        Route::new("delete", "/admin/projects/{name}").answers(204, Body::Empty),
        Route::new("post", "/admin/projects/{name}/members")
            .takes(json::<MembershipChange>())
            .answers(200, json::<Membership>()),
    ]
}
