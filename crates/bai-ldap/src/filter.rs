//! Search filters: the site's user filter template (`(uid={user})`) filled with the typed
//! name, escaped as RFC 4515 says, so no typed name can change the filter's shape.

use crate::ConfigError;

/// `value` escaped for an LDAP search filter (RFC 4515 §3): `*`, `(`, `)`, `\` and NUL
/// become `\2a`, `\28`, `\29`, `\5c` and `\00`; everything else (UTF-8 included) stays.
pub fn escape_filter_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '*' => out.push_str("\\2a"),
            '(' => out.push_str("\\28"),
            ')' => out.push_str("\\29"),
            '\\' => out.push_str("\\5c"),
            '\0' => out.push_str("\\00"),
            c => out.push(c),
        }
    }
    out
}

/// The placeholder a user filter template names the typed name with.
pub const USER_PLACEHOLDER: &str = "{user}";

/// A user filter template, e.g. `(uid={user})` or `(&(objectClass=person)(sAMAccountName={user}))`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserFilter(String);

impl UserFilter {
    /// Checks a template: one parenthesized filter, balanced, naming `{user}` at least once.
    pub fn parse(template: &str) -> Result<UserFilter, ConfigError> {
        let t = template.trim();
        let bad = |why: &str| ConfigError::Filter(format!("{t:?}: {why}"));
        if !t.contains(USER_PLACEHOLDER) {
            return Err(bad(
                "it must name the typed user as {user}, e.g. (uid={user})",
            ));
        }
        if !(t.starts_with('(') && t.ends_with(')')) {
            return Err(bad("a filter is written in parentheses, e.g. (uid={user})"));
        }
        let mut depth = 0i32;
        for (i, c) in t.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            if depth < 0 || (depth == 0 && i + c.len_utf8() < t.len()) {
                return Err(bad("its parentheses do not enclose one filter"));
            }
        }
        if depth != 0 {
            return Err(bad("its parentheses are not balanced"));
        }
        Ok(UserFilter(t.to_string()))
    }

    /// The template as given.
    pub fn template(&self) -> &str {
        &self.0
    }

    /// The filter that finds `name`: the template with `{user}` replaced by the escaped name;
    /// a name with an `@` is also looked up as an email in `email_attr`.
    pub fn fill(&self, name: &str, email_attr: &str) -> String {
        let value = escape_filter_value(name);
        let by_name = self.0.replace(USER_PLACEHOLDER, &value);
        if name.contains('@') {
            format!("(|{by_name}({email_attr}={value}))")
        } else {
            by_name
        }
    }
}

/// The filter that asks whether a group entry lists a member: by DN (`member`,
/// `uniqueMember`: groupOfNames, groupOfUniqueNames, AD) or by uid (`memberUid`: posixGroup).
pub fn membership_filter(user_dn: &str, uid: Option<&str>) -> String {
    let dn = escape_filter_value(user_dn);
    match uid {
        Some(uid) => format!(
            "(|(member={dn})(uniqueMember={dn})(memberUid={}))",
            escape_filter_value(uid)
        ),
        None => format!("(|(member={dn})(uniqueMember={dn}))"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_the_five_specials() {
        assert_eq!(escape_filter_value("alice"), "alice");
        assert_eq!(escape_filter_value("*"), "\\2a");
        assert_eq!(escape_filter_value("*)(uid=*"), "\\2a\\29\\28uid=\\2a");
        assert_eq!(escape_filter_value("a\\b"), "a\\5cb");
        assert_eq!(escape_filter_value("nul\0"), "nul\\00");
        assert_eq!(escape_filter_value("Jürgen (lab)"), "Jürgen \\28lab\\29");
        // Already escaped text is escaped again: the backslash is the user's.
        assert_eq!(escape_filter_value("\\2a"), "\\5c2a");
    }

    #[test]
    fn fills_the_template_without_changing_its_shape() {
        let f = UserFilter::parse("(uid={user})").unwrap();
        assert_eq!(f.fill("alice", "mail"), "(uid=alice)");
        assert_eq!(f.fill("*)(uid=*", "mail"), "(uid=\\2a\\29\\28uid=\\2a)");
        assert_eq!(
            f.fill("alice@example.org", "mail"),
            "(|(uid=alice@example.org)(mail=alice@example.org))"
        );
        assert_eq!(
            f.fill("*@x)(", "mail"),
            "(|(uid=\\2a@x\\29\\28)(mail=\\2a@x\\29\\28))"
        );
        let ad = UserFilter::parse("(&(objectClass=user)(sAMAccountName={user}))").unwrap();
        assert_eq!(
            ad.fill("bob", "mail"),
            "(&(objectClass=user)(sAMAccountName=bob))"
        );
    }

    #[test]
    fn refuses_templates_that_are_not_one_filter() {
        for bad in [
            "uid={user}",
            "(uid=alice)",
            "(uid={user}",
            "(uid={user}))",
            "(uid={user})(cn=x)",
            ")uid={user}(",
            "",
        ] {
            assert!(UserFilter::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            UserFilter::parse(" (uid={user}) ").unwrap().template(),
            "(uid={user})"
        );
    }

    #[test]
    fn membership_filters_escape_the_dn() {
        assert_eq!(
            membership_filter("uid=a,ou=people,dc=x", None),
            "(|(member=uid=a,ou=people,dc=x)(uniqueMember=uid=a,ou=people,dc=x))"
        );
        assert_eq!(
            membership_filter("cn=a\\2c b (x),dc=x", Some("a*")),
            "(|(member=cn=a\\5c2c b \\28x\\29,dc=x)(uniqueMember=cn=a\\5c2c b \\28x\\29,dc=x)(memberUid=a\\2a))"
        );
    }
}
