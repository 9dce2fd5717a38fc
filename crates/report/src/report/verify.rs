//! `verify --json`: a preview's check in a worktree of its own.

use schemars::JsonSchema;
use serde::Serialize;

use super::Version;

/// `verify --json`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct VerifyReport {
    pub schema_version: Version,
    /// The preview verified.
    pub id: String,
    /// The command, as typed.
    pub command: String,
    /// The commit the worktree was checked out at (the preview's base; none on an
    /// unborn branch, where the worktree holds the preview's files alone).
    pub base: Option<String>,
    /// Files of the preview written (or removed) in the worktree.
    pub files: usize,
    /// The command exited 0 in time.
    pub passed: bool,
    /// Its exit status; none when a signal ended it.
    pub exit_code: Option<i32>,
    /// The signal that ended it (a timeout kills with SIGKILL).
    pub signal: Option<i32>,
    /// It ran out of time and was killed, with what it started.
    pub timed_out: bool,
    pub duration_ms: u64,
    /// What it printed, stdout and stderr together; its end when long.
    pub output: String,
    /// `output` is the last 64 KiB only.
    pub output_truncated: bool,
    /// What the check did beyond its worktree: the checkout's `node_modules` it wrote
    /// into (linked into the worktree), verify's Cargo target folder made and seeded.
    pub notes: Vec<String>,
    /// `--new-only`: the check on the base, and what the preview added to its output
    /// (none without `--new-only`). `passed` is then also true when the check fails on
    /// the base too and the preview adds no diagnostic line.
    pub new_only: Option<NewOnly>,
}

/// `verify --new-only`: the preview's check beside the base's.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct NewOnly {
    /// The check on the preview's base; none when the preview's check passed (no need).
    pub base_check: Option<BaseCheck>,
    /// The preview's diagnostic lines the base's output lacks (compared without the
    /// worktree's folder, numbers read as one), as printed.
    pub added: Vec<String>,
}

/// The check on the preview's base.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BaseCheck {
    /// It exited 0 in time there.
    pub passed: bool,
    pub exit_code: Option<i32>,
    /// It ran out of time there (nothing to compare with: the preview fails).
    pub timed_out: bool,
    /// Taken from an earlier run at the same base commit with the same command.
    pub cached: bool,
    /// How many diagnostic lines it printed there.
    pub diagnostics: usize,
}

impl VerifyReport {
    pub fn exit(&self) -> crate::error::Exit {
        if self.passed {
            crate::error::Exit::Ok
        } else {
            crate::error::Exit::NothingFound
        }
    }
}
