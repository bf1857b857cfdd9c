use super::*;
use serde_json::{Value, json};

fn policy(mode: &str, allow: &[&str]) -> EgressPolicy {
    let allow: Vec<String> = allow.iter().map(|s| s.to_string()).collect();
    EgressPolicy::parse(mode, &allow).expect("policy")
}

fn target() -> Target<'static> {
    Target {
        namespace: "bai",
        labels: BTreeMap::from([("ai.bai.kernel".to_string(), Uuid::from_u128(1).to_string())]),
        kernel: Uuid::from_u128(1),
        session: Uuid::from_u128(2),
        node: vec![
            "10.0.0.7".parse().expect("ip"),
            "fd00::7".parse().expect("ip"),
        ],
    }
}

/// The object as the API server is sent it.
fn wire(p: &EgressPolicy, nodes: &[&str]) -> Value {
    let nodes: BTreeSet<IpAddr> = nodes.iter().map(|n| n.parse().expect("ip")).collect();
    let np = network_policy(&target(), "bai-k-1", p, &nodes);
    serde_json::to_value(&np).expect("json")
}

fn session_peers() -> Value {
    json!({"to": [{"podSelector": {"matchLabels": {"ai.bai.session": Uuid::from_u128(2).to_string()}}}]})
}

/// Who may dial every kernel: its session's pods, then its own node.
fn ingress() -> Value {
    json!([
        {"from": [{"podSelector": {"matchLabels": {"ai.bai.session": Uuid::from_u128(2).to_string()}}}]},
        {"from": [{"ipBlock": {"cidr": "10.0.0.7/32"}}, {"ipBlock": {"cidr": "fd00::7/128"}}]}
    ])
}

#[test]
fn default_closes_the_nodes_and_metadata_and_keeps_dns_and_peers() {
    let w = wire(
        &policy("default", &[]),
        &["10.213.1.1", "fd00::9", "10.0.0.7"],
    );
    assert_eq!(w["apiVersion"], "networking.k8s.io/v1");
    assert_eq!(w["kind"], "NetworkPolicy");
    assert_eq!(w["metadata"]["name"], "bai-k-1");
    assert_eq!(w["metadata"]["namespace"], "bai");
    let spec = &w["spec"];
    assert_eq!(
        spec["podSelector"],
        json!({"matchLabels": {"ai.bai.kernel": Uuid::from_u128(1).to_string()}})
    );
    assert_eq!(spec["policyTypes"], json!(["Ingress", "Egress"]));
    assert_eq!(spec["ingress"], ingress(), "{w:#}");
    assert_eq!(
        spec["egress"],
        json!([
            {"to": [
                {"ipBlock": {"cidr": "0.0.0.0/0", "except":
                    ["10.0.0.7/32", "10.213.1.1/32", "100.100.100.200/32", "169.254.0.0/16"]}},
                {"ipBlock": {"cidr": "::/0", "except":
                    ["fd00::9/128", "fd00:ec2::254/128", "fe80::/10"]}}
            ]},
            {"ports": [{"port": 53, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]},
            session_peers()
        ]),
        "{w:#}"
    );
}

#[test]
fn closed_allows_only_the_session_and_its_list_with_single_ports() {
    let w = wire(
        &policy(
            "closed",
            &["10.0.0.0/8:3128", "[fd00::1]:443", "192.168.5.0/24"],
        ),
        &["10.213.1.1"],
    );
    assert_eq!(
        w["spec"]["egress"],
        json!([
            session_peers(),
            {"to": [{"ipBlock": {"cidr": "10.0.0.0/8"}}],
             "ports": [{"port": 3128, "protocol": "TCP"}, {"port": 3128, "protocol": "UDP"}]},
            {"to": [{"ipBlock": {"cidr": "192.168.5.0/24"}}]},
            {"to": [{"ipBlock": {"cidr": "fd00::1/128"}}],
             "ports": [{"port": 443, "protocol": "TCP"}, {"port": 443, "protocol": "UDP"}]}
        ]),
        "{w:#}"
    );
    // No DNS under closed unless listed; no node list needed.
    assert!(!w.to_string().contains("\"port\":53"), "{w}");
    assert!(!w.to_string().contains("10.213.1.1"), "{w}");
}

/// Only fields a 1.20 API server knows: it drops the others silently, so a port range sent as
/// `endPort` would open every port there.
#[test]
fn no_field_newer_than_kubernetes_1_20_is_written() {
    for p in [
        policy("default", &["10.1.0.0/16:8080", "10.2.0.1"]),
        policy("closed", &["[fd00::/8]:443", "0.0.0.0/0:53"]),
    ] {
        let text = wire(&p, &["10.0.0.1"]).to_string();
        assert!(!text.contains("endPort"), "{text}");
        assert!(!text.contains("namespaceSelector"), "{text}");
    }
}

#[test]
fn an_allowed_address_inside_a_closed_block_is_its_own_rule() {
    // Rules add up: the metadata service allowed under default is opened by its own rule,
    // the except of the first rule unchanged.
    let w = wire(&policy("default", &["169.254.169.254:80"]), &[]);
    let rules = w["spec"]["egress"].as_array().expect("rules");
    assert_eq!(rules.len(), 4, "{w:#}");
    assert_eq!(
        rules[3],
        json!({"to": [{"ipBlock": {"cidr": "169.254.169.254/32"}}],
               "ports": [{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "UDP"}]})
    );
    assert_eq!(
        rules[0]["to"][0]["ipBlock"]["except"],
        json!(["100.100.100.200/32", "169.254.0.0/16"])
    );
}

#[test]
fn open_keeps_only_the_ingress_isolation() {
    let w = wire(&policy("open", &[]), &["10.213.1.1"]);
    assert_eq!(w["spec"]["policyTypes"], json!(["Ingress"]), "{w:#}");
    assert_eq!(w["spec"]["ingress"], ingress(), "{w:#}");
    assert!(w["spec"].get("egress").is_none(), "{w:#}");
    // Closed too keeps the same isolation beside its egress rules.
    let c = wire(&policy("closed", &[]), &[]);
    assert_eq!(c["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
    assert_eq!(c["spec"]["ingress"], ingress(), "{c:#}");
}

#[test]
fn a_node_without_addresses_lets_in_only_the_session() {
    let mut t = target();
    t.node.clear();
    let np = network_policy(&t, "x", &policy("open", &[]), &BTreeSet::new());
    let w = serde_json::to_value(&np).expect("json");
    assert_eq!(w["spec"]["ingress"], json!([ingress()[0].clone()]), "{w:#}");
}

#[test]
fn owners_and_node_addresses_read_right() {
    let o = serde_json::to_value(owned_by("bai-k-1", "u-1")).expect("json");
    assert_eq!(
        o,
        json!({"apiVersion": "v1", "kind": "Pod", "name": "bai-k-1", "uid": "u-1"})
    );
    let node: Node = serde_json::from_value(json!({"metadata": {"name": "n"}, "status": {
        "addresses": [{"type": "InternalIP", "address": "10.0.0.5"},
                      {"type": "Hostname", "address": "n"},
                      {"type": "ExternalIP", "address": "2001:db8::5"}]}}))
    .expect("node");
    assert_eq!(
        node_addresses(&node),
        [
            "10.0.0.5".parse::<IpAddr>().expect("ip"),
            "2001:db8::5".parse().expect("ip")
        ]
    );
    assert!(node_addresses(&Node::default()).is_empty());
}
