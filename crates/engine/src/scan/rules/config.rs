//! The config files' formats (`astedit.toml`, `sgconfig.yml` with its `customLanguages`,
//! `languageInjections` and `noIgnore`), the check on the paths they name, and how
//! their errors and paths are shown.

use std::path::Path;
use std::path::PathBuf;

use serde::Deserialize;
use serde_value::Value;

use super::Error;
use crate::repo::Repo;

/// A `languageInjections` entry as written (ast-grep's schema).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SerializableInjection {
    #[serde(flatten)]
    pub(super) core: ast_grep_config::SerializableRuleCore,
    pub(super) host_language: String,
    pub(super) injected: Injected,
}

#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum Injected {
    Static(String),
    Dynamic(Vec<String>),
}

/// `astedit.toml`: rules inline, plus optional ast-grep rule files.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct AsteditToml {
    #[serde(default)]
    pub(super) rules: Vec<Value>,
    /// ast-grep rule YAML files or folders of them, relative to this file.
    #[serde(default)]
    pub(super) rule_files: Vec<String>,
    /// Folders of ast-grep global utility rules, relative to this file.
    #[serde(default)]
    pub(super) util_dirs: Vec<String>,
    #[serde(default)]
    pub(super) max_passes: Option<usize>,
    /// `--fmt`'s formatters (read by `ops::fmt`, not here).
    #[serde(default)]
    #[allow(dead_code)]
    fmt: Option<Value>,
    /// `git astedit steps`' ordered steps (read by `ops::steps`, not here).
    #[serde(default)]
    #[allow(dead_code)]
    steps: Option<Value>,
}

/// The parts of an ast-grep `sgconfig.yml` that concern rules; other keys are ignored.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SgConfig {
    #[serde(default)]
    pub(super) rule_dirs: Vec<String>,
    #[serde(default)]
    pub(super) util_dirs: Vec<String>,
    #[serde(default)]
    pub(super) language_globs: Option<Value>,
    #[serde(default)]
    pub(super) custom_languages: Option<Value>,
    #[serde(default)]
    pub(super) language_injections: Option<Value>,
    /// ast-grep's `--no-ignore` values, for the project (a value or a list).
    #[serde(default)]
    pub(super) no_ignore: Option<Value>,
}

/// Reads `noIgnore`: ast-grep's `--no-ignore` values (`hidden`, `dot`, `exclude`,
/// `global`, `parent`, `vcs`), one or a list. Whether the scan reads the files git
/// ignores: any of the last four (git's ignore sources are not told apart, as with
/// `grep --no-ignore`); hidden files are always read and `.ignore` files never.
pub(super) fn no_ignore(value: &Value, file: &str) -> Result<bool, Error> {
    const VALUES: &[&str] = &["hidden", "dot", "exclude", "global", "parent", "vcs"];
    let bad = |detail: String| Error::BadConfigFile {
        file: file.to_string(),
        detail: format!("noIgnore: {detail}"),
    };
    let items = match value {
        Value::Seq(items) => items.clone(),
        Value::Unit | Value::Option(None) => Vec::new(),
        one => vec![one.clone()],
    };
    let mut reads_ignored = false;
    for item in items {
        let Value::String(name) = item else {
            return Err(bad("expected a list of ignore kinds".into()));
        };
        if !VALUES.contains(&name.as_str()) {
            return Err(bad(format!("'{name}' is not one of {}", VALUES.join(", "))));
        }
        reads_ignored |= !matches!(name.as_str(), "hidden" | "dot");
    }
    Ok(reads_ignored)
}

