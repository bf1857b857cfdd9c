use super::*;

fn values() -> Values {
    Values::from([
        (
            "runtime_path".into(),
            Value::Text("/usr/bin/python3".into()),
        ),
        ("ports".into(), Value::List(vec!["8180".into()])),
        (
            "cfg".into(),
            Value::Map(BTreeMap::from([("out".into(), "text".into())])),
        ),
    ])
}

#[test]
fn values_are_filled_in_both_spellings() {
    let v = values();
    assert_eq!(
        fill("{runtime_path} -m http.server {ports[0]}", &v).unwrap(),
        "/usr/bin/python3 -m http.server 8180"
    );
    assert_eq!(fill("--port=${{ ports[0] }}", &v).unwrap(), "--port=8180");
    assert_eq!(fill("{ cfg[out] }/{cfg['out']}", &v).unwrap(), "text/text");
    assert_eq!(
        fill("{{literal}} $HOME }", &v).unwrap(),
        "{literal} $HOME }"
    );
    assert_eq!(fill("plain", &v).unwrap(), "plain");
}

#[test]
fn what_is_not_there_is_an_error_naming_it() {
    let v = values();
    for bad in [
        "{nothing}",
        "{ports[1]}",
        "{cfg[err]}",
        "{ports",
        "{runtime_path[0]}",
    ] {
        let e = fill(bad, &v).unwrap_err();
        assert!(e.contains(bad), "{bad}: {e}");
    }
}

fn write(dir: &Path, name: &str, json: &str) {
    std::fs::write(dir.join(format!("{name}.json")), json).unwrap();
}

#[test]
fn a_recipe_is_found_with_its_port() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "web", r#"{"command": ["serve", "{ports[0]}"]}"#);
    let r = Recipe::find(dir.path(), "web", "jupyter:http:8091, web:http:8180").unwrap();
    assert_eq!(r.port, 8180);
    assert!(r.spawns());
    let Launch { args, env } = r.prepare(dir.path(), "python3").unwrap();
    assert_eq!(args, ["serve", "8180"]);
    assert!(env.is_empty());

    let e = Recipe::find(dir.path(), "web", "other:http:1").unwrap_err();
    assert!(e.contains("no port"), "{e}");
    let e = Recipe::find(dir.path(), "missing", "missing:http:1").unwrap_err();
    assert!(e.contains("no recipe") && e.contains("missing.json"), "{e}");
    for name in ["../web", "", ".hidden", "a/b"] {
        let e = Recipe::find(dir.path(), name, "x:http:1").unwrap_err();
        assert!(e.contains("not an app name"), "{name}: {e}");
    }
    write(dir.path(), "broken", r#"{"cmd": "x"}"#);
    let e = Recipe::find(dir.path(), "broken", "broken:http:1").unwrap_err();
    assert!(e.contains("not valid"), "{e}");
}

#[test]
fn steps_run_in_order_and_keep_their_values() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "demo",
        r#"{
          "prestart": [
            {"action": "mkdir", "args": {"path": "site/{ports[0]}"}},
            {"action": "write_file", "args": {"filename": "site/{ports[0]}/index.html",
              "body": ["<p>port {ports[0]}</p>", "<p>{{braces}}</p>"], "mode": "600"}},
            {"action": "write_file", "args": {"filename": "site/{ports[0]}/index.html",
              "body": ["more"], "append": true, "mode": "600"}},
            {"action": "write_tempfile", "args": {"body": ["print(1)\n"], "mode": "755"},
              "ref": "script"},
            {"action": "run_command", "args": {"command": ["sh", "-c", "echo hi; echo oops >&2"]},
              "ref": "said"},
            {"action": "log", "args": {"message": "starting on {ports[0]}"}}
          ],
          "command": "exec {runtime_path} {script} --greet '{said[out]}'",
          "shell": "sh",
          "env": {"DEMO_PORT": "{ports[0]}", "ERR": "{said[err]}"},
          "default_arguments": {"--flag": null, "--name": "x", "--pair": ["a", "b"]},
          "url_template": "http://{host}:{port}/",
          "allowed_envs": [],
          "allowed_arguments": []
        }"#,
    );
    let r = Recipe::find(dir.path(), "demo", "demo:http:9000").unwrap();
    let Launch { args, env } = r.prepare(dir.path(), "/usr/bin/python3").unwrap();
    let page = dir.path().join("site/9000/index.html");
    assert_eq!(
        std::fs::read_to_string(&page).unwrap(),
        "<p>port 9000</p>\n<p>{braces}</p>\nmore\n"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&page), 0o600);
    assert_eq!(args[..2], ["sh", "-c"]);
    let script = args[2]
        .strip_prefix("exec /usr/bin/python3 ")
        .and_then(|s| s.strip_suffix(" --greet 'hi\n'"))
        .unwrap_or_else(|| panic!("{args:?}"));
    assert_eq!(std::fs::read_to_string(script).unwrap(), "print(1)\n");
    assert_eq!(mode(Path::new(script)), 0o755);
    std::fs::remove_file(script).unwrap();
    assert_eq!(args[3..], ["--flag", "--name", "x", "--pair", "a", "b"]);
    assert_eq!(
        env,
        [
            ("DEMO_PORT".to_string(), "9000".to_string()),
            ("ERR".to_string(), "oops\n".to_string())
        ]
    );
}

#[test]
fn a_bad_step_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "bad",
        r#"{"prestart": [{"action": "format_disk", "args": {}}], "command": ["x"]}"#,
    );
    let r = Recipe::find(dir.path(), "bad", "bad:http:1").unwrap();
    let e = r.prepare(dir.path(), "python3").unwrap_err();
    assert!(e.contains("format_disk"), "{e}");
    write(
        dir.path(),
        "mode",
        r#"{"prestart": [{"action": "write_file",
            "args": {"filename": "f", "body": [], "mode": "rwx"}}], "command": ["x"]}"#,
    );
    let r = Recipe::find(dir.path(), "mode", "mode:http:1").unwrap();
    assert!(
        r.prepare(dir.path(), "python3")
            .unwrap_err()
            .contains("octal")
    );
    write(dir.path(), "empty", r#"{"command": []}"#);
    let r = Recipe::find(dir.path(), "empty", "empty:http:1").unwrap();
    assert!(
        r.prepare(dir.path(), "python3")
            .unwrap_err()
            .contains("empty")
    );
    write(dir.path(), "quiet", r#"{"command": "", "noop": true}"#);
    assert!(
        !Recipe::find(dir.path(), "quiet", "quiet:http:1")
            .unwrap()
            .spawns()
    );
}
