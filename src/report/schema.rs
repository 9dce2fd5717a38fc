//! The JSON Schema of every report, as `git astedit schema` prints it and the MCP
//! server's output schemas use: draft 2020-12, standard keywords and formats only
//! (schemars' `format: "uint"` and the like are dropped; `minimum: 0` says the same).

use schemars::JsonSchema;
use serde_json::Value;

use super::*;

/// The JSON Schema dialect of every schema here.
pub const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// Makes one report type's schema.
pub type SchemaFn = fn() -> Value;

/// Every command with a `--json` output, and its report type's schema function.
pub fn commands() -> Vec<(&'static str, SchemaFn)> {
    vec![
        ("grep", of::<GrepReport>),
        ("edit", of::<StageReport>),
        ("patch", of::<StageReport>),
        ("scan", of::<ScanReport>),
        ("hook", of::<HookReport>),
        ("merge", of::<MergeReport>),
        ("list", of::<ListReport>),
        ("show", of::<ShowReport>),
        ("apply", of::<ResolveReport>),
        ("discard", of::<ResolveReport>),
        ("resolve", of::<ResolveReport>),
        ("undo", of::<ResolveReport>),
        ("log", of::<LogReport>),
        ("refresh", of::<RefreshReport>),
        ("gc", of::<GcReport>),
        ("test", of::<ruletest::TestReport>),
        ("verify", of::<verify::VerifyReport>),
        ("pr", of::<PrReport>),
        ("recover", of::<RecoverOutput>),
        ("error", of::<ErrorReport>),
    ]
}

/// The schema of one report type, standalone (its definitions under `$defs`).
pub fn of<T: JsonSchema>() -> Value {
    let settings = schemars::generate::SchemaSettings::draft2020_12();
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut value = schema.to_value();
    standardize(&mut value);
    value
}

/// The schema of a command's `--json` output: its report, or the error report.
pub fn for_command(name: &str) -> Option<Value> {
    let (_, report) = commands().into_iter().find(|(n, _)| *n == name)?;
    if name == "error" {
        return Some(report());
    }
    let mut ok = report();
    let mut err = of::<ErrorReport>();
    let mut defs = serde_json::Map::new();
    for s in [&mut ok, &mut err] {
        if let Some(Value::Object(d)) = s.as_object_mut().and_then(|o| o.remove("$defs")) {
            defs.extend(d);
        }
        if let Some(o) = s.as_object_mut() {
            o.remove("$schema");
        }
    }
    Some(serde_json::json!({
        "$schema": DIALECT,
        "title": format!("git astedit {name} --json"),
        "description": "The command's report on success, or the error report.",
        "anyOf": [ok, err],
        "$defs": defs,
    }))
}

/// Every command's schema, by name.
pub fn all() -> Value {
    let mut commands = serde_json::Map::new();
    for (name, _) in self::commands() {
        if let Some(s) = for_command(name) {
            commands.insert(name.to_string(), s);
        }
    }
    serde_json::json!({
        "schema_version": SCHEMA_VERSION,
        "dialect": DIALECT,
        "commands": commands,
    })
}

/// Formats JSON Schema 2020-12 defines; any other `format` is dropped.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Drops non-standard `format`s (schemars writes `uint`, `uint8`, `int64`, `double`…)
/// everywhere in a schema, so that strict validators (Ajv 2020) accept it.
pub fn standardize(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let drop = matches!(map.get("format"), Some(Value::String(f)) if !STANDARD_FORMATS.contains(&f.as_str()));
            if drop {
                map.remove("format");
            }
            for v in map.values_mut() {
                standardize(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(standardize),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn formats(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(f)) = m.get("format") {
                    out.push(f.clone());
                }
                m.values().for_each(|v| formats(v, out));
            }
            Value::Array(a) => a.iter().for_each(|v| formats(v, out)),
            _ => {}
        }
    }

    #[test]
    fn schemas_use_only_standard_formats() {
        let mut found = Vec::new();
        formats(&all(), &mut found);
        assert!(
            found.iter().all(|f| STANDARD_FORMATS.contains(&f.as_str())),
            "{found:?}"
        );
    }

    #[test]
    fn times_are_rfc3339_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_796_052_972), "2026-11-30T15:36:12Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }
}
