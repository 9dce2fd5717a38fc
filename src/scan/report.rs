/*!
Findings as text for people, GitHub workflow annotations and SARIF for CI, and JSON.

Pure functions from findings to text or JSON values: the CLI chooses one, an agent
front-end can reuse them. SARIF is built from the typed structs of [`super::sarif`]. Paths are passed through `path_of` so that the caller picks
the convention (relative to the current folder for terminals, to the repository root
for GitHub and SARIF, which resolve paths against the checkout).
*/

use std::fmt::Write;

use super::Finding;
use super::RuleSet;
use super::Severity;

/// `path:line:col: severity[rule-id]: message`, one line per finding.
pub fn text(findings: &[Finding], path_of: impl Fn(&str) -> String) -> String {
    let mut out = String::new();
    for f in findings {
        let _ = writeln!(
            out,
            "{}:{}:{}: {}[{}]: {}",
            path_of(&f.path),
            f.line,
            f.column,
            f.severity.as_str(),
            f.rule,
            crate::text::one_line(&f.message)
        );
    }
    out
}

/// GitHub Actions workflow commands (`::error file=…,line=…::message`), which the
/// runner turns into annotations on the pull request.
pub fn github(findings: &[Finding]) -> String {
    let mut out = String::new();
    for f in findings {
        let level = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info | Severity::Hint => "notice",
        };
        let _ = writeln!(
            out,
            "::{level} file={},line={},col={},endLine={},endColumn={},title={}::{}",
            escape_property(&f.path),
            f.line,
            f.column,
            f.end_line,
            f.end_column,
            escape_property(&f.rule),
            escape_data(&f.message)
        );
    }
    out
}

/// One workflow command about a whole file (`::error file=…,title=…::message`).
pub fn github_file(level: &str, path: &str, title: &str, message: &str) -> String {
    format!(
        "::{level} file={},title={}::{}\n",
        escape_property(path),
        escape_property(title),
        escape_data(message)
    )
}

/// Workflow-command data escaping (the message part).
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Workflow-command property escaping (`file=`, `title=`).
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// A SARIF 2.1.0 log with one run (see [`super::sarif`]): every loaded rule as a
/// reporting descriptor, every finding as a result pointing at its region, paths
/// relative to the work tree `root` (`%SRCROOT%`).
pub fn sarif(
    rules: &RuleSet,
    findings: &[Finding],
    root: Option<&std::path::Path>,
) -> super::sarif::Log {
    super::sarif::log(rules, findings, root)
}

/// The JSON shape of one finding (`--json`), path as `path_of` renders it.
pub fn finding_json(f: &Finding, path_of: impl Fn(&str) -> String) -> serde_json::Value {
    let mut v = serde_json::to_value(f).unwrap_or_default();
    v["path"] = serde_json::Value::String(path_of(&f.path));
    v
}
