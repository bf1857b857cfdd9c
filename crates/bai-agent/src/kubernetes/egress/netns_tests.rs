use super::*;

fn policy(mode: &str, allow: &[&str]) -> EgressPolicy {
    let allow: Vec<String> = allow.iter().map(|s| s.to_string()).collect();
    EgressPolicy::parse(mode, &allow).expect("policy")
}

fn ips(list: &[&str]) -> BTreeSet<IpAddr> {
    list.iter().map(|s| s.parse().expect("ip")).collect()
}

/// The rules of one chain (its `type` line left out).
fn chain<'a>(script: &'a str, name: &str) -> Vec<&'a str> {
    let start = format!("  chain {name} {{");
    script
        .lines()
        .skip_while(|l| *l != start)
        .skip(2)
        .take_while(|l| *l != "  }")
        .map(str::trim)
        .collect()
}

fn script_of(p: &EgressPolicy, peers: &[&str]) -> String {
    script(&PodRules {
        policy: p,
        node: &ips(&["172.17.0.1", "10.0.0.5"]),
        nodes: &ips(&["10.0.0.6", "fd00::6"]),
        peers: &ips(peers),
    })
}

#[test]
fn default_closes_the_node_metadata_and_the_cluster_and_keeps_dns_and_what_is_allowed() {
    let s = script_of(&policy("default", &["10.0.0.6:3128"]), &[]);
    assert!(s.starts_with("table inet bai {}\ndelete table inet bai\ntable inet bai {\n"));
    assert!(s.contains(
        "  set node4 {\n    type ipv4_addr\n    elements = { 10.0.0.5, 172.17.0.1 }\n  }"
    ));
    assert!(s.contains("  set nodes6 {\n    type ipv6_addr\n    elements = { fd00::6 }\n  }"));
    // An empty set has no elements line (nft refuses `elements = { }`).
    assert!(s.contains("  set peers4 {\n    type ipv4_addr\n  }"));
    assert_eq!(
        chain(&s, "output"),
        [
            "oifname \"lo\" accept",
            "ct state established,related accept",
            "meta l4proto { tcp, udp } th dport 53 accept",
            "ip daddr 10.0.0.6/32 meta l4proto { tcp, udp } th dport 3128 accept",
            "ip daddr @node4 jump refuse",
            "ip6 daddr @node6 jump refuse",
            "ip daddr 169.254.0.0/16 jump refuse",
            "ip6 daddr fe80::/10 jump refuse",
            "ip6 daddr fd00:ec2::254/128 jump refuse",
            "ip daddr 100.100.100.200/32 jump refuse",
            "ip daddr @nodes4 jump refuse",
            "ip6 daddr @nodes6 jump refuse",
        ]
    );
}

#[test]
fn closed_lets_out_only_the_sessions_pods_and_what_is_allowed() {
    let s = script_of(&policy("closed", &["192.0.2.0/24"]), &["10.1.0.7"]);
    assert!(s.contains("  set peers4 {\n    type ipv4_addr\n    elements = { 10.1.0.7 }\n  }"));
    assert_eq!(
        chain(&s, "output")[2..],
        [
            "ip daddr @peers4 accept",
            "ip6 daddr @peers6 accept",
            "ip daddr 192.0.2.0/24 accept",
            "jump refuse",
        ]
    );
}

#[test]
fn open_closes_nothing_outward_but_every_policy_isolates_the_pod() {
    for mode in ["open", "default", "closed"] {
        let s = script_of(&policy(mode, &[]), &[]);
        assert_eq!(
            chain(&s, "input"),
            [
                "iifname \"lo\" accept",
                "ct state established,related accept",
                "ip saddr @node4 accept",
                "ip6 saddr @node6 accept",
                "ip saddr @peers4 accept",
                "ip6 saddr @peers6 accept",
                "jump refuse",
            ],
            "{mode}"
        );
        assert!(s.contains("type filter hook input priority filter; policy accept;"));
    }
    let open = script_of(&policy("open", &[]), &[]);
    assert_eq!(
        chain(&open, "output"),
        [
            "oifname \"lo\" accept",
            "ct state established,related accept"
        ]
    );
}

