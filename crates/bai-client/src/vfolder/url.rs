//! The unsigned transfer URLs the manager hands out, and the target of a raw request to one.

use crate::encode;

/// `url?token=…`, with a relative `url` joined to the endpoint.
pub fn transfer_url(endpoint: &str, url: &str, token: &str) -> String {
    let base = if url.starts_with("http://") || url.starts_with("https://") {
        url.to_string()
    } else {
        format!(
            "{}/{}",
            endpoint.trim_end_matches('/'),
            url.trim_start_matches('/')
        )
    };
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}token={}", encode::query_value(token))
}

/// `(host:port, path?query)` of a plain-HTTP transfer URL, for a request made by hand.
pub(super) fn plain_http_target(url: &str) -> Option<(String, String)> {
    let u = reqwest::Url::parse(url).ok()?;
    if u.scheme() != "http" {
        return None;
    }
    let port = u.port_or_known_default()?;
    // `Host` displays IPv6 addresses in brackets, as an authority needs them.
    let authority = format!("{}:{port}", u.host()?);
    let mut path = u.path().to_string();
    if let Some(q) = u.query() {
        path.push('?');
        path.push_str(q);
    }
    Some((authority, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_targets() {
        assert_eq!(
            plain_http_target("http://127.0.0.1:8090/storage/upload?token=a+b"),
            Some((
                "127.0.0.1:8090".to_string(),
                "/storage/upload?token=a+b".to_string()
            ))
        );
        assert_eq!(
            plain_http_target("http://[::1]/storage/download?token=t"),
            Some((
                "[::1]:80".to_string(),
                "/storage/download?token=t".to_string()
            ))
        );
        assert_eq!(
            plain_http_target("https://h/storage/download?token=t"),
            None
        );
        assert_eq!(plain_http_target("not a url"), None);
    }

    #[test]
    fn transfer_urls_carry_the_token() {
        assert_eq!(
            transfer_url("http://h:1", "http://h:1/storage/upload", "a b"),
            "http://h:1/storage/upload?token=a+b"
        );
        assert_eq!(
            transfer_url("http://h:1/", "/storage/download", "t"),
            "http://h:1/storage/download?token=t"
        );
        assert_eq!(
            transfer_url("http://h", "http://x/u?dst=d", "t"),
            "http://x/u?dst=d&token=t"
        );
    }
}
