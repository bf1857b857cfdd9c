//! Image references: `[registry/]path:tag` split the way Backend.AI's catalogue shows them,
//! the stable id of an image, the name rules of a customized image and its reference.

use bai_core::Problem;
use uuid::Uuid;

/// An image reference split into its parts. A first path part with a `.` or `:` (or
/// `localhost`) is a registry; images without one are the engine's own (`local`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parts {
    pub registry: String,
    pub name: String,
    pub tag: String,
}

pub fn split(reference: &str) -> Parts {
    let (registry, rest) = match reference.split_once('/') {
        Some((first, rest))
            if first.contains('.') || first.contains(':') || first == "localhost" =>
        {
            (first.to_string(), rest)
        }
        _ => ("local".to_string(), reference),
    };
    let (name, tag) = match rest.rsplit_once(':') {
        Some((n, t)) => (n.to_string(), t.to_string()),
        None => (rest.to_string(), "latest".to_string()),
    };
    Parts {
        registry,
        name,
        tag,
    }
}

/// A general image's id: the same on every manager and across restarts.
pub fn image_id(reference: &str) -> Uuid {
    Uuid::new_v5(
        &Uuid::NAMESPACE_URL,
        format!("bai-image:{reference}").as_bytes(),
    )
}

/// The rules of a customized image's name (the seed: 4 to 32 letters, digits, `-`, `_`).
pub fn check_name(name: &str) -> Result<(), Problem> {
    let len = name.chars().count();
    if !(4..=32).contains(&len) {
        return Err(Problem::invalid(format!(
            "image_name {name:?} must be 4 to 32 characters long (it has {len})"
        )));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
    {
        return Err(Problem::invalid(format!(
            "image_name {name:?} may hold only letters, digits, `-` and `_` (not {c:?})"
        )));
    }
    Ok(())
}

/// What marks the tag of an image made from a session: `<base tag>-customized_<id>`.
const CUSTOMIZED: &str = "customized_";

/// Whether `reference` names an image made from a session.
pub fn is_customized(reference: &str) -> bool {
    reference
        .rsplit_once(':')
        .is_some_and(|(_, tag)| tag.split('-').skip(1).any(|p| p.starts_with(CUSTOMIZED)))
}

/// The reference of a customized image: the base's repository, the base's tag without any
/// earlier `-customized_…` part, then `-customized_<id>`.
pub fn customized_reference(base: &str, id: Uuid) -> String {
    let (repo, tag) = match base.rsplit_once(':') {
        Some((r, t)) if !t.contains('/') => (r, t),
        _ => (base, "latest"),
    };
    let tag: Vec<&str> = tag
        .split('-')
        .filter(|p| !p.starts_with(CUSTOMIZED))
        .collect();
    format!("{repo}:{}-{CUSTOMIZED}{}", tag.join("-"), id.simple())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_split_into_registry_name_and_tag() {
        let p = split("bai/python:3.11-bookworm");
        assert_eq!(
            (p.registry.as_str(), p.name.as_str(), p.tag.as_str()),
            ("local", "bai/python", "3.11-bookworm")
        );
        let p = split("127.0.0.1:5000/bai/python:3.11");
        assert_eq!(
            (p.registry.as_str(), p.name.as_str(), p.tag.as_str()),
            ("127.0.0.1:5000", "bai/python", "3.11")
        );
        assert_eq!(split("python").tag, "latest");
    }

    #[test]
    fn names_follow_the_seeds_rules() {
        assert!(check_name("my-env_2").is_ok());
        assert!(check_name("abc").is_err());
        assert!(check_name(&"a".repeat(33)).is_err());
        assert!(check_name("has space").is_err());
        assert!(check_name("dots.no").is_err());
    }

    #[test]
    fn a_customized_reference_drops_an_earlier_customized_tag() {
        let id = Uuid::nil();
        let first = customized_reference("bai/python:3.11-bookworm", id);
        assert_eq!(
            first,
            format!("bai/python:3.11-bookworm-customized_{}", id.simple())
        );
        let again = customized_reference(&first, Uuid::from_u128(1));
        assert!(again.starts_with("bai/python:3.11-bookworm-customized_"));
        assert_eq!(again.matches("customized_").count(), 1);
        assert!(is_customized(&first) && is_customized(&again));
        assert!(!is_customized("bai/python:3.11-bookworm"));
    }
}
