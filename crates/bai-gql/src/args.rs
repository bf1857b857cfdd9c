//! Variables and arguments: coercing the request's variables against the operation's
//! declarations, and turning argument literals (with `$variables` substituted) into JSON.

use crate::types::{self, GType};
use graphql_parser::query::{Value as GValue, VariableDefinition};
use serde_json::{Map, Number, Value};

/// Converts an argument value to JSON, substituting variables from `vars` (the coerced,
/// declared variables). A variable that was not declared is an error.
pub fn to_json(v: &GValue<'_, String>, vars: &Map<String, Value>) -> Result<Value, String> {
    Ok(match v {
        GValue::Variable(name) => vars
            .get(name)
            .cloned()
            .ok_or_else(|| format!("variable ${name} is not declared by the operation"))?,
        GValue::Int(n) => n.as_i64().map(Value::from).unwrap_or(Value::Null),
        GValue::Float(f) => Number::from_f64(*f)
            .map(Value::Number)
            .ok_or_else(|| format!("the float {f} cannot be represented"))?,
        GValue::String(s) => Value::String(s.clone()),
        GValue::Boolean(b) => Value::Bool(*b),
        GValue::Null => Value::Null,
        GValue::Enum(e) => Value::String(e.clone()),
        GValue::List(items) => Value::Array(
            items
                .iter()
                .map(|i| to_json(i, vars))
                .collect::<Result<_, _>>()?,
        ),
        GValue::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| Ok((k.clone(), to_json(v, vars)?)))
                .collect::<Result<_, String>>()?,
        ),
    })
}

/// Converts a field's or directive's arguments to a JSON object (in written order).
pub fn arguments(
    args: &[(String, GValue<'_, String>)],
    vars: &Map<String, Value>,
) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for (k, v) in args {
        if out.insert(k.clone(), to_json(v, vars)?).is_some() {
            return Err(format!("argument {k:?} is given twice"));
        }
    }
    Ok(out)
}

/// Coerces the request's variables against the operation's declarations. The result holds
/// exactly the declared variables: a value given in the request, else the declared default,
/// else null. Undeclared request variables are dropped.
pub fn coerce_variables(
    defs: &[VariableDefinition<'_, String>],
    given: &Map<String, Value>,
) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for d in defs {
        let ty: &GType<'_> = &d.var_type;
        let name = &d.name;
        let base = types::base_name(ty);
        if !types::is_known(base) {
            return Err(format!("unknown type {base:?} for variable ${name}"));
        }
        if out.contains_key(name) {
            return Err(format!("variable ${name} is declared twice"));
        }
        let value = match (given.get(name), &d.default_value) {
            (Some(v), _) => v.clone(),
            (None, Some(default)) => to_json(default, &Map::new())
                .map_err(|_| format!("the default of ${name} cannot use variables"))?,
            (None, None) => Value::Null,
        };
        if value.is_null() && matches!(ty, GType::NonNullType(_)) {
            return Err(format!("variable ${name} of type {ty} was not provided"));
        }
        let value = types::coerce(ty, value)
            .map_err(|e| format!("variable ${name} of type {ty} got an invalid value: {e}"))?;
        out.insert(name.clone(), value);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use graphql_parser::query::{Definition, OperationDefinition};
    use serde_json::json;

    type Defs = Vec<VariableDefinition<'static, String>>;
    type Args = Vec<(String, GValue<'static, String>)>;

    /// Parses `query(<decls>) { f(<args>) }` and returns (variable defs, field args).
    fn parse(decls: &str, args: &str) -> (Defs, Args) {
        let q = format!("query({decls}) {{ f({args}) }}");
        let doc = graphql_parser::parse_query::<String>(&q)
            .unwrap()
            .into_static();
        let Definition::Operation(OperationDefinition::Query(q)) =
            doc.definitions.into_iter().next().unwrap()
        else {
            unreachable!()
        };
        let graphql_parser::query::Selection::Field(f) =
            q.selection_set.items.into_iter().next().unwrap()
        else {
            unreachable!()
        };
        (q.variable_definitions, f.arguments)
    }

    fn vars(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn literals_and_variables_become_json() {
        let (defs, args) = parse(
            "$limit: Int!, $s: String, $d: Int = 7, $u: UUID",
            "a: 1, b: -2.5, c: \"x\", d: true, e: null, f: RUNNING, g: [1, $limit], h: {k: $s, n: {m: $d}}, i: $u",
        );
        let vs = coerce_variables(&defs, &vars(json!({"limit": 20, "s": "hi"}))).unwrap();
        assert_eq!(
            Value::Object(vs.clone()),
            json!({"limit": 20, "s": "hi", "d": 7, "u": null})
        );
        let a = arguments(&args, &vs).unwrap();
        assert_eq!(
            Value::Object(a.clone()),
            json!({"a": 1, "b": -2.5, "c": "x", "d": true, "e": null, "f": "RUNNING",
                   "g": [1, 20], "h": {"k": "hi", "n": {"m": 7}}, "i": null})
        );
        assert_eq!(
            a.keys().collect::<Vec<_>>(),
            ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
        );
    }

    #[test]
    fn an_explicit_null_beats_the_default() {
        let (defs, _) = parse("$d: Int = 7", "a: 1");
        let vs = coerce_variables(&defs, &vars(json!({"d": null}))).unwrap();
        assert_eq!(vs["d"], Value::Null);
    }

    #[test]
    fn missing_or_null_non_null_variables_are_errors() {
        let (defs, _) = parse("$limit: Int!, $offset: Int!", "a: 1");
        assert_eq!(
            coerce_variables(&defs, &vars(json!({"offset": 0}))).unwrap_err(),
            "variable $limit of type Int! was not provided"
        );
        assert_eq!(
            coerce_variables(&defs, &vars(json!({"limit": 1, "offset": null}))).unwrap_err(),
            "variable $offset of type Int! was not provided"
        );
        // A default satisfies a non-null declaration.
        let (defs, _) = parse("$limit: Int! = 20", "a: 1");
        assert_eq!(coerce_variables(&defs, &Map::new()).unwrap()["limit"], 20);
    }

    #[test]
    fn unknown_types_wrong_values_and_undeclared_variables_are_errors() {
        let (defs, _) = parse("$x: Bogus", "a: 1");
        let e = coerce_variables(&defs, &Map::new()).unwrap_err();
        assert!(e.contains("\"Bogus\"") && e.contains("$x"), "{e}");
        let (defs, _) = parse("$x: [Bogus!]", "a: 1");
        assert!(coerce_variables(&defs, &Map::new()).is_err());
        let (defs, _) = parse("$limit: Int!", "a: 1");
        let e = coerce_variables(&defs, &vars(json!({"limit": "twenty"}))).unwrap_err();
        assert!(
            e.starts_with("variable $limit of type Int! got an invalid value"),
            "{e}"
        );
        let (defs, _) = parse("$x: Int, $x: Int", "a: 1");
        assert!(
            coerce_variables(&defs, &Map::new())
                .unwrap_err()
                .contains("twice")
        );
        let (_, args) = parse("$x: Int", "a: $y");
        assert_eq!(
            arguments(&args, &Map::new()).unwrap_err(),
            "variable $y is not declared by the operation"
        );
        let (_, args) = parse("$x: Int", "a: 1, a: 2");
        assert!(arguments(&args, &Map::new()).is_err());
    }
}
