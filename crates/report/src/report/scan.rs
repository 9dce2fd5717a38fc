/*!
The reports of the scan family: `scan`, `merge`, `hook install`.

Besides the JSON fields, a report carries what its printers need and JSON must not show
(`#[serde(skip)]`): repository paths beside the shown ones (GitHub annotations and SARIF
resolve paths against the checkout), the rules' texts for SARIF, the changes for a
coloured diff.
*/

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Serialize;

use super::Diagnostics;
use super::Version;
use crate::change::ChangeSet;
use crate::change::RuleCount;
use crate::error::Exit;
use crate::levels::Severity;
use crate::scan::baseline::State as BaselineState;
use crate::scan::FindingFix;

/// What a scan does besides finding: the mode of `scan --json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScanMode {
    /// Findings only (no mode flag).
    Report,
    /// `--check`: the fixes computed and shown, nothing written.
    Check,
    /// `--stage` (and `-i` without `--apply`): the fixes staged as one preview.
    Stage,
    /// `--apply`: the fixes staged and applied.
    Apply,
}

impl ScanMode {
    /// Whether fixes are computed.
    pub fn fixing(self) -> bool {
        self != ScanMode::Report
    }
}

/// One rule of a scan.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ScanRule {
    pub id: String,
    pub language: String,
    #[schemars(with = "String")]
    pub severity: Severity,
    pub fixable: bool,
    pub source: String,
    /// The message template as written (SARIF's short description).
    #[serde(skip)]
    pub message: String,
    #[serde(skip)]
    pub note: Option<String>,
    #[serde(skip)]
    pub url: Option<String>,
}

/// A finding of a scan.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FindingRow {
    pub rule: String,
    /// `error`, `warning`, `info` or `hint`.
    #[schemars(with = "String")]
    pub severity: Severity,
    pub message: String,
    pub note: Option<String>,
    pub url: Option<String>,
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    /// The matched text.
    pub text: String,
    /// The rule has a fix.
    pub fixable: bool,
    /// The rule's `metadata`, with `--include-metadata` (when the rule has one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<serde_json::Value>,
    /// The repository path (`path` is as the front end shows paths).
    #[serde(skip)]
    pub repo_path: String,
    /// What the rule's fix does at this finding (SARIF `fixes`).
    #[serde(skip)]
    pub fix: Option<FindingFix>,
    /// Byte ranges in `text` of the comments inside the match (left out of its SARIF
    /// fingerprint, as of its `--baseline` key).
    #[serde(skip)]
    pub comments: Vec<(usize, usize)>,
    /// With `--baseline`: `new` (the change brought it) or `unchanged` (the base
    /// has it too); `absent` in the report's `absent` list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineState>,
    /// The source around the finding, for `--report-style rich` (which alone asks
    /// for it): not part of `--json`.
    #[serde(skip)]
    pub frame: Option<Frame>,
    /// The finding as ast-grep's `scan --json=stream` prints it (which alone asks for
    /// it).
    #[serde(skip)]
    pub ast_grep: Option<Box<SgFinding>>,
}

/// A finding of `scan --json=stream`, in ast-grep's shape: its match object (as
/// `grep --json=stream`'s, with the fix as `replacement`) and the rule's part, in
/// ast-grep 0.51.1's order of keys.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SgFinding {
    #[serde(flatten)]
    pub matched: super::SgMatch,
    pub rule_id: String,
    /// `error`, `warning`, `info` or `hint`, after `--error` and kin.
    pub severity: String,
    pub note: Option<String>,
    pub message: String,
    /// The rule's `labels`, else the match (primary) and what its relational rules
    /// matched (secondary).
    pub labels: Vec<SgLabel>,
    /// With `--include-metadata`, when the rule has some.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<serde_json::Value>,
}

/// A label of an ast-grep finding.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SgLabel {
    pub text: String,
    pub range: super::SgRange,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `primary` or `secondary`.
    pub style: String,
}

/// The lines of a file a finding's code frame shows: its labels' lines, and for a
/// fix the three lines on each side of the fix (its diff's context, as ast-grep's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The 1-based number of the first line of `text`.
    pub first_line: usize,
    /// Whole lines of the file, each with its line ending.
    pub text: String,
    /// What to underline: the match (primary) first, byte ranges in `text`.
    pub labels: Vec<FrameLabel>,
    /// The fix at this finding: the byte range of `text` it replaces, and the new text.
    pub fix: Option<(std::ops::Range<usize>, String)>,
}

