//! Model serving end to end, on `baid up` with its Docker engine: a real model (a naive Bayes
//! text classifier trained by the replica's pre-start action from the folder's corpus,
//! `tests/fixtures/model-nb`) served by inference sessions behind one endpoint, driven by
//! the official client and `bai service`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

use bai_e2e::{Account, Run, Server, official_client};
use serde_json::{Value, json};
use std::collections::HashSet;

#[path = "serving/autoscale.rs"]
mod autoscale;

fn ba(s: &Server, account: &Account, args: &[&str]) -> Run {
    s.run_as(official_client(), account, args)
}

/// A model folder `name` holding the fixture, its model-definition.yaml changed by `edit`
/// (the files are written to the work dir and uploaded from there).
fn model_folder(s: &Server, name: &str, edit: impl Fn(String) -> String) {
    bai_e2e::model::copy_to(s.work.path(), edit).unwrap();
    ba(
        s,
        &s.user,
        &["vfolder", "create", name, "--usage-mode", "model"],
    )
    .expect_ok();
    let mut upload = vec!["vfolder", "upload", name];
    upload.extend(bai_e2e::model::FILES);
    ba(s, &s.user, &upload).expect_ok();
}

fn endpoint_id(out: &str) -> String {
    out.lines()
        .find(|l| l.starts_with("Endpoint Id"))
        .and_then(|l| l.split_whitespace().last())
        .unwrap_or_else(|| panic!("no endpoint id in {out:?}"))
        .to_string()
}

fn service(s: &Server, id: &str) -> Value {
    let v = s
        .api(&s.user, "GET", &format!("/services/{id}"), None)
        .unwrap_or_else(|e| panic!("GET /services/{id}: {e:?}"));
    bai_api::check::round_trip::<bai_api::services::ServiceInfo>(&v).unwrap();
    v
}

fn routes_with(v: &Value, status: &str) -> Vec<Value> {
    v["active_routes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["status"] == status)
        .cloned()
        .collect()
}

/// Waits until the service has `n` healthy routes and no other active ones.
fn wait_healthy(s: &Server, id: &str, n: usize) -> Value {
    s.wait_for(300, &format!("{n} healthy routes of {id}"), || {
        let v = service(s, id);
        let healthy = routes_with(&v, "healthy").len();
        let others = v["active_routes"]
            .as_array()
            .map_or(0, |a| a.len())
            .saturating_sub(healthy);
        (healthy == n && others == 0 && v["service_endpoint"].is_string()).then_some(v)
    })
}

fn http(method: &str, url: &str, token: Option<&str>, body: Option<Value>) -> (u16, Value) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let c = reqwest::Client::new();
        let mut r = c.request(reqwest::Method::from_bytes(method.as_bytes()).unwrap(), url);
        if let Some(t) = token {
            r = r.header("Authorization", format!("Bearer {t}"));
        }
        if let Some(b) = body {
            r = r.json(&b);
        }
        let resp = r.send().await.expect("endpoint answers");
        let code = resp.status().as_u16();
        let v = resp.json::<Value>().await.unwrap_or(Value::Null);
        (code, v)
    })
}

