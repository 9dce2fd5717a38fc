//! `run --json`: what the command did, beside the staging report's usual facts.

use schemars::JsonSchema;
use serde::Serialize;

/// The command `run` executed in its worktree, and how it ended.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RunFacts {
    /// The command as a person would type it.
    pub command: String,
    /// The program and its arguments, as run (no shell).
    pub argv: Vec<String>,
    /// Its exit status; none when a signal ended it.
    pub exit_code: Option<i32>,
    /// The signal that ended it (a timeout kills with SIGKILL).
    pub signal: Option<i32>,
    /// It ran out of time and was killed, with what it started.
    pub timed_out: bool,
    pub duration_ms: u64,
    /// What it printed, stdout and stderr together; its end when long.
    pub output: String,
    /// `output` is the end of what it printed only.
    pub output_truncated: bool,
    /// Files it changed outside the pathspecs (left out of the preview).
    pub left_out: usize,
    /// `--apply --verify`: the check the preview passed before it was applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified: Option<Box<super::verify::VerifyReport>>,
}

impl RunFacts {
    /// Whether the command exited 0 in time.
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }

    /// How it ended, in words: `exited 0`, `exited 2`, `timed out`, `was killed by
    /// signal 9`.
    pub fn how(&self) -> String {
        match (self.timed_out, self.exit_code, self.signal) {
            (true, ..) => "timed out".to_string(),
            (false, Some(code), _) => format!("exited {code}"),
            (false, None, Some(sig)) => format!("was killed by signal {sig}"),
            (false, None, None) => "ended without a status".to_string(),
        }
    }
}
