//! Resource groups, presets, keypair resource policies, projects and agents (bai's REST API
//! for the scheduler), written and read with the wire-contract types.

use crate::{Client, ClientError, encode};
use bai_api::resources::{
    AgentList, AgentToken, AgentTokenList, CreatedProject, GroupAccess, GroupAccessChange,
    Membership, MembershipChange, NewAgentToken, NewPreset, NewProject, NewResourceGroup,
    NewResourcePolicy, PolicyAssignment, PolicyChoice, Preset, PresetCheck, PresetFits, PresetList,
    ProjectList, ResourceGroup, ResourceGroupList, ResourceGroupSettings, ResourcePolicy,
    ResourcePolicyList,
};
use reqwest::Method;

fn group_path(name: &str, tail: &str) -> String {
    format!(
        "/admin/resource-groups/{}{tail}",
        encode::path_segment(name)
    )
}

impl Client {
    /// `GET /resource-groups` (`all`: every group; administrators).
    pub async fn resource_groups(&self, all: bool) -> Result<ResourceGroupList, ClientError> {
        let path = if all {
            "/resource-groups?all=true"
        } else {
            "/resource-groups"
        };
        self.call_as(Method::GET, path, "resource groups").await
    }

    /// `POST /admin/resource-groups`.
    pub async fn create_resource_group(
        &self,
        group: &NewResourceGroup,
    ) -> Result<ResourceGroup, ClientError> {
        self.send_as(
            Method::POST,
            "/admin/resource-groups",
            group,
            "resource group",
        )
        .await
    }

    /// `PATCH /admin/resource-groups/{name}` with the settings to change.
    pub async fn update_resource_group(
        &self,
        name: &str,
        settings: &ResourceGroupSettings,
    ) -> Result<ResourceGroup, ClientError> {
        self.send_as(
            Method::PATCH,
            &group_path(name, ""),
            settings,
            "resource group",
        )
        .await
    }

    pub async fn delete_resource_group(&self, name: &str) -> Result<(), ClientError> {
        self.send(Method::DELETE, &group_path(name, ""), None)
            .await
            .map(|_| ())
    }

    /// Allows (or denies) a keypair, or every member of a project, a non-public group.
    pub async fn resource_group_access(
        &self,
        name: &str,
        change: &GroupAccessChange,
    ) -> Result<GroupAccess, ClientError> {
        self.send_as(
            Method::POST,
            &group_path(name, "/access"),
            change,
            "group access",
        )
        .await
    }

    /// `GET /projects`.
    pub async fn projects(&self) -> Result<ProjectList, ClientError> {
        self.call_as(Method::GET, "/projects", "projects").await
    }

    pub async fn create_project(
        &self,
        name: &str,
        description: &str,
    ) -> Result<CreatedProject, ClientError> {
        self.send_as(
            Method::POST,
            "/admin/projects",
            &NewProject {
                name: name.to_string(),
                description: Some(description.to_string()),
            },
            "project",
        )
        .await
    }

    pub async fn delete_project(&self, name: &str) -> Result<(), ClientError> {
        let path = format!("/admin/projects/{}", encode::path_segment(name));
        self.send(Method::DELETE, &path, None).await.map(|_| ())
    }

    /// Adds (or removes) a user, by email, to a project.
    pub async fn project_member(
        &self,
        name: &str,
        email: &str,
        member: bool,
    ) -> Result<Membership, ClientError> {
        let path = format!("/admin/projects/{}/members", encode::path_segment(name));
        self.send_as(
            Method::POST,
            &path,
            &MembershipChange {
                email: email.to_string(),
                member: Some(member),
            },
            "membership",
        )
        .await
    }

    /// `GET /resource/presets`.
    pub async fn presets(&self) -> Result<PresetList, ClientError> {
        self.call_as(Method::GET, "/resource/presets", "presets")
            .await
    }

