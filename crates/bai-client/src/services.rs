//! Model services (`/services`), with the wire contract's types.

use crate::request::{body_of, typed};
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
        let b = body_of(body)?;
        let v = self.send_json(Method::POST, "/services", Some(&b)).await?;
        typed("create-service", v)
    }

    /// `GET /services`.
    pub async fn services(&self) -> Result<Vec<ServiceListItem>, ClientError> {
        let v = self.send_json(Method::GET, "/services", None).await?;
        typed("service list", v)
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
        let v = self.send_json(Method::GET, &path(id, ""), None).await?;
        typed("service", v)
    }

    /// `POST /services/{id}/scale`.
    pub async fn scale_service(&self, id: &str, to: u32) -> Result<Scaled, ClientError> {
        let v = self
            .send_json(
                Method::POST,
                &path(id, "/scale"),
                Some(&json!({ "to": to })),
            )
            .await?;
        typed("scale", v)
    }

    /// `POST /services/{id}/token` for `duration` (seconds, or `30m`, `3d`).
    pub async fn service_token(&self, id: &str, duration: &str) -> Result<TokenReply, ClientError> {
        let v = self
            .send_json(
                Method::POST,
                &path(id, "/token"),
                Some(&json!({ "duration": duration })),
            )
            .await?;
        typed("token", v)
    }

    /// `GET /services/{id}/errors`.
    pub async fn service_errors(&self, id: &str) -> Result<ServiceErrors, ClientError> {
        let v = self
            .send_json(Method::GET, &path(id, "/errors"), None)
            .await?;
        typed("errors", v)
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
        let v = self
            .send_json(Method::GET, &path(id, "/rules"), None)
            .await?;
        typed("rules", v)
    }

    /// `POST /services/{id}/rules`.
    pub async fn add_service_rule(
        &self,
        id: &str,
        fields: &RuleFields,
    ) -> Result<Rule, ClientError> {
        let b = body_of(fields)?;
        let v = self
            .send_json(Method::POST, &path(id, "/rules"), Some(&b))
            .await?;
        typed("rule", v)
    }

    /// `PATCH /services/{id}/rules/{rule}`.
    pub async fn change_service_rule(
        &self,
        id: &str,
        rule: &str,
        fields: &RuleFields,
    ) -> Result<Rule, ClientError> {
        let b = body_of(fields)?;
        let p = path(id, &format!("/rules/{}", encode::path_segment(rule)));
        let v = self.send_json(Method::PATCH, &p, Some(&b)).await?;
        typed("rule", v)
    }

    /// `DELETE /services/{id}/rules/{rule}`.
    pub async fn remove_service_rule(&self, id: &str, rule: &str) -> Result<(), ClientError> {
        let p = path(id, &format!("/rules/{}", encode::path_segment(rule)));
        self.send(Method::DELETE, &p, None).await.map(|_| ())
    }

    /// `GET /services/{id}/decisions`.
    pub async fn service_decisions(&self, id: &str) -> Result<DecisionList, ClientError> {
        let v = self
            .send_json(Method::GET, &path(id, "/decisions"), None)
            .await?;
        typed("decisions", v)
    }
}
