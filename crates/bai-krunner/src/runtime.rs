//! Which Python the kernel's code runs in: `BAI_PYTHON` when set (tests, an admin's
//! override), else the image's own (`ai.backend.runtime-path`, given by the manager as
//! `BAI_RUNTIME_PATH`) when that file exists, else `python3` on `PATH`.
//!
//! Images made for Backend.AI name their Python this way (`/opt/conda/bin/python`,
//! `/usr/local/bin/python3.10`); a `python3` first on `PATH` may be another one, without the
//! image's packages.

use std::path::Path;

pub fn python() -> String {
    choose(
        std::env::var("BAI_PYTHON").ok(),
        std::env::var(crate::recipe::RUNTIME_PATH_VAR).ok(),
        |p| Path::new(p).is_file(),
    )
}

fn choose(
    explicit: Option<String>,
    runtime_path: Option<String>,
    exists: impl Fn(&str) -> bool,
) -> String {
    if let Some(p) = explicit.filter(|p| !p.is_empty()) {
        return p;
    }
    runtime_path
        .filter(|p| p.starts_with('/') && exists(p))
        .unwrap_or_else(|| "python3".into())
}

#[cfg(test)]
mod tests {
    use super::choose;

    #[test]
    fn the_images_runtime_path_wins_over_python3_when_it_exists() {
        let yes = |_: &str| true;
        let no = |_: &str| false;
        let rt = || Some("/opt/conda/bin/python".to_string());
        assert_eq!(choose(None, rt(), yes), "/opt/conda/bin/python");
        assert_eq!(choose(None, rt(), no), "python3");
        assert_eq!(choose(None, None, yes), "python3");
        assert_eq!(choose(Some("/x/py".into()), rt(), yes), "/x/py");
        assert_eq!(
            choose(Some(String::new()), rt(), yes),
            "/opt/conda/bin/python"
        );
        // A relative label is not a path the runner can trust to mean the image's file.
        assert_eq!(choose(None, Some("python".into()), yes), "python3");
    }
}
