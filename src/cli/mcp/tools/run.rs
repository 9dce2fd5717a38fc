//! `run`: run a command in a worktree of the work tree and stage what it changed.
//! Offered only by a server started with `--allow-run` (it executes commands).

use std::time::Duration;

use git_astedit::ops::run::RunRequest;
use git_astedit::render;
use git_astedit::Error;
use schemars::JsonSchema;
use serde::Deserialize;

use super::count;
use super::edit::staged;
use super::edit::staging;
use super::Call;
use super::Done;
use super::DEFAULT_MAX_DIFF_LINES;

/// Input of `run`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunInput {
    /// The program and its arguments, e.g. ["ruff", "check", "--fix", "."]; run as
    /// they are (no shell: for a shell line, ["sh", "-c", "…"]) at the repository root
    /// of a temporary worktree.
    pub command: Vec<String>,
    /// Git pathspecs (relative to the repository root): stage only what the command
    /// changed there. Default: everything it changed.
    #[serde(default)]
    pub paths: Vec<String>,
    /// Why this change is made; recorded in the preview and the journal.
    #[serde(default)]
    pub reason: Option<String>,
    /// Stage what the command changed even when it exits non-zero.
    #[serde(default)]
    pub allow_failure: bool,
    /// Kill the command (and what it started) after this many seconds (default 600).
    #[serde(default, deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = 600))]
    pub timeout_secs: Option<usize>,
    /// Return at most this many diff lines (default 400; 0 means no line limit,
    /// still at most 64 KiB).
    #[serde(default, deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = DEFAULT_MAX_DIFF_LINES))]
    pub max_diff_lines: Option<usize>,
}

pub fn run(call: &Call, input: RunInput) -> Result<Done, Error> {
    let (repo, notes) = call.open()?;
    let request = RunRequest {
        argv: input.command,
        pathspecs: input.paths,
        allow_failure: input.allow_failure,
        timeout: input
            .timeout_secs
            .map(|s| Duration::from_secs(s.max(1) as u64))
            .unwrap_or(git_astedit::ops::run::DEFAULT_TIMEOUT),
        verify: None,
        staging: staging(call, input.reason, None),
    };
    let mut out = git_astedit::ops::run::run(&repo, &request, &call.cancel)?;
    staged(call, &mut out, input.max_diff_lines);
    Done::new(render::agent::stage::run_text(&out, &notes), &out)
}
