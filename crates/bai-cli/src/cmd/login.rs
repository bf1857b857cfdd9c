//! `bai login`: bai signs every request with a keypair (no password login on the command
//! line), so this checks the keypair in the environment and says who it is, or, without one,
//! where to get it: the web UI's Settings → My keypair (`{endpoint}/#keypair`), which is
//! also how a user who logs in through the site's directory or OpenID provider gets one.

/// The variable of `name` the client reads (`BACKEND_*`, then `SORNA_*`), if set.
fn var(lookup: &impl Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    lookup(&format!("BACKEND_{name}"))
        .or_else(|| lookup(&format!("SORNA_{name}")))
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// Where to get keys, when the environment has none (None: it has both).
pub fn missing_keys(lookup: impl Fn(&str) -> Option<String>) -> Option<String> {
    if var(&lookup, "ACCESS_KEY").is_some() && var(&lookup, "SECRET_KEY").is_some() {
        return None;
    }
    let page = match var(&lookup, "ENDPOINT") {
        Some(e) => {
            let first = e
                .split(',')
                .next()
                .unwrap_or("")
                .trim()
                .trim_end_matches('/');
            format!("the web UI at {first}/#keypair")
        }
        None => "your site's bai web UI".to_string(),
    };
    Some(format!(
        "no keypair: set BACKEND_ACCESS_KEY and BACKEND_SECRET_KEY. To get them, log in to \
         {page} (Settings → My keypair), make a new secret and run the export lines it shows \
         (BACKEND_ENDPOINT, BACKEND_ACCESS_KEY, BACKEND_SECRET_KEY)"
    ))
}

/// With a keypair: who it is.
pub async fn login(client: &bai_client::Client) -> anyhow::Result<i32> {
    let kp = client.keypair_info().await?;
    println!(
        "logged in as {} (access key {}{})",
        kp.user_id.as_deref().unwrap_or("?"),
        kp.access_key,
        if kp.is_admin { ", administrator" } else { "" }
    );
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }

    #[test]
    fn without_keys_it_says_where_to_get_them() {
        let m = missing_keys(env(&[("BACKEND_ENDPOINT", "https://bai.example.org/")])).unwrap();
        assert!(m.contains("https://bai.example.org/#keypair"), "{m}");
        assert!(m.contains("My keypair"), "{m}");
        assert!(!m.contains('\n'));
        let m = missing_keys(env(&[("BACKEND_ACCESS_KEY", "AK")])).unwrap();
        assert!(m.contains("your site's bai web UI"), "{m}");
        assert_eq!(
            missing_keys(env(&[
                ("BACKEND_ACCESS_KEY", "AK"),
                ("SORNA_SECRET_KEY", "SK")
            ])),
            None
        );
    }
}
