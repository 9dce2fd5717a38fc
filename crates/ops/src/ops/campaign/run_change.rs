//! A campaign's `[change] run`: the command run in each repository's checkout as
//! `git astedit run` runs it (a worktree of the checkout, the change staged as a `run`
//! preview); `campaign refresh` re-runs it through the preview's refresh.

use crate::cancel::Cancel;
use crate::ops::run::RunRequest;
use crate::ops::stage::Staging;
use crate::repo::Repo;
use crate::report::campaign::RepoSpec;
use crate::report::campaign::RunSpec;
use crate::Error;

/// Refuses a `run` that names no program.
pub(super) fn check(change: &crate::report::campaign::ChangeSpec) -> Result<(), String> {
    match &change.run {
        Some(run) if run.argv().first().is_none_or(|p| p.trim().is_empty()) => {
            Err("[change] run names no command".into())
        }
        _ => Ok(()),
    }
}

/// Runs the command in `repo` and stages what it changed: the preview id, its files,
/// their count, and no parse failures (a command's files are not parsed).
#[allow(clippy::type_complexity)] // the shape `stage::run_change` returns
pub(super) fn stage(
    repo: &Repo,
    run: &RunSpec,
    spec: &RepoSpec,
    staging: Staging,
) -> Result<(Option<String>, Vec<String>, usize, Vec<String>), Error> {
    let req = RunRequest {
        argv: run.argv(),
        pathspecs: spec.pathspecs.clone(),
        allow_failure: false,
        timeout: crate::ops::run::DEFAULT_TIMEOUT,
        verify: None,
        staging,
    };
    let r = crate::ops::run::run(repo, &req, &Cancel::never())?;
    Ok((
        r.id,
        r.files.iter().map(|f| f.path.clone()).collect(),
        r.replacements,
        Vec::new(),
    ))
}
