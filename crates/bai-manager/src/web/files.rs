//! The web UI's static files, served at the API's own address.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Uri, header};
use axum::response::Response;
use std::path::{Path, PathBuf};

/// Where the built UI lives: `BAI_WEB_DIR`, else `web/dist` of the source tree baid was
/// built in, else `share/bai/web` next to the binary's prefix.
pub fn web_dir() -> Option<PathBuf> {
    if let Ok(d) = std::env::var("BAI_WEB_DIR") {
        return Some(PathBuf::from(d));
    }
    let exe = std::env::current_exe().ok()?;
    let mut candidates = Vec::new();
    // target/<profile>/baid → the repository's web/dist
    if let Some(repo) = exe.parent().and_then(Path::parent).and_then(Path::parent) {
        candidates.push(repo.join("web/dist"));
    }
    if let Some(prefix) = exe.parent().and_then(Path::parent) {
        candidates.push(prefix.join("share/bai/web"));
    }
    candidates
        .into_iter()
        .find(|d| d.join("index.html").is_file())
}

fn content_type(p: &Path) -> &'static str {
    match p.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "application/javascript",
        "css" => "text/css",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "json" => "application/json",
        "woff2" => "font/woff2",
        _ => "application/octet-stream",
    }
}

/// Whether a request is a browser asking for a page.
pub fn wants_html(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/html"))
}

/// Serves the UI: files under `/assets/…`, and `index.html` for every page a browser asks for
/// (the UI routes on the client). `None` when the request is not for the UI.
pub async fn ui_file(uri: &Uri, headers: &HeaderMap) -> Option<Response> {
    let dir = web_dir()?;
    let path = uri.path();
    let rel = path.trim_start_matches('/');
    let file = if rel.starts_with("assets/") || rel == "favicon.svg" {
        let safe = bai_core::vpath::confine(rel).ok()?;
        dir.join(safe)
    } else if wants_html(headers) {
        dir.join("index.html")
    } else {
        return None;
    };
    let bytes = tokio::fs::read(&file).await.ok()?;
    let mut r = Response::new(Body::from(bytes));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(content_type(&file)),
    );
    let cache = if rel.starts_with("assets/") {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    Some(r)
}
