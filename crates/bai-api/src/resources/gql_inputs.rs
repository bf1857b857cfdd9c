//! Backend.AI's admin GraphQL inputs as bai reads them: the `props` of the create and modify
//! mutations of domains, groups (projects), users, keypair resource policies and scaling
//! groups. `null` is "not given"; a field bai does not know is refused by name; the JSON
//! fields Backend.AI sends as text (`JSONString`) are read from a text or an object.

use schemars::JsonSchema;
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A `JSONString` that must hold an object, kept as compact JSON text; sent as the text or as
/// the object itself.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct JsonObjectText(pub String);

impl<'de> Deserialize<'de> for JsonObjectText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<JsonObjectText, D::Error> {
        let parsed = match Value::deserialize(d)? {
            Value::String(s) => serde_json::from_str::<Value>(&s)
                .map_err(|e| de::Error::custom(format!("must hold a JSON object: {e}")))?,
            other => other,
        };
        if !parsed.is_object() {
            return Err(de::Error::custom(format!(
                "must hold a JSON object, not {parsed}"
            )));
        }
        Ok(JsonObjectText(parsed.to_string()))
    }
}

impl JsonObjectText {
    /// The object itself.
    pub fn object(&self) -> serde_json::Map<String, Value> {
        serde_json::from_str(&self.0).unwrap_or_default()
    }
}

/// A list of texts; one text stands for a list of one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct TextList(pub Vec<String>);

impl<'de> Deserialize<'de> for TextList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<TextList, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum OneOrMany {
            One(String),
            Many(Vec<String>),
        }
        match OneOrMany::deserialize(d) {
            Ok(OneOrMany::One(s)) => Ok(TextList(vec![s])),
            Ok(OneOrMany::Many(v)) => Ok(TextList(v)),
            Err(_) => Err(de::Error::custom("must be a list of strings")),
        }
    }
}

/// A whole number, sent as a number or as its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct Whole(pub i64);

impl<'de> Deserialize<'de> for Whole {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Whole, D::Error> {
        let v = Value::deserialize(d)?;
        v.as_i64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
            .map(Whole)
            .ok_or_else(|| de::Error::custom(format!("must be a whole number, not {v}")))
    }
}

impl Whole {
    /// The number when it lies in `min..=max`; else why not, naming `field`.
    pub fn within(self, field: &str, min: i64, max: i64) -> Result<i64, String> {
        if (min..=max).contains(&self.0) {
            Ok(self.0)
        } else {
            Err(format!(
                "{field} {} is out of range ({min} to {max})",
                self.0
            ))
        }
    }
}

/// `create_domain` / `modify_domain`'s props.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DomainProps {
    pub name: Option<String>,
    pub description: Option<String>,
    pub is_active: Option<bool>,
    pub total_resource_slots: Option<JsonObjectText>,
    pub allowed_vfolder_hosts: Option<JsonObjectText>,
    pub allowed_docker_registries: Option<TextList>,
    pub integration_id: Option<String>,
}

/// How `modify_group` changes its members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MemberUpdate {
    Add,
    Remove,
}

/// `create_group` / `modify_group`'s props (a group is a project).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct GroupProps {
    pub name: Option<String>,
    pub description: Option<String>,
    pub is_active: Option<bool>,
    pub domain_name: Option<String>,
    pub total_resource_slots: Option<JsonObjectText>,
    pub allowed_vfolder_hosts: Option<JsonObjectText>,
    pub integration_id: Option<String>,
    /// Only `default` here.
    pub resource_policy: Option<String>,
    pub user_update_mode: Option<MemberUpdate>,
    /// User ids to add or remove (with `user_update_mode`).
    pub user_uuids: Option<TextList>,
}

/// What a keypair may use of a resource its policy does not name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum DefaultForUnspecified {
    Limited,
    Unlimited,
}

impl DefaultForUnspecified {
    pub fn as_str(self) -> &'static str {
        match self {
            DefaultForUnspecified::Limited => "LIMITED",
            DefaultForUnspecified::Unlimited => "UNLIMITED",
        }
    }
}

/// `create_keypair_resource_policy` / `modify_keypair_resource_policy`'s props.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct KeypairPolicyProps {
    pub default_for_unspecified: Option<DefaultForUnspecified>,
    pub total_resource_slots: Option<JsonObjectText>,
    pub max_session_lifetime: Option<Whole>,
    pub max_concurrent_sessions: Option<Whole>,
    pub max_concurrent_sftp_sessions: Option<Whole>,
    pub max_containers_per_session: Option<Whole>,
    pub idle_timeout: Option<Whole>,
    pub allowed_vfolder_hosts: Option<JsonObjectText>,
    pub max_pending_session_count: Option<Whole>,
    /// Not available here: only `{}` is taken.
    pub max_pending_session_resource_slots: Option<JsonObjectText>,
}

