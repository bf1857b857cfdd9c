//! Resource slot maps: what an agent, a group, a preset or a policy holds, as the server
//! prints it and as a client gives it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Amounts of resources as the server prints them: every amount is a string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ResourceSlots {
    /// CPU cores as a decimal string, e.g. `"2"` or `"0.5"`; `"Infinity"` where nothing
    /// limits it (the keypair limits of `check-presets`).
    pub cpu: String,
    /// Memory in bytes as a decimal string, e.g. `"4294967296"`; `"Infinity"` where
    /// nothing limits it.
    pub mem: String,
    /// Accelerator slots (names with a dot, e.g. `mock.shares`): amounts as decimal strings.
    #[serde(flatten)]
    pub accelerators: BTreeMap<String, String>,
}

/// Amounts of resources as a client gives them. A slot left out is zero (for a policy:
/// not limited).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct ResourceSlotsSpec {
    /// CPU cores: a positive number, e.g. `2`, `"2"` or `"0.5"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Amount")]
    pub cpu: Option<Amount>,
    /// Memory: a size like `"512m"`, `"4g"` or `"2GiB"`, or a number of bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Amount")]
    pub mem: Option<Amount>,
    /// Accelerator slots: names with a dot (e.g. `mock.shares`), positive amounts like
    /// CPU cores. Other names are refused.
    #[serde(flatten)]
    pub accelerators: BTreeMap<String, Amount>,
}

/// One amount as a client gives it: a number, or a string the server parses (a number of
/// cores, or a size with a unit).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Amount {
    /// A plain number (cores, or bytes for memory).
    Number(serde_json::Number),
    /// A number or a size in words, e.g. `"1.5"` or `"4g"`.
    Text(String),
}

impl From<&str> for Amount {
    fn from(s: &str) -> Amount {
        Amount::Text(s.to_string())
    }
}

impl From<u64> for Amount {
    fn from(n: u64) -> Amount {
        Amount::Number(n.into())
    }
}

impl From<&bai_core::resources::ResourceSlots> for ResourceSlots {
    /// Every amount as the server prints it: cores and accelerator shares as decimals
    /// (`"1.5"`), memory in bytes.
    fn from(s: &bai_core::resources::ResourceSlots) -> ResourceSlots {
        use bai_core::resources::format_cpu;
        ResourceSlots {
            cpu: format_cpu(s.cpu_milli),
            mem: s.mem.to_string(),
            accelerators: s
                .accel
                .iter()
                .map(|(k, v)| (k.clone(), format_cpu(*v)))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_print_as_the_core_writes_them() {
        let mut s = bai_core::resources::ResourceSlots {
            cpu_milli: 1500,
            mem: 4 << 30,
            ..Default::default()
        };
        s.accel.insert("cuda.shares".into(), 250);
        let typed = serde_json::to_value(ResourceSlots::from(&s)).expect("writes");
        assert_eq!(typed, s.to_wire());
        assert_eq!(typed["cuda.shares"], "0.25");
    }
}
