//! Staging a scan's fixes as one preview with the scan recorded, and applying it.

use super::super::recipe::Recorded;
use super::recipe;
use super::Ran;
use super::ScanRequest;
use crate::repo::Repo;
use crate::report::ScanMode;
use crate::scan;
use crate::txn;
use crate::Error;

/// What staging the fixes made: the preview, and with `--apply` what was written
/// and the check it passed.
#[derive(Default)]
pub(super) struct Staged {
    pub(super) id: Option<String>,
    pub(super) written: Option<usize>,
    pub(super) verified: Option<Box<crate::report::verify::VerifyReport>>,
}

/// Stages the fixes as one preview with the scan recorded (`--stage`, `--apply`),
/// and applies it as `apply` would (`--apply`, `--apply --verify`).
pub(super) fn stage(
    repo: &Repo,
    req: &ScanRequest,
    (plan, shard): (&scan::rules::Plan, Option<scan::Shard>),
    opts: &scan::Options,
    outcome: &scan::ScanOutcome,
    ran: &mut Ran,
) -> Result<Staged, Error> {
    let unstaged = std::mem::take(&mut ran.unstaged);
    if !matches!(req.mode, ScanMode::Stage | ScanMode::Apply) {
        return Ok(Staged::default());
    }
    if outcome.changes.is_empty() {
        // Fixes declined for being in files that could not be staged are still refused.
        super::super::stage::refuse(unstaged)?;
        return Ok(Staged::default());
    }
    let mut meta = outcome.meta(plan, (req.input.cached, shard), req.reason.clone());
    meta.agent = req.agent.clone();
    let asked = ran.offered.is_some();
    recipe::ScanRecipe::new(repo, plan, req, opts, asked).record(&mut meta);
    if req.fmt {
        super::super::fmt::record(
            &mut meta,
            &super::super::fmt::Formatters::load(&repo.workdir)?,
        );
    }
    for _ in &outcome.changes.changes {
        opts.cancel.test_delay()?;
    }
    if req.input.cached {
        super::super::stage::refuse_unstaged(repo, &outcome.changes, unstaged)?;
    }
    // The stager, file by file (the changes are held for the diff anyway), with where
    // each fix is, which `review` reads instead of scanning again.
    let mut stager = txn::Stager::new(repo);
    for c in &outcome.changes.changes {
        stager.add_borrowed(c)?;
    }
    stager.record_sites(sites_record(outcome));
    let preview = stager.finish(&meta)?;
    let mut staged = Staged::default();
    if req.mode == ScanMode::Apply {
        // A failed check leaves the fixes staged as a pending preview, unwritten.
        let applied = super::super::apply::run_as_staged(
            repo,
            &super::super::apply::ApplyRequest::new(
                Some(preview.id.clone()),
                false,
                Vec::new(),
                super::super::apply::ApplyOptions {
                    reason: req.reason.clone(),
                    agent: req.agent.clone(),
                    // Fixes of the staged content keep the index what the work tree is.
                    index: req.input.cached,
                    // `scan --apply --verify`: the command the user typed.
                    allow_run: true,
                    ..Default::default()
                },
                req.verify.clone(),
            )?,
        )?;
        staged.written = Some(applied.written.len() + applied.deleted.len());
        staged.verified = applied.verified;
    }
    staged.id = Some(preview.id);
    Ok(staged)
}

/// The record of where each staged fix is ([`super::super::review::record`]), for the files
/// whose fixes, taken as `review` takes them, make the staged text exactly.
fn sites_record(outcome: &scan::ScanOutcome) -> Option<Vec<u8>> {
    use super::super::review::located;
    use rayon::prelude::*;
    let mut fixes: std::collections::HashMap<&str, Vec<(String, scan::FindingFix)>> =
        std::collections::HashMap::new();
    for f in &outcome.findings {
        if let Some(fix) = &f.fix {
            fixes
                .entry(f.path.as_str())
                .or_default()
                .push((f.rule.clone(), fix.clone()));
        }
    }
    let files: Vec<(&str, Vec<located::Located>)> = outcome
        .changes
        .changes
        .par_iter()
        .filter_map(|c| {
            let (b, a) = (c.before.as_ref()?, c.after.as_ref()?);
            if b.mode != a.mode {
                return None;
            }
            let before = std::str::from_utf8(&b.bytes).ok()?;
            let after = std::str::from_utf8(&a.bytes).ok()?;
            let all = located::of_fixes(before, fixes.get(c.path.as_str())?.iter().cloned());
            Some((c.path.as_str(), located::exact(before, after, &all)?))
        })
        .collect();
    let mut record = super::super::review::record::Writer::new();
    for (path, sites) in &files {
        record.file(path, sites);
    }
    record.finish()
}
