//! Signed requests (wire contract §2.2–2.3).

use crate::{Client, ClientError};
use bai_core::sign::{DEFAULT_MEDIA_TYPE, SignInput, sign};

/// Headers of one signed request.
pub struct Signed {
    pub headers: Vec<(&'static str, String)>,
}

impl Client {
    /// Signs `method path_and_query` (path relative to the endpoint) with `media_type`.
    pub fn sign_headers(
        &self,
        method: &str,
        path_and_query: &str,
        media_type: Option<&str>,
    ) -> Signed {
        self.sign_at(method, path_and_query, media_type, chrono::Utc::now())
    }

    pub fn sign_at(
        &self,
        method: &str,
        path_and_query: &str,
        media_type: Option<&str>,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Signed {
        let date = now.to_rfc3339_opts(chrono::SecondsFormat::Micros, false);
        let ymd = now.format("%Y%m%d").to_string();
        let full_path = format!("{}{}", self.config.path_prefix(), path_and_query);
        let sig = sign(
            &self.config.secret_key,
            &SignInput {
                method,
                path_and_query: &full_path,
                date: &date,
                date_ymd: &ymd,
                host: self.config.authority(),
                media_type: media_type.unwrap_or(DEFAULT_MEDIA_TYPE),
                api_version: bai_core::API_VERSION,
            },
        );
        let mut headers = vec![
            ("Date", date),
            ("X-BackendAI-Version", bai_core::API_VERSION.to_string()),
            ("X-BackendAI-Domain", self.config.domain.clone()),
            (
                "User-Agent",
                format!("bai-cli/{}", env!("CARGO_PKG_VERSION")),
            ),
            (
                "Authorization",
                format!(
                    "BackendAI signMethod=HMAC-SHA256, credential={}:{sig}",
                    self.config.access_key
                ),
            ),
        ];
        if let Some(mt) = media_type {
            headers.push(("Content-Type", mt.to_string()));
        }
        Signed { headers }
    }

    fn connect_error(&self, e: reqwest::Error) -> ClientError {
        ClientError::Connect {
            endpoint: self.config.endpoint.clone(),
            detail: e.to_string(),
        }
    }

    /// Sends a signed request with an optional JSON body; returns the reply body of a 2xx.
    pub async fn send(
        &self,
        method: reqwest::Method,
        path_and_query: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<bytes::Bytes, ClientError> {
        let media = if body.is_some() {
            "application/json"
        } else {
            "text/plain"
        };
        let signed = self.sign_headers(method.as_str(), path_and_query, Some(media));
        let url = format!("{}{}", self.config.endpoint, path_and_query);
        let mut req = self.http.request(method, &url);
        for (k, v) in signed.headers {
            req = req.header(k, v);
        }
        req = match body {
            Some(b) => req.body(b.to_string()),
            None => req.body(""),
        };
        let resp = req.send().await.map_err(|e| self.connect_error(e))?;
        let status = resp.status();
        let bytes = resp.bytes().await.map_err(|e| self.connect_error(e))?;
        if !status.is_success() {
            return Err(ClientError::from_reply(status.as_u16(), &bytes));
        }
        Ok(bytes)
    }

    pub async fn send_json(
        &self,
        method: reqwest::Method,
        path_and_query: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<serde_json::Value, ClientError> {
        let bytes = self.send(method, path_and_query, body).await?;
        if bytes.is_empty() {
            return Ok(serde_json::Value::Null);
        }
        serde_json::from_slice(&bytes)
            .map_err(|e| ClientError::Protocol(format!("reply is not JSON: {e}")))
    }

    /// A signed GET whose reply body is streamed (server-sent events).
    pub(crate) async fn get_stream(
        &self,
        path_and_query: &str,
    ) -> Result<reqwest::Response, ClientError> {
        let signed = self.sign_headers("GET", path_and_query, None);
        let url = format!("{}{}", self.config.endpoint, path_and_query);
        let mut req = self.http.get(&url);
        for (k, v) in signed.headers {
            req = req.header(k, v);
        }
        let resp = req.send().await.map_err(|e| self.connect_error(e))?;
        let status = resp.status();
        if !status.is_success() {
            let bytes = resp.bytes().await.unwrap_or_default();
            return Err(ClientError::from_reply(status.as_u16(), &bytes));
        }
        Ok(resp)
    }

    /// Sends a signed multipart POST.
    pub(crate) async fn send_multipart(
        &self,
        path_and_query: &str,
        form: reqwest::multipart::Form,
    ) -> Result<(), ClientError> {
        let boundary = form.boundary().to_string();
        let signed = self.sign_headers("POST", path_and_query, Some("multipart/form-data"));
        let url = format!("{}{}", self.config.endpoint, path_and_query);
        let mut req = self.http.post(&url);
        for (k, v) in signed.headers {
            if k == "Content-Type" {
                req = req.header(k, format!("multipart/form-data; boundary={boundary}"));
            } else {
                req = req.header(k, v);
            }
        }
        let resp = req
            .multipart(form)
            .send()
            .await
            .map_err(|e| self.connect_error(e))?;
        let status = resp.status();
        if !status.is_success() {
            let bytes = resp.bytes().await.unwrap_or_default();
            return Err(ClientError::from_reply(status.as_u16(), &bytes));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::{Client, Config};

    fn client() -> Client {
        Client::new(Config {
            endpoint: "http://127.0.0.1:8090".into(),
            access_key: "AKIAIOSFODNN7EXAMPLE".into(),
            secret_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
            domain: "default".into(),
            group: "default".into(),
            vfolder_mounts: vec![],
        })
        .unwrap()
    }

    /// The known-answer vector of the wire contract §2.3, through the client's own signer.
    #[test]
    fn client_signature_matches_the_known_answer() {
        let when = chrono::DateTime::parse_from_rfc3339("2026-01-02T03:04:05.123456+00:00")
            .unwrap()
            .with_timezone(&chrono::Utc);
        let s = client().sign_at("GET", "/session/mysess/logs", Some("text/plain"), when);
        let auth = s
            .headers
            .iter()
            .find(|(k, _)| *k == "Authorization")
            .unwrap();
        assert!(
            auth.1
                .ends_with(":c8958c232cded759c947826f4649e2e83aaa79caf7a409cf1492376345f66e43"),
            "{}",
            auth.1
        );
        let date = s.headers.iter().find(|(k, _)| *k == "Date").unwrap();
        assert_eq!(date.1, "2026-01-02T03:04:05.123456+00:00");
    }

    #[test]
    fn authority_and_prefix() {
        let mut c = client();
        c.config.endpoint = "http://example.com:8080/prefix".into();
        assert_eq!(c.config.authority(), "example.com:8080");
        assert_eq!(c.config.path_prefix(), "/prefix");
    }
}
