//! `hook install`: the git pre-commit hook that runs `scan --check --cached
//! --changed-lines` (with `--all`, `scan --check --cached`).

use std::path::PathBuf;

use crate::repo::Repo;
use crate::report::HookReport;
use crate::report::Version;
use crate::scan::hook;
use crate::Error;

/// How to install the hook.
#[derive(Debug, Clone)]
pub struct HookRequest {
    /// Replace a pre-commit hook astedit did not write (it is kept beside it).
    pub force: bool,
    /// The binary the hook runs when `git-astedit` is not on PATH.
    pub fallback: Option<PathBuf>,
    /// Check every staged file whole, not only the lines being committed.
    pub all: bool,
}

pub fn run(repo: &Repo, req: &HookRequest) -> Result<HookReport, Error> {
    let installed = hook::install(repo, req.force, req.fallback.as_deref(), req.all)?;
    Ok(HookReport {
        schema_version: Version,
        command: format!("git astedit {}", hook::arguments(req.all)),
        path: installed.path.display().to_string(),
        backup: installed.backup.as_ref().map(|b| b.display().to_string()),
        unchanged: installed.unchanged,
    })
}
