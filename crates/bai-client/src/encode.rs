//! URL encoding as the official client (yarl) does it, so the request target we sign is
//! byte for byte the one we send.

fn push_escaped(out: &mut String, b: u8) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.push('%');
    out.push(HEX[usize::from(b >> 4)] as char);
    out.push(HEX[usize::from(b & 0xf)] as char);
}

/// Encodes one query value: unreserved characters and `*`, `,`, `:` stay, a space becomes
/// `+`, everything else is percent-encoded (so a literal `+` is `%2B`).
pub fn query_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z'
            | b'a'..=b'z'
            | b'0'..=b'9'
            | b'-'
            | b'_'
            | b'.'
            | b'~'
            | b'*'
            | b','
            | b':' => out.push(char::from(b)),
            b' ' => out.push('+'),
            _ => push_escaped(&mut out, b),
        }
    }
    out
}

/// Encodes one path segment: only RFC 3986 unreserved characters stay.
pub fn path_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(char::from(b))
            }
            _ => push_escaped(&mut out, b),
        }
    }
    out
}

/// `k1=v1&k2=v2` with each value encoded by [`query_value`] (keys are plain ASCII).
pub fn query(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={}", query_value(v)))
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_yarl() {
        assert_eq!(query_value("*"), "*");
        assert_eq!(query_value("session,kernel"), "session,kernel");
        assert_eq!(query_value("a b+c"), "a+b%2Bc");
        assert_eq!(query_value("{\"x\":1}"), "%7B%22x%22:1%7D");
        assert_eq!(query_value("été"), "%C3%A9t%C3%A9");
        assert_eq!(
            query(&[("sessionName", "mysess"), ("scope", "*")]),
            "sessionName=mysess&scope=*"
        );
    }

    #[test]
    fn path_segments_cannot_escape() {
        assert_eq!(path_segment("my.sess-1_x"), "my.sess-1_x");
        assert_eq!(path_segment("a/b"), "a%2Fb");
        assert_eq!(path_segment("a b?#"), "a%20b%3F%23");
    }
}
