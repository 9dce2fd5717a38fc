/*!
Rule tests, as `ast-grep test` runs them: each test file names a rule (`id`) and lists
code the rule must not report (`valid`) and code it must report (`invalid`); for an
invalid case, the snapshot (`__snapshots__/<id>-snapshot.yml`) records what the rule
reports there (its labels) and what its fix makes of the code (`fixed`).

The verdicts are ast-grep's, case by case: `validated` and `reported` pass; `noisy` (a
valid case reported), `missing` (an invalid case not reported), `wrong` (a snapshot
that differs or is absent) and `error` (the fix cannot be applied) fail; `updated` is a
wrong snapshot the user accepted. A rule passes when every case passes. Matching goes
through ast-grep-config's own compiled rule (`RuleConfig::matcher`, `get_labels`,
`fixer`), as `ast-grep test` does, so a verdict here is the verdict there.

Snapshot files are read and written in ast-grep's format (YAML: `id`, `snapshots`: a
map from the case's code to `fixed` and `labels`, keys sorted), so a project can keep
using either tool. This engine reads files; it knows nothing of git.
*/

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::path::Path;
use std::path::PathBuf;

use crate::lang::Lang;
use ast_grep_config::LabelStyle;
use ast_grep_config::RuleConfig;
use ast_grep_core::tree_sitter::LanguageExt;
use serde::Deserialize;
use serde::Serialize;

/// The folder under a test folder that holds snapshots, unless `snapshotDir` says.
pub const SNAPSHOT_DIR: &str = "__snapshots__";

/// One `testConfigs` entry of `sgconfig.yml`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TestConfig {
    pub test_dir: PathBuf,
    #[serde(default)]
    pub snapshot_dir: Option<PathBuf>,
}

/// The part of `sgconfig.yml` this engine reads.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TestKeys {
    #[serde(default)]
    test_configs: Option<Vec<TestConfig>>,
}

/// One rule test: the rule's id and its cases.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct TestCase {
    pub id: String,
    #[serde(default)]
    pub valid: Vec<String>,
    #[serde(default)]
    pub invalid: Vec<String>,
}

/// What a rule reports on one invalid case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Snapshot {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed: Option<String>,
    #[serde(default)]
    pub labels: Vec<LabelSnapshot>,
}

/// One label of a report: the text it covers and its byte range in the case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LabelSnapshot {
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub style: LabelStyle,
    pub start: usize,
    pub end: usize,
}

/// One snapshot file: a rule's snapshots, by the code of the case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotFile {
    pub id: String,
    #[serde(default)]
    pub snapshots: BTreeMap<String, Snapshot>,
}

/// Every test and snapshot found, and where each rule's snapshots belong.
#[derive(Debug, Default)]
pub struct Harness {
    /// In the order found (test folders in config order, files in path order).
    pub cases: Vec<TestCase>,
    pub snapshots: HashMap<String, SnapshotFile>,
    /// The snapshot folder of each rule's test.
    pub snapshot_dirs: HashMap<String, PathBuf>,
    /// The test folder of each rule's test (where its snapshot folder is made).
    pub test_dirs: HashMap<String, PathBuf>,
    /// Things read but not used (a second snapshot file for one rule).
    pub warnings: Vec<String>,
}

/// The verdict on one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaseStatus {
    /// A valid case, not reported.
    Validated,
    /// An invalid case, reported (as its snapshot says, when snapshots are checked).
    Reported,
    /// A wrong snapshot the user accepted; it is written back.
    Updated { source: String, snapshot: Snapshot },
    /// An invalid case reported otherwise than its snapshot says, or without one.
    Wrong {
        source: String,
        actual: Snapshot,
        expected: Option<Snapshot>,
    },
    /// An invalid case the rule does not report.
    Missing(String),
    /// A valid case the rule reports.
    Noisy(String),
    /// The rule's fix cannot be applied to the case.
    Error { source: String, message: String },
}