#[test]
fn a_pool_pod_lets_nothing_out_and_only_its_node_in_and_a_claim_replaces_its_table() {
    let node = ips(&["172.17.0.1"]);
    let s = pool_script(&node);
    assert_eq!(
        chain(&s, "output"),
        [
            "oifname \"lo\" accept",
            "ct state established,related accept",
            "ip daddr @peers4 accept",
            "ip6 daddr @peers6 accept",
            "jump refuse",
        ]
    );
    assert!(s.contains("  set peers4 {\n    type ipv4_addr\n  }"), "{s}");
    assert!(s.contains("  set node4 {\n    type ipv4_addr\n    elements = { 172.17.0.1 }\n  }"));
    assert_eq!(chain(&s, "input").last(), Some(&"jump refuse"));
    // The session's table is the same table, made anew in the one transaction that removes
    // the pool's.
    let claimed = script_of(&policy("open", &[]), &[]);
    for t in [&s, &claimed] {
        assert!(t.starts_with("table inet bai {}\ndelete table inet bai\ntable inet bai {\n"));
    }
}

#[test]
fn peers_are_added_by_family_and_nothing_is_said_for_none() {
    assert_eq!(
        add_peers(&ips(&["10.1.0.7", "10.1.0.8", "fd00::7"])),
        "add element inet bai peers4 { 10.1.0.7, 10.1.0.8 }\nadd element inet bai peers6 { fd00::7 }\n"
    );
    assert_eq!(add_peers(&BTreeSet::new()), "");
}

#[test]
fn the_gateway_is_read_from_the_namespaces_route_table() {
    let route = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n\
                 eth0\t000011AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n\
                 eth0\t00000000\t010011AC\t0003\t0\t0\t0\t00000000\t0\t0\t0\n";
    assert_eq!(gateway(route), Some(Ipv4Addr::new(172, 17, 0, 1)));
    assert_eq!(gateway("Iface\tDestination\tGateway\n"), None);
    assert_eq!(gateway("h\neth0\t000011AC\t00000000\t0001\n"), None);
}

#[test]
fn a_containers_process_is_found_by_its_cgroup_under_every_runtime() {
    let id = container_id("docker://b71f874a9c0acca5a98154689c8ef5d50c08e38d").expect("id");
    assert_eq!(id, "b71f874a9c0acca5a98154689c8ef5d50c08e38d");
    assert_eq!(
        container_id("containerd://0123456789abcdef"),
        Some("0123456789abcdef")
    );
    assert_eq!(container_id("docker://"), None);
    assert_eq!(container_id("docker://../../x"), None);
    for cgroup in [
        "0::/docker/b71f874a9c0acca5a98154689c8ef5d50c08e38d\n",
        "4:memory:/kubepods/burstable/pod0a1b/b71f874a9c0acca5a98154689c8ef5d50c08e38d\n",
        "0::/kubepods.slice/kubepods-pod0a1b.slice/docker-b71f874a9c0acca5a98154689c8ef5d50c08e38d.scope\n",
    ] {
        assert!(in_container(cgroup, id), "{cgroup}");
    }
    assert!(!in_container("0::/docker/ffff\n", id));
    assert!(!in_container("0::/docker/ffff\n", ""));
}

#[test]
fn the_nodes_own_addresses_are_every_interfaces_but_loopback() {
    let json = r#"[{"ifname":"lo","addr_info":[{"family":"inet","local":"127.0.0.1"},{"family":"inet6","local":"::1"}]},
        {"ifname":"eth0","addr_info":[{"family":"inet","local":"192.0.2.10","prefixlen":24},{"family":"inet6","local":"fd00::10"}]},
        {"ifname":"docker0","addr_info":[{"family":"inet","local":"172.17.0.1"}]},
        {"ifname":"ifb0"}]"#;
    assert_eq!(
        host_addresses(json),
        ips(&["192.0.2.10", "fd00::10", "172.17.0.1"])
    );
    assert!(host_addresses("not json").is_empty());
}
