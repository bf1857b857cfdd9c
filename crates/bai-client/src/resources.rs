//! Resource groups, presets, keypair resource policies and agents (bai's REST API for the
//! scheduler; replies are returned as JSON).

use crate::{Client, ClientError, encode};
use reqwest::Method;
use serde_json::{Value, json};

impl Client {
    /// `GET /resource-groups` (`all`: every group; administrators).
    pub async fn resource_groups(&self, all: bool) -> Result<Value, ClientError> {
        let path = if all {
            "/resource-groups?all=true"
        } else {
            "/resource-groups"
        };
        self.send_json(Method::GET, path, None).await
    }

    /// `POST /admin/resource-groups` with `{name, …fields}`.
    pub async fn create_resource_group(&self, fields: &Value) -> Result<Value, ClientError> {
        self.send_json(Method::POST, "/admin/resource-groups", Some(fields))
            .await
    }

    /// `PATCH /admin/resource-groups/{name}` with the fields to change.
    pub async fn update_resource_group(
        &self,
        name: &str,
        fields: &Value,
    ) -> Result<Value, ClientError> {
        let path = format!("/admin/resource-groups/{}", encode::path_segment(name));
        self.send_json(Method::PATCH, &path, Some(fields)).await
    }

    pub async fn delete_resource_group(&self, name: &str) -> Result<(), ClientError> {
        let path = format!("/admin/resource-groups/{}", encode::path_segment(name));
        self.send(Method::DELETE, &path, None).await.map(|_| ())
    }

    /// Allows (or denies) a keypair a non-public group.
    pub async fn resource_group_access(
        &self,
        name: &str,
        access_key: &str,
        allow: bool,
    ) -> Result<Value, ClientError> {
        let path = format!(
            "/admin/resource-groups/{}/access",
            encode::path_segment(name)
        );
        let body = json!({"access_key": access_key, "allow": allow});
        self.send_json(Method::POST, &path, Some(&body)).await
    }

    /// Opens (or closes) a non-public group to every member of a project.
    pub async fn resource_group_project_access(
        &self,
        name: &str,
        project: &str,
        allow: bool,
    ) -> Result<Value, ClientError> {
        let path = format!(
            "/admin/resource-groups/{}/access",
            encode::path_segment(name)
        );
        let body = json!({"project": project, "allow": allow});
        self.send_json(Method::POST, &path, Some(&body)).await
    }

    /// `GET /projects`.
    pub async fn projects(&self) -> Result<Value, ClientError> {
        self.send_json(Method::GET, "/projects", None).await
    }

    pub async fn create_project(
        &self,
        name: &str,
        description: &str,
    ) -> Result<Value, ClientError> {
        let body = json!({"name": name, "description": description});
        self.send_json(Method::POST, "/admin/projects", Some(&body))
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
    ) -> Result<Value, ClientError> {
        let path = format!("/admin/projects/{}/members", encode::path_segment(name));
        let body = json!({"email": email, "member": member});
        self.send_json(Method::POST, &path, Some(&body)).await
    }

    /// `GET /resource/presets`.
    pub async fn presets(&self) -> Result<Value, ClientError> {
        self.send_json(Method::GET, "/resource/presets", None).await
    }

    /// `POST /resource/check-presets`: which presets fit now.
    pub async fn check_presets(&self, group: Option<&str>) -> Result<Value, ClientError> {
        let body = match group {
            Some(g) => json!({"scaling_group": g}),
            None => json!({}),
        };
        self.send_json(Method::POST, "/resource/check-presets", Some(&body))
            .await
    }

    /// `POST /admin/resource-presets` with `{name, resource_slots, shared_memory}`.
    pub async fn put_preset(&self, preset: &Value) -> Result<Value, ClientError> {
        self.send_json(Method::POST, "/admin/resource-presets", Some(preset))
            .await
    }

    pub async fn delete_preset(&self, name: &str) -> Result<(), ClientError> {
        let path = format!("/admin/resource-presets/{}", encode::path_segment(name));
        self.send(Method::DELETE, &path, None).await.map(|_| ())
    }

    /// `GET /admin/resource-policies`.
    pub async fn resource_policies(&self) -> Result<Value, ClientError> {
        self.send_json(Method::GET, "/admin/resource-policies", None)
            .await
    }

    /// `POST /admin/resource-policies` (creates or replaces).
    pub async fn put_resource_policy(&self, policy: &Value) -> Result<Value, ClientError> {
        self.send_json(Method::POST, "/admin/resource-policies", Some(policy))
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
    ) -> Result<Value, ClientError> {
        let path = format!(
            "/admin/keypairs/{}/resource-policy",
            encode::path_segment(access_key)
        );
        self.send_json(Method::POST, &path, Some(&json!({ "name": policy })))
            .await
    }

    /// `GET /agents`: agents of the caller's groups with their free slots.
    pub async fn agents(&self) -> Result<Value, ClientError> {
        self.send_json(Method::GET, "/agents", None).await
    }

    /// `POST /admin/agent-tokens`: a join token for remote agents of `group`.
    pub async fn create_agent_token(&self, group: Option<&str>) -> Result<Value, ClientError> {
        self.send_json(
            Method::POST,
            "/admin/agent-tokens",
            Some(&json!({ "group": group })),
        )
        .await
    }

    /// `GET /admin/agent-tokens`.
    pub async fn agent_tokens(&self) -> Result<Value, ClientError> {
        self.send_json(Method::GET, "/admin/agent-tokens", None)
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
