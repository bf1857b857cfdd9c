//! What the tests ask the manager: logins (API and web), GraphQL, a user's role and
//! projects, their keys.

pub use bai_e2e::accounts::{gql, role_and_projects};
use bai_e2e::{Account, Server};
use serde_json::{Value, json};

/// `POST /server/login` as the web UI sends it.
async fn post_login(s: &Server, name: &str, password: &str) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{}/server/login", s.endpoint))
        .json(&json!({"username": name, "password": password}))
        .send()
        .await
        .expect("login request")
}

/// [`post_login`]: the status and the JSON body.
pub fn login(s: &Server, name: &str, password: &str) -> (u16, Value) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let r = post_login(s, name, password).await;
        let status = r.status().as_u16();
        let body = r.json::<Value>().await.unwrap_or(Value::Null);
        (status, body)
    })
}

/// The account `bai` would use with the user's keypair.
pub fn account_of(s: &Server, email: &str) -> Account {
    let r = gql(
        s,
        "query($email: String) { keypairs(email: $email) { access_key secret_key } }",
        json!({"email": email}),
    );
    let kp = &r["data"]["keypairs"][0];
    let mut a = s.user.clone();
    for (k, v) in &mut a.vars {
        match k.as_str() {
            "BACKEND_ACCESS_KEY" => *v = kp["access_key"].as_str().unwrap().to_string(),
            "BACKEND_SECRET_KEY" => *v = kp["secret_key"].as_str().unwrap().to_string(),
            _ => {}
        }
    }
    a
}

/// A web login's session cookie (`bai_web=…`) and access key.
pub fn web_login(s: &Server, name: &str, password: &str) -> (String, String) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let r = post_login(s, name, password).await;
        assert_eq!(r.status().as_u16(), 200, "{name}: {}", s.log());
        let cookie = r
            .headers()
            .get("set-cookie")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .expect("a session cookie")
            .to_string();
        let body = r.json::<Value>().await.unwrap();
        (
            cookie,
            body["data"]["access_key"].as_str().unwrap().to_string(),
        )
    })
}

/// A request of the web UI (the cookie and `X-BAI-Web`): the status and the JSON body.
pub fn web(s: &Server, cookie: &str, method: &str, path: &str) -> (u16, Value) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let r = reqwest::Client::new()
            .request(
                reqwest::Method::from_bytes(method.as_bytes()).unwrap(),
                format!("{}{path}", s.endpoint),
            )
            .header("cookie", cookie)
            .header("x-bai-web", "1")
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        (status, r.json::<Value>().await.unwrap_or(Value::Null))
    })
}

pub fn with_keys(s: &Server, ak: &str, sk: &str) -> Account {
    let mut a = s.user.clone();
    for (k, v) in &mut a.vars {
        match k.as_str() {
            "BACKEND_ACCESS_KEY" => *v = ak.to_string(),
            "BACKEND_SECRET_KEY" => *v = sk.to_string(),
            _ => {}
        }
    }
    a
}

/// The last stderr line of a failed `bai`, which must be its only one.
pub fn one_error_line(r: &bai_e2e::Run) -> String {
    assert!(!r.ok(), "should have failed: {r:#?}");
    let lines: Vec<&str> = r.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{r:#?}");
    assert!(lines[0].starts_with("error: "), "{r:#?}");
    lines[0].to_string()
}