/// The `customLanguages` an `sgconfig.yml` declares (`config`, displayed as `file`),
/// read but not loaded.
pub(super) fn custom_specs(
    value: &Value,
    config: &Path,
    file: &str,
) -> Result<Vec<crate::lang::CustomSpec>, Error> {
    let bad = |detail: String| Error::BadConfigFile {
        file: file.to_string(),
        detail: format!("customLanguages: {detail}"),
    };
    let Value::Map(map) = value else {
        return Err(bad("expected a mapping of language names".into()));
    };
    let dir = config.parent().unwrap_or(Path::new("."));
    let mut out = Vec::new();
    for (name, spec) in map {
        let Value::String(name) = name else {
            return Err(bad("language names must be strings".into()));
        };
        let Value::Map(spec) = spec else {
            return Err(bad(format!("{name}: expected a mapping")));
        };
        let field = |key: &str| spec.get(&Value::String(key.into()));
        let text = |key: &str| -> Result<Option<String>, Error> {
            match field(key) {
                None | Some(Value::Unit) | Some(Value::Option(None)) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(bad(format!("{name}: {key} must be a string"))),
            }
        };
        let one_char = |key: &str| -> Result<Option<char>, Error> {
            match text(key)? {
                None => Ok(None),
                Some(s) => {
                    let mut chars = s.chars();
                    match (chars.next(), chars.next()) {
                        (Some(c), None) => Ok(Some(c)),
                        _ => Err(bad(format!("{name}: {key} must be one character"))),
                    }
                }
            }
        };
        let library = match field("libraryPath") {
            Some(Value::String(p)) => p.clone(),
            Some(Value::Map(per)) => {
                let target = env!("ASTEDIT_TARGET");
                match per.get(&Value::String(target.into())) {
                    Some(Value::String(p)) => p.clone(),
                    _ => {
                        return Err(bad(format!(
                            "{name}: libraryPath names no library for this platform \
                             ({target})"
                        )))
                    }
                }
            }
            None => return Err(bad(format!("{name}: libraryPath is missing"))),
            Some(_) => return Err(bad(format!("{name}: libraryPath must be a path"))),
        };
        let extensions = match field("extensions") {
            None => Vec::new(),
            Some(Value::Seq(items)) => items
                .iter()
                .map(|v| match v {
                    Value::String(e) => Ok(e.trim_start_matches('.').to_string()),
                    _ => Err(bad(format!("{name}: extensions must be strings"))),
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(bad(format!("{name}: extensions must be a list"))),
        };
        out.push(crate::lang::CustomSpec {
            name: name.clone(),
            library: dir.join(&library),
            library_shown: library,
            symbol: text("languageSymbol")?,
            meta_var: one_char("metaVarChar")?,
            expando: one_char("expandoChar")?,
            extensions,
        });
    }
    Ok(out)
}

/// Every `.yml`/`.yaml` file under `dir`, in path order (so rule order is stable).
/// Symbolic links inside `dir` are not followed, to a folder or to a file (as
/// ast-grep's walk): a link may lead out of the repository, or back into a folder
/// above it, which would make the walk endless.
pub fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<(PathBuf, std::fs::FileType)> = std::fs::read_dir(dir)?
        .filter_map(|e| {
            let e = e.ok()?;
            Some((e.path(), e.file_type().ok()?))
        })
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (p, kind) in entries {
        if kind.is_dir() {
            yaml_files(&p, out)?;
        } else if kind.is_file() && p.extension().is_some_and(|e| e == "yml" || e == "yaml") {
            out.push(p);
        }
    }
    Ok(())
}

/// Refuses a folder or file that a project file inside the repository names outside
/// it (symbolic links resolved): a clone's `sgconfig.yml` (CI running a pull
/// request's) must not make a scan read the runner's other files. A config from
/// outside the repository (given with `-c`) is the person's own and names anything.
pub fn check_inside(
    repo: Option<&Repo>,
    config: &Path,
    file: &str,
    key: &str,
    entry: &str,
) -> Result<(), Error> {
    let Some(repo) = repo else {
        return Ok(());
    };
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let root = canonical(&repo.workdir);
    let dir = canonical(config.parent().unwrap_or(Path::new(".")));
    if !dir.starts_with(&root) {
        return Ok(());
    }
    let target = dir.join(entry);
    // A path that does not exist is reported where it is read.
    let Ok(resolved) = std::fs::canonicalize(&target) else {
        return Ok(());
    };
    if resolved.starts_with(&root) {
        return Ok(());
    }
    Err(Error::BadConfigFile {
        file: file.to_string(),
        detail: format!(
            "{key}: '{entry}' is outside the repository (a project file names only \
             folders and files inside it)"
        ),
    })
}

/// An error and its sources on one line: ast-grep-config puts the detail in the chain,
/// under wrappers that only say that parsing failed.
pub(super) fn chain(e: &dyn std::error::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cur: Option<&dyn std::error::Error> = Some(e);
    while let Some(err) = cur {
        let text = err.to_string();
        let text = text.trim_end_matches('.').to_string();
        if !text.starts_with("Fail to parse yaml") && parts.last() != Some(&text) {
            parts.push(text);
        }
        cur = err.source();
    }
    parts.join(": ")
}

/// An sgconfig under another name: a YAML mapping with `ruleDirs` and no `rule`.
pub(super) fn looks_like_sgconfig(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    match ast_grep_config::from_str::<Value>(&text) {
        Ok(Value::Map(map)) => {
            map.contains_key(&Value::String("ruleDirs".into()))
                && !map.contains_key(&Value::String("rule".into()))
        }
        _ => false,
    }
}

/// A YAML error in a project file, as shown: where and what is wrong, never the
/// file's text. The parser's message quotes the lines around the error, and serde's
/// quotes a scalar it did not expect; a file in a rule or test folder that is not a
/// rule (an `.env`-like file, a key) would have its secret printed into a CI log.
pub fn yaml_error(e: &serde_saphyr::Error) -> String {
    let text = e.without_snippet().to_string();
    let text = text.lines().next().unwrap_or("").trim();
    let text = text.strip_prefix("error: ").unwrap_or(text);
    redact_scalars(text)
}

/// `invalid type: string "…", expected …` without what is between the quotes.
fn redact_scalars(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('"') {
        out.push_str(&rest[..start]);
        match rest[start + 1..].find('"') {
            Some(len) => {
                out.push_str("(text not shown)");
                rest = &rest[start + len + 2..];
            }
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// A config path as the user reads it: relative to the current folder when inside the
/// repository, else as is.
pub(super) fn display(repo: Option<&Repo>, path: &Path) -> String {
    let Some(repo) = repo else {
        return path.display().to_string();
    };
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    match canonical.strip_prefix(&repo.workdir) {
        Ok(rel) => repo.display_path(&rel.to_string_lossy().replace('\\', "/")),
        Err(_) => path.display().to_string(),
    }
}
