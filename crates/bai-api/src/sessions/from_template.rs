//! `POST /session/_/create-from-template`'s body: a `POST /session` request made of a
//! template's values with the call's on top. A field the call gives replaces the template's;
//! inside `config` each key does. Absent, `null`, and empty lists or maps count as not given
//! (the official client always sends `config.mounts: []`, which would otherwise drop every
//! template's mounts).

use super::templates::{TaskTemplate, TemplateGit};
use crate::body::Fields;
use bai_core::Problem;
use serde_json::{Map, Value, json};

/// A create-from-template call: the template it names and the fields it gives itself.
#[derive(Debug, Clone)]
pub struct TemplateCall {
    /// `template_id` (or `templateId`).
    pub template_id: String,
    fields: Map<String, Value>,
}

impl TemplateCall {
    /// Reads the call's body.
    pub fn read(body: &[u8]) -> Result<TemplateCall, Problem> {
        let Value::Object(mut fields) = Fields::read(body)?.into_value() else {
            return Err(Problem::invalid("the request body must be a JSON object"));
        };
        let template_id = ["template_id", "templateId"]
            .iter()
            .find_map(|k| fields.remove(*k))
            .and_then(|v| v.as_str().map(str::to_string))
            .ok_or_else(|| Problem::invalid("template_id is required"))?;
        Ok(TemplateCall {
            template_id,
            fields,
        })
    }

    /// The `POST /session` body: `template`'s request (stored in `project` and `domain`)
    /// with this call's given fields on top.
    pub fn create_body(
        self,
        template: &TaskTemplate,
        project: Option<&str>,
        domain: &str,
    ) -> Result<Vec<u8>, Problem> {
        let request = merged(request_of(template, project, domain), self.fields);
        Problem::json_text(&request).map(String::into_bytes)
    }
}

/// The `POST /session` body a template stands for.
fn request_of(t: &TaskTemplate, project: Option<&str>, domain: &str) -> Map<String, Value> {
    let spec = &t.spec;
    let kernel = &spec.kernel;
    let mut r = Map::new();
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            r.insert(k.into(), v);
        }
    };
    put("image", Some(json!(kernel.image)));
    put(
        "architecture",
        kernel.architecture.as_ref().map(|a| json!(a)),
    );
    put("type", spec.session_type.map(|s| json!(s.as_str())));
    put("tag", t.metadata.tag.as_ref().map(|s| json!(s)));
    put("group", project.map(|p| json!(p)));
    put("domain", Some(json!(domain)));
    let run = kernel.run.clone().unwrap_or_default();
    put("startupCommand", run.startup_command.map(Value::String));
    let bootstrap = match (&run.bootstrap, &kernel.git) {
        (b, Some(git)) => Some(format!(
            "{}{}",
            b.as_deref().map(|b| format!("{b}\n")).unwrap_or_default(),
            git_clone(git)
        )),
        (Some(b), None) => Some(b.clone()),
        (None, None) => None,
    };
    put("bootstrap_script", bootstrap.map(Value::String));
    let mut config = Map::new();
    if let Some(g) = &spec.scaling_group {
        config.insert("scalingGroup".into(), json!(g));
    }
    if let Some(mounts) = spec.mounts.as_ref().filter(|m| !m.is_empty()) {
        config.insert("mounts".into(), json!(mounts.keys().collect::<Vec<_>>()));
        let map: Map<String, Value> = mounts
            .iter()
            .filter_map(|(k, v)| {
                v.as_ref()
                    .filter(|p| !p.is_empty())
                    .map(|p| (k.clone(), json!(p)))
            })
            .collect();
        if !map.is_empty() {
            config.insert("mount_map".into(), Value::Object(map));
        }
    }
    if let Some(env) = kernel.environ.as_ref().filter(|e| !e.is_empty()) {
        config.insert("environ".into(), json!(env));
    }
    if let Some(res) = &spec.resources {
        config.insert("resources".into(), Value::Object(res.clone()));
    }
    if let Some(agents) = &spec.agent_list {
        config.insert("agentList".into(), json!(agents));
    }
    r.insert("config".into(), Value::Object(config));
    r
}

