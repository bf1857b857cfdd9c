//! What an administrator sees of an account, through `POST /admin/gql`: the login tests
//! (LDAP, OpenID Connect) ask it after each login.

use crate::Server;
use serde_json::{Value, json};

/// `query` with `variables`, as the administrator.
pub fn gql(s: &Server, query: &str, variables: Value) -> Value {
    s.api(
        &s.admin,
        "POST",
        "/admin/gql",
        Some(json!({"query": query, "variables": variables})),
    )
    .expect("admin GraphQL")
}

/// The user's role and project names, sorted.
pub fn role_and_projects(s: &Server, email: &str) -> (String, Vec<String>) {
    let r = gql(
        s,
        "query($email: String) { user(email: $email) { role groups { name } } }",
        json!({"email": email}),
    );
    let u = &r["data"]["user"];
    let mut projects: Vec<String> = u["groups"]
        .as_array()
        .unwrap_or_else(|| panic!("no user {email}: {r}"))
        .iter()
        .filter_map(|g| g["name"].as_str().map(String::from))
        .collect();
    projects.sort();
    (u["role"].as_str().unwrap_or_default().to_string(), projects)
}
