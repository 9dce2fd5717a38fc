//! The JSON Schema of every report, as `git astedit schema` prints it and the MCP
//! server's output schemas use: draft 2020-12, standard keywords and formats only
//! (schemars' `format: "uint"` and the like are dropped; `minimum: 0` says the same).
//! [`all`] is one document holding every command's output; [`for_command`] one
//! command's, standalone.

use schemars::JsonSchema;
use schemars::SchemaGenerator;
use serde_json::Value;

use super::*;

/// The JSON Schema dialect of every schema here.
pub const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// A command's report type, as schemas: standalone, or a definition in a shared
/// generator (a `$ref` to it).
#[derive(Clone, Copy)]
pub struct ReportSchema {
    pub standalone: fn() -> Value,
    pub subschema: fn(&mut SchemaGenerator) -> schemars::Schema,
}

/// [`ReportSchema`] of `T`.
fn report<T: JsonSchema>() -> ReportSchema {
    ReportSchema {
        standalone: of::<T>,
        subschema: SchemaGenerator::subschema_for::<T>,
    }
}

/// Every command with a `--json` output, and its report type.
pub fn commands() -> Vec<(&'static str, ReportSchema)> {
    vec![
        ("grep", report::<GrepReport>()),
        ("grep-stream", report::<SgMatch>()),
        ("edit", report::<StageReport>()),
        ("patch", report::<StageReport>()),
        ("run", report::<StageReport>()),
        ("scan", report::<ScanReport>()),
        ("scan-stream", report::<scan::SgFinding>()),
        ("hook", report::<HookReport>()),
        ("merge", report::<MergeReport>()),
        ("list", report::<ListReport>()),
        ("show", report::<ShowReport>()),
        ("apply", report::<ResolveReport>()),
        ("discard", report::<ResolveReport>()),
        ("resolve", report::<ResolveReport>()),
        ("undo", report::<ResolveReport>()),
        ("log", report::<LogReport>()),
        ("refresh", report::<RefreshReport>()),
        ("review", report::<review::ReviewOutput>()),
        ("trust", report::<trust::TrustReport>()),
        ("gc", report::<GcReport>()),
        ("lane", report::<lane::LaneReport>()),
        ("lane-merge", report::<lane::LaneMergeReport>()),
        ("allow", report::<super::consent::AllowReport>()),
        ("test", report::<ruletest::TestReport>()),
        ("verify", report::<verify::VerifyReport>()),
        ("pr", report::<PrReport>()),
        ("campaign", report::<campaign::CampaignReport>()),
        (
            "campaign-status",
            report::<campaign::CampaignStatusReport>(),
        ),
        (
            "campaign-matrix",
            report::<campaign::CampaignMatrixReport>(),
        ),
        (
            "campaign-targets",
            report::<campaign::CampaignTargetsReport>(),
        ),
        ("recover", report::<RecoverOutput>()),
        ("error", report::<ErrorReport>()),
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
    // Not an output: the campaign spec a user writes (TOML), as JSON Schema.
    if name == "campaign-spec" {
        return Some(of::<campaign::CampaignSpec>());
    }
    let (_, report) = commands().into_iter().find(|(n, _)| *n == name)?;
    if name == "error" {
        return Some((report.standalone)());
    }
    let mut ok = (report.standalone)();
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

/// Every command's output in one JSON Schema document: each report type once under
/// `$defs` (by its type name), each command under `$defs.<command>` (its report or the
/// error report; `error` is the error report alone), and the document itself the
/// union of the commands. `schema COMMAND` prints one of these on its own.
pub fn all() -> Value {
    let settings = schemars::generate::SchemaSettings::draft2020_12();
    let mut generator = settings.into_generator();
    let commands = self::commands();
    let mut by_command = Vec::with_capacity(commands.len());
    let error = generator.subschema_for::<ErrorReport>().to_value();
    for (name, report) in &commands {
        let report = match *name {
            "error" => error.clone(),
            _ => (report.subschema)(&mut generator).to_value(),
        };
        by_command.push((*name, report));
    }
    let mut defs = generator.take_definitions(true);
    for (name, report) in by_command {
        let schema = if name == "error" {
            report
        } else {
            serde_json::json!({
                "title": format!("git astedit {name} --json"),
                "description": "The command's report on success, or the error report.",
                "anyOf": [report, error],
            })
        };
        // Report types are named in CamelCase, commands in lowercase: no clash.
        debug_assert!(!defs.contains_key(name), "{name}");
        defs.insert(name.to_string(), schema);
    }
    let mut value = serde_json::json!({
        "$schema": DIALECT,
        "title": "git astedit --json",
        "description": format!(
            "Every `--json` output of git astedit, schema version {SCHEMA_VERSION}. `$defs.<command>` is one \
             command's output, e.g. `{{\"$ref\": \"#/$defs/grep\"}}`; a document fits this \
             schema when it fits one command's."
        ),
        "anyOf": commands
            .iter()
            .map(|(name, _)| serde_json::json!({ "$ref": format!("#/$defs/{name}") }))
            .collect::<Vec<_>>(),
        "$defs": defs,
    });
    standardize(&mut value);
    value
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
