//! A session's apps as `GET /stream/session/{ref}/apps` lists them.

use bai_api::sessions::{App as WireApp, AppProtocol};
use bai_ground::apps::App;

/// The entry of `GET /stream/session/{ref}/apps` (wire contract §5.5).
pub fn app(a: &App) -> WireApp {
    WireApp {
        name: a.name.clone(),
        protocol: match a.protocol.as_str() {
            "tcp" => AppProtocol::Tcp,
            "pty" => AppProtocol::Pty,
            "preopen" => AppProtocol::Preopen,
            _ => AppProtocol::Http,
        },
        ports: vec![a.port],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bai_ground::apps::session_apps;
    use serde_json::json;

    #[test]
    fn an_app_is_written_with_its_protocol_and_port() {
        let apps = session_apps(None, &[8080]);
        assert_eq!(
            serde_json::to_value(app(&apps[0])).expect("writes"),
            json!({"name": "sshd", "protocol": "tcp", "ports": [2200]})
        );
        let preopen = apps.last().expect("a preopen port");
        assert_eq!(
            serde_json::to_value(app(preopen)).expect("writes"),
            json!({"name": "8080", "protocol": "preopen", "ports": [8080]})
        );
    }
}
