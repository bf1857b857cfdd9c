//! `bai service …`.

use crate::args::{ServiceCmd, ServiceCreateArgs, resources};
use crate::output::table;
use anyhow::Result;
use bai_api::services::{NewService, ServiceConfig, ServiceInfo};
use bai_api::sessions::NumberOrText;
use bai_client::Client;

pub async fn service(client: &Client, c: &ServiceCmd) -> Result<i32> {
    match c {
        ServiceCmd::Create(a) => create(client, a).await,
        ServiceCmd::Ls => {
            let rows: Vec<Vec<String>> = client
                .services()
                .await?
                .into_iter()
                .map(|s| {
                    vec![
                        s.id,
                        s.name,
                        format!("{:?}", s.status).to_lowercase(),
                        format!("{}/{}", s.healthy_route_count, s.replicas),
                        s.service_endpoint.unwrap_or_else(|| "-".into()),
                        if s.is_public { "public" } else { "token" }.into(),
                    ]
                })
                .collect();
            table(
                &["Id", "Name", "Status", "Healthy/wanted", "URL", "Access"],
                &rows,
            );
            Ok(0)
        }
        ServiceCmd::Info(r) => {
            let id = client.service_id(&r.service).await?;
            print_info(&client.service(&id).await?);
            Ok(0)
        }
        ServiceCmd::Scale(a) => {
            let id = client.service_id(&a.service).await?;
            let s = client.scale_service(&id, a.replicas).await?;
            println!(
                "scaling to {} replicas ({} routes now)",
                s.target_count, s.current_route_count
            );
            Ok(0)
        }
        ServiceCmd::Token(a) => {
            let id = client.service_id(&a.service).await?;
            println!("{}", client.service_token(&id, &a.duration).await?.token);
            Ok(0)
        }
        ServiceCmd::Errors(r) => {
            let id = client.service_id(&r.service).await?;
            let e = client.service_errors(&id).await?;
            println!("failed starts since it was last healthy: {}", e.retries);
            for x in e.errors {
                println!(
                    "route {} (session {}): {}",
                    x.route_id,
                    x.session_id.unwrap_or_else(|| "-".into()),
                    x.error["repr"].as_str().unwrap_or("unknown error")
                );
            }
            Ok(0)
        }
        ServiceCmd::GetEndpoint(r) => {
            let id = client.service_id(&r.service).await?;
            match client.service(&id).await?.service_endpoint {
                Some(url) => println!("{url}"),
                None => anyhow::bail!(
                    "service {} has no URL yet: no replica has started",
                    r.service
                ),
            }
            Ok(0)
        }
        ServiceCmd::Rule(c) => super::service_rules::rule(client, c).await,
        ServiceCmd::Decisions(r) => super::service_rules::decisions(client, &r.service).await,
        ServiceCmd::Rm(r) => {
            let id = client.service_id(&r.service).await?;
            client.remove_service(&id).await?;
            println!("service {id} is being removed");
            Ok(0)
        }
    }
}

/// `-r` values as the texts a service's config carries.
fn as_texts(
    m: std::collections::BTreeMap<String, String>,
) -> std::collections::BTreeMap<String, NumberOrText> {
    m.into_iter()
        .map(|(k, v)| (k, NumberOrText::Text(v)))
        .collect()
}

async fn create(client: &Client, a: &ServiceCreateArgs) -> Result<i32> {
    let (res, opts) = resources(&a.resources);
    let environ = a.env.iter().cloned().collect();
    let body = NewService {
        name: a.name.clone(),
        replicas: a.replicas,
        image: a.image.clone(),
        arch: None,
        group: a.project.clone(),
        domain: None,
        cluster_size: None,
        cluster_mode: None,
        tag: None,
        startup_command: None,
        bootstrap_script: None,
        callback_url: None,
        owner_access_key: None,
        open_to_public: Some(a.public),
        runtime_variant: None,
        config: ServiceConfig {
            model: a.model.clone(),
            model_version: None,
            model_mount_destination: None,
            vfolder_subpath: None,
            model_definition_path: a.model_definition_path.clone(),
            extra_mounts: None,
            environ: Some(environ),
            scaling_group: a.scaling_group.clone(),
            resources: Some(as_texts(res)),
            resource_opts: Some(as_texts(opts)),
        },
    };
    let s = client.create_service(&body).await?;
    println!(
        "service {} ({}) created with {} replicas; its URL comes once one runs (bai service info {})",
        s.name, s.endpoint_id, s.replicas, s.name
    );
    Ok(0)
}

fn print_info(s: &ServiceInfo) {
    println!("service   {} ({})", s.name, s.endpoint_id);
    println!("status    {:?}", s.status);
    println!(
        "url       {}{}",
        s.service_endpoint
            .as_deref()
            .unwrap_or("(not yet: no replica has started)"),
        if s.is_public {
            " (public)"
        } else {
            " (token needed)"
        }
    );
    println!("replicas  {} wanted", s.replicas);
    if s.retries > 0 {
        println!(
            "failed    {} starts (bai service errors {})",
            s.retries, s.name
        );
    }
    let rows: Vec<Vec<String>> = s
        .active_routes
        .iter()
        .map(|r| {
            vec![
                r.route_id.clone(),
                r.session_id.clone().unwrap_or_else(|| "-".into()),
                format!("{:?}", r.status).to_lowercase(),
                format!("{}", r.traffic_ratio),
                r.requests.to_string(),
                r.errors.to_string(),
                format!("{:.2}", r.mean_latency_ms),
            ]
        })
        .collect();
    table(
        &[
            "Route", "Session", "Status", "Ratio", "Requests", "Errors", "Mean ms",
        ],
        &rows,
    );
}
