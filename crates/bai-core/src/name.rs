//! Session names: 4–64 characters of letters, digits, `-`, `_` and `.`, no spaces,
//! starting and ending with a letter, digit or `_` (seeds: "session naming rule").

use rand::Rng;
use serde::{Deserialize, Serialize};
use std::fmt;

pub const MIN_LEN: usize = 4;
pub const MAX_LEN: usize = 64;

/// A validated session name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SessionName(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("session name {0:?} is too short: use 4 to 64 characters")]
    TooShort(String),
    #[error("session name is too long ({0} characters): use 4 to 64 characters")]
    TooLong(usize),
    #[error(
        "session name {0:?} contains {1:?}: use only letters, digits, '-', '_' and '.', without spaces"
    )]
    BadChar(String, char),
    #[error("session name {0:?} must start and end with a letter, a digit or '_'")]
    BadEdge(String),
}

impl SessionName {
    pub fn parse(s: &str) -> Result<Self, NameError> {
        let len = s.chars().count();
        if len < MIN_LEN {
            return Err(NameError::TooShort(s.to_string()));
        }
        if len > MAX_LEN {
            return Err(NameError::TooLong(len));
        }
        if let Some(c) = s
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        {
            return Err(NameError::BadChar(s.to_string(), c));
        }
        let edge_ok = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        if !edge_ok(s.chars().next()) || !edge_ok(s.chars().last()) {
            return Err(NameError::BadEdge(s.to_string()));
        }
        Ok(SessionName(s.to_string()))
    }

    /// A random readable name such as `brave-otter-3f2a`.
    pub fn random() -> Self {
        const ADJ: &[&str] = &[
            "amber", "brave", "calm", "clever", "eager", "fancy", "gentle", "happy", "jolly",
            "keen", "lucid", "merry", "nimble", "proud", "quiet", "rapid", "sunny", "tidy",
            "vivid", "witty",
        ];
        const NOUN: &[&str] = &[
            "otter", "falcon", "badger", "heron", "lynx", "marten", "panda", "quokka", "raven",
            "salmon", "tapir", "walrus", "yak", "zebra", "koala", "gecko", "ibis", "moose", "newt",
            "orca",
        ];
        let mut rng = rand::rng();
        let a = ADJ[rng.random_range(0..ADJ.len())];
        let n = NOUN[rng.random_range(0..NOUN.len())];
        let tail: u16 = rng.random();
        SessionName(format!("{a}-{n}-{tail:04x}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for SessionName {
    type Error = NameError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        SessionName::parse(&s)
    }
}

impl From<SessionName> for String {
    fn from(n: SessionName) -> String {
        n.0
    }
}

impl fmt::Display for SessionName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_rules() {
        for ok in [
            "abcd",
            "my-session_1.2",
            "pysdk-6f39a1b61d",
            &"a".repeat(64),
        ] {
            assert!(SessionName::parse(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn rejects_what_the_seeds_forbid() {
        assert!(matches!(
            SessionName::parse("ab"),
            Err(NameError::TooShort(_))
        ));
        assert!(matches!(
            SessionName::parse(&"a".repeat(65)),
            Err(NameError::TooLong(65))
        ));
        assert!(matches!(
            SessionName::parse("my session"),
            Err(NameError::BadChar(_, ' '))
        ));
        assert!(matches!(
            SessionName::parse("a/b/c"),
            Err(NameError::BadChar(_, '/'))
        ));
        assert!(matches!(
            SessionName::parse("-abc"),
            Err(NameError::BadEdge(_))
        ));
        assert!(SessionName::parse("héllo").is_err());
    }

    #[test]
    fn random_names_are_valid_and_vary() {
        let a = SessionName::random();
        assert!(SessionName::parse(a.as_str()).is_ok());
        let distinct: std::collections::HashSet<_> =
            (0..50).map(|_| SessionName::random().0).collect();
        assert!(distinct.len() > 40);
    }
}
