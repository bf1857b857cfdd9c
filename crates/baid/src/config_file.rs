//! `baid --config FILE`: a TOML file of flags. Every flag has a key, its long name without
//! the dashes (`listen = "0.0.0.0:8090"`, `no-docker = true`, `storage-host = ["a=/x"]`); keys
//! at the top apply to whichever command has that flag, keys under `[up]` or `[agent]` to
//! that command only. A flag given on the command line wins, then its environment
//! variable, then the file, then the default.
//!
//! The file is read into extra arguments for the flags that neither the command line nor
//! the environment set, and the whole line is parsed again: one parser, so a key's value is
//! checked exactly as the flag's would be.

use anyhow::{Context, Result, bail};
use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, Command};
use std::ffi::OsString;
use std::path::PathBuf;

/// The id of the `--config` argument.
pub const CONFIG: &str = "config";

/// `argv` with the arguments the config file (if `--config`/`BAI_CONFIG` names one) adds.
/// A command line that does not parse is handed back as it is, for the real parse to report.
pub fn with_config(cmd: &Command, argv: Vec<OsString>) -> Result<Vec<OsString>> {
    // Without a file, the line is left alone: no second parse. (The extra parse before a
    // Docker agent's start left about 7 MB more of heap in use at idle, measured.)
    let named = std::env::var_os("BAI_CONFIG").is_some_and(|v| !v.is_empty())
        || argv.iter().any(|a| {
            let a = a.to_string_lossy();
            a == "--config" || a.starts_with("--config=")
        });
    if !named {
        return Ok(argv);
    }
    let Ok(matches) = as_given(cmd, &argv) else {
        return Ok(argv);
    };
    let Some(path) = matches.get_one::<PathBuf>(CONFIG).cloned() else {
        return Ok(argv);
    };
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read the config file {}", path.display()))?;
    let extra = extra_args(cmd, &matches, &text)
        .with_context(|| format!("config file {}", path.display()))?;
    Ok(argv.into_iter().chain(extra).collect())
}

/// The command line parsed as far as it goes: a required flag may be missing (the file may
/// give it), and the real parse reports what is still wrong.
pub fn as_given(cmd: &Command, argv: &[OsString]) -> Result<ArgMatches, clap::Error> {
    cmd.clone().ignore_errors(true).try_get_matches_from(argv)
}

/// The arguments `text` adds to the command line that gave `matches`.
pub fn extra_args(cmd: &Command, matches: &ArgMatches, text: &str) -> Result<Vec<OsString>> {
    let table: toml::Table = text.parse().context("not TOML")?;
    let Some((sub_name, sub_matches)) = matches.subcommand() else {
        return Ok(Vec::new());
    };
    let Some(sub) = cmd.find_subcommand(sub_name) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (key, value) in &table {
        if let toml::Value::Table(section) = value {
            if cmd.find_subcommand(key).is_none() {
                bail!(
                    "[{key}] is not a command of baid; sections are {}",
                    sections(cmd)
                );
            }
            if key != sub_name {
                continue;
            }
            for (k, v) in section {
                let found = flag(cmd, sub, matches, sub_matches, k);
                let Some((arg, m)) = found else {
                    bail!("[{key}] {k}: baid {key} has no flag --{k}");
                };
                push(&mut out, arg, m, k, v).with_context(|| format!("[{key}] {k}"))?;
            }
            continue;
        }
        match flag(cmd, sub, matches, sub_matches, key) {
            Some((arg, m)) => push(&mut out, arg, m, key, value).with_context(|| key.clone())?,
            // A key of another command (one file for a manager and its agent) is left to it.
            None if cmd.get_subcommands().any(|c| {
                c.get_arguments()
                    .any(|a| a.get_long() == Some(key.as_str()))
            }) => {}
            None => bail!("{key}: no command of baid has a flag --{key}"),
        }
    }
    Ok(out)
}

fn sections(cmd: &Command) -> String {
    cmd.get_subcommands()
        .map(|c| format!("[{}]", c.get_name()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The flag named `long` of the subcommand (or a global one of baid), with the matches
/// that say where its value came from.
fn flag<'a>(
    cmd: &'a Command,
    sub: &'a Command,
    matches: &'a ArgMatches,
    sub_matches: &'a ArgMatches,
    long: &str,
) -> Option<(&'a clap::Arg, &'a ArgMatches)> {
    if long == CONFIG {
        return None;
    }
    sub.get_arguments()
        .find(|a| a.get_long() == Some(long))
        .map(|a| (a, sub_matches))
        .or_else(|| {
            cmd.get_arguments()
                .find(|a| a.get_long() == Some(long))
                .map(|a| (a, matches))
        })
}

/// Adds `--long=value` (once per item of a list; `--long` for a true switch) unless the
/// command line or the environment already set the flag.
fn push(
    out: &mut Vec<OsString>,
    arg: &clap::Arg,
    m: &ArgMatches,
    long: &str,
    value: &toml::Value,
) -> Result<()> {
    let id = arg.get_id().as_str();
    if matches!(
        m.value_source(id),
        Some(ValueSource::CommandLine | ValueSource::EnvVariable)
    ) {
        return Ok(());
    }
    if matches!(arg.get_action(), ArgAction::SetTrue) {
        match value {
            toml::Value::Boolean(true) => out.push(format!("--{long}").into()),
            toml::Value::Boolean(false) => {}
            _ => bail!("must be true or false"),
        }
        return Ok(());
    }
    let items: Vec<&toml::Value> = match value {
        toml::Value::Array(items) if matches!(arg.get_action(), ArgAction::Append) => {
            items.iter().collect()
        }
        toml::Value::Array(_) => bail!("takes one value, not a list"),
        v => vec![v],
    };
    for item in items {
        let text = match item {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(n) => n.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            other => bail!("{other} is not a text, a number or true/false"),
        };
        out.push(format!("--{long}={text}").into());
    }
    Ok(())
}
