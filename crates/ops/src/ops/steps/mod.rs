/*!
`steps`: the ordered `[[steps]]` of an `astedit.toml` (each a rule set or ops), each
run on the tree the steps before it produced, in memory, and staged as one preview.
A step may export values it captured (`export = { NEW = "$NEW" }`); a later step that
writes `$NEW` runs once per value, with the value in its patterns, templates, imports
and rules. The preview records the steps themselves (rule files read in), so `refresh`
runs them all again on the tree as it is then ([`recipe`]).
*/

use std::path::PathBuf;

use super::stage::settle;
use super::stage::stage_changes;
use super::stage::Staging;
use crate::cancel::Cancel;
use crate::change::PreviewKind;
use crate::change::PreviewMeta;
use crate::diff::render_diffs;
use crate::diff::DiffFile;
use crate::error::Classify;
use crate::error::Exit;
use crate::repo::Repo;
use crate::report::Diagnostics;
use crate::report::StageReport;
use crate::report::StageText;
use crate::report::StagedFile;
use crate::Error;

pub mod engine;
pub mod recipe;
pub mod spec;

pub use recipe::StepsRecipe;

/// Why the steps could not run.
#[derive(Debug, thiserror::Error)]
pub enum StepsError {
    #[error("{file}: [[steps]]: {detail}")]
    Config { file: String, detail: String },
    #[error("{0} declares no [[steps]]")]
    NoSteps(String),
    #[error("no step is named '{name}' (the steps: {known})")]
    UnknownStep { name: String, known: String },
    /// A step's rules, patterns or templates are wrong (the inner error's code).
    #[error("{step}: {error}")]
    InStep { step: String, error: Box<Error> },
    #[error("preview {0} recorded no steps to run again (staged by an older version)")]
    NoRecipe(String),
}

impl Classify for StepsError {
    fn code(&self) -> &'static str {
        match self {
            StepsError::Config { .. } => "bad-steps",
            StepsError::NoSteps(_) => "no-steps",
            StepsError::UnknownStep { .. } => "unknown-step",
            StepsError::InStep { error, .. } => error.code(),
            StepsError::NoRecipe(_) => "no-recipe",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            StepsError::InStep { error, .. } => error.exit(),
            StepsError::NoRecipe(_) => Exit::Refused,
            _ => Exit::BadInput,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            StepsError::NoSteps(_) => Some(
                "declare the steps as [[steps]] tables, each with rules or ops (see the \
                 codemods chapter of the guide), or pass --config FILE"
                    .into(),
            ),
            StepsError::InStep { error, .. } => error.hint(),
            _ => None,
        }
    }
    fn details(&self) -> Option<serde_json::Value> {
        match self {
            StepsError::InStep { step, error } => Some(serde_json::json!({
                "step": step, "code": error.code(), "details": error.details(),
            })),
            _ => None,
        }
    }
}

/// Steps to run and stage.
#[derive(Debug, Clone)]
pub struct StepsRequest {
    /// The file holding the `[[steps]]` (relative to the current folder); default:
    /// astedit.toml at the root.
    pub config: Option<PathBuf>,
    /// Run only the steps of these names (in the file's order); none: every step.
    pub only: Vec<String>,
    /// Git pathspecs relative to the current folder (none: the current folder).
    pub pathspecs: Vec<String>,
    pub max_file_size: u64,
    pub staging: Staging,
}

/// Runs the steps of `req` and stages what they change as one preview.
pub fn run(repo: &Repo, req: &StepsRequest, cancel: &Cancel) -> Result<StageReport, Error> {
    let (steps, config) = spec::load(repo, req.config.as_deref())?;
    let (steps, numbers) = select(steps, &req.only)?;
    let recipe = StepsRecipe {
        config,
        steps,
        numbers,
        pathspecs: req.pathspecs.clone(),
        prefix: repo.prefix.clone().unwrap_or_default(),
        max_file_size: req.max_file_size,
    };
    let done = recipe.execute(repo)?;
    let staging = &req.staging;
    let mut meta = preview_meta(&done, &recipe, staging.reason.clone());
    cancel.check()?;
    let preview = stage_changes(repo, &done.changes, &mut meta, staging.agent.clone())?;
    let paths = staging.audience.paths();
    let files = meta.files.iter();
    let files = files.map(|f| StagedFile::of_meta(f, paths.show(repo, &f.path)));
    let mut report = StageReport {
        steps: Some(done.rows),
        diagnostics: Diagnostics {
            warnings: done.warnings,
            ..Default::default()
        },
        text: StageText {
            diff: staging.diff.map(|d| {
                render_diffs(&DiffFile::from_changes(&done.changes), d.color, d.max_lines)
            }),
            ..Default::default()
        },
        ..StageReport::of_meta(&meta, files.collect())
    };
    settle(repo, &mut report, preview.as_ref(), staging, cancel)?;
    Ok(report)
}

/// The steps named in `only` (all when it is empty), in the file's order, with their
/// numbers there (none when all run). A step that uses a value only a step left out
/// exports is refused.
fn select(
    steps: Vec<spec::StepSpec>,
    only: &[String],
) -> Result<(Vec<spec::StepSpec>, Vec<usize>), Error> {
    if only.is_empty() {
        return Ok((steps, Vec::new()));
    }
    let known: Vec<String> = steps
        .iter()
        .enumerate()
        .map(|(i, s)| s.name.clone().unwrap_or_else(|| (i + 1).to_string()))
        .collect();
    for name in only {
        if !known.contains(name) {
            return Err(StepsError::UnknownStep {
                name: name.clone(),
                known: known.join(", "),
            }
            .into());
        }
    }
    let mut kept = Vec::new();
    let mut numbers = Vec::new();
    let mut left_out = std::collections::BTreeMap::new();
    for (i, (step, name)) in steps.into_iter().zip(&known).enumerate() {
        if only.contains(name) {
            if let Some(var) = step
                .mentioned()
                .into_iter()
                .find(|v| left_out.contains_key(v))
            {
                return Err(StepsError::Config {
                    file: "--step".into(),
                    detail: format!(
                        "step '{name}' uses ${var}, which step '{}' exports; select it too",
                        left_out[&var]
                    ),
                }
                .into());
            }
            kept.push(step);
            numbers.push(i + 1);
        } else {
            for var in step.export.keys() {
                left_out.insert(var.clone(), name.clone());
            }
        }
    }
    Ok((kept, numbers))
}

/// The preview metadata of the steps' outcome, with the recipe recorded.
pub fn preview_meta(
    done: &engine::Outcome,
    recipe: &StepsRecipe,
    reason: Option<String>,
) -> PreviewMeta {
    let replacements = done.files.iter().map(|f| f.count).sum();
    let mut meta = PreviewMeta {
        kind: PreviewKind::Steps,
        summary: summary(replacements, done.files.len(), recipe.steps.len()),
        reason,
        replacements,
        files: done.files.clone(),
        ..Default::default()
    };
    crate::ops::recipe::Recorded::record(recipe, &mut meta);
    meta
}

/// `5 changes in 3 files (2 steps)`.
pub fn summary(changes: usize, files: usize, steps: usize) -> String {
    format!(
        "{} in {} ({})",
        crate::text::plural(changes, "change"),
        crate::text::plural(files, "file"),
        crate::text::plural(steps, "step")
    )
}