impl Frame {
    /// The 1-based line and character column of byte `at` of `text`.
    pub fn position(&self, at: usize) -> (usize, usize) {
        let before = self.text.get(..at).unwrap_or(&self.text);
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (
            self.first_line + before.matches('\n').count(),
            before[line_start..].chars().count() + 1,
        )
    }
}

/// A labelled part of a finding (ast-grep's `labels`, or the match and what its
/// relational rules matched).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameLabel {
    /// Underlined with `^` (the match), else `-`.
    pub primary: bool,
    pub range: std::ops::Range<usize>,
    pub message: Option<String>,
}

impl FindingRow {
    pub fn of(f: &crate::scan::Finding, path: String) -> FindingRow {
        FindingRow {
            rule: f.rule.clone(),
            severity: f.severity,
            message: f.message.clone(),
            note: f.note.clone(),
            url: f.url.clone(),
            path,
            line: f.line,
            column: f.column,
            end_line: f.end_line,
            end_column: f.end_column,
            text: f.text.clone(),
            fixable: f.fixable,
            metadata: None,
            repo_path: f.path.clone(),
            fix: f.fix.clone(),
            comments: f.comments.clone(),
            baseline: None,
            frame: None,
            ast_grep: None,
        }
    }
}

/// Fixes in one file.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FixedFile {
    pub path: String,
    pub count: usize,
    pub rules: Vec<RuleCount>,
    pub introduces_parse_errors: bool,
    /// Fixes that repeat text their matched node keeps past the rule's pattern (the
    /// result holds it twice; flag `repeats-kept-text`).
    #[serde(default)]
    pub repeated_kept_text: usize,
    /// `introduces-parse-errors`, `repeats-kept-text`, `leaves-empty-block`.
    #[serde(default)]
    pub flags: Vec<crate::change::FileFlag>,
    /// The repository path (`path` is as the front end shows paths).
    #[serde(skip)]
    pub repo_path: String,
}

/// A rule that still changed a file when the pass bound was hit.
#[derive(Debug, Clone, Serialize)]
pub struct Unconverged {
    /// The repository path.
    pub path: String,
    pub rule: String,
    pub passes: usize,
    /// The path as the front end shows paths.
    #[serde(skip)]
    pub shown: String,
}

/// `scan --json`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ScanReport {
    pub schema_version: Version,
    /// `report`, `check`, `stage` or `apply`.
    #[schemars(with = "String")]
    pub mode: ScanMode,
    pub rules: Vec<ScanRule>,
    pub findings: Vec<FindingRow>,
    /// Findings of severity error (with `--baseline`, the new ones).
    pub error_count: usize,
    pub files_searched: usize,
    /// With `--baseline`: the base commit and how the findings compare with its.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Baseline>,
    /// With `--baseline`: the base's findings that have no match now (fixed, or
    /// their code removed), paths as at the base.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absent: Option<Vec<FindingRow>>,
    /// Not in `report` mode: findings left after the fixes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remaining: Option<Vec<FindingRow>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Fixes made (or that would be made).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fixes: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<FixedFile>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    // The schema has always left its shape open.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Value>")]
    pub unconverged: Option<Vec<Unconverged>>,
    /// The staged preview (`--stage`, `--apply`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applied: Option<bool>,
    /// `--apply --verify`: the check the fixes passed in a worktree of their own
    /// before they were applied. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<Box<crate::report::verify::VerifyReport>>,
    #[serde(flatten)]
    pub diagnostics: Diagnostics,
    /// What loading the rules had to say (a key the config has that is not honoured,
    /// a rule file with no active rule), and how many findings `--max-results` left
    /// out; in text, on stderr before the result.
    pub notices: Vec<String>,
    /// Files written and deleted by `--apply`.
    #[serde(skip)]
    pub written: usize,
    /// With `-i`: the fixes offered to the person (asked about, or decided by an
    /// answer for the rest of a file).
    #[serde(skip)]
    pub offered: Option<usize>,
    /// Files of the set left out by `--shard`.
    #[serde(skip)]
    pub other_shards: usize,
    /// `--cached`: the fixes are of the staged content, applied to the index too; the
    /// text's apply and undo commands say `--index`.
    #[serde(skip)]
    pub apply_index: bool,
    /// The command that makes the fixes a `--check` shows: the scan's own narrowing
    /// (`--cached`, `--changed-lines`, …) with `--apply`.
    #[serde(skip)]
    pub fix_command: String,
    /// The work tree, the base of SARIF's paths.
    #[serde(skip)]
    pub workdir: PathBuf,
    /// When the findings were printed as they came (`findings` is then empty): what
    /// the summary and the exit status need of them.
    #[serde(skip)]
    pub streamed: Option<Tally>,
}