/// `create_scaling_group` / `modify_scaling_group`'s props (a scaling group is a resource
/// group).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ScalingGroupProps {
    pub description: Option<String>,
    pub is_active: Option<bool>,
    pub is_public: Option<bool>,
    pub wsproxy_addr: Option<String>,
    /// Only empty here.
    pub wsproxy_api_token: Option<String>,
    pub driver: Option<String>,
    pub driver_opts: Option<JsonObjectText>,
    pub scheduler: Option<String>,
    /// Backend.AI's `ScalingGroupOpts`: allowed session types, the pending timeout, the agent
    /// selection.
    pub scheduler_opts: Option<JsonObjectText>,
    /// Only false here.
    pub use_host_network: Option<bool>,
}

/// `create_user` / `modify_user`'s props. The fields bai does not have are taken only with
/// their "off" value (or not at all).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct UserProps {
    pub username: Option<String>,
    pub password: Option<String>,
    pub need_password_change: Option<bool>,
    pub full_name: Option<String>,
    pub description: Option<String>,
    pub is_active: Option<bool>,
    pub status: Option<String>,
    pub domain_name: Option<String>,
    pub role: Option<String>,
    /// Project ids the user belongs to (all of them).
    pub group_ids: Option<TextList>,
    pub allowed_client_ip: Option<TextList>,
    pub totp_activated: Option<bool>,
    pub resource_policy: Option<String>,
    pub sudo_session_enabled: Option<bool>,
    pub main_access_key: Option<Value>,
    pub container_uid: Option<Value>,
    pub container_main_gid: Option<Value>,
    pub container_gids: Option<Value>,
}

/// `create_user_resource_policy` / `modify_user_resource_policy`'s props.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct UserPolicyProps {
    pub max_vfolder_count: Option<Whole>,
    /// Bytes; -1: no limit.
    pub max_quota_scope_size: Option<Whole>,
    pub max_session_count_per_model_session: Option<Whole>,
    pub max_customized_image_count: Option<Whole>,
}

/// `create_keypair` / `modify_keypair`'s props.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct KeypairProps {
    pub is_active: Option<bool>,
    pub is_admin: Option<bool>,
    /// Requests per 15 minutes; 0: no limit.
    pub rate_limit: Option<i64>,
    /// A keypair resource policy's name.
    pub resource_policy: Option<String>,
    /// Taken and ignored when a keypair is made (bai has no per-keypair concurrency cap).
    pub concurrency_limit: Option<Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::from_value;
    use serde_json::json;

    #[test]
    fn json_strings_lists_and_numbers_read_in_either_form() {
        let p: DomainProps = from_value(json!({
            "total_resource_slots": "{\"cpu\": \"4\"}",
            "allowed_vfolder_hosts": {"local:volume1": ["upload-file"]},
            "allowed_docker_registries": "cr.backend.ai",
            "description": null}))
        .unwrap();
        assert_eq!(p.total_resource_slots.unwrap().0, r#"{"cpu":"4"}"#);
        assert_eq!(
            p.allowed_vfolder_hosts.unwrap().object()["local:volume1"],
            json!(["upload-file"])
        );
        assert_eq!(
            p.allowed_docker_registries,
            Some(TextList(vec!["cr.backend.ai".into()]))
        );
        assert_eq!(p.description, None);
        let k: KeypairPolicyProps =
            from_value(json!({"idle_timeout": "600", "max_concurrent_sessions": 3})).unwrap();
        assert_eq!(k.idle_timeout, Some(Whole(600)));
        assert_eq!(
            Whole(-4).within("max_concurrent_sessions", 0, 10),
            Err("max_concurrent_sessions -4 is out of range (0 to 10)".into())
        );
    }

    #[test]
    fn a_wrong_or_unknown_field_is_named() {
        let e = from_value::<DomainProps>(json!({"total_resource_slots": "[1]"})).unwrap_err();
        assert_eq!(e.path.as_deref(), Some("total_resource_slots"), "{e}");
        let e = from_value::<UserProps>(json!({"is_active": "yes"})).unwrap_err();
        assert_eq!(e.path.as_deref(), Some("is_active"), "{e}");
        let e = from_value::<GroupProps>(json!({"user_update_mode": "swap"})).unwrap_err();
        assert_eq!(e.path.as_deref(), Some("user_update_mode"), "{e}");
        let e = from_value::<KeypairPolicyProps>(json!({"idle_timeout": "soon"})).unwrap_err();
        assert_eq!(e.path.as_deref(), Some("idle_timeout"), "{e}");
        let e = from_value::<ScalingGroupProps>(json!({"colour": 1})).unwrap_err();
        assert!(e.to_string().contains("colour"), "{e}");
    }
}
