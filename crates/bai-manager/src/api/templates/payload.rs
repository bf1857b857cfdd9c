//! A template payload: JSON, or YAML (a list, one item, or a stream of documents with one
//! item each). Each item is `{"name"?, "template"}` or a bare template; every template is
//! checked here, so a stored template can always be read back.

use crate::api::vfolder::check_folder_name;
use bai_api::sessions::TemplateItem;
use bai_core::Problem;
use bai_core::accel::AccelSlot;

/// The items of a payload (`bai_api::sessions::read_template_payload`), each checked.
pub fn items(text: &str, accel: &[AccelSlot]) -> Result<Vec<TemplateItem>, Problem> {
    let items = bai_api::sessions::read_template_payload(text)?;
    for (i, it) in items.iter().enumerate() {
        check(i + 1, it, accel)?;
    }
    Ok(items)
}

/// The rules a template must keep to be stored.
fn check(n: usize, it: &TemplateItem, accel: &[AccelSlot]) -> Result<(), Problem> {
    let bad = |msg: String| Problem::invalid(format!("template {n} of the payload: {msg}"));
    let name = name_of(it);
    if name.trim().is_empty() || name.chars().count() > 128 {
        return Err(bad("its name must be 1 to 128 characters".into()));
    }
    let spec = &it.template.spec;
    if spec.kernel.image.trim().is_empty() {
        return Err(bad("spec.kernel.image is empty: name an image".into()));
    }
    for (folder, path) in spec.mounts.iter().flatten() {
        check_folder_name(folder).map_err(|p| bad(p.msg))?;
        if let Some(p) = path.as_deref().filter(|p| !p.is_empty()) {
            let rel = p.strip_prefix("/home/work/").unwrap_or(p);
            if rel.split('/').any(|c| c == "..") {
                return Err(bad(format!(
                    "the mount path {p:?} of folder {folder:?} may not contain '..'"
                )));
            }
        }
    }
    if let Some(r) = &spec.resources {
        let ask = bai_core::resources::ResourceAsk {
            slots: r
                .iter()
                .map(|(k, v)| (k.clone(), bai_core::resources::amount_text(v)))
                .collect(),
            shmem: None,
        };
        bai_core::resources::ResourceRequest::parse(&ask, accel)
            .map_err(|e| bad(format!("spec.resources: {e}")))?;
    }
    Ok(())
}

/// The name a template is listed by.
pub fn name_of(it: &TemplateItem) -> &str {
    it.name
        .as_deref()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or(&it.template.metadata.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSON: &str = r#"[{"is_active": true, "type": "TASK", "name": "t1",
        "template": {"api_version": "6", "kind": "task_template",
          "metadata": {"name": "python", "tag": "3.13"},
          "spec": {"session_type": "interactive",
            "kernel": {"image": "python:3.13", "environ": {}, "architecture": "x86_64"},
            "scaling_group": "default", "mounts": {},
            "resources": {"cpu": "1", "mem": "512m"}}}}]"#;

    #[test]
    fn reads_the_official_clients_json_payload() {
        let items = items(JSON, &[]).expect("reads");
        assert_eq!(items.len(), 1);
        assert_eq!(name_of(&items[0]), "t1");
        assert_eq!(items[0].template.spec.kernel.image, "python:3.13");
    }

    #[test]
    fn reads_yaml_documents_and_bare_templates() {
        let yaml = "api_version: 6\nkind: taskTemplate\nmetadata:\n  name: a\nspec:\n  kernel:\n    image: python\n---\nname: b\ntemplate:\n  apiVersion: v1\n  kind: task_template\n  metadata: {name: x}\n  spec:\n    type: batch\n    kernel: {image: python, run: {startup: echo hi}}\n";
        let items = items(yaml, &[]).expect("reads");
        assert_eq!(items.len(), 2);
        assert_eq!(name_of(&items[0]), "a");
        assert_eq!(items[0].template.api_version, "6");
        assert_eq!(name_of(&items[1]), "b");
        let run = items[1].template.spec.kernel.run.as_ref().expect("run");
        assert_eq!(run.startup_command.as_deref(), Some("echo hi"));
    }

    #[test]
    fn refuses_what_could_not_make_a_session() {
        for (payload, says) in [
            ("[]", "no template"),
            ("{{{", "neither JSON nor YAML"),
            (r#"[{"template": {"kind": "taskTemplate"}}]"#, "template 1"),
            (
                r#"[{"template": {"api_version": "6", "kind": "clusterTemplate", "metadata": {"name": "a"}, "spec": {"kernel": {"image": "p"}}}}]"#,
                "unknown variant",
            ),
            (
                r#"[{"template": {"api_version": "6", "kind": "taskTemplate", "metadata": {"name": "a"}, "spec": {"kernel": {"image": "p"}, "mounts": {"../x": null}}}}]"#,
                "folder name",
            ),
            (
                r#"[{"template": {"api_version": "6", "kind": "taskTemplate", "metadata": {"name": "a"}, "spec": {"kernel": {"image": "p"}, "resources": {"cpu": "lots"}}}}]"#,
                "spec.resources",
            ),
        ] {
            let e = items(payload, &[]).expect_err(payload);
            assert!(e.msg.contains(says), "{payload}: {}", e.msg);
        }
    }
}
