//! Turns a query document into a merged plan: fragments inlined, `@skip`/`@include`
//! applied, arguments coerced with the variables, duplicate response keys merged.

use crate::{OperationKind, Request};
use graphql_parser::query::{
    Definition, Directive, Document, FragmentDefinition, OperationDefinition, Selection,
    SelectionSet, Type, Value as GValue, VariableDefinition,
};
use serde_json::{Map, Value};

/// One field to produce, with its merged sub-selection.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldPlan {
    /// The response key (alias, else the field name).
    pub key: String,
    pub name: String,
    pub args: Map<String, Value>,
    pub sub: Vec<FieldPlan>,
}

/// Scalar and input type names a variable may be declared with.
const KNOWN_TYPES: &[&str] = &[
    "Int",
    "Float",
    "String",
    "Boolean",
    "ID",
    "UUID",
    "GlobalIDField",
    "JSONString",
    "DateTime",
    "BigInt",
    "ModifyComputeSessionInput",
];

type Doc<'a> = Document<'a, String>;

struct Ctx<'a> {
    vars: Map<String, Value>,
    fragments: Vec<&'a FragmentDefinition<'a, String>>,
}

fn base_type<'a, 'b>(t: &'b Type<'a, String>) -> &'b str {
    match t {
        Type::NamedType(n) => n,
        Type::ListType(inner) | Type::NonNullType(inner) => base_type(inner),
    }
}

fn to_json(v: &GValue<'_, String>, vars: &Map<String, Value>) -> Value {
    match v {
        GValue::Variable(name) => vars.get(name).cloned().unwrap_or(Value::Null),
        GValue::Int(n) => n.as_i64().map(Value::from).unwrap_or(Value::Null),
        GValue::Float(f) => serde_json::Number::from_f64(*f)
            .map(Value::Number)
            .unwrap_or(Value::Null),
        GValue::String(s) => Value::String(s.clone()),
        GValue::Boolean(b) => Value::Bool(*b),
        GValue::Null => Value::Null,
        GValue::Enum(e) => Value::String(e.clone()),
        GValue::List(items) => Value::Array(items.iter().map(|i| to_json(i, vars)).collect()),
        GValue::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), to_json(v, vars)))
                .collect(),
        ),
    }
}

fn coerce_variables(
    defs: &[VariableDefinition<'_, String>],
    given: &Map<String, Value>,
) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for d in defs {
        let ty = base_type(&d.var_type);
        if !KNOWN_TYPES.contains(&ty) {
            return Err(format!("unknown type {ty:?} for variable ${}", d.name));
        }
        let value = match given.get(&d.name) {
            Some(v) => v.clone(),
            None => d
                .default_value
                .as_ref()
                .map(|v| to_json(v, &Map::new()))
                .unwrap_or(Value::Null),
        };
        if matches!(d.var_type, Type::NonNullType(_)) && value.is_null() {
            return Err(format!(
                "variable ${} of type {ty}! was not provided",
                d.name
            ));
        }
        out.insert(d.name.clone(), value);
    }
    Ok(out)
}

fn included(directives: &[Directive<'_, String>], vars: &Map<String, Value>) -> bool {
    for d in directives {
        let cond = d
            .arguments
            .iter()
            .find(|(k, _)| k == "if")
            .map(|(_, v)| to_json(v, vars).as_bool().unwrap_or(false));
        match (d.name.as_str(), cond) {
            ("skip", Some(true)) | ("include", Some(false)) => return false,
            _ => {}
        }
    }
    true
}

/// Adds `f` to `list`, merging with an existing entry of the same response key.
fn merge_into(list: &mut Vec<FieldPlan>, f: FieldPlan) {
    match list.iter_mut().find(|e| e.key == f.key) {
        Some(existing) => {
            for s in f.sub {
                merge_into(&mut existing.sub, s);
            }
        }
        None => list.push(f),
    }
}

fn collect(
    set: &SelectionSet<'_, String>,
    ctx: &Ctx<'_>,
    out: &mut Vec<FieldPlan>,
    depth: usize,
) -> Result<(), String> {
    if depth > 32 {
        return Err("the query nests too deep (fragment cycle?)".into());
    }
    for item in &set.items {
        match item {
            Selection::Field(f) => {
                if !included(&f.directives, &ctx.vars) {
                    continue;
                }
                let mut sub = Vec::new();
                collect(&f.selection_set, ctx, &mut sub, depth + 1)?;
                let args = f
                    .arguments
                    .iter()
                    .map(|(k, v)| (k.clone(), to_json(v, &ctx.vars)))
                    .collect();
                merge_into(
                    out,
                    FieldPlan {
                        key: f.alias.clone().unwrap_or_else(|| f.name.clone()),
                        name: f.name.clone(),
                        args,
                        sub,
                    },
                );
            }
            Selection::InlineFragment(i) => {
                if included(&i.directives, &ctx.vars) {
                    collect(&i.selection_set, ctx, out, depth + 1)?;
                }
            }
            Selection::FragmentSpread(s) => {
                if !included(&s.directives, &ctx.vars) {
                    continue;
                }
                let frag = ctx
                    .fragments
                    .iter()
                    .find(|f| f.name == s.fragment_name)
                    .ok_or_else(|| format!("unknown fragment {:?}", s.fragment_name))?;
                collect(&frag.selection_set, ctx, out, depth + 1)?;
            }
        }
    }
    Ok(())
}

pub fn plan(req: &Request) -> Result<(OperationKind, Vec<FieldPlan>), String> {
    let doc: Doc<'_> = graphql_parser::parse_query::<String>(&req.query)
        .map_err(|e| format!("syntax error: {e}"))?;
    let mut ops = Vec::new();
    let mut fragments = Vec::new();
    for d in &doc.definitions {
        match d {
            Definition::Operation(op) => ops.push(op),
            Definition::Fragment(f) => fragments.push(f),
        }
    }
    let name_of = |op: &OperationDefinition<'_, String>| -> Option<String> {
        match op {
            OperationDefinition::Query(q) => q.name.clone(),
            OperationDefinition::Mutation(m) => m.name.clone(),
            OperationDefinition::Subscription(s) => s.name.clone(),
            OperationDefinition::SelectionSet(_) => None,
        }
    };
    let op = match &req.operation_name {
        Some(n) => ops
            .iter()
            .find(|o| name_of(o).as_deref() == Some(n.as_str()))
            .ok_or_else(|| format!("no operation named {n:?}"))?,
        None if ops.len() == 1 => &ops[0],
        None if ops.is_empty() => return Err("the document has no operation".into()),
        None => return Err("several operations: name one with operationName".into()),
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
    let ctx = Ctx {
        vars: coerce_variables(defs, &req.variables)?,
        fragments,
    };
    let mut fields = Vec::new();
    collect(set, &ctx, &mut fields, 0)?;
    Ok((kind, fields))
}
