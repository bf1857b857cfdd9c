//! One module per command family.

mod events;
mod ps;
mod run;
mod session;

use crate::args::{AdminCmd, AdminSessionCmd, Cli, Cmd, SessionCmd};
use anyhow::Result;
use bai_client::Client;

pub async fn dispatch(cli: Cli) -> Result<i32> {
    if let Cmd::Version = cli.cmd {
        println!(
            "bai {} (API {})",
            env!("CARGO_PKG_VERSION"),
            bai_core::API_VERSION
        );
        return Ok(0);
    }
    let client = Client::from_env()?;
    match cli.cmd {
        Cmd::Run(a) => run::run(&client, a).await,
        Cmd::Start(a) => run::start(&client, a).await,
        Cmd::Session(SessionCmd::Create(a)) => run::start(&client, *a).await,
        Cmd::Ps(a) => ps::ps(&client, &a, None, false).await,
        Cmd::Admin(AdminCmd::Sessions(a))
        | Cmd::Admin(AdminCmd::Session(AdminSessionCmd::List(a))) => {
            ps::ps(&client, &a.ps, a.access_key.as_deref(), true).await
        }
        Cmd::Events(a) | Cmd::Session(SessionCmd::Events(a)) => events::events(&client, &a).await,
        Cmd::Logs(a) | Cmd::Session(SessionCmd::Logs(a)) => {
            session::logs(&client, &a.reference).await
        }
        Cmd::Rm(a) | Cmd::Session(SessionCmd::Destroy(a)) => session::rm(&client, &a).await,
        Cmd::Session(SessionCmd::Info(a)) => session::info(&client, &a).await,
        Cmd::Session(SessionCmd::Rename {
            reference,
            new_name,
        }) => session::rename(&client, &reference, &new_name).await,
        Cmd::Session(SessionCmd::History(a)) => session::history(&client, &a.reference).await,
        Cmd::Version => Ok(0),
    }
}