/// The base of `scan --baseline REV` and the comparison's counts.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Baseline {
    /// The revision as given (`auto`: as chosen).
    pub rev: String,
    /// The base commit's full id.
    pub commit: String,
    /// Findings the change brought.
    pub new: usize,
    /// Findings the base has too.
    pub unchanged: usize,
    /// The base's findings gone now.
    pub absent: usize,
}

/// Counts of the findings a person is left with, kept when the rows themselves were
/// streamed out and not held.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// By severity: error, warning, info, hint.
    pub by_severity: [usize; 4],
    /// Findings whose rule has a fix.
    pub fixable: usize,
}

impl Tally {
    /// The counts of `rows`.
    pub fn of<'a>(rows: impl IntoIterator<Item = &'a FindingRow>) -> Tally {
        let mut tally = Tally::default();
        tally.add(rows);
        tally
    }

    /// Adds `rows` to the counts.
    pub fn add<'a>(&mut self, rows: impl IntoIterator<Item = &'a FindingRow>) {
        for f in rows {
            self.by_severity[Tally::slot(f.severity)] += 1;
            self.fixable += usize::from(f.fixable);
        }
    }

    /// The findings of `severity`.
    pub fn count(&self, severity: Severity) -> usize {
        self.by_severity[Tally::slot(severity)]
    }

    /// All the findings.
    pub fn total(&self) -> usize {
        self.by_severity.iter().sum()
    }

    fn slot(severity: Severity) -> usize {
        match severity {
            Severity::Error => 0,
            Severity::Warning => 1,
            Severity::Info => 2,
            Severity::Hint => 3,
        }
    }
}

impl ScanReport {
    /// The findings a person is left with: all of them in `report` mode, those the
    /// fixes leave otherwise; with `--baseline`, only the new ones.
    pub fn open_findings(&self) -> impl Iterator<Item = &FindingRow> {
        let rows = match &self.remaining {
            Some(rows) if self.mode.fixing() => rows,
            _ => &self.findings,
        };
        rows.iter()
            .filter(|f| f.baseline != Some(BaselineState::Unchanged))
    }

    /// The counts of [`ScanReport::open_findings`], also when they were streamed.
    pub fn open_tally(&self) -> Tally {
        match self.streamed {
            Some(tally) => tally,
            None => Tally::of(self.open_findings()),
        }
    }

    /// Whether there is no fix (none needed, or none accepted).
    pub fn no_fixes(&self) -> bool {
        self.files.as_ref().is_none_or(Vec::is_empty)
    }

    /// The exit status: 1 when an error finding is reported (`report`), when a fix
    /// would change or changed a file or an error finding remains (`--check`,
    /// `--apply`, the pre-commit convention), when `-i` staged nothing (as `edit`).
    pub fn exit(&self) -> Exit {
        let remaining_errors = self.open_tally().count(Severity::Error);
        let failed = match self.mode {
            ScanMode::Report => self.error_count > 0,
            ScanMode::Stage => self.offered.is_some() && self.no_fixes(),
            ScanMode::Check | ScanMode::Apply => !self.no_fixes() || remaining_errors > 0,
        };
        if failed {
            Exit::NothingFound
        } else {
            Exit::Ok
        }
    }
}

/// `merge --json`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MergeReport {
    pub schema_version: Version,
    pub id: String,
    pub commit: String,
    pub summary: String,
    /// The previews merged.
    pub merged: Vec<String>,
    /// Whether they were discarded (not with `--keep`).
    pub discarded: bool,
    pub files: Vec<String>,
    pub file_count: usize,
    /// The merged changes, for the diff.
    #[serde(skip)]
    pub changes: ChangeSet,
    /// Diff lines to render at most (0: no limit).
    #[serde(skip)]
    pub max_render: usize,
}

/// `hook install --json`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HookReport {
    pub schema_version: Version,
    /// The command the hook runs.
    pub command: String,
    pub path: String,
    /// Where a replaced hook was kept (`--force`).
    pub backup: Option<String>,
    /// Whether the hook was already installed as it is.
    pub unchanged: bool,
}
