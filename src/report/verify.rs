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
