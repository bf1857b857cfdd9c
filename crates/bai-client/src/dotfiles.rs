//! The user's dotfiles (`/user-config/dotfiles`): files written into every new session's home.

use crate::encode::query_value;
use crate::request::typed;
use crate::{Client, ClientError};
use bai_api::sessions::{DotfileAnswer, DotfileBody, DotfileItem};
use reqwest::Method;

const PATH: &str = "/user-config/dotfiles";

impl Client {
    /// All of the caller's dotfiles, by path.
    pub async fn dotfiles(&self) -> Result<Vec<DotfileItem>, ClientError> {
        match typed("dotfiles", self.send_json(Method::GET, PATH, None).await?)? {
            DotfileAnswer::All(list) => Ok(list),
            DotfileAnswer::One(d) => Ok(vec![d]),
        }
    }

    /// One dotfile.
    pub async fn dotfile(&self, path: &str) -> Result<DotfileItem, ClientError> {
        let url = format!("{PATH}?path={}", query_value(path));
        match typed("dotfile", self.send_json(Method::GET, &url, None).await?)? {
            DotfileAnswer::One(d) => Ok(d),
            DotfileAnswer::All(_) => Err(ClientError::Protocol(format!(
                "the manager listed all dotfiles instead of {path:?}"
            ))),
        }
    }

    /// Stores a new dotfile (`replace`: replaces an existing one instead).
    pub async fn put_dotfile(
        &self,
        path: &str,
        data: &str,
        permission: Option<&str>,
        replace: bool,
    ) -> Result<(), ClientError> {
        let body = DotfileBody {
            path: path.to_string(),
            data: data.to_string(),
            permission: permission.map(str::to_string),
            owner_access_key: None,
        };
        let body = serde_json::to_value(&body).map_err(|e| ClientError::Protocol(e.to_string()))?;
        let method = if replace { Method::PATCH } else { Method::POST };
        self.send_json(method, PATH, Some(&body)).await?;
        Ok(())
    }

    pub async fn delete_dotfile(&self, path: &str) -> Result<(), ClientError> {
        let url = format!("{PATH}?path={}", query_value(path));
        self.send_json(Method::DELETE, &url, None).await?;
        Ok(())
    }
}
