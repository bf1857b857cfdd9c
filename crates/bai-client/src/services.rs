//! Model services (`/services`), with the wire contract's types.

use crate::{Client, ClientError, encode};
use bai_api::services::{
    DecisionList, NewService, Rule, RuleFields, RuleList, Scaled, ServiceErrors, ServiceInfo,
    ServiceListItem, TokenReply,
};
use reqwest::Method;
use serde_json::json;

fn path(id: &str, tail: &str) -> String {
    format!("/services/{}{tail}", encode::path_segment(id))
}

impl Client {
    /// `POST /services`.
    pub async fn create_service(&self, body: &NewService) -> Result<ServiceInfo, ClientError> {
        self.send_as(Method::POST, "/services", body, "create-service")
            .await
    }

    /// `GET /services`.
    pub async fn services(&self) -> Result<Vec<ServiceListItem>, ClientError> {
        self.call_as(Method::GET, "/services", "service list").await
    }

    /// The id of a service given by id or name.
    pub async fn service_id(&self, name_or_id: &str) -> Result<String, ClientError> {
        if uuid::Uuid::parse_str(name_or_id).is_ok() {
            return Ok(name_or_id.to_string());
        }
        self.services()
            .await?
            .into_iter()
            .find(|s| s.name == name_or_id)
            .map(|s| s.id)
            .ok_or_else(|| ClientError::Protocol(format!("no service named {name_or_id:?}")))
    }

    /// `GET /services/{id}`.
    pub async fn service(&self, id: &str) -> Result<ServiceInfo, ClientError> {
        self.call_as(Method::GET, &path(id, ""), "service").await
    }

    /// `POST /services/{id}/scale`.
    pub async fn scale_service(&self, id: &str, to: u32) -> Result<Scaled, ClientError> {
        self.send_as(
            Method::POST,
            &path(id, "/scale"),
            &json!({ "to": to }),
            "scale",
        )
        .await
    }

    /// `POST /services/{id}/token` for `duration` (seconds, or `30m`, `3d`).
    pub async fn service_token(&self, id: &str, duration: &str) -> Result<TokenReply, ClientError> {
        self.send_as(
            Method::POST,
            &path(id, "/token"),
            &json!({ "duration": duration }),
            "token",
        )
        .await
    }

    /// `GET /services/{id}/errors`.
    pub async fn service_errors(&self, id: &str) -> Result<ServiceErrors, ClientError> {
        self.call_as(Method::GET, &path(id, "/errors"), "errors")
            .await
    }

    /// `DELETE /services/{id}`.
    pub async fn remove_service(&self, id: &str) -> Result<(), ClientError> {
        self.send(Method::DELETE, &path(id, ""), None)
            .await
            .map(|_| ())
    }
}

impl Client {
    /// `GET /services/{id}/rules`.
    pub async fn service_rules(&self, id: &str) -> Result<RuleList, ClientError> {
        self.call_as(Method::GET, &path(id, "/rules"), "rules")
            .await
    }

    /// `POST /services/{id}/rules`.
    pub async fn add_service_rule(
        &self,
        id: &str,
        fields: &RuleFields,
    ) -> Result<Rule, ClientError> {
        self.send_as(Method::POST, &path(id, "/rules"), fields, "rule")
            .await
    }

    /// `PATCH /services/{id}/rules/{rule}`.
    pub async fn change_service_rule(
        &self,
        id: &str,
        rule: &str,
        fields: &RuleFields,
    ) -> Result<Rule, ClientError> {
        let p = path(id, &format!("/rules/{}", encode::path_segment(rule)));
        self.send_as(Method::PATCH, &p, fields, "rule").await
    }

    /// `DELETE /services/{id}/rules/{rule}`.
    pub async fn remove_service_rule(&self, id: &str, rule: &str) -> Result<(), ClientError> {
        let p = path(id, &format!("/rules/{}", encode::path_segment(rule)));
        self.send(Method::DELETE, &p, None).await.map(|_| ())
    }

    /// `GET /services/{id}/decisions`.
    pub async fn service_decisions(&self, id: &str) -> Result<DecisionList, ClientError> {
        self.call_as(Method::GET, &path(id, "/decisions"), "decisions")
            .await
    }
}