impl CaseStatus {
    pub fn is_pass(&self) -> bool {
        matches!(
            self,
            CaseStatus::Validated | CaseStatus::Reported | CaseStatus::Updated { .. }
        )
    }

    /// Turns a wrong snapshot into an accepted one; false for any other status.
    pub fn accept(&mut self) -> bool {
        let CaseStatus::Wrong { source, actual, .. } = self else {
            return false;
        };
        *self = CaseStatus::Updated {
            source: std::mem::take(source),
            snapshot: actual.clone(),
        };
        true
    }

    /// The letter ast-grep prints for the case in a rule's summary line.
    pub fn letter(&self) -> char {
        match self {
            CaseStatus::Validated | CaseStatus::Reported => '.',
            CaseStatus::Wrong { .. } => 'W',
            CaseStatus::Updated { .. } => 'U',
            CaseStatus::Missing(_) => 'M',
            CaseStatus::Noisy(_) => 'N',
            CaseStatus::Error { .. } => 'E',
        }
    }
}

/// The verdicts on one rule's cases: the valid ones first, then the invalid ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleResult {
    pub id: String,
    pub cases: Vec<CaseStatus>,
    /// The code of each case, in the same order.
    pub codes: Vec<String>,
    /// How many of the cases (the first ones) are valid cases.
    pub valid: usize,
}

impl RuleResult {
    pub fn passed(&self) -> bool {
        self.cases.iter().all(CaseStatus::is_pass)
    }

    /// Failing only because snapshots differ (ast-grep tells this apart).
    pub fn fails_on_snapshots_only(&self) -> bool {
        !self.passed()
            && self
                .cases
                .iter()
                .all(|c| c.is_pass() || matches!(c, CaseStatus::Wrong { .. }))
    }

    /// Snapshots to write: the accepted ones.
    pub fn accepted(&self) -> impl Iterator<Item = (&str, &Snapshot)> {
        self.cases.iter().filter_map(|c| match c {
            CaseStatus::Updated { source, snapshot } => Some((source.as_str(), snapshot)),
            _ => None,
        })
    }
}

/// A test or snapshot file that cannot be read or parsed.
#[derive(Debug, thiserror::Error)]
pub enum TestError {
    #[error("cannot read {path}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a rule test: {detail}")]
    BadTest { path: String, detail: String },
    #[error("{path}: not a snapshot file: {detail}")]
    BadSnapshot { path: String, detail: String },
    #[error("{path}: testConfigs: {detail}")]
    BadConfig { path: String, detail: String },
    #[error("cannot write {path}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot encode the snapshots of rule '{id}': {detail}")]
    Encode { id: String, detail: String },
    #[error("refusing to write the snapshots of rule '{id}': {detail}")]
    UnsafeSnapshot { id: String, detail: String },
}

impl crate::error::Classify for TestError {
    fn code(&self) -> &'static str {
        match self {
            TestError::Read { .. } => "read-test",
            TestError::BadTest { .. } => "bad-test",
            TestError::BadSnapshot { .. } => "bad-snapshot",
            TestError::BadConfig { .. } => "bad-config",
            TestError::Write { .. } => "write-snapshot",
            TestError::Encode { .. } => "encode-snapshot",
            TestError::UnsafeSnapshot { .. } => "unsafe-snapshot",
        }
    }
    fn exit(&self) -> crate::error::Exit {
        match self {
            TestError::Read { .. } | TestError::Write { .. } | TestError::Encode { .. } => {
                crate::error::Exit::Internal
            }
            _ => crate::error::Exit::BadInput,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            TestError::BadTest { .. } => Some(
                "a rule test is YAML with `id`, and lists `valid` and `invalid` of code".into(),
            ),
            TestError::BadSnapshot { .. } => Some(
                "snapshot files are written by `git astedit test -U` (or `ast-grep test -U`); \
                 remove a broken one and update"
                    .into(),
            ),
            TestError::UnsafeSnapshot { .. } => Some(
                "snapshots are written only inside the test folder, into real folders: \
                 give the rule an id without '/', and replace a symbolic link on the way \
                 with a folder"
                    .into(),
            ),
            _ => None,
        }
    }
}