    /// `POST /resource/check-presets`: which presets fit now.
    pub async fn check_presets(&self, group: Option<&str>) -> Result<PresetFits, ClientError> {
        self.send_as(
            Method::POST,
            "/resource/check-presets",
            &PresetCheck {
                scaling_group: group.map(str::to_string),
            },
            "preset check",
        )
        .await
    }

    /// `POST /admin/resource-presets` (creates or replaces).
    pub async fn put_preset(&self, preset: &NewPreset) -> Result<Preset, ClientError> {
        self.send_as(Method::POST, "/admin/resource-presets", preset, "preset")
            .await
    }

    pub async fn delete_preset(&self, name: &str) -> Result<(), ClientError> {
        let path = format!("/admin/resource-presets/{}", encode::path_segment(name));
        self.send(Method::DELETE, &path, None).await.map(|_| ())
    }

    /// `GET /admin/resource-policies`.
    pub async fn resource_policies(&self) -> Result<ResourcePolicyList, ClientError> {
        self.call_as(Method::GET, "/admin/resource-policies", "resource policies")
            .await
    }

    /// `POST /admin/resource-policies` (creates or replaces).
    pub async fn put_resource_policy(
        &self,
        policy: &NewResourcePolicy,
    ) -> Result<ResourcePolicy, ClientError> {
        self.send_as(
            Method::POST,
            "/admin/resource-policies",
            policy,
            "resource policy",
        )
        .await
    }

    pub async fn delete_resource_policy(&self, name: &str) -> Result<(), ClientError> {
        let path = format!("/admin/resource-policies/{}", encode::path_segment(name));
        self.send(Method::DELETE, &path, None).await.map(|_| ())
    }

    /// Gives a keypair a resource policy.
    pub async fn assign_resource_policy(
        &self,
        access_key: &str,
        policy: &str,
    ) -> Result<PolicyAssignment, ClientError> {
        let path = format!(
            "/admin/keypairs/{}/resource-policy",
            encode::path_segment(access_key)
        );
        self.send_as(
            Method::POST,
            &path,
            &PolicyChoice {
                name: policy.to_string(),
            },
            "policy assignment",
        )
        .await
    }

    /// `GET /agents`: agents of the caller's groups with their free slots.
    pub async fn agents(&self) -> Result<AgentList, ClientError> {
        self.call_as(Method::GET, "/agents", "agents").await
    }

    /// `POST /admin/agent-tokens`: a join token for remote agents of `group`.
    pub async fn create_agent_token(&self, group: Option<&str>) -> Result<AgentToken, ClientError> {
        self.send_as(
            Method::POST,
            "/admin/agent-tokens",
            &NewAgentToken {
                group: group.map(str::to_string),
            },
            "agent token",
        )
        .await
    }

    /// `GET /admin/agent-tokens`.
    pub async fn agent_tokens(&self) -> Result<AgentTokenList, ClientError> {
        self.call_as(Method::GET, "/admin/agent-tokens", "agent tokens")
            .await
    }

    /// `DELETE /admin/agent-tokens/{id}`: revokes it (its agents are disconnected).
    pub async fn revoke_agent_token(&self, id: &str) -> Result<(), ClientError> {
        let path = format!("/admin/agent-tokens/{}", encode::path_segment(id));
        self.send(Method::DELETE, &path, None).await.map(|_| ())
    }

    /// `POST /admin/agents/{id}/drain` (or `undrain`).
    pub async fn drain_agent(&self, id: &str, drained: bool) -> Result<(), ClientError> {
        let verb = if drained { "drain" } else { "undrain" };
        let path = format!("/admin/agents/{}/{verb}", encode::path_segment(id));
        self.send(Method::POST, &path, None).await.map(|_| ())
    }

    /// `DELETE /admin/agents/{id}`.
    pub async fn remove_agent(&self, id: &str) -> Result<(), ClientError> {
        let path = format!("/admin/agents/{}", encode::path_segment(id));
        self.send(Method::DELETE, &path, None).await.map(|_| ())
    }
}
