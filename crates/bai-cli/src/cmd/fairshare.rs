//! `bai admin fairshare [--group G] [--set LEVEL:NAME=N]`: each resource group's share tree
//! with shares, decayed usage and fair-share factor (`GET /admin/fairshare`), as Slurm's
//! `sshare` prints it.

use crate::args::AdminFairshareArgs;
use anyhow::{Result, anyhow};
use bai_api::resources::{FairShareChange, FairShareGroup, FairShareReport};
use bai_client::Client;

/// `LEVEL:NAME=N` (N `default`: reset).
pub fn parse_set(text: &str) -> Result<FairShareChange> {
    let (who, n) = text
        .rsplit_once('=')
        .ok_or_else(|| anyhow!("--set {text:?}: use LEVEL:NAME=N"))?;
    let (level, name) = who.split_once(':').ok_or_else(|| {
        anyhow!("--set {text:?}: use LEVEL:NAME=N (LEVEL: domain, project or user)")
    })?;
    let shares = match n.trim() {
        "default" => None,
        v => Some(
            v.parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s >= 0.0)
                .ok_or_else(|| {
                    anyhow!("--set {text:?}: shares must be a number >= 0 or default")
                })?,
        ),
    };
    Ok(FairShareChange {
        level: level.trim().to_string(),
        name: name.trim().to_string(),
        shares,
    })
}

/// One group's tree as lines of text.
pub fn render(g: &FairShareGroup) -> Vec<String> {
    let scheduler = serde_json::to_value(g.scheduler)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let mut out = vec![format!(
        "resource group {} (scheduler {scheduler}, half-life {}s, weights {})",
        g.resource_group, g.half_life_secs, g.weights
    )];
    out.push(format!(
        "{:<32} {:>8} {:>11} {:>14} {:>10} {:>10} {:>9}",
        "ACCOUNT", "SHARES", "NORM_SHARES", "USAGE", "NORM_USAGE", "EFF_USAGE", "FAIRSHARE"
    ));
    if g.nodes.is_empty() {
        out.push("(no usage recorded)".into());
    }
    for n in &g.nodes {
        let name = format!(
            "{}{}",
            "  ".repeat(n.depth.saturating_sub(1) as usize),
            n.name
        );
        out.push(format!(
            "{name:<32} {:>8} {:>11.6} {:>14.1} {:>10.6} {:>10.6} {:>9.6}",
            n.shares, n.norm_shares, n.usage, n.norm_usage, n.effective_usage, n.factor
        ));
    }
    out
}

pub async fn admin(client: &Client, a: &AdminFairshareArgs) -> Result<i32> {
    for s in &a.set {
        client.set_fairshare_shares(&parse_set(s)?).await?;
    }
    let report: FairShareReport = client.fairshare(a.group.as_deref()).await?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(0);
    }
    for (i, g) in report.groups.iter().enumerate() {
        if i > 0 {
            println!();
        }
        for line in render(g) {
            println!("{line}");
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bai_api::resources::{FairShareNode, Scheduler};

    #[test]
    fn shares_are_set_as_level_name_number() {
        let c = parse_set("user:a@x.com=2.5").unwrap();
        assert_eq!(
            (c.level.as_str(), c.name.as_str(), c.shares),
            ("user", "a@x.com", Some(2.5))
        );
        assert_eq!(parse_set("project:p=default").unwrap().shares, None);
        assert!(parse_set("project=2").is_err());
        assert!(parse_set("project:p=-1").is_err());
    }

    #[test]
    fn the_tree_is_indented_by_depth() {
        let node = |level: &str, name: &str, depth, factor| FairShareNode {
            level: level.into(),
            name: name.into(),
            depth,
            shares: 1.0,
            norm_shares: 1.0,
            usage: 10.0,
            norm_usage: 1.0,
            effective_usage: 1.0,
            factor,
        };
        let g = FairShareGroup {
            resource_group: "gpu".into(),
            scheduler: Scheduler::Fairshare,
            half_life_secs: 60,
            weights: "cpu=1".into(),
            nodes: vec![
                node("domain", "default", 1, 0.5),
                node("project", "default", 2, 0.5),
                node("user", "heavy@x", 3, 0.25),
            ],
        };
        let lines = render(&g);
        assert!(lines[0].contains("scheduler fairshare"), "{}", lines[0]);
        assert!(lines[4].starts_with("    heavy@x "), "{}", lines[4]);
        assert!(lines[4].trim_end().ends_with("0.250000"), "{}", lines[4]);
    }
}
