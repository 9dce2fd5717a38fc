//! The refresh of a `run` preview: its recorded command runs again on the tree as it
//! is now, and what it changes this time is the successor. A path the command still
//! changes exactly as before is kept; one it no longer changes drops out; one it
//! changes now for the first time joins (the command, not the preview, decides its
//! scope). There are no conflicts: the command saw the user's edits.

use std::collections::BTreeMap;

use super::successor_meta;
use super::FileOutcome;
use super::How;
use super::RefreshError;
use super::RefreshRequest;
use super::Refreshed;
use crate::cancel::Cancel;
use crate::change::FileMeta;
use crate::ops::run::exec;
use crate::ops::run::exec::Recipe;
use crate::ops::run::exec::RunError;
use crate::repo::Repo;
use crate::txn;
use crate::txn::refresh::Held;
use crate::txn::Preview;
use crate::txn::StoredEntry;
use crate::Error;

/// `refresh` of a `run` preview: the command runs without the repository lock (it may
/// take minutes); the lock is taken for the swap, and the preview must still be
/// pending then.
pub(super) fn refresh(repo: &Repo, old: Preview, req: &RefreshRequest) -> Result<Refreshed, Error> {
    let done = execute(repo, &old)?;
    let held = txn::refresh::hold(repo, "refresh")?;
    let old = txn::find(repo, Some(&old.id))?;
    finish(repo, &held, old, done, req)
}

/// The refresh of a `run` preview with the lock held all along (`apply --refresh`).
pub(super) fn rederive(
    repo: &Repo,
    held: &Held,
    old: Preview,
    req: &RefreshRequest,
) -> Result<Refreshed, Error> {
    let done = execute(repo, &old)?;
    finish(repo, held, old, done, req)
}

fn execute(repo: &Repo, old: &Preview) -> Result<exec::Executed, Error> {
    let recipe = Recipe::of(&old.meta).ok_or_else(|| RunError::NoRecipe(old.id.clone()))?;
    exec::execute(repo, &recipe, &Cancel::never())
}

/// Compares the new execution with the old preview and stages it as the successor
/// (none when it changes exactly what the old one does).
fn finish(
    repo: &Repo,
    held: &Held,
    old: Preview,
    done: exec::Executed,
    req: &RefreshRequest,
) -> Result<Refreshed, Error> {
    let old_entries: BTreeMap<&str, &StoredEntry> =
        old.entries.iter().map(|e| (e.path.as_str(), e)).collect();
    let mut stager = txn::Stager::new(repo);
    let mut outcomes = Vec::new();
    let mut files = Vec::new();
    let mut same = done.changes.changes.len() == old.entries.len();
    for change in &done.changes.changes {
        let known = old_entries.get(change.path.as_str());
        let kept = match known {
            Some(e) => same_sides(repo, e, change)?,
            None => false,
        };
        same &= kept;
        outcomes.push(FileOutcome {
            path: change.path.clone(),
            before: known.map(|_| 1),
            now: Some(1),
            how: if kept { How::Kept } else { How::Rerun },
            why: None,
        });
        files.push(FileMeta {
            path: change.path.clone(),
            count: 1,
            flags: exec::flags(change),
        });
        stager.add_borrowed(change)?;
    }
    let now: std::collections::BTreeSet<&str> = done
        .changes
        .changes
        .iter()
        .map(|c| c.path.as_str())
        .collect();
    for e in old
        .entries
        .iter()
        .filter(|e| !now.contains(e.path.as_str()))
    {
        outcomes.push(FileOutcome {
            path: e.path.clone(),
            before: Some(1),
            now: None,
            how: How::Dropped,
            why: Some("the command no longer changes it".into()),
        });
    }
    outcomes.sort_by(|a, b| a.path.cmp(&b.path));
    let notes = vec![format!(
        "re-ran `{}`: it {}",
        done.facts.command,
        done.facts.how()
    )];
    if same {
        return Ok(Refreshed {
            old,
            new: None,
            files: outcomes,
            notes,
        });
    }
    if stager.is_empty() {
        return Err(RefreshError::Empty(old.id.clone()).into());
    }
    let mut meta = successor_meta(&old, files, req.agent.clone());
    if let Some(recipe) = Recipe::of(&old.meta) {
        recipe.record(&mut meta, &done.facts);
        meta.summary = format!(
            "{} (refreshed from {})",
            exec::summary(meta.files.len(), &recipe.display()),
            old.id
        );
    }
    let new = txn::refresh::supersede(repo, held, &old, stager, &meta)?;
    Ok(Refreshed {
        old,
        new: Some(new),
        files: outcomes,
        notes,
    })
}

/// Whether a stored path and a new change hold the same blobs and modes.
fn same_sides(
    repo: &Repo,
    e: &StoredEntry,
    change: &crate::change::FileChange,
) -> Result<bool, Error> {
    let side = |c: &Option<crate::change::FileContent>| -> Result<_, Error> {
        c.as_ref()
            .map(|c| Ok((super::blob_id(repo, &c.bytes)?, c.mode)))
            .transpose()
    };
    Ok(side(&change.before)? == e.before && side(&change.after)? == e.after)
}
