//! Resource presets: named sizes for sessions, and which of them fit now.

use super::slots::{Amount, ResourceSlots, ResourceSlotsSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A preset as the server shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Preset {
    /// The preset's name.
    pub name: String,
    /// What a session of this size gets.
    pub resource_slots: ResourceSlots,
    /// Shared memory (`/dev/shm`) in bytes as a decimal string; `null` when the preset
    /// does not set it.
    #[schemars(required, schema_with = "crate::schema::nullable::<String>")]
    pub shared_memory: Option<String>,
}

/// `GET /resource/presets`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PresetList {
    /// Every preset.
    pub presets: Vec<Preset>,
}

/// `POST /admin/resource-presets`: creates or replaces a preset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NewPreset {
    /// 1 to 64 letters, digits, `-`, `_` or `.`.
    pub name: String,
    /// What a session of this size gets; `cpu` and `mem` are needed.
    pub resource_slots: ResourceSlotsSpec,
    /// Shared memory, a size like `"1g"` or a number of bytes; at most `mem`. Left out
    /// (or `null`): not set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_memory: Option<Amount>,
}

/// `POST /resource/check-presets`: where to check.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct PresetCheck {
    /// A resource group open to the caller; left out: `default` if open to the caller,
    /// else the first group open to the caller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling_group: Option<String>,
}

/// A preset, and whether a session of its size could start now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PresetFit {
    /// The preset.
    #[serde(flatten)]
    pub preset: Preset,
    /// `true` when an alive agent of the group has it free and the caller's keypair
    /// limits allow it.
    pub allocatable: bool,
}

/// Which presets fit now for the caller in a group, and the numbers behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PresetFits {
    /// Every preset, with whether it fits.
    pub presets: Vec<PresetFit>,
    /// The group checked.
    pub scaling_group: String,
    /// The caller's keypair resource policy's total (`"Infinity"` where not limited).
    pub keypair_limits: ResourceSlots,
    /// What the caller's sessions hold now.
    pub keypair_using: ResourceSlots,
    /// What the limits leave (`"Infinity"` where not limited).
    pub keypair_remaining: ResourceSlots,
    /// What the group's alive agents have free, summed.
    pub scaling_group_remaining: ResourceSlots,
}
