//! Auto-scaling end to end: a rule on a service's requests scales it out under a real load
//! on its endpoint and back in after its cooldown, without failing requests meanwhile.

use super::{ba, model_folder, routes_with, service, wait_healthy};
use bai_e2e::Server;
use serde_json::json;

#[test]
fn a_rule_scales_out_under_load_and_back_in_after_its_cooldown() {
    let s = Server::start();
    model_folder(&s, "loadnb", |d| d);
    // The definition is checked as a service would read it; a plain folder is refused.
    let checked = s
        .api(
            &s.user,
            "POST",
            "/services/_/check-definition",
            Some(json!({"model": "loadnb"})),
        )
        .unwrap();
    bai_api::check::round_trip::<bai_api::services::DefinitionChecked>(&checked).unwrap();
    assert_eq!(checked["model"]["port"], 8000, "{checked:#}");
    ba(&s, &s.user, &["vfolder", "create", "plaindata"]).expect_ok();
    let refused = s
        .api(
            &s.user,
            "POST",
            "/services/_/check-definition",
            Some(json!({"model": "plaindata"})),
        )
        .unwrap_err();
    assert!(refused.1.contains("not a model folder"), "{refused:?}");

    s.bai(
        &s.user,
        &[
            "service", "create", "python", "loadnb", "1", "-t", "autosvc", "--public", "-r",
            "cpu=0.5", "-r", "mem=256m",
        ],
    )
    .expect_ok();
    let id = s
        .api(&s.user, "GET", "/services?name=autosvc", None)
        .unwrap()[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let v = wait_healthy(&s, &id, 1);
    let url = v["service_endpoint"].as_str().unwrap().to_string();

    // Backend.AI's two one-way rules, through the official client (lower-case enum values).
    for (cmp, threshold, step) in [("greater_than", "2", "1"), ("less_than", "0.5", "-1")] {
        ba(
            &s,
            &s.user,
            &[
                "service",
                "auto-scaling-rule",
                "create",
                "autosvc",
                "--metric-source",
                "inference_framework",
                "--metric-name",
                "inflight",
                "--threshold",
                threshold,
                "--comparator",
                cmp,
                &format!("--step-size={step}"),
                "--cooldown-seconds",
                "5",
                "--min-replicas",
                "1",
                "--max-replicas",
                "2",
            ],
        )
        .expect_ok();
    }
    let list = ba(
        &s,
        &s.user,
        &["service", "auto-scaling-rule", "list", "autosvc"],
    );
    list.expect_ok();
    assert!(
        list.stdout.to_uppercase().contains("GREATER_THAN"),
        "{list:#?}"
    );
    let rules = s
        .api(&s.user, "GET", &format!("/services/{id}/rules"), None)
        .unwrap();
    bai_api::check::round_trip::<bai_api::services::RuleList>(&rules).unwrap();
    assert_eq!(rules["rules"].as_array().map(Vec::len), Some(2));

    // A bounded loopback load: 8 clients of a 300 ms request, until the service has grown.
    let load = Load::start(&url);
    wait_healthy(&s, &id, 2);
    assert_eq!(
        load.stop(),
        0,
        "requests failed while the service scaled out"
    );

    // Idle again: the second rule takes it back to one replica after its cooldown.
    let v = s.wait_for(300, "the scale-in", || {
        let v = service(&s, &id);
        (v["replicas"] == 1).then_some(v)
    });
    assert_eq!(v["replicas"], 1);
    let decisions = s
        .api(&s.user, "GET", &format!("/services/{id}/decisions"), None)
        .unwrap();
    bai_api::check::round_trip::<bai_api::services::DecisionList>(&decisions).unwrap();
    let applied: Vec<(u64, u64)> = decisions["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["applied"] == true)
        .map(|d| {
            (
                d["from_replicas"].as_u64().unwrap(),
                d["to_replicas"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(applied, vec![(2, 1), (1, 2)], "newest first: {decisions:#}");
    let up = decisions["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["to_replicas"] == 2 && d["applied"] == true)
        .unwrap();
    assert!(
        up["value"].as_f64().unwrap() > 2.0 && up["note"].as_str().unwrap().contains("inflight"),
        "{up}"
    );

    // bai's CLI shows the decisions and the endpoint.
    let shown = s.bai(&s.user, &["service", "decisions", "autosvc"]);
    shown.expect_ok();
    assert!(
        shown.stdout.contains("1 → 2") && shown.stdout.contains("applied"),
        "{shown:#?}"
    );
    let ep = s.bai(&s.user, &["service", "get-endpoint", "autosvc"]);
    assert_eq!(ep.stdout.trim(), url, "{ep:#?}");

    // Rules can be turned off (REST, and bai's CLI); then scaling in by hand under load drops
    // no request (the leaving replica finishes what it answers before its session ends).
    let first_rule = rules["rules"][0]["id"].as_str().unwrap();
    let changed = s
        .api(
            &s.user,
            "PATCH",
            &format!("/services/{id}/rules/{first_rule}"),
            Some(json!({"enabled": false})),
        )
        .unwrap();
    assert_eq!(changed["enabled"], false);
    let second_rule = rules["rules"][1]["id"].as_str().unwrap();
    s.bai(
        &s.user,
        &["service", "rule", "disable", "autosvc", second_rule],
    )
    .expect_ok();
    let listed = s.bai(&s.user, &["service", "rule", "ls", "autosvc"]);
    listed.expect_ok();
    assert_eq!(listed.stdout.matches(" off ").count(), 2, "{listed:#?}");
    s.bai(&s.user, &["service", "scale", "autosvc", "2"])
        .expect_ok();
    wait_healthy(&s, &id, 2);
    let load = Load::start(&url);
    s.wait_for(60, "requests on both replicas", || {
        let v = service(&s, &id);
        routes_with(&v, "healthy")
            .iter()
            .all(|r| r["requests"].as_u64() > Some(0))
            .then_some(())
    });
    s.bai(&s.user, &["service", "scale", "autosvc", "1"])
        .expect_ok();
    wait_healthy(&s, &id, 1);
    assert_eq!(
        load.stop(),
        0,
        "requests failed while the service scaled in"
    );
    s.bai(&s.user, &["service", "rm", "autosvc"]).expect_ok();
}

/// A bounded loopback load on a service's endpoint: 8 clients of a 300 ms request (at most
/// 1,000 each), until stopped.
struct Load {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    clients: Vec<std::thread::JoinHandle<u32>>,
}

impl Load {
    fn start(url: &str) -> Load {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let clients = (0..8)
            .map(|_| {
                let (stop, url) = (stop.clone(), url.to_string());
                std::thread::spawn(move || {
                    let rt = tokio::runtime::Runtime::new().unwrap();
                    let c = reqwest::Client::new();
                    let mut failed = 0;
                    for _ in 0..1000 {
                        if stop.load(std::sync::atomic::Ordering::Relaxed) {
                            break;
                        }
                        let ok = rt.block_on(async {
                            c.get(format!("{url}/slow?ms=300"))
                                .send()
                                .await
                                .is_ok_and(|r| r.status() == 200)
                        });
                        if !ok {
                            failed += 1;
                        }
                    }
                    failed
                })
            })
            .collect();
        Load { stop, clients }
    }

    /// Stops the clients; the number of failed requests.
    fn stop(self) -> u32 {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.clients.into_iter().map(|t| t.join().unwrap()).sum()
    }
}
