//! `ast_steps`: run the `[[steps]]` of an astedit.toml in order, each on the previous
//! one's result, and stage what they change as one preview.

use std::path::Component;
use std::path::Path;

use git_astedit::error::UsageError;
use git_astedit::ops::steps::StepsRequest;
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

/// Input of `ast_steps`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepsInput {
    /// The file holding the [[steps]], relative to the repository root (default:
    /// astedit.toml).
    #[serde(default)]
    pub config: Option<String>,
    /// Run only these steps, by name (or number, for a step without one).
    #[serde(default)]
    pub steps: Vec<String>,
    /// Git pathspecs (relative to the repository root) limiting every step's files.
    #[serde(default)]
    pub paths: Vec<String>,
    /// Why this change is made; recorded in the preview and the journal.
    #[serde(default)]
    pub reason: Option<String>,
    /// Return at most this many diff lines (default 400; 0 means no line limit,
    /// still at most 64 KiB).
    #[serde(default, deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = DEFAULT_MAX_DIFF_LINES))]
    pub max_diff_lines: Option<usize>,
}

pub fn ast_steps(call: &Call, input: StepsInput) -> Result<Done, Error> {
    if let Some(config) = &input.config {
        // The server reads files of its repository only.
        let inside = Path::new(config)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if !inside {
            return Err(UsageError(format!(
                "config '{config}' is not a path inside the repository (relative to its root, \
                 without `..`)"
            ))
            .into());
        }
    }
    let (repo, notes) = call.open()?;
    let request = StepsRequest {
        config: input.config.map(|c| repo.workdir.join(c)),
        only: input.steps,
        pathspecs: input.paths,
        max_file_size: git_astedit::files::DEFAULT_MAX_FILE_SIZE,
        staging: staging(call, input.reason, None),
    };
    let mut out = git_astedit::ops::steps::run(&repo, &request, &call.cancel)?;
    staged(call, &mut out, input.max_diff_lines);
    Done::new(render::agent::stage::steps_text(&out, &notes), &out)
}
