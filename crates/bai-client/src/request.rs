//! Signed requests (wire contract §2.2–2.3).

use crate::retry::{self, Failover, Sent};
use crate::{Client, ClientError};
use bai_core::sign::{DEFAULT_MEDIA_TYPE, SignInput, media_type_of, sign};
use reqwest::Method;
use serde_json::Value;

/// The headers of one signed request, in the order they are sent.
#[derive(Debug, Clone)]
pub struct Signed {
    pub headers: Vec<(&'static str, String)>,
}

impl Signed {
    pub fn get(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }
}

/// The first value of header `name` in `headers` (names compare case-insensitively).
pub(crate) fn header<'a, K: AsRef<str>>(headers: &'a [(K, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.as_ref().eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// An answer read as its wire-contract type (`bai_api`); `what` names the answer in the
/// error when it does not match.
pub(crate) fn typed<T: serde::de::DeserializeOwned>(
    what: &str,
    v: Value,
) -> Result<T, ClientError> {
    serde_json::from_value(v).map_err(|e| {
        ClientError::Protocol(format!("the {what} answer is not as the API says: {e}"))
    })
}

/// A request body written from its wire-contract type.
pub(crate) fn body_of<T: serde::Serialize>(request: &T) -> Result<Value, ClientError> {
    serde_json::to_value(request).map_err(|e| ClientError::Protocol(e.to_string()))
}

impl Client {
    /// Signs `method path_and_query` (relative to the endpoint; its path prefix is added)
    /// for a request with Content-Type `content_type` (None for WebSocket and SSE).
    pub fn sign_headers(
        &self,
        method: &str,
        path_and_query: &str,
        content_type: Option<&str>,
    ) -> Signed {
        self.sign_at(method, path_and_query, content_type, chrono::Utc::now())
    }

    /// [`Client::sign_headers`] at a given time.
    pub fn sign_at(
        &self,
        method: &str,
        path_and_query: &str,
        content_type: Option<&str>,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Signed {
        let date = now.to_rfc3339_opts(chrono::SecondsFormat::Micros, false);
        let ymd = now.format("%Y%m%d").to_string();
        let full_path = format!("{}{}", self.config.path_prefix(), path_and_query);
        let media = match content_type {
            Some(ct) => media_type_of(Some(ct)),
            None => DEFAULT_MEDIA_TYPE.to_string(),
        };
        let sig = sign(
            &self.config.secret_key,
            &SignInput {
                method,
                path_and_query: &full_path,
                date: &date,
                date_ymd: &ymd,
                host: self.config.authority(),
                media_type: &media,
                api_version: bai_core::API_VERSION,
            },
        );
        let mut headers = vec![
            ("Date", date),
            ("X-BackendAI-Version", bai_core::API_VERSION.to_string()),
            ("X-BackendAI-Domain", self.config.domain.clone()),
            ("User-Agent", format!("bai/{}", env!("CARGO_PKG_VERSION"))),
            (
                "Authorization",
                format!(
                    "BackendAI signMethod=HMAC-SHA256, credential={}:{sig}",
                    self.config.access_key
                ),
            ),
        ];
        if let Some(ct) = content_type {
            headers.push(("Content-Type", ct.to_string()));
        }
        Signed { headers }
    }

    /// The absolute URL of `path_and_query`.
    pub(crate) fn url(&self, path_and_query: &str) -> String {
        format!("{}{}", self.config.endpoint(), path_and_query)
    }

    pub(crate) fn connect_error(&self, e: &reqwest::Error) -> ClientError {
        ClientError::connect(self.config.endpoint(), e)
    }

    /// Sends a request signed with `content_type`; a non-2xx reply becomes [`ClientError::Api`].
    /// While the platform switches managers the request is sent again (`crate::retry`).
    pub(crate) async fn dispatch(
        &self,
        method: Method,
        path_and_query: &str,
        content_type: Option<&str>,
        build: impl FnOnce(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, ClientError> {
        let request = self.signed_request(method, path_and_query, content_type, build)?;
        let repeatable = retry::repeatable(request.method(), request.headers());
        let mut failover = Failover::new(self.config.failover_wait);
        loop {
            // A body that cannot be copied (a stream) is sent once.
            let Some(mut this) = request.try_clone() else {
                return self.execute_once(request).await.map_err(|(e, _)| e);
            };
            self.resign(&mut this, path_and_query, content_type);
            match self.execute_once(this).await {
                Ok(resp) => {
                    failover.done(&self.notice);
                    return Ok(resp);
                }
                Err((e, sent)) => {
                    if !failover.again(&self.notice, &e, sent, repeatable).await {
                        return Err(e);
                    }
                }
            }
        }
    }

    /// A signed request, built by `build` from its method, URL and signature.
    pub(crate) fn signed_request(
        &self,
        method: Method,
        path_and_query: &str,
        content_type: Option<&str>,
        build: impl FnOnce(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Request, ClientError> {
        let signed = self.sign_headers(method.as_str(), path_and_query, content_type);
        let mut req = self.http.request(method, self.url(path_and_query));
        for (k, v) in signed.headers {
            req = req.header(k, v);
        }
        build(req)
            .build()
            .map_err(|e| ClientError::Invalid(format!("cannot make the request: {e}")))
    }

    /// Signs a copy of a request anew (a try sent again later carries a current date).
    pub(crate) fn resign(
        &self,
        req: &mut reqwest::Request,
        path_and_query: &str,
        content_type: Option<&str>,
    ) {
        let signed = self.sign_headers(req.method().as_str(), path_and_query, content_type);
        for (k, v) in signed.headers {
            if let Ok(v) = reqwest::header::HeaderValue::from_str(&v) {
                req.headers_mut().insert(k, v);
            }
        }
    }

    /// Sends `req` once: its answer, or the error with how far it got.
    pub(crate) async fn execute_once(
        &self,
        req: reqwest::Request,
    ) -> Result<reqwest::Response, (ClientError, Sent)> {
        let resp = self
            .http
            .execute(req)
            .await
            .map_err(|e| (self.connect_error(&e), Sent::of(&e)))?;
        let status = resp.status();
        if !status.is_success() {
            let bytes = resp.bytes().await.unwrap_or_default();
            return Err((ClientError::from_reply(status.as_u16(), &bytes), Sent::Yes));
        }
        Ok(resp)
    }

    /// Sends a signed request with an optional JSON body (`text/plain` and an empty body
    /// without one, as the official client); returns the body of the 2xx reply.
    pub async fn send(
        &self,
        method: Method,
        path_and_query: &str,
        body: Option<&Value>,
    ) -> Result<bytes::Bytes, ClientError> {
        let (ct, payload) = match body {
            Some(b) => ("application/json", b.to_string()),
            None => ("text/plain", String::new()),
        };
        let resp = self
            .dispatch(method, path_and_query, Some(ct), |r| r.body(payload))
            .await?;
        resp.bytes().await.map_err(|e| self.connect_error(&e))
    }

    /// [`Client::send`], parsing the reply as JSON (an empty reply is `null`).
    pub async fn send_json(
        &self,
        method: Method,
        path_and_query: &str,
        body: Option<&Value>,
    ) -> Result<Value, ClientError> {
        let bytes = self.send(method, path_and_query, body).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Value::Null);
        }
        serde_json::from_slice(&bytes)
            .map_err(|e| ClientError::Protocol(format!("reply is not JSON: {e}")))
    }

    /// [`Client::send_json`] without a body, the answer read as its wire-contract type
    /// (`what` names it in the error when it does not match).
    pub(crate) async fn call_as<T: serde::de::DeserializeOwned>(
        &self,
        method: Method,
        path_and_query: &str,
        what: &str,
    ) -> Result<T, ClientError> {
        typed(what, self.send_json(method, path_and_query, None).await?)
    }

    /// [`Client::send_json`] with the body written from its wire-contract type and the
    /// answer read as one.
    pub(crate) async fn send_as<B: serde::Serialize, T: serde::de::DeserializeOwned>(
        &self,
        method: Method,
        path_and_query: &str,
        body: &B,
        what: &str,
    ) -> Result<T, ClientError> {
        let b = body_of(body)?;
        typed(
            what,
            self.send_json(method, path_and_query, Some(&b)).await?,
        )
    }

    /// A signed GET without Content-Type whose body is streamed (server-sent events).
    pub(crate) async fn get_stream(
        &self,
        path_and_query: &str,
    ) -> Result<reqwest::Response, ClientError> {
        self.dispatch(Method::GET, path_and_query, None, |r| r)
            .await
    }

    /// Sends a signed multipart POST (signed as `multipart/form-data`, sent with its boundary).
    pub(crate) async fn send_multipart(
        &self,
        path_and_query: &str,
        form: reqwest::multipart::Form,
    ) -> Result<(), ClientError> {
        let ct = format!("multipart/form-data; boundary={}", form.boundary());
        self.dispatch(Method::POST, path_and_query, Some(&ct), |r| {
            r.multipart(form)
        })
        .await
        .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use crate::{Client, Config};

    fn client(endpoint: &str) -> Client {
        Client::new(
            Config::new(
                endpoint,
                "AKIAIOSFODNN7EXAMPLE",
                "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            )
            .unwrap(),
        )
        .unwrap()
    }

    fn when() -> chrono::DateTime<chrono::Utc> {
        chrono::DateTime::parse_from_rfc3339("2026-01-02T03:04:05.123456+00:00")
            .unwrap()
            .with_timezone(&chrono::Utc)
    }

    /// The known-answer vectors of the wire contract §2.3, through the client's own signer.
    #[test]
    fn client_signature_matches_the_known_answers() {
        let c = client("http://127.0.0.1:8090");
        let s = c.sign_at("GET", "/session/mysess/logs", Some("text/plain"), when());
        assert_eq!(
            s.get("Authorization"),
            Some(
                "BackendAI signMethod=HMAC-SHA256, credential=AKIAIOSFODNN7EXAMPLE:\
                 c8958c232cded759c947826f4649e2e83aaa79caf7a409cf1492376345f66e43"
            )
        );
        assert_eq!(s.get("Date"), Some("2026-01-02T03:04:05.123456+00:00"));
        assert_eq!(s.get("X-BackendAI-Version"), Some("v9.20250722"));
        assert_eq!(s.get("X-BackendAI-Domain"), Some("default"));
        assert_eq!(s.get("Content-Type"), Some("text/plain"));

        let s = c.sign_at("POST", "/admin/gql", Some("application/json"), when());
        assert!(
            s.get("Authorization")
                .unwrap()
                .ends_with(":181c4b0766584d64729220add89099bc5e9d440bfac72603535202dcf59b8baa")
        );
        // SSE / WebSocket: no Content-Type, signed as application/octet-stream.
        let s = c.sign_at(
            "GET",
            "/events/session?sessionName=mysess&scope=*",
            None,
            when(),
        );
        assert!(
            s.get("Authorization")
                .unwrap()
                .ends_with(":c67a43959277ff3c566ada020373d02253b5effa3e743358c38324a115208c46")
        );
        assert_eq!(s.get("Content-Type"), None);
    }

    #[test]
    fn multipart_is_signed_without_its_boundary() {
        let c = client("http://127.0.0.1:8090");
        let a = c.sign_at(
            "POST",
            "/x",
            Some("multipart/form-data; boundary=abc"),
            when(),
        );
        let b = c.sign_at("POST", "/x", Some("multipart/form-data"), when());
        assert_eq!(a.get("Authorization"), b.get("Authorization"));
    }

    #[test]
    fn the_path_prefix_is_signed() {
        let plain = client("http://127.0.0.1:8090");
        let prefixed = client("http://127.0.0.1:8090/api");
        let a = plain.sign_at(
            "GET",
            "/api/session/mysess/logs",
            Some("text/plain"),
            when(),
        );
        let b = prefixed.sign_at("GET", "/session/mysess/logs", Some("text/plain"), when());
        assert_eq!(a.get("Authorization"), b.get("Authorization"));
        assert_eq!(
            prefixed.url("/session"),
            "http://127.0.0.1:8090/api/session"
        );
    }
}