#[test]
fn a_model_service_answers_with_tokens_recovers_and_scales() {
    let s = Server::start();
    model_folder(&s, "topicnb", |d| d);

    // Refusals name what is wrong, and store nothing.
    ba(&s, &s.user, &["vfolder", "create", "plainfolder"]).expect_ok();
    ba(
        &s,
        &s.user,
        &[
            "service",
            "create",
            "python",
            "plainfolder",
            "1",
            "-t",
            "plain",
        ],
    )
    .expect_fail("not a model folder");
    let too_many = s
        .api(
            &s.user,
            "POST",
            "/services",
            Some(json!({"name": "toomany", "replicas": 99, "image": "python",
                        "config": {"model": "topicnb", "scaling_group": "default"}})),
        )
        .unwrap_err();
    assert_eq!(too_many.0, 400, "{too_many:?}");
    assert!(too_many.1.contains("replicas 99"), "{too_many:?}");

    // Two replicas through the official client: no URL until one is healthy.
    let r = ba(
        &s,
        &s.user,
        &[
            "service", "create", "python", "topicnb", "2", "-t", "topics", "-r", "cpu=0.5", "-r",
            "mem=256m",
        ],
    );
    r.expect_ok();
    let id = endpoint_id(&r.stdout);
    let first = service(&s, &id);
    assert_eq!(first["desired_session_count"], 2);
    assert_eq!(first["runtime_variant"], "custom");
    let v = wait_healthy(&s, &id, 2);
    let url = v["service_endpoint"].as_str().unwrap().to_string();

    // Each replica is an inference session with only the model folder mounted, read-only.
    let folder = s
        .api(&s.user, "GET", "/folders/_/id?name=topicnb", None)
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .replace('-', "");
    for route in routes_with(&v, "healthy") {
        let info = s.info(&s.user, route["session_id"].as_str().unwrap());
        assert_eq!(info["session_type"], "inference", "{info:#}");
        let mounts: Vec<String> = info["vfolder_mounts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap().replace('-', ""))
            .collect();
        assert_eq!(mounts, vec![folder.clone()], "{info:#}");
        assert!(
            info["idle_checks"].as_object().is_none_or(|o| o.is_empty()),
            "{info:#}"
        );
    }

    // A private endpoint: 401 without a token, the model's answers with one.
    let (code, body) = http("GET", &format!("{url}/health"), None, None);
    assert_eq!(code, 401, "{body}");
    let t = ba(
        &s,
        &s.user,
        &["service", "generate-token", "topics", "3600", "-q"],
    );
    t.expect_ok();
    let token = t.stdout.trim().lines().last().unwrap().to_string();
    assert_eq!(
        http("GET", &format!("{url}/health"), Some(&token), None).0,
        200
    );
    let (code, answer) = http(
        "POST",
        &format!("{url}/predict"),
        Some(&token),
        Some(json!({"text": "the truck engine and the car tires"})),
    );
    assert_eq!(
        (code, answer["label"].as_str()),
        (200, Some("vehicle")),
        "{answer}"
    );
    let (_, answer) = http(
        "POST",
        &format!("{url}/predict"),
        Some(&token),
        Some(json!({"text": "the cat and the dog sleep in the meadow"})),
    );
    assert_eq!(answer["label"], "animal", "{answer}");
    // Both replicas answer (fewest requests in flight, taking turns when equal).
    let replicas: HashSet<String> = (0..8)
        .map(|_| {
            http("GET", &format!("{url}/health"), Some(&token), None).1["replica"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    assert_eq!(replicas.len(), 2, "{replicas:?}");
    // A token of another service, or a forged one, is refused.
    let forged = format!("{}x", &token[..token.len() - 1]);
    assert_eq!(
        http("GET", &format!("{url}/health"), Some(&forged), None).0,
        401
    );

    // Kill one replica's container: the endpoint keeps answering, a new route replaces it.
    let before: HashSet<String> = routes_with(&v, "healthy")
        .iter()
        .map(|r| r["route_id"].as_str().unwrap().to_string())
        .collect();
    let victim = routes_with(&v, "healthy")[0]["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let container = s.info(&s.user, &victim)["container_id"]
        .as_str()
        .unwrap()
        .to_string();
    let killed = std::process::Command::new("docker")
        .args(["kill", &container])
        .output()
        .unwrap();
    assert!(killed.status.success(), "{killed:?}");
    for i in 0..20 {
        let (code, body) = http("GET", &format!("{url}/health"), Some(&token), None);
        assert_eq!(code, 200, "request {i} after the kill: {body}");
    }
    let v = s.wait_for(300, "a replacement route", || {
        let v = service(&s, &id);
        let healthy: HashSet<String> = routes_with(&v, "healthy")
            .iter()
            .map(|r| r["route_id"].as_str().unwrap().to_string())
            .collect();
        (healthy.len() == 2 && healthy != before).then_some(v)
    });
    assert_eq!(
        v["service_endpoint"].as_str(),
        Some(url.as_str()),
        "the URL outlives replicas"
    );

    // Scale 2 → 3 → 1 (bai's CLI and the official client).
    s.bai(&s.user, &["service", "scale", "topics", "3"])
        .expect_ok();
    let v = wait_healthy(&s, &id, 3);
    // A route with traffic ratio 0 takes no requests; taking it down (DELETE of the route:
    // the official client's `downscale-route` cannot be called, its command declares an
    // argument its function does not take) wants one replica fewer.
    let quiet = routes_with(&v, "healthy")[0].clone();
    let quiet_route = quiet["route_id"].as_str().unwrap();
    let quiet_name = s.info(&s.user, quiet["session_id"].as_str().unwrap())["name"]
        .as_str()
        .unwrap()
        .to_string();
    ba(
        &s,
        &s.user,
        &[
            "service",
            "update-traffic-ratio",
            "topics",
            quiet_route,
            "0",
        ],
    )
    .expect_ok();
    for _ in 0..9 {
        let (code, body) = http("GET", &format!("{url}/health"), Some(&token), None);
        assert_eq!(code, 200);
        assert!(
            !body["replica"].as_str().unwrap().ends_with(&quiet_name),
            "a route of ratio 0 answered: {body}"
        );
    }
    let gone = s
        .api(
            &s.user,
            "DELETE",
            &format!("/services/{id}/routings/{quiet_route}"),
            None,
        )
        .unwrap();
    assert_eq!(gone["success"], true);
    let v = wait_healthy(&s, &id, 2);
    assert_eq!(v["replicas"], 2);
    ba(&s, &s.user, &["service", "scale", "topics", "1"]).expect_ok();
    let v = wait_healthy(&s, &id, 1);
    assert_eq!(v["replicas"], 1);
    assert_eq!(
        http("GET", &format!("{url}/health"), Some(&token), None).0,
        200
    );
    let info = s.bai(&s.user, &["service", "info", "topics"]);
    info.expect_ok();
    assert!(
        info.stdout.contains("healthy") && info.stdout.contains(&url),
        "{info:#?}"
    );

    // A restart of the manager (killed, no clean shutdown) keeps the service, its replica and
    // its URL; tokens issued before still work.
    let s = Server::start_in(s.crash(), &[]);
    let v = wait_healthy(&s, &id, 1);
    assert_eq!(v["service_endpoint"].as_str(), Some(url.as_str()), "{v:#}");
    assert_eq!(
        http("GET", &format!("{url}/health"), Some(&token), None).0,
        200
    );

    // Administrators see every service (others only their own: the list is per owner).
    assert_eq!(
        s.api(&s.admin, "GET", "/services", None)
            .unwrap()
            .as_array()
            .map(|a| a.len()),
        Some(1),
        "administrators see every service"
    );

    // A public service needs no token.
    let r = ba(
        &s,
        &s.user,
        &[
            "service",
            "create",
            "python",
            "topicnb",
            "1",
            "-t",
            "topicspub",
            "--public",
            "-r",
            "cpu=0.5",
            "-r",
            "mem=256m",
        ],
    );
    r.expect_ok();
    let pub_id = endpoint_id(&r.stdout);
    let v = wait_healthy(&s, &pub_id, 1);
    let pub_url = v["service_endpoint"].as_str().unwrap();
    assert_ne!(pub_url, url);
    assert_eq!(http("GET", &format!("{pub_url}/health"), None, None).0, 200);

    // Removing them ends every replica.
    ba(&s, &s.user, &["service", "rm", "topics"]).expect_ok();
    s.bai(&s.user, &["service", "rm", "topicspub"]).expect_ok();
    s.wait_for(120, "the services to be destroyed", || {
        let list = s.api(&s.user, "GET", "/services", None).unwrap();
        let ps = s.bai(&s.user, &["ps"]);
        (list.as_array().is_some_and(|a| a.is_empty()) && !ps.stdout.contains("RUNNING"))
            .then_some(())
    });
}

#[test]
fn a_service_whose_health_check_never_passes_is_given_up_with_its_error() {
    let s = Server::start();
    model_folder(&s, "badhealth", |d| {
        d.replace("path: /health", "path: /nope")
            .replace("initial_delay: 30", "initial_delay: 1")
    });
    // A definition that does not parse is refused at create, naming the field.
    std::fs::write(
        s.work.path().join("model-definition.yaml"),
        "models:\n  - name: m\n    model_path: /models\n    service:\n      start_command: x\n",
    )
    .unwrap();
    ba(
        &s,
        &s.user,
        &["vfolder", "create", "noport", "--usage-mode", "model"],
    )
    .expect_ok();
    ba(
        &s,
        &s.user,
        &["vfolder", "upload", "noport", "model-definition.yaml"],
    )
    .expect_ok();
    s.bai(&s.user, &["service", "create", "python", "noport", "1"])
        .expect_fail("models[0].service: missing field `port`");

    s.bai(
        &s.user,
        &[
            "service",
            "create",
            "python",
            "badhealth",
            "1",
            "-t",
            "badsvc",
            "-r",
            "cpu=0.5",
            "-r",
            "mem=256m",
        ],
    )
    .expect_ok();
    let list = s
        .api(&s.user, "GET", "/services?name=badsvc", None)
        .unwrap();
    bai_api::check::round_trip::<Vec<bai_api::services::ServiceListItem>>(&list).unwrap();
    let id = list[0]["id"].as_str().unwrap().to_string();
    let errors = s.wait_for(600, "the service to give up", || {
        let e = s
            .api(&s.user, "GET", &format!("/services/{id}/errors"), None)
            .unwrap();
        (e["retries"] == 5).then_some(e)
    });
    bai_api::check::round_trip::<bai_api::services::ServiceErrors>(&errors).unwrap();
    let first = &errors["errors"][0]["error"]["repr"];
    assert!(
        first
            .as_str()
            .is_some_and(|t| t.contains("GET /nope answered 404")),
        "{errors:#}"
    );
    let v = service(&s, &id);
    assert_eq!(v["status"], "PROVISIONING", "{v:#}");
    // Its endpoint (assigned when a first replica ran) says at once that nothing serves.
    let url = v["service_endpoint"].as_str().expect("a replica ran");
    let token = s.bai(&s.user, &["service", "token", "badsvc", "1h"]);
    token.expect_ok();
    let (code, body) = http(
        "GET",
        &format!("{url}/health"),
        Some(token.stdout.trim()),
        None,
    );
    assert_eq!(code, 503, "{body}");
    let out = s.bai(&s.user, &["service", "errors", "badsvc"]);
    out.expect_ok();
    assert!(out.stdout.contains("answered 404"), "{out:#?}");
    // Every replica it tried has ended.
    s.wait_for(120, "its sessions to end", || {
        (!s.bai(&s.user, &["ps"]).stdout.contains("RUNNING")).then_some(())
    });
}
