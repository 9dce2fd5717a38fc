//! `test --json`: the verdicts of an ast-grep project's rule tests.

use schemars::JsonSchema;
use serde::Serialize;

use super::Version;
use crate::scan::ruletest::Snapshot;

/// `test --json`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TestReport {
    pub schema_version: Version,
    /// Rule tests found (test files' documents), before those whose rule is missing.
    pub tests: usize,
    /// Rules whose every case passed.
    pub passed: usize,
    /// Rules with a failing case.
    pub failed: usize,
    /// Every failing rule fails only on snapshots (`wrong`): `-U` would make them pass.
    pub snapshots_only: bool,
    /// One entry a tested rule, in the order the tests were found.
    pub rules: Vec<RuleVerdict>,
    /// Tests whose rule is not loaded (unknown id, or `severity: off` without
    /// `--include-off`): not run, not counted.
    pub not_found: Vec<String>,
    /// Snapshot files written (`-U`, or snapshots accepted with `-i`).
    pub written: Vec<String>,
    /// What was read but not used.
    pub warnings: Vec<String>,
}

impl TestReport {
    pub fn exit(&self) -> crate::error::Exit {
        if self.failed == 0 {
            crate::error::Exit::Ok
        } else {
            crate::error::Exit::NothingFound
        }
    }
}

/// One rule's verdict and its cases (the valid ones first).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RuleVerdict {
    pub id: String,
    pub verdict: Verdict,
    pub cases: Vec<CaseVerdict>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
    /// The test lists no case.
    Skip,
}

/// Whether a case is code the rule must not report, or must.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CaseKind {
    Valid,
    Invalid,
}

/// ast-grep's case statuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CaseStatus {
    /// A valid case, not reported.
    Validated,
    /// An invalid case, reported as its snapshot says.
    Reported,
    /// A snapshot accepted and written.
    Updated,
    /// An invalid case reported otherwise than its snapshot says, or without one.
    Wrong,
    /// An invalid case not reported.
    Missing,
    /// A valid case reported.
    Noisy,
    /// The fix cannot be applied.
    Error,
}

/// One case.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CaseVerdict {
    pub kind: CaseKind,
    pub status: CaseStatus,
    pub pass: bool,
    /// The case's code.
    pub code: String,
    /// `wrong`: the snapshot on file (none: no snapshot yet).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<Snapshot>,
    /// `wrong`, `updated`: what the rule reports now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<Snapshot>,
    /// `error`: why the fix failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
