//! User resource policies (GraphQL `user_resource_policies` and its mutations, and
//! `modify_user` to give a user one).

use crate::gql::mutation_ok;
use crate::{Client, ClientError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// One user resource policy as the server lists it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UserPolicy {
    pub name: String,
    pub max_vfolder_count: i64,
    pub max_quota_scope_size: i64,
    pub max_session_count_per_model_session: i64,
    pub max_customized_image_count: i64,
}

const FIELDS: &str = "name max_vfolder_count max_quota_scope_size \
    max_session_count_per_model_session max_customized_image_count";

impl Client {
    /// Every user resource policy (administrators), or the caller's own (`own`).
    pub async fn user_policies(&self, own: bool) -> Result<Vec<UserPolicy>, ClientError> {
        let field = if own {
            "user_resource_policy"
        } else {
            "user_resource_policies"
        };
        let v = self
            .gql(&format!("query {{ {field} {{ {FIELDS} }} }}"), json!({}))
            .await?;
        let list = if own {
            Value::Array(vec![v[field].clone()])
        } else {
            v[field].clone()
        };
        serde_json::from_value(list).map_err(|e| {
            ClientError::Protocol(format!(
                "the user resource policies are not as expected: {e}"
            ))
        })
    }

    /// Creates (`create`) or changes a policy with the limits in `props`.
    pub async fn put_user_policy(
        &self,
        name: &str,
        props: Value,
        create: bool,
    ) -> Result<(), ClientError> {
        let (field, ty) = if create {
            (
                "create_user_resource_policy",
                "CreateUserResourcePolicyInput",
            )
        } else {
            (
                "modify_user_resource_policy",
                "ModifyUserResourcePolicyInput",
            )
        };
        let q = format!(
            "mutation($name: String!, $props: {ty}!) {{ {field}(name: $name, props: $props) {{ ok msg }} }}"
        );
        let v = self.gql(&q, json!({"name": name, "props": props})).await?;
        mutation_ok(&v, field).map(drop)
    }

    pub async fn delete_user_policy(&self, name: &str) -> Result<(), ClientError> {
        let v = self
            .gql(
                "mutation($name: String!) { delete_user_resource_policy(name: $name) { ok msg } }",
                json!({"name": name}),
            )
            .await?;
        mutation_ok(&v, "delete_user_resource_policy").map(drop)
    }

    /// Gives the user `email` the policy `name`.
    pub async fn assign_user_policy(&self, email: &str, name: &str) -> Result<(), ClientError> {
        let v = self
            .gql(
                "mutation($email: String!, $props: ModifyUserInput!) { modify_user(email: $email, props: $props) { ok msg } }",
                json!({"email": email, "props": {"resource_policy": name}}),
            )
            .await?;
        mutation_ok(&v, "modify_user").map(drop)
    }
}
