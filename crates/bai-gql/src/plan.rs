//! Turns a query document into a merged plan: the operation is selected, its variables
//! coerced, fragments inlined, `@skip`/`@include` applied, arguments converted, and
//! duplicate response keys merged (first occurrence fixes the position).

use crate::{OperationKind, Request, args};
use graphql_parser::query::{
    Definition, Directive, FragmentDefinition, OperationDefinition, Selection, SelectionSet,
};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Deepest selection nesting accepted (fields and fragments together).
const MAX_DEPTH: usize = 64;
/// Most selections visited while planning; bounds the work of repeated fragment spreads.
const MAX_SELECTIONS: usize = 20_000;

/// One field to produce, with its merged sub-selection.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldPlan {
    /// The response key (alias, else the field name).
    pub key: String,
    pub name: String,
    pub args: Map<String, Value>,
    pub sub: Vec<FieldPlan>,
}

/// The selected operation, ready to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub kind: OperationKind,
    pub fields: Vec<FieldPlan>,
}

struct Ctx<'d> {
    vars: Map<String, Value>,
    fragments: HashMap<&'d str, &'d FragmentDefinition<'d, String>>,
    /// Fragments being expanded, to refuse cycles.
    stack: Vec<&'d str>,
    visited: usize,
}

/// Whether `@skip`/`@include` keep the selection. Other directives are ignored.
fn included(
    directives: &[Directive<'_, String>],
    vars: &Map<String, Value>,
) -> Result<bool, String> {
    for d in directives {
        let skip_if = match d.name.as_str() {
            "skip" => true,
            "include" => false,
            _ => continue,
        };
        let a = args::arguments(&d.arguments, vars)?;
        let cond = a
            .get("if")
            .and_then(Value::as_bool)
            .ok_or_else(|| format!("@{} needs a Boolean \"if\" argument", d.name))?;
        if cond == skip_if {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Adds `f` to `list`, merging it into an existing entry with the same response key.
fn merge_into(list: &mut Vec<FieldPlan>, f: FieldPlan) -> Result<(), String> {
    match list.iter_mut().find(|e| e.key == f.key) {
        Some(existing) => {
            if existing.name != f.name || existing.args != f.args {
                return Err(format!(
                    "fields {:?} conflict: they select different fields or arguments under the same name",
                    f.key
                ));
            }
            for s in f.sub {
                merge_into(&mut existing.sub, s)?;
            }
            Ok(())
        }
        None => {
            list.push(f);
            Ok(())
        }
    }
}

fn collect<'d>(
    set: &'d SelectionSet<'d, String>,
    ctx: &mut Ctx<'d>,
    out: &mut Vec<FieldPlan>,
    depth: usize,
) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!("the query nests deeper than {MAX_DEPTH} levels"));
    }
    for item in &set.items {
        ctx.visited += 1;
        if ctx.visited > MAX_SELECTIONS {
            return Err(format!(
                "the query is too large (more than {MAX_SELECTIONS} selections)"
            ));
        }
        match item {
            Selection::Field(f) => {
                if !included(&f.directives, &ctx.vars)? {
                    continue;
                }
                let mut sub = Vec::new();
                collect(&f.selection_set, ctx, &mut sub, depth + 1)?;
                let field = FieldPlan {
                    key: f.alias.clone().unwrap_or_else(|| f.name.clone()),
                    name: f.name.clone(),
                    args: args::arguments(&f.arguments, &ctx.vars)?,
                    sub,
                };
                merge_into(out, field)?;
            }
            Selection::InlineFragment(i) => {
                if included(&i.directives, &ctx.vars)? {
                    collect(&i.selection_set, ctx, out, depth + 1)?;
                }
            }
            Selection::FragmentSpread(s) => {
                if !included(&s.directives, &ctx.vars)? {
                    continue;
                }
                let name = s.fragment_name.as_str();
                let frag = *ctx
                    .fragments
                    .get(name)
                    .ok_or_else(|| format!("unknown fragment {name:?}"))?;
                if ctx.stack.contains(&name) {
                    return Err(format!("fragment {name:?} spreads itself"));
                }
                ctx.stack.push(frag.name.as_str());
                collect(&frag.selection_set, ctx, out, depth + 1)?;
                ctx.stack.pop();
            }
        }
    }
    Ok(())
}

fn op_name<'d>(op: &'d OperationDefinition<'d, String>) -> Option<&'d str> {
    match op {
        OperationDefinition::Query(q) => q.name.as_deref(),
        OperationDefinition::Mutation(m) => m.name.as_deref(),
        OperationDefinition::Subscription(s) => s.name.as_deref(),
        OperationDefinition::SelectionSet(_) => None,
    }
}

