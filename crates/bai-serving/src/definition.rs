//! `model-definition.yaml` read from a model folder: the YAML parsed into
//! `bai_core::serving::definition`'s types and checked there.

pub use bai_core::serving::definition::*;

/// Parses the file's text; an error names the field (or the line) that is wrong.
pub fn parse(text: &str) -> Result<Definition, String> {
    check(serde_yaml::from_str(text).map_err(|e| e.to_string())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CURRENT: &str = r#"
models:
  - name: "iris"
    model_path: "/models/iris"
    service:
      pre_start_actions:
        - action: run_command
          args: {command: ["echo", "it's ready"]}
      start_command: "python3 serve.py --dir {model_path}"
      port: 8000
      health_check:
        path: /health
        interval: 2
        max_retries: 3
"#;

    #[test]
    fn the_current_schema_parses_with_defaults() {
        let d = parse(CURRENT).unwrap();
        assert_eq!(d.port(), 8000);
        let h = d.health().unwrap();
        assert_eq!(
            (h.interval, h.max_retries, h.expected_status_code),
            (2.0, 3, 200)
        );
        assert_eq!(h.max_wait_time, 15.0);
        let cmd = d.command_line();
        assert!(cmd.contains("cd /models/iris"), "{cmd}");
        assert!(cmd.contains(r"echo 'it'\''s ready'"), "{cmd}");
        assert!(
            cmd.ends_with("exec /bin/bash -c 'python3 serve.py --dir /models/iris'"),
            "{cmd}"
        );
    }

    #[test]
    fn the_2403_list_command_and_its_aliases_parse() {
        let d = parse(
            "models:\n  - name: m\n    model_path: /models\n    service:\n      command: [python3, -m, http.server, '8000']\n      port: 8000\n      health_check: {path: /, enable: false}\n",
        )
        .unwrap();
        assert!(d.health().is_none());
        assert!(
            d.command_line()
                .ends_with("-c 'python3 -m http.server 8000'")
        );
    }

    #[test]
    fn errors_name_the_field() {
        let no_port =
            "models:\n  - name: m\n    model_path: /models\n    service:\n      start_command: x\n";
        assert!(
            parse(no_port).unwrap_err().contains("port"),
            "{}",
            parse(no_port).unwrap_err()
        );
        let bad_path = "models:\n  - name: m\n    model_path: /m\n    service: {start_command: x, port: 80, health_check: {path: health}}\n";
        assert!(parse(bad_path).unwrap_err().contains("health_check.path"));
        let relative = "models:\n  - name: m\n    model_path: models\n    service: {start_command: x, port: 80}\n";
        assert!(parse(relative).unwrap_err().contains("model_path"));
        assert!(parse("models: []").unwrap_err().contains("models"));
        let action = "models:\n  - name: m\n    model_path: /m\n    service:\n      start_command: x\n      port: 80\n      pre_start_actions: [{action: fly, args: {}}]\n";
        assert!(parse(action).unwrap_err().contains("pre_start_actions[0]"));
        assert!(parse("not: [yaml").is_err());
    }
}
