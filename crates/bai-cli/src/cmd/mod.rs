//! One module per command family.

pub mod accounts;
pub mod agents;
pub mod apps;
pub mod create;
mod dotfile;
pub mod events;
mod exec;
mod fairshare;
pub mod images;
pub mod login;
mod operations;
mod ps;
pub mod resources;
pub mod run;
pub mod service;
mod service_rules;
pub mod session;
mod session_kernels;
mod storage;
mod template;
mod user_policy;
pub mod vfolder;
mod vfolder_share;

use crate::args::{AdminCmd, AdminSessionCmd, Cli, Cmd, SessionCmd};
use anyhow::Result;
use bai_client::Client;

/// Runs one command against `client`; returns the process exit code.
pub async fn dispatch(cli: Cli, client: &Client) -> Result<i32> {
    match cli.cmd {
        Cmd::Run(a) => run::run(client, &a).await,
        Cmd::Start(a) | Cmd::Session(SessionCmd::Create(a)) => create::start(client, &a).await,
        Cmd::Ps(a) | Cmd::Session(SessionCmd::List(a)) => ps::ps(client, &a, None, false).await,
        Cmd::Admin(AdminCmd::Sessions(a))
        | Cmd::Admin(AdminCmd::Session(AdminSessionCmd::List(a))) => {
            ps::ps(client, &a.ps, a.access_key.as_deref(), true).await
        }
        Cmd::Events(a) | Cmd::Session(SessionCmd::Events(a)) => events::events(client, &a).await,
        Cmd::Logs(a) | Cmd::Session(SessionCmd::Logs(a)) => {
            session::logs(client, &a.reference, a.kernel.as_deref()).await
        }
        Cmd::Rm(a) | Cmd::Session(SessionCmd::Destroy(a)) => session::rm(client, &a).await,
        Cmd::Session(SessionCmd::Info(a)) => session::info(client, &a).await,
        Cmd::Session(SessionCmd::Files { reference, path }) => {
            session::files(client, &reference, &path).await
        }
        Cmd::Session(SessionCmd::Stats(a)) => session::stats(client, &a).await,
        Cmd::Session(SessionCmd::Rename {
            reference,
            new_name,
        }) => session::rename(client, &reference, &new_name).await,
        Cmd::Session(SessionCmd::History(a)) => session::history(client, &a).await,
        Cmd::ResourceGroups => resources::list_groups(client, false).await,
        Cmd::Presets(a) => resources::presets(client, &a).await,
        Cmd::Agents => agents::agents(client).await,
        Cmd::Projects => resources::projects(client).await,
        Cmd::Vfolder(c) => vfolder::vfolder(client, &c).await,
        Cmd::Service(c) => service::service(client, &c).await,
        Cmd::Template(c) => template::template(client, &c).await,
        Cmd::Dotfile(c) => dotfile::dotfile(client, &c).await,
        Cmd::Session(SessionCmd::CreateFromTemplate(a)) => {
            template::from_template(client, &a).await
        }
        Cmd::Images(a) => images::list(client, &a, false).await,
        Cmd::Image(c) => images::image(client, &c).await,
        Cmd::Admin(AdminCmd::Image(c)) => images::admin_image(client, &c).await,
        Cmd::Session(SessionCmd::Commit { reference }) => images::commit(client, &reference).await,
        Cmd::Session(SessionCmd::ConvertToImage {
            reference,
            image_name,
        }) => images::convert(client, &reference, &image_name).await,
        Cmd::Admin(AdminCmd::Project(c)) => resources::admin_project(client, &c).await,
        Cmd::Admin(AdminCmd::AgentToken(c)) => agents::admin_token(client, &c).await,
        Cmd::Admin(AdminCmd::Agent(c)) => agents::admin_agent(client, &c).await,
        Cmd::Admin(AdminCmd::ResourceGroup(c)) => resources::admin_group(client, &c).await,
        Cmd::Admin(AdminCmd::Preset(c)) => resources::admin_preset(client, &c).await,
        Cmd::Admin(AdminCmd::Policy(c)) => resources::admin_policy(client, &c).await,
        Cmd::Admin(AdminCmd::UserPolicy(c)) => user_policy::admin(client, &c).await,
        Cmd::Admin(AdminCmd::User(c)) => accounts::user(client, &c).await,
        Cmd::Admin(AdminCmd::Domain(c)) => accounts::domain(client, &c).await,
        Cmd::Admin(AdminCmd::Storage(c)) => storage::admin_storage(client, &c).await,
        Cmd::Admin(AdminCmd::Fairshare(a)) => fairshare::admin(client, &a).await,
        Cmd::Admin(AdminCmd::Audit(a)) => operations::audit(client, &a).await,
        Cmd::Admin(AdminCmd::Keypair(c)) => accounts::keypair(client, &c).await,
        Cmd::App(a) => apps::app(client, &a).await,
        Cmd::Open(a) => apps::open(client, &a).await,
        Cmd::Apps(a) | Cmd::Session(SessionCmd::Apps(a)) => apps::apps(client, &a.reference).await,
        Cmd::Download(a) | Cmd::Session(SessionCmd::Download(a)) => {
            apps::download(client, &a).await
        }
        Cmd::Upload(a) | Cmd::Session(SessionCmd::Upload(a)) => apps::upload(client, &a).await,
        Cmd::Completion { shell } => Ok(completion(shell)),
        Cmd::Login => login::login(client).await,
        Cmd::Version => {
            println!(
                "bai {} (Backend.AI API {})",
                env!("CARGO_PKG_VERSION"),
                bai_core::API_VERSION
            );
            Ok(0)
        }
    }
}

/// Prints the completion script of `bai` for `shell`.
pub fn completion(shell: clap_complete::Shell) -> i32 {
    use clap::CommandFactory;
    let mut cmd = crate::args::Cli::command();
    clap_complete::generate(shell, &mut cmd, "bai", &mut std::io::stdout());
    0
}

/// The text of `file`, or of standard input when there is none or it is `-`; `what` names it
/// in errors.
pub(crate) fn file_or_stdin(file: Option<&std::path::Path>, what: &str) -> anyhow::Result<String> {
    use anyhow::Context;
    use std::io::Read;
    match file {
        Some(p) if p != std::path::Path::new("-") => std::fs::read_to_string(p)
            .with_context(|| format!("cannot read {what} from {}", p.display())),
        _ => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .with_context(|| format!("cannot read {what} from standard input"))?;
            Ok(s)
        }
    }
}