/// The `testConfigs` of an `sgconfig.yml` (none: an empty list).
pub fn test_configs(sgconfig: &Path, display: &str) -> Result<Vec<TestConfig>, TestError> {
    let text = std::fs::read_to_string(sgconfig).map_err(|source| TestError::Read {
        path: display.to_string(),
        source,
    })?;
    let keys: TestKeys = ast_grep_config::from_str(&text).map_err(|e| TestError::BadConfig {
        path: display.to_string(),
        detail: super::rules::yaml_error(&e),
    })?;
    Ok(keys.test_configs.unwrap_or_default())
}

/// Reads the tests and snapshots of `configs` (folders relative to `base`), keeping
/// the rules whose id `keep` accepts. `display` names a path in messages.
pub fn load_harness(
    base: &Path,
    configs: &[TestConfig],
    keep: &dyn Fn(&str) -> bool,
    display: &dyn Fn(&Path) -> String,
) -> Result<Harness, TestError> {
    let mut harness = Harness::default();
    for config in configs {
        let test_dir = base.join(&config.test_dir);
        let snapshot_dir = test_dir.join(
            config
                .snapshot_dir
                .as_deref()
                .unwrap_or(Path::new(SNAPSHOT_DIR)),
        );
        let mut files = Vec::new();
        super::rules::yaml_files(&test_dir, &mut files).map_err(|source| TestError::Read {
            path: display(&test_dir),
            source,
        })?;
        for file in files {
            let text = std::fs::read_to_string(&file).map_err(|source| TestError::Read {
                path: display(&file),
                source,
            })?;
            if file.starts_with(&snapshot_dir) {
                let snaps: SnapshotFile =
                    ast_grep_config::from_str(&text).map_err(|e| TestError::BadSnapshot {
                        path: display(&file),
                        detail: super::rules::yaml_error(&e),
                    })?;
                if !keep(&snaps.id) {
                    continue;
                }
                let id = snaps.id.clone();
                if harness.snapshots.insert(id.clone(), snaps).is_some() {
                    harness
                        .warnings
                        .push(format!("found duplicate test case snapshot for `{id}`"));
                }
            } else {
                let cases: Vec<TestCase> =
                    ast_grep_config::from_multiple(&text).map_err(|e| TestError::BadTest {
                        path: display(&file),
                        detail: super::rules::yaml_error(&e),
                    })?;
                for case in cases {
                    if keep(&case.id) {
                        harness
                            .snapshot_dirs
                            .insert(case.id.clone(), snapshot_dir.clone());
                        harness.test_dirs.insert(case.id.clone(), test_dir.clone());
                        harness.cases.push(case);
                    }
                }
            }
        }
    }
    Ok(harness)
}

/// The verdicts on `case` under `rule`; snapshots are compared when `snapshots` is
/// given (`None`: `--skip-snapshot-tests`, an invalid case only has to be reported).
pub fn verify(
    case: &TestCase,
    rule: &RuleConfig<Lang>,
    snapshots: Option<Option<&SnapshotFile>>,
) -> RuleResult {
    let mut cases = Vec::with_capacity(case.valid.len() + case.invalid.len());
    for code in &case.valid {
        let root = rule.language.ast_grep(code);
        cases.push(if root.root().find(&rule.matcher).is_some() {
            CaseStatus::Noisy(code.clone())
        } else {
            CaseStatus::Validated
        });
    }
    for code in &case.invalid {
        let status = match snapshots {
            None => {
                let root = rule.language.ast_grep(code);
                if root.root().find(&rule.matcher).is_some() {
                    CaseStatus::Reported
                } else {
                    CaseStatus::Missing(code.clone())
                }
            }
            Some(file) => {
                let expected = file.and_then(|f| f.snapshots.get(code));
                match snapshot_of(rule, code) {
                    Ok(None) => CaseStatus::Missing(code.clone()),
                    Err(message) => CaseStatus::Error {
                        source: code.clone(),
                        message,
                    },
                    Ok(Some(actual)) if expected == Some(&actual) => CaseStatus::Reported,
                    Ok(Some(actual)) => CaseStatus::Wrong {
                        source: code.clone(),
                        actual,
                        expected: expected.cloned(),
                    },
                }
            }
        };
        cases.push(status);
    }
    RuleResult {
        id: case.id.clone(),
        cases,
        codes: case.valid.iter().chain(&case.invalid).cloned().collect(),
        valid: case.valid.len(),
    }
}

