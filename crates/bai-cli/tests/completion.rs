//! `bai completion bash|zsh|fish`: scripts generated from the command tree, printed without
//! any account in the environment.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use std::process::Command;

fn bai(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_bai"))
        .args(args)
        .env_remove("BACKEND_ENDPOINT")
        .env_remove("BACKEND_ACCESS_KEY")
        .env_remove("BACKEND_SECRET_KEY")
        .output()
        .expect("run bai")
}

#[test]
fn completion_scripts_know_the_commands() {
    let bash = bai(&["completion", "bash"]);
    assert!(bash.status.success(), "{bash:?}");
    let text = String::from_utf8_lossy(&bash.stdout);
    assert!(text.contains("complete -F _bai"), "{text}");
    for word in ["vfolder", "trash", "restore", "keypair", "completion"] {
        assert!(text.contains(word), "bash completion lacks {word}");
    }
    let zsh = bai(&["completion", "zsh"]);
    assert!(String::from_utf8_lossy(&zsh.stdout).contains("#compdef bai"));
    let fish = bai(&["completion", "fish"]);
    assert!(String::from_utf8_lossy(&fish.stdout).contains("complete -c bai"));
    let bad = bai(&["completion", "tcsh"]);
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
    assert!(String::from_utf8_lossy(&bad.stderr).contains("tcsh"));
}
