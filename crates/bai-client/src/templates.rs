//! Session templates (`/template/session`) and creating a session from one.

use crate::request::typed;
use crate::{Client, ClientError, CreateReply};
use bai_api::sessions::{TemplateCreated, TemplateInfo, TemplateListItem};
use reqwest::Method;
use serde_json::{Map, Value, json};

fn path(id: &str) -> String {
    format!("/template/session/{}", crate::encode::path_segment(id))
}

impl Client {
    /// Stores the templates of a JSON or YAML `payload` in `project` (the configured one when
    /// `None`); returns their ids.
    pub async fn create_templates(
        &self,
        payload: &str,
        project: Option<&str>,
    ) -> Result<Vec<String>, ClientError> {
        let body = json!({
            "payload": payload,
            "group_name": project.unwrap_or(&self.config.group),
            "domain_name": self.config.domain,
        });
        let v = self
            .send_json(Method::POST, "/template/session", Some(&body))
            .await?;
        let made: Vec<TemplateCreated> = typed("stored templates", v)?;
        Ok(made.into_iter().map(|t| t.id).collect())
    }

    /// The caller's templates; `all`: everyone's (administrators).
    pub async fn templates(&self, all: bool) -> Result<Vec<TemplateListItem>, ClientError> {
        let q = if all { "?all=true" } else { "" };
        let v = self
            .send_json(Method::GET, &format!("/template/session{q}"), None)
            .await?;
        typed("templates", v)
    }

    pub async fn template(&self, id: &str) -> Result<TemplateInfo, ClientError> {
        let v = self.send_json(Method::GET, &path(id), None).await?;
        typed("template", v)
    }

    /// The template as YAML text.
    pub async fn template_yaml(&self, id: &str) -> Result<String, ClientError> {
        let bytes = self
            .send(Method::GET, &format!("{}?format=yaml", path(id)), None)
            .await?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Replaces a template with the one of `payload`.
    pub async fn update_template(&self, id: &str, payload: &str) -> Result<(), ClientError> {
        self.send_json(Method::PUT, &path(id), Some(&json!({ "payload": payload })))
            .await?;
        Ok(())
    }

    pub async fn delete_template(&self, id: &str) -> Result<(), ClientError> {
        self.send_json(Method::DELETE, &path(id), None).await?;
        Ok(())
    }

    /// `POST /session/_/create-from-template`: a session of the template with the fields of
    /// `overrides` (`POST /session`'s) in place of the template's.
    pub async fn create_from_template(
        &self,
        id: &str,
        mut overrides: Map<String, Value>,
    ) -> Result<CreateReply, ClientError> {
        overrides.insert("template_id".into(), json!(id));
        let v = self
            .send_json(
                Method::POST,
                "/session/_/create-from-template",
                Some(&Value::Object(overrides)),
            )
            .await?;
        typed("create", v)
    }
}