/// What `rule` reports on `code`: the labels of its first match, and the code with
/// that match fixed (the first fix, as ast-grep applies it). `None`: no match.
pub fn snapshot_of(rule: &RuleConfig<Lang>, code: &str) -> Result<Option<Snapshot>, String> {
    let mut root = rule.language.ast_grep(code);
    let labels = {
        let node = root.root();
        let Some(found) = node.find(&rule.matcher) else {
            return Ok(None);
        };
        rule.get_labels(&found)
            .into_iter()
            .map(|label| {
                let range = label.range();
                LabelSnapshot {
                    source: code.get(range.clone()).unwrap_or_default().to_string(),
                    message: label.message.map(str::to_string),
                    style: label.style,
                    start: range.start,
                    end: range.end,
                }
            })
            .collect()
    };
    let Some(fix) = rule.fixer.first() else {
        return Ok(Some(Snapshot {
            fixed: None,
            labels,
        }));
    };
    root.replace(&rule.matcher, fix)?;
    Ok(Some(Snapshot {
        fixed: Some(root.generate()),
        labels,
    }))
}

/// Writes the accepted snapshots of `results` into their rules' snapshot files, kept
/// with the snapshots already there; returns the files written.
pub fn write_accepted(
    results: &[RuleResult],
    harness: &Harness,
    display: &dyn Fn(&Path) -> String,
) -> Result<Vec<PathBuf>, TestError> {
    let mut written = Vec::new();
    for result in results {
        let mut accepted = result.accepted().peekable();
        if accepted.peek().is_none() {
            continue;
        }
        let Some(dir) = harness.snapshot_dirs.get(&result.id) else {
            continue;
        };
        let mut file = harness
            .snapshots
            .get(&result.id)
            .cloned()
            .unwrap_or_else(|| SnapshotFile {
                id: result.id.clone(),
                snapshots: BTreeMap::new(),
            });
        for (source, snapshot) in accepted {
            file.snapshots.insert(source.to_string(), snapshot.clone());
        }
        let text = serde_saphyr::to_string(&file).map_err(|e| TestError::Encode {
            id: result.id.clone(),
            detail: e.to_string(),
        })?;
        let test_dir = harness.test_dirs.get(&result.id).unwrap_or(dir);
        check_snapshot_path(&result.id, test_dir, dir, display)?;
        std::fs::create_dir_all(dir).map_err(|source| TestError::Write {
            path: display(dir),
            source,
        })?;
        let path = dir.join(format!("{}-snapshot.yml", result.id));
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(TestError::UnsafeSnapshot {
                id: result.id.clone(),
                detail: format!("{} is a symbolic link", display(&path)),
            });
        }
        std::fs::write(&path, text).map_err(|source| TestError::Write {
            path: display(&path),
            source,
        })?;
        written.push(path);
    }
    Ok(written)
}

