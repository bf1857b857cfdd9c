//! Fair share (administrators): the share tree of each resource group, and the shares.

use crate::request::body_of;
use crate::{Client, ClientError, encode};
use bai_api::resources::{FairShareChange, FairShareReport};
use reqwest::Method;

impl Client {
    /// `GET /admin/fairshare[?group=G]`.
    pub async fn fairshare(&self, group: Option<&str>) -> Result<FairShareReport, ClientError> {
        let path = match group {
            Some(g) => format!("/admin/fairshare?{}", encode::query(&[("group", g)])),
            None => "/admin/fairshare".to_string(),
        };
        self.call_as(Method::GET, &path, "fair-share report").await
    }

    /// `PUT /admin/fairshare/shares`.
    pub async fn set_fairshare_shares(&self, change: &FairShareChange) -> Result<(), ClientError> {
        let body = body_of(change)?;
        self.send(Method::PUT, "/admin/fairshare/shares", Some(&body))
            .await
            .map(|_| ())
    }
}
