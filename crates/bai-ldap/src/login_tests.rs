use super::*;

#[test]
fn dns_compare_without_case_or_spaces() {
    assert!(same_dn(
        "CN=Vision, OU=Groups,DC=example,DC=org",
        "cn=vision,ou=groups,dc=example,dc=org"
    ));
    assert!(!same_dn("cn=vision,dc=x", "cn=vision2,dc=x"));
}

#[test]
fn nesting_helpers() {
    assert!(is_under("uid=a,OU=People,dc=x", "ou=people,dc=x"));
    assert!(is_under("ou=people,dc=x", "ou=people, dc=x"));
    assert!(!is_under("uid=a,ou=people2,dc=x", "ou=people,dc=x"));
    assert!(!is_under("uid=a,xou=people,dc=x", "ou=people,dc=x"));
    assert_eq!(
        members_filter(&["cn=a,dc=x".into(), "cn=b (c),dc=x".into()]),
        "(|(member=cn=a,dc=x)(uniqueMember=cn=a,dc=x)(member=cn=b \\28c\\29,dc=x)(uniqueMember=cn=b \\28c\\29,dc=x))"
    );
    let mut g = Groups::default();
    assert!(g.add("CN=A, dc=x"));
    assert!(!g.add("cn=a,dc=x"));
    assert!(g.has("cn=a,DC=x"));
}

#[test]
fn disabled_accounts() {
    let attrs = |k: &str, v: &str| HashMap::from([(k.to_string(), vec![v.to_string()])]);
    assert!(disabled(&attrs("useraccountcontrol", "514")));
    assert!(!disabled(&attrs("useraccountcontrol", "512")));
    // A lockout (bit 0x10) is not a disabled account.
    assert!(!disabled(&attrs("useraccountcontrol", "528")));
    assert!(disabled(&attrs("pwdaccountlockedtime", "000001010000Z")));
    assert!(!disabled(&attrs("pwdaccountlockedtime", "20260101120000Z")));
    assert!(disabled(&attrs("nsaccountlock", "TRUE")));
    assert!(!disabled(&HashMap::new()));
}

#[tokio::test]
async fn empty_passwords_never_reach_the_directory() {
    let c = LdapConfig::from_settings(crate::LdapSettings {
        // Nothing listens there; an empty password must be refused before connecting.
        url: Some("ldap://127.0.0.1:1".into()),
        user_base: Some("dc=x".into()),
        ..Default::default()
    })
    .unwrap()
    .unwrap();
    let d = Directory::new(c).unwrap();
    assert!(matches!(
        d.login("alice", "").await,
        Err(LoginError::Refused)
    ));
    assert!(matches!(
        d.login("  ", "pw").await,
        Err(LoginError::Refused)
    ));
    assert!(matches!(
        d.login("alice", "pw").await,
        Err(LoginError::Unavailable(_))
    ));
}
