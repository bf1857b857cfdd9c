//! A number or its text, as clients send resource amounts and durations (`"2"`, `2`,
//! `"4g"`, `"30m"`, `1800`), read by the kind of JSON value so that a value of neither kind is
//! refused with what was expected (a derived untagged enum only says "data did not match any
//! variant"). A service keeps its replicas' resources in this form.

use serde::Serialize;
use serde::de::{self, Deserialize, Deserializer, Visitor};
use std::collections::BTreeMap;
use std::fmt;

/// A number or its text: clients send resource amounts and durations either way
/// (`"2"`, `2`, `"4g"`, `"30m"`, `1800`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum NumberOrText {
    /// A number (cores, bytes, seconds).
    Number(serde_json::Number),
    /// A text: a number, or a size or duration with its unit (`512m`, `1g`, `90s`, `1h30m`).
    Text(String),
}

struct NumberOrTextVisitor;

impl<'de> Visitor<'de> for NumberOrTextVisitor {
    type Value = NumberOrText;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number, or a text such as \"2\", \"4g\" or \"30m\"")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<NumberOrText, E> {
        Ok(NumberOrText::Number(v.into()))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<NumberOrText, E> {
        Ok(NumberOrText::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<NumberOrText, E> {
        serde_json::Number::from_f64(v)
            .map(NumberOrText::Number)
            .ok_or_else(|| E::invalid_value(de::Unexpected::Float(v), &self))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<NumberOrText, E> {
        Ok(NumberOrText::Text(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<NumberOrText, E> {
        Ok(NumberOrText::Text(v))
    }
}

impl<'de> Deserialize<'de> for NumberOrText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NumberOrTextVisitor)
    }
}

impl NumberOrText {
    /// The value as JSON again (what the slot and duration parsers read).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            NumberOrText::Number(n) => serde_json::Value::Number(n.clone()),
            NumberOrText::Text(s) => serde_json::Value::String(s.clone()),
        }
    }
}

impl NumberOrText {
    /// A slot map as JSON again (what the slot parser reads and a service's spec keeps);
    /// none given is the empty map.
    pub fn json_map(
        slots: Option<&BTreeMap<String, NumberOrText>>,
    ) -> serde_json::Map<String, serde_json::Value> {
        slots
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.to_json()))
            .collect()
    }
}

impl fmt::Display for NumberOrText {
    /// The number, or the text as given.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NumberOrText::Number(n) => write!(f, "{n}"),
            NumberOrText::Text(s) => f.write_str(s),
        }
    }
}

/// `resources` and `resource_opts` (its `shmem`) as given, each amount as its text: what a
/// create request and a service's stored spec both ask for.
pub fn resource_ask(
    resources: Option<&std::collections::BTreeMap<String, NumberOrText>>,
    resource_opts: Option<&std::collections::BTreeMap<String, NumberOrText>>,
) -> crate::resources::ResourceAsk {
    crate::resources::ResourceAsk {
        slots: resources
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.to_string()))
            .collect(),
        shmem: resource_opts
            .and_then(|o| o.get("shmem"))
            .map(|v| v.to_string()),
    }
}