/// Parses and plans a request. The error is a message for the `errors` list.
pub fn plan(req: &Request) -> Result<Plan, String> {
    let doc = graphql_parser::parse_query::<String>(&req.query)
        .map_err(|e| format!("syntax error: {}", e.to_string().trim_end()))?;
    let mut ops = Vec::new();
    let mut fragments = HashMap::new();
    for d in &doc.definitions {
        match d {
            Definition::Operation(op) => ops.push(op),
            Definition::Fragment(f) => {
                if fragments.insert(f.name.as_str(), f).is_some() {
                    return Err(format!("fragment {:?} is defined twice", f.name));
                }
            }
        }
    }
    let op = match req.operation_name.as_deref().filter(|n| !n.is_empty()) {
        Some(n) => *ops
            .iter()
            .find(|o| op_name(o) == Some(n))
            .ok_or_else(|| format!("no operation named {n:?}"))?,
        None => match ops.as_slice() {
            [op] => *op,
            [] => return Err("the document has no operation".into()),
            _ => {
                return Err(
                    "the document has several operations: name one with operationName".into(),
                );
            }
        },
    };
    let (kind, defs, set) = match op {
        OperationDefinition::SelectionSet(s) => (OperationKind::Query, &[][..], s),
        OperationDefinition::Query(q) => (
            OperationKind::Query,
            &q.variable_definitions[..],
            &q.selection_set,
        ),
        OperationDefinition::Mutation(m) => (
            OperationKind::Mutation,
            &m.variable_definitions[..],
            &m.selection_set,
        ),
        OperationDefinition::Subscription(_) => {
            return Err("subscriptions are not supported".into());
        }
    };
    let mut ctx = Ctx {
        vars: args::coerce_variables(defs, &req.variables)?,
        fragments,
        stack: Vec::new(),
        visited: 0,
    };
    let mut fields = Vec::new();
    collect(set, &mut ctx, &mut fields, 0)?;
    Ok(Plan { kind, fields })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plan_of(query: &str, vars: Value) -> Result<Plan, String> {
        plan(&Request {
            query: query.into(),
            variables: vars.as_object().cloned().unwrap_or_default(),
            operation_name: None,
        })
    }

    /// A compact rendering: `key(name){sub}` for checking shapes.
    fn shape(fields: &[FieldPlan]) -> String {
        fields
            .iter()
            .map(|f| {
                let mut s = f.key.clone();
                if f.key != f.name {
                    s = format!("{s}={}", f.name);
                }
                if !f.sub.is_empty() {
                    s = format!("{s}{{{}}}", shape(&f.sub));
                }
                s
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn duplicates_merge_at_the_first_position() {
        let p = plan_of(
            "{ a { x y } b a { z x } c { p } c { q { r } } c { q { s } } }",
            json!({}),
        )
        .unwrap();
        assert_eq!(shape(&p.fields), "a{x y z} b c{p q{r s}}");
        assert_eq!(p.kind, OperationKind::Query);
    }

    #[test]
    fn aliases_key_the_output_and_conflicts_are_refused() {
        let p = plan_of(
            "{ one: a(n: 1) two: a(n: 2) one: a(n: 1) { x } }",
            json!({}),
        )
        .unwrap();
        assert_eq!(shape(&p.fields), "one=a{x} two=a");
        assert_eq!(p.fields[1].args["n"], 2);
        assert!(
            plan_of("{ a: b a: c }", json!({}))
                .unwrap_err()
                .contains("conflict")
        );
        assert!(
            plan_of("{ a(n: 1) a(n: 2) }", json!({}))
                .unwrap_err()
                .contains("conflict")
        );
    }

    #[test]
    fn fragments_are_inlined_and_directives_applied() {
        let q = "query($t: Boolean!, $f: Boolean = false) { a { ...F ... on T { y } ... @include(if: $f) { no } w @skip(if: $t) v @include(if: $t) } } fragment F on T { x ...G } fragment G on T { z x }";
        let p = plan_of(q, json!({"t": true})).unwrap();
        assert_eq!(shape(&p.fields), "a{x z y v}");
        let e = plan_of("{ a @skip(if: \"yes\") }", json!({})).unwrap_err();
        assert!(e.contains("@skip"), "{e}");
        assert!(
            plan_of("{ ...X }", json!({}))
                .unwrap_err()
                .contains("\"X\"")
        );
    }

    #[test]
    fn fragment_cycles_and_blowups_are_refused() {
        let e = plan_of("{ a { ...F } } fragment F on T { b { ...F } }", json!({})).unwrap_err();
        assert!(e.contains("spreads itself"), "{e}");
        // 2^20 spreads if expanded naively.
        let mut q = String::from("{ a { ...F0 } }");
        for i in 0..20 {
            q.push_str(&format!(
                " fragment F{i} on T {{ x ...F{n} ...F{n} }}",
                n = i + 1
            ));
        }
        q.push_str(" fragment F20 on T { y }");
        assert!(plan_of(&q, json!({})).unwrap_err().contains("too large"));
    }

    #[test]
    fn the_operation_is_chosen_by_name_or_uniqueness() {
        let q = "query A { a } mutation B { b }";
        assert!(plan_of(q, json!({})).unwrap_err().contains("operationName"));
        let mut r = Request {
            query: q.into(),
            operation_name: Some("B".into()),
            ..Request::default()
        };
        let p = plan(&r).unwrap();
        assert_eq!(
            (p.kind, shape(&p.fields).as_str()),
            (OperationKind::Mutation, "b")
        );
        r.operation_name = Some("C".into());
        assert!(plan(&r).unwrap_err().contains("\"C\""));
        assert!(plan_of("fragment F on T { a }", json!({})).is_err());
        assert!(plan_of("subscription { a }", json!({})).is_err());
    }

    #[test]
    fn syntax_errors_are_reported() {
        let e = plan_of("query { keypair { ", json!({})).unwrap_err();
        assert!(e.starts_with("syntax error"), "{e}");
        assert!(plan_of("", json!({})).is_err());
    }
}
