/*!
`run` (and the server's `run` tool): any tool's change as a preview. The command runs
in a temporary worktree holding the work tree's files ([`exec`]); what it changed
there, within the pathspecs, is staged as a `run` preview recording the command, how
it ended and the end of its output. The user's tree is written only by `apply`, with
the stale checks, journal and undo every preview has; `refresh` runs the command again
on the tree as it is then.
*/

use std::time::Duration;

use super::apply::VerifyPlan;
use super::stage::settle_verified;
use super::stage::stage_changes;
use super::stage::Staging;
use crate::cancel::Cancel;
use crate::change::FileMeta;
use crate::change::PreviewKind;
use crate::change::PreviewMeta;
use crate::diff::render_diffs;
use crate::diff::DiffFile;
use crate::repo::Repo;
use crate::report::Diagnostics;
use crate::report::StageReport;
use crate::report::StageText;
use crate::report::StagedFile;
use crate::Error;

pub mod exec;
pub mod recipe;

pub use exec::Recipe;
pub use exec::RunError;

/// The default time the command may take.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// A command to run and stage.
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// The program and its arguments (run as they are, no shell).
    pub argv: Vec<String>,
    /// Git pathspecs relative to the current folder: only changes there are staged
    /// (none: every change the command made).
    pub pathspecs: Vec<String>,
    /// Stage what a command that exits non-zero changed.
    pub allow_failure: bool,
    /// Killed (with what it started) after this long.
    pub timeout: Duration,
    /// With `staging.apply`: check the preview first; apply only if it passes.
    pub verify: Option<VerifyPlan>,
    pub staging: Staging,
}

/// Runs the command of `req` in a worktree of the current tree and stages what it
/// changed (see the module docs).
pub fn run(repo: &Repo, req: &RunRequest, cancel: &Cancel) -> Result<StageReport, Error> {
    let shown = super::verify::VerifyCommand::Argv(req.argv.clone()).display();
    super::trust::allow_run(
        req.staging.allow_run,
        "run",
        vec![format!("command: {}", crate::text::escape_line(&shown))],
    )?;
    let recipe = Recipe {
        argv: req.argv.clone(),
        prefix: repo.prefix.clone().unwrap_or_default(),
        pathspecs: req.pathspecs.clone(),
        allow_failure: req.allow_failure,
        timeout_secs: req.timeout.as_secs().max(1),
    };
    let done = exec::execute(repo, &recipe, cancel)?;
    let staging = &req.staging;
    let mut meta = preview_meta(&done, &recipe, staging.reason.clone());
    cancel.check()?;
    let preview = stage_changes(repo, &done.changes, &mut meta, staging.agent.clone())?;
    let paths = staging.audience.paths();
    let mut facts = done.facts;
    let mut diagnostics = Diagnostics::default();
    if facts.left_out > 0 {
        diagnostics.warnings.push(format!(
            "{} the command changed outside the pathspecs {} left out",
            crate::text::plural(facts.left_out, "file"),
            if facts.left_out == 1 { "was" } else { "were" },
        ));
    }
    let mut verified_line = None;
    if let (Some(preview), Some(plan), Some(_)) = (&preview, &req.verify, &staging.apply) {
        // A failed check leaves the preview pending, unwritten.
        let (check, line) =
            super::apply::check(repo, Some(preview.id.clone()), plan, &staging.agent, cancel)?;
        verified_line = Some(line);
        facts.verified = Some(Box::new(check));
    }
    let files = meta.files.iter();
    let files = files.map(|f| StagedFile::of_meta(f, paths.show(repo, &f.path)));
    let mut report = StageReport {
        run: Some(Box::new(facts)),
        diagnostics,
        text: StageText {
            diff: staging.diff.map(|d| {
                render_diffs(&DiffFile::from_changes(&done.changes), d.color, d.max_lines)
            }),
            ..Default::default()
        },
        ..StageReport::of_meta(&meta, files.collect())
    };
    settle_verified(
        repo,
        &mut report,
        preview.as_ref(),
        staging,
        verified_line,
        cancel,
    )?;
    Ok(report)
}

/// The preview metadata of an execution: a file is one change, flagged when added or
/// deleted; the recipe and how the command ended recorded in `details`.
pub fn preview_meta(done: &exec::Executed, recipe: &Recipe, reason: Option<String>) -> PreviewMeta {
    let files: Vec<FileMeta> = done
        .changes
        .changes
        .iter()
        .map(|c| FileMeta {
            path: c.path.clone(),
            count: 1,
            flags: exec::flags(c),
        })
        .collect();
    let mut meta = PreviewMeta {
        kind: PreviewKind::Run,
        summary: exec::summary(files.len(), &recipe.display()),
        reason,
        replacements: files.len(),
        files,
        ..Default::default()
    };
    recipe.record_with(&mut meta, &done.facts);
    meta
}
