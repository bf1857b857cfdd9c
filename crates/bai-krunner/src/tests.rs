//! Unit tests of the wire format and of batch steps (no container needed).

use crate::batch;
use crate::proto::{Event, ExecRequest, Request, parse_request};
use std::path::Path;

#[test]
fn events_serialize_like_bai_core() {
    assert_eq!(
        Event::Finished { exit_code: 2 }.line(),
        "{\"t\":\"finished\",\"exit_code\":2}\n"
    );
    assert_eq!(
        Event::Stdout { data: "x".into() }.line(),
        "{\"t\":\"stdout\",\"data\":\"x\"}\n"
    );
    assert_eq!(
        Event::WaitingInput {
            prompt: "> ".into(),
            password: false
        }
        .line(),
        "{\"t\":\"waiting-input\",\"prompt\":\"> \",\"password\":false}\n"
    );
    assert_eq!(Event::Pong.line(), "{\"t\":\"pong\"}\n");
}

#[test]
fn requests_parse() {
    assert_eq!(
        parse_request("{\"op\":\"ping\"}\n").ok(),
        Some(Request::Ping)
    );
    assert_eq!(
        parse_request("{\"op\":\"exec\",\"mode\":\"query\",\"code\":\"1 + 1\"}").ok(),
        Some(Request::Exec(ExecRequest::Query {
            code: "1 + 1".into()
        }))
    );
    assert_eq!(
        parse_request("{\"mode\":\"batch\",\"clean\":null,\"build\":\"*\",\"op\":\"exec\"}").ok(),
        Some(Request::Exec(ExecRequest::Batch {
            clean: None,
            build: Some("*".into()),
            exec: None
        }))
    );
    assert_eq!(
        parse_request("{\"op\":\"exit\"}\n").ok(),
        Some(Request::Exit)
    );
    assert!(parse_request("{\"op\":\"exec\",\"mode\":\"nope\"}").is_err());
    assert!(parse_request("not json").is_err());
}

#[test]
fn star_steps_use_kernel_defaults() {
    let dir = std::env::temp_dir().join(format!("krunner-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    assert_eq!(batch::resolve_step("clean", Some("*"), &dir), None);
    assert_eq!(batch::resolve_step("build", Some(""), &dir), None);
    assert_eq!(batch::resolve_step("exec", Some("*"), &dir), None);
    assert!(
        batch::default_exec(&dir)
            .unwrap_err()
            .contains("no main.py and no script")
    );
    // One script: run by its interpreter (quoted for the shell).
    std::fs::write(dir.join("my gpu'code.py"), "print(1)").expect("write a script");
    std::fs::write(dir.join("id_container"), "key").expect("write a non-script");
    assert_eq!(
        batch::resolve_step("exec", Some("*"), &dir).as_deref(),
        Some("python3 'my gpu'\\''code.py'")
    );
    std::fs::write(dir.join("b.sh"), "echo").expect("write a second script");
    let why = batch::default_exec(&dir).unwrap_err();
    assert!(
        why.contains("several scripts (b.sh, my gpu'code.py)"),
        "{why}"
    );
    // main.py wins.
    std::fs::write(dir.join("main.py"), "print(1)").expect("write main.py");
    assert_eq!(
        batch::resolve_step("exec", Some("*"), &dir).as_deref(),
        Some("python3 main.py")
    );
    assert_eq!(
        batch::resolve_step("exec", Some("python x.py"), &dir).as_deref(),
        Some("python x.py")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn batch_commands_stream_output_and_exit_codes() {
    let mut events = Vec::new();
    let code = batch::run_command(
        "echo out && echo err >&2 && exit 4",
        Path::new("/"),
        &mut |e: &Event| {
            events.push(e.clone());
            true
        },
    );
    assert_eq!(code, 4);
    assert!(
        events.contains(&Event::stdout_for_test("out\n")),
        "{events:?}"
    );
    assert!(events.contains(&Event::stderr("err\n")), "{events:?}");
}

impl Event {
    fn stdout_for_test(s: &str) -> Event {
        Event::Stdout { data: s.into() }
    }
}
