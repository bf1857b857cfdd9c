//! `bai service rule …` and `bai service decisions`.

use crate::args::{RuleCmd, RuleCreateArgs};
use crate::output::table;
use anyhow::Result;
use bai_api::services::{Comparator, MetricSource, RuleFields, RuleMode};
use bai_api::sessions::NumberOrText;
use bai_client::Client;

/// The fields of a new rule: what is given, nothing sent for what is not.
fn create_fields(a: &RuleCreateArgs) -> RuleFields {
    RuleFields {
        mode: Some(a.mode),
        metric_source: Some(a.metric_source),
        metric_name: Some(a.metric_name.clone()),
        threshold: a.threshold.clone().map(|t| Some(NumberOrText::Text(t))),
        comparator: a.comparator.map(Some),
        step_size: a.step_size.map(Some),
        target: a.target.map(Some),
        scale_up_delay_seconds: a.scale_up_delay_seconds.map(Some),
        scale_down_delay_seconds: a.scale_down_delay_seconds.map(Some),
        cooldown_seconds: Some(Some(a.cooldown_seconds)),
        min_replicas: a.min_replicas.map(Some),
        max_replicas: a.max_replicas.map(Some),
        priority: Some(Some(a.priority)),
        enabled: Some(true),
    }
}

pub async fn rule(client: &Client, c: &RuleCmd) -> Result<i32> {
    match c {
        RuleCmd::Create(a) => {
            let id = client.service_id(&a.service).await?;
            let r = client.add_service_rule(&id, &create_fields(a)).await?;
            println!("rule {} added to {}", r.id, a.service);
        }
        RuleCmd::Ls(r) => {
            let id = client.service_id(&r.service).await?;
            let rows: Vec<Vec<String>> = client
                .service_rules(&id)
                .await?
                .rules
                .into_iter()
                .map(|r| {
                    let when = match r.mode {
                        RuleMode::Threshold => format!(
                            "{} {} {} → step {}",
                            r.metric_name,
                            r.comparator.map_or("?", Comparator::symbol),
                            r.threshold.unwrap_or_default(),
                            r.step_size.unwrap_or(0)
                        ),
                        RuleMode::Target => format!(
                            "{} target {} per replica",
                            r.metric_name,
                            r.target.unwrap_or(0.0)
                        ),
                    };
                    vec![
                        r.id.to_string(),
                        match r.metric_source {
                            MetricSource::Kernel => "KERNEL",
                            MetricSource::InferenceFramework => "INFERENCE_FRAMEWORK",
                        }
                        .to_string(),
                        when,
                        format!(
                            "{}..{}",
                            r.min_replicas.map_or("-".into(), |v| v.to_string()),
                            r.max_replicas.map_or("-".into(), |v| v.to_string())
                        ),
                        format!("{} s", r.cooldown_seconds),
                        r.priority.to_string(),
                        if r.enabled { "on" } else { "off" }.into(),
                        r.last_triggered_at.unwrap_or_else(|| "-".into()),
                    ]
                })
                .collect();
            table(
                &[
                    "Rule", "Source", "When", "Replicas", "Cooldown", "Priority", "Enabled", "Last",
                ],
                &rows,
            );
        }
        RuleCmd::Enable(r) | RuleCmd::Disable(r) => {
            let id = client.service_id(&r.service).await?;
            let on = matches!(c, RuleCmd::Enable(_));
            let f = RuleFields {
                enabled: Some(on),
                ..Default::default()
            };
            client.change_service_rule(&id, &r.rule, &f).await?;
            println!(
                "rule {} {}",
                r.rule,
                if on { "enabled" } else { "disabled" }
            );
        }
        RuleCmd::Rm(r) => {
            let id = client.service_id(&r.service).await?;
            client.remove_service_rule(&id, &r.rule).await?;
            println!("rule {} removed", r.rule);
        }
    }
    Ok(0)
}

pub async fn decisions(client: &Client, service: &str) -> Result<i32> {
    let id = client.service_id(service).await?;
    let rows: Vec<Vec<String>> = client
        .service_decisions(&id)
        .await?
        .decisions
        .into_iter()
        .map(|d| {
            vec![
                d.at,
                d.rule_id,
                d.value.map_or("-".into(), |v| format!("{v:.2}")),
                format!("{} → {}", d.from_replicas, d.to_replicas),
                if d.applied { "applied" } else { "not applied" }.into(),
                d.note,
            ]
        })
        .collect();
    table(&["At", "Rule", "Value", "Replicas", "", "Why"], &rows);
    Ok(0)
}