/// Shell lines that clone the template's repository into the work directory.
fn git_clone(git: &TemplateGit) -> String {
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let url = match &git.credential {
        Some(c) => match git.repository.split_once("://") {
            Some((proto, rest)) => format!("{proto}://{}:{}@{rest}", c.username, c.password),
            None => git.repository.clone(),
        },
        None => git.repository.clone(),
    };
    let dest = git.dest_dir.clone().unwrap_or_else(|| {
        let last = git.repository.trim_end_matches('/').rsplit('/').next();
        last.unwrap_or("repository")
            .trim_end_matches(".git")
            .to_string()
    });
    let mut s = String::from("git clone");
    if let Some(b) = &git.branch {
        s += &format!(" -b {}", quote(b));
    }
    s += &format!(" {} {}\n", quote(&url), quote(&dest));
    if let Some(c) = &git.commit {
        s += &format!("(cd {} && git checkout {})\n", quote(&dest), quote(c));
    }
    s
}

/// Whether a call's value counts as given.
fn given(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        _ => true,
    }
}

/// The template's request with the call's given fields on top (`config` key by key).
fn merged(mut base: Map<String, Value>, call: Map<String, Value>) -> Map<String, Value> {
    for (k, v) in call {
        if k == "config" {
            if let (Value::Object(over), Some(Value::Object(cfg))) = (v, base.get_mut("config")) {
                for (ck, cv) in over {
                    if given(&cv) {
                        cfg.insert(ck, cv);
                    }
                }
            }
        } else if given(&v) {
            base.insert(k, v);
        }
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template() -> (TaskTemplate, (Option<&'static str>, &'static str)) {
        let t: TaskTemplate = serde_json::from_value(json!({
            "api_version": "6", "kind": "task_template",
            "metadata": {"name": "py", "tag": "t1"},
            "spec": {"session_type": "interactive",
                "kernel": {"image": "python:3.13", "environ": {"A": "1"},
                    "run": {"bootstrap": "echo boot"},
                    "git": {"repository": "https://example.org/x/repo.git", "branch": "main",
                        "credential": {"username": "u", "password": "p"}}},
                "mounts": {"data": null, "models": "/models"},
                "resources": {"cpu": "1", "mem": "512m"}}
        }))
        .expect("template");
        let row = (Some("default"), "default");
        (t, row)
    }

    #[test]
    fn the_template_makes_a_full_request() {
        let (t, row) = template();
        let r = request_of(&t, row.0, row.1);
        assert_eq!(r["image"], "python:3.13");
        assert_eq!(r["type"], "interactive");
        assert_eq!(r["tag"], "t1");
        assert_eq!(r["group"], "default");
        assert_eq!(r["config"]["mounts"], json!(["data", "models"]));
        assert_eq!(r["config"]["mount_map"], json!({"models": "/models"}));
        assert_eq!(r["config"]["environ"], json!({"A": "1"}));
        assert_eq!(r["config"]["resources"]["mem"], "512m");
        let boot = r["bootstrap_script"].as_str().expect("bootstrap");
        assert!(boot.starts_with("echo boot\n"), "{boot}");
        assert!(
            boot.contains("git clone -b 'main' 'https://u:p@example.org/x/repo.git' 'repo'"),
            "{boot}"
        );
    }

    #[test]
    fn given_fields_replace_the_templates_and_empty_ones_do_not() {
        let (t, row) = template();
        let call = json!({"type": "batch", "startupCommand": "true", "name": "s1",
            "tag": null, "config": {"mounts": [], "resources": {"cpu": 2}, "environ": null}});
        let Value::Object(call) = call else {
            unreachable!()
        };
        let r = merged(request_of(&t, row.0, row.1), call);
        assert_eq!(r["type"], "batch");
        assert_eq!(r["startupCommand"], "true");
        assert_eq!(r["name"], "s1");
        assert_eq!(r["tag"], "t1");
        assert_eq!(r["config"]["mounts"], json!(["data", "models"]));
        assert_eq!(r["config"]["resources"], json!({"cpu": 2}));
        assert_eq!(r["config"]["environ"], json!({"A": "1"}));
    }
}
