//! `bai events`.

use crate::args::EventsArgs;
use anyhow::Result;
use bai_client::Client;

pub async fn events(client: &Client, a: &EventsArgs) -> Result<i32> {
    let mut code = 0;
    client
        .session_events(&a.reference, &a.scope, |ev| {
            println!("{} {}", ev.name, ev.data);
            match a.wait.as_deref() {
                Some("batch_session_result") if ev.name == "session_success" => false,
                Some("batch_session_result") if ev.name == "session_failure" => {
                    code = 1;
                    false
                }
                Some(w) => ev.name != w,
                None => true,
            }
        })
        .await?;
    Ok(code)
}
