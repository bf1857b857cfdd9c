//! The image catalogue (GraphQL `images`, `customized_images` and their mutations) and
//! session commits followed as background tasks.

use crate::request::typed;
use crate::sse::EventStream;
use crate::{Client, ClientError, encode};
use bai_api::images::{CommitStarted, CommitStatus, Image, ImagifyStarted};
use reqwest::Method;
use serde_json::{Value, json};

/// The fields `bai images` shows.
const FIELDS: &str = "id name registry architecture tag digest size_bytes aliases \
    installed installed_agents in_registry canonical_name humanized_name labels { key value } \
    resource_limits { key min max } tags { key value } apps";

fn session_path(reference: &str, tail: &str) -> String {
    format!("/session/{}{tail}", encode::path_segment(reference))
}

impl Client {
    /// The images the caller may launch (`customized`: only those made from sessions).
    pub async fn images(&self, customized: bool) -> Result<Vec<Image>, ClientError> {
        let field = if customized {
            "customized_images"
        } else {
            "images"
        };
        let v = self
            .gql(&format!("query {{ {field} {{ {FIELDS} }} }}"), json!({}))
            .await?;
        typed("image list", v[field].clone())
    }

    /// One image mutation (`alias_image`, `forget_image_by_id`, …) with string arguments;
    /// an answer with `ok: false` is an error.
    pub async fn image_mutation(
        &self,
        field: &str,
        args: &[(&str, &str)],
    ) -> Result<Value, ClientError> {
        let decl: Vec<String> = args.iter().map(|(k, _)| format!("${k}: String!")).collect();
        let pass: Vec<String> = args.iter().map(|(k, _)| format!("{k}: ${k}")).collect();
        let vars: serde_json::Map<String, Value> = args
            .iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect();
        let q = format!(
            "mutation({}) {{ {field}({}) {{ ok msg }} }}",
            decl.join(", "),
            pass.join(", ")
        );
        let v = self.gql(&q, Value::Object(vars)).await?;
        crate::gql::mutation_ok(&v, field)
    }

    /// `POST /session/{ref}/commit`: a tarball of the main kernel on its agent.
    pub async fn commit_session(&self, reference: &str) -> Result<CommitStarted, ClientError> {
        let v = self
            .send_json(Method::POST, &session_path(reference, "/commit"), None)
            .await?;
        typed("commit", v)
    }

    /// `GET /session/{ref}/commit`.
    pub async fn commit_status(&self, reference: &str) -> Result<CommitStatus, ClientError> {
        let v = self
            .send_json(Method::GET, &session_path(reference, "/commit"), None)
            .await?;
        typed("commit status", v)
    }

    /// `POST /session/{ref}/imagify` with `image_name` in the JSON body.
    pub async fn convert_to_image(
        &self,
        reference: &str,
        image_name: &str,
    ) -> Result<ImagifyStarted, ClientError> {
        let body = json!({"image_name": image_name});
        let v = self
            .send_json(
                Method::POST,
                &session_path(reference, "/imagify"),
                Some(&body),
            )
            .await?;
        typed("convert-to-image", v)
    }

    /// `GET /events/background-task?task_id=`: progress, then the outcome.
    pub async fn bgtask_events(&self, task_id: &str) -> Result<EventStream, ClientError> {
        let path = format!(
            "/events/background-task?{}",
            encode::query(&[("task_id", task_id)])
        );
        let resp = self.get_stream(&path).await?;
        Ok(EventStream::from_body(resp.bytes_stream()))
    }
}