/// Refuses a snapshot file that would land outside `test_dir`: a rule id naming a
/// folder (`../x`), a snapshot folder leaving it, or a symbolic link on the way down
/// from it (a committed `__snapshots__` link would make `test -U` write where it
/// points).
fn check_snapshot_path(
    id: &str,
    test_dir: &Path,
    dir: &Path,
    display: &dyn Fn(&Path) -> String,
) -> Result<(), TestError> {
    let unsafe_snapshot = |detail: String| TestError::UnsafeSnapshot {
        id: id.to_string(),
        detail,
    };
    if id.is_empty() || id.contains(['/', '\\', '\0']) {
        return Err(unsafe_snapshot(
            "the id would name a file in another folder".into(),
        ));
    }
    let Ok(below) = dir.strip_prefix(test_dir) else {
        return Err(unsafe_snapshot(format!(
            "{} is not inside the test folder {}",
            display(dir),
            display(test_dir)
        )));
    };
    let mut at = test_dir.to_path_buf();
    for part in below.components() {
        match part {
            std::path::Component::Normal(name) => at.push(name),
            std::path::Component::CurDir => continue,
            _ => {
                return Err(unsafe_snapshot(format!(
                    "{} leaves the test folder",
                    display(dir)
                )))
            }
        }
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(unsafe_snapshot(format!(
                    "{} is a symbolic link",
                    display(&at)
                )))
            }
            // The rest is made as real folders.
            Err(_) => break,
            Ok(_) => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(yaml: &str) -> RuleConfig<Lang> {
        let full = format!("id: t\nlanguage: TypeScript\n{yaml}");
        let ser: ast_grep_config::SerializableRuleConfig<Lang> =
            ast_grep_config::from_str(&full).expect("rule parses");
        RuleConfig::try_from(ser, &Default::default()).expect("rule compiles")
    }

    fn case(valid: &[&str], invalid: &[&str]) -> TestCase {
        TestCase {
            id: "t".into(),
            valid: valid.iter().map(|s| s.to_string()).collect(),
            invalid: invalid.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn valid_and_invalid_without_snapshots() {
        let r = rule("rule: {pattern: 'let x = $A'}");
        let res = verify(&case(&["var x = 1"], &["let x = 1"]), &r, None);
        assert_eq!(res.cases, vec![CaseStatus::Validated, CaseStatus::Reported]);
        let res = verify(&case(&["let x = 1"], &["var x = 1"]), &r, None);
        assert_eq!(
            res.cases,
            vec![
                CaseStatus::Noisy("let x = 1".into()),
                CaseStatus::Missing("var x = 1".into())
            ]
        );
        assert!(!res.passed());
        assert!(!res.fails_on_snapshots_only());
    }

    #[test]
    fn snapshot_has_labels_and_fix() {
        let r = rule("rule: {pattern: 'let x = $A'}\nfix: 'const x = $A'");
        let snap = snapshot_of(&r, "let x = 42;").unwrap().unwrap();
        // The match is the whole declaration, `;` included, and the template has none
        // (as in ast-grep).
        assert_eq!(snap.fixed.as_deref(), Some("const x = 42"));
        assert_eq!(snap.labels.len(), 1);
        assert_eq!(snap.labels[0].source, "let x = 42;");
        assert_eq!(snap.labels[0].style, LabelStyle::Primary);
        assert_eq!((snap.labels[0].start, snap.labels[0].end), (0, 11));
    }

    #[test]
    fn missing_snapshot_is_wrong_until_accepted() {
        let r = rule("rule: {pattern: 'let x = $A'}");
        let mut res = verify(&case(&[], &["let x = 1"]), &r, Some(None));
        assert!(matches!(
            res.cases[0],
            CaseStatus::Wrong { expected: None, .. }
        ));
        assert!(res.fails_on_snapshots_only());
        assert!(res.cases[0].accept());
        assert!(res.passed());
        assert_eq!(res.accepted().count(), 1);
    }

    #[test]
    fn snapshot_file_round_trips_through_yaml() {
        let r = rule("rule: {pattern: 'let x = $A'}");
        let mut snapshots = BTreeMap::new();
        let code = "let x = {\n  a: 1,\n};";
        snapshots.insert(code.to_string(), snapshot_of(&r, code).unwrap().unwrap());
        let file = SnapshotFile {
            id: "t".into(),
            snapshots,
        };
        let text = serde_saphyr::to_string(&file).unwrap();
        let back: SnapshotFile = ast_grep_config::from_str(&text).unwrap();
        assert_eq!(back, file);
        let res = verify(&case(&[], &[code]), &r, Some(Some(&back)));
        assert_eq!(res.cases, vec![CaseStatus::Reported]);
    }
}
