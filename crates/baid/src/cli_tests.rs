//! The command line of baid: its flags, their parsing, and the config file that sets them.

use super::*;

fn up_args(args: &[&str]) -> UpArgs {
    let mut argv = vec!["baid", "up"];
    argv.extend_from_slice(args);
    match Cli::try_parse_from(argv).expect("parse").cmd {
        Cmd::Up(a) => *a,
        Cmd::Agent(_) | Cmd::Db(_) => unreachable!("baid up was parsed"),
    }
}

#[test]
fn storage_hosts_from_repeated_flags() {
    let a = up_args(&[
        "--storage-host",
        "nfs:shared=/mnt/nfs",
        "--storage-host",
        "fast:ssd=/ssd,more:v=/m",
        "--default-storage-host",
        "nfs:shared",
    ]);
    let c = storage_config(&a.storage_hosts, &a.default_storage_host).expect("valid");
    assert_eq!(c.default.as_deref(), Some("nfs:shared"));
    let names: Vec<&str> = c.hosts.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["nfs:shared", "fast:ssd", "more:v"]);
}

#[test]
fn durations_and_listen_addresses() {
    assert_eq!(
        parse_duration("40s"),
        Ok(std::time::Duration::from_secs(40))
    );
    assert_eq!(
        parse_duration("10m"),
        Ok(std::time::Duration::from_secs(600))
    );
    assert_eq!(
        parse_duration("750ms"),
        Ok(std::time::Duration::from_millis(750))
    );
    assert_eq!(parse_duration("3"), Ok(std::time::Duration::from_secs(3)));
    // The one grammar of bai-core: units combine, and days are days.
    assert_eq!(
        parse_duration("1m30s"),
        Ok(std::time::Duration::from_secs(90))
    );
    assert_eq!(
        parse_duration("4d"),
        Ok(std::time::Duration::from_secs(4 * 86400))
    );
    for bad in ["", "0s", "0", "s", "4x", "-1s"] {
        assert!(parse_duration(bad).is_err(), "{bad}");
    }
    assert_eq!(parse_listen("off"), Ok(Listen(None)));
    assert!(parse_listen("0.0.0.0:8091").unwrap().0.is_some());
    assert!(parse_listen("8091").is_err());
    let a = up_args(&[]);
    assert_eq!(a.agent_listen.0.map(|l| l.port()), Some(8091));
    assert_eq!(a.agent_lost_after, std::time::Duration::from_secs(40));
    assert_eq!(a.agent_gone_after, std::time::Duration::from_secs(600));
}

#[test]
fn storage_defaults_and_bad_values() {
    let a = up_args(&[]);
    let c = storage_config(&a.storage_hosts, &a.default_storage_host).expect("valid");
    assert!(c.hosts.is_empty());
    assert_eq!(c.default.as_deref(), Some("local:volume1"));
    let e = storage_config(&[], "nope").expect_err("bad default");
    assert!(e.starts_with("--default-storage-host:"), "{e}");
    let e = storage_config(&["x:y".into()], "local:volume1").expect_err("no path");
    assert!(e.contains("NAME=PATH"), "{e}");
}

/// `baid ARGS` with the config file `toml`: the parse, or the first error.
fn with_file(args: &[&str], toml: &str) -> Result<Cli, String> {
    let mut argv: Vec<std::ffi::OsString> = vec!["baid".into()];
    argv.extend(args.iter().map(Into::into));
    let cmd = Cli::command();
    let matches = config_file::as_given(&cmd, &argv).map_err(|e| e.to_string())?;
    let extra = config_file::extra_args(&cmd, &matches, toml).map_err(|e| format!("{e:#}"))?;
    argv.extend(extra);
    Cli::try_parse_from(argv).map_err(|e| e.to_string())
}

fn up_of(cli: Cli) -> UpArgs {
    match cli.cmd {
        Cmd::Up(a) => *a,
        Cmd::Agent(_) | Cmd::Db(_) => unreachable!("baid up was parsed"),
    }
}

#[test]
fn a_config_file_sets_every_kind_of_flag() {
    let a = up_of(
        with_file(
            &["up"],
            r#"
            listen = "127.0.0.1:9100"
            [up]
            no-docker = true
            dummy-agents = 3
            storage-host = ["nfs:a=/mnt/a", "nfs:b=/mnt/b"]
            agent-lost-after = "20s"
            [agent]
            heartbeat = "5s"
            "#,
        )
        .expect("parses"),
    );
    assert_eq!(a.listen.port(), 9100);
    assert!(a.no_docker);
    assert_eq!(a.dummy_agents, 3);
    assert_eq!(a.storage_hosts, ["nfs:a=/mnt/a", "nfs:b=/mnt/b"]);
    assert_eq!(a.agent_lost_after, std::time::Duration::from_secs(20));
    // A switch set false stays off; a key of another command is left to it.
    let a = up_of(with_file(&["up"], "no-docker = false\nheartbeat = \"5s\"").expect("parses"));
    assert!(!a.no_docker);
}

#[test]
fn the_command_line_wins_over_the_file() {
    let a = up_of(
        with_file(
            &[
                "up",
                "--listen",
                "127.0.0.1:9200",
                "--storage-host",
                "x:y=/z",
            ],
            "[up]\nlisten = \"127.0.0.1:9100\"\nstorage-host = [\"nfs:a=/mnt/a\"]\n",
        )
        .expect("parses"),
    );
    assert_eq!(a.listen.port(), 9200);
    assert_eq!(a.storage_hosts, ["x:y=/z"]);
}

#[test]
fn a_bad_file_names_what_is_wrong() {
    let e = |toml: &str| with_file(&["up"], toml).err().expect("refused");
    assert!(
        e("[up]\nlisen = 1").contains("no flag --lisen"),
        "{}",
        e("[up]\nlisen = 1")
    );
    assert!(e("lisen = 1").contains("no command of baid has a flag --lisen"));
    assert!(e("[down]\nx = 1").contains("[down] is not a command"));
    assert!(e("[up]\nno-docker = \"yes\"").contains("true or false"));
    assert!(e("[up]\nlisten = [\"a\", \"b\"]").contains("one value, not a list"));
    assert!(e("[up]\napp-ports = \"9-8\"").contains("app-ports"));
    assert!(e("listen = ").contains("not TOML"));
}

#[test]
fn the_shipped_example_configs_are_valid() {
    let manager = include_str!("../../../dist/manager.toml");
    let a = up_of(with_file(&["up"], manager).expect("dist/manager.toml"));
    assert!(a.no_local_agent);
    assert_eq!(a.listen.port(), 8090);
    // The token comes from the environment file, not the config file.
    let agent = include_str!("../../../dist/agent.toml");
    let cli = with_file(&["agent", "--token", "t"], agent).expect("dist/agent.toml");
    assert!(matches!(cli.cmd, Cmd::Agent(_)));
    // Without the file, `--manager` is missing: the file gave it.
    assert!(with_file(&["agent", "--token", "t"], "").is_err());
}
