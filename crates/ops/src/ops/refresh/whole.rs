//! The refresh of a preview re-derived whole ([`Whole`]: a `run`'s command): the
//! recipe runs again on the tree as it is now, and what it changes this time is the
//! successor. A path it still changes exactly as before is kept; one it no longer
//! changes drops out; one it changes now for the first time joins (the recipe, not the
//! preview, decides its scope). There are no conflicts: the recipe saw the user's
//! edits.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use super::recipe::Rederive;
use super::successor_meta;
use super::FileOutcome;
use super::How;
use super::Recipe;
use super::RefreshError;
use super::RefreshRequest;
use super::Refreshed;
use crate::change::FileChange;
use crate::change::FileContent;
use crate::ops::recipe::old_count;
use crate::ops::recipe::Derivation;
use crate::ops::recipe::Whole;
use crate::repo::Repo;
use crate::txn;
use crate::txn::refresh::Held;
use crate::txn::Preview;
use crate::txn::StoredEntry;
use crate::Error;

/// `refresh` of a whole preview: its recipe runs without the repository lock (it may
/// take minutes); the lock is taken for the swap, and the preview must still be
/// pending then.
pub(super) fn refresh(
    repo: &Repo,
    old: Preview,
    recipe: Recipe,
    req: &RefreshRequest,
) -> Result<Refreshed, Error> {
    let unit = recipe.unit();
    let Rederive::Whole(whole) = recipe.rederive(&old.meta, &mut Vec::new()) else {
        unreachable!("a whole recipe re-derives whole")
    };
    let done = whole.derive(repo, &old)?;
    let held = txn::refresh::hold(repo, "refresh")?;
    let old = txn::find(repo, Some(&old.id))?;
    finish(repo, &held, old, done, req, unit)
}

/// The refresh of a whole preview with the lock held all along (`apply --refresh`).
pub(super) fn rederive(
    repo: &Repo,
    held: &Held,
    old: Preview,
    whole: &dyn Whole,
    req: &RefreshRequest,
    unit: &str,
) -> Result<Refreshed, Error> {
    let done = whole.derive(repo, &old)?;
    finish(repo, held, old, done, req, unit)
}

/// Compares the new derivation with the old preview and stages it as the successor
/// (none when it changes exactly what the old one does).
fn finish(
    repo: &Repo,
    held: &Held,
    old: Preview,
    done: Derivation,
    req: &RefreshRequest,
    unit: &str,
) -> Result<Refreshed, Error> {
    let old_entries: BTreeMap<&str, &StoredEntry> =
        old.entries.iter().map(|e| (e.path.as_str(), e)).collect();
    let mut stager = txn::Stager::new(repo);
    let mut outcomes = Vec::new();
    let mut same = done.changes.changes.len() == old.entries.len();
    for (change, file) in done.changes.changes.iter().zip(&done.files) {
        let known = old_entries.get(change.path.as_str());
        let kept = match known {
            Some(e) => same_sides(repo, e, change)?,
            None => false,
        };
        same &= kept;
        outcomes.push(FileOutcome {
            path: change.path.clone(),
            before: known.map(|_| old_count(&old.meta, &change.path)),
            now: Some(file.count),
            how: if kept { How::Kept } else { How::Rerun },
            why: None,
        });
        stager.add_borrowed(change)?;
    }
    let now: BTreeSet<&str> = done
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
            before: Some(old_count(&old.meta, &e.path)),
            now: None,
            how: How::Dropped,
            why: Some(done.dropped.into()),
        });
    }
    outcomes.sort_by(|a, b| a.path.cmp(&b.path));
    let notes = done.notes;
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
    let mut meta = successor_meta(&old, done.files.clone(), req.agent.clone(), unit);
    (done.successor)(&mut meta, &old.id);
    let new = txn::refresh::supersede(repo, held, &old, stager, &meta)?;
    Ok(Refreshed {
        old,
        new: Some(new),
        files: outcomes,
        notes,
    })
}

/// Whether a stored path and a new change hold the same blobs and modes.
fn same_sides(repo: &Repo, e: &StoredEntry, change: &FileChange) -> Result<bool, Error> {
    let side = |c: &Option<FileContent>| -> Result<_, Error> {
        c.as_ref()
            .map(|c| Ok((super::blob_id(repo, &c.bytes)?, c.mode)))
            .transpose()
    };
    Ok(side(&change.before)? == e.before && side(&change.after)? == e.after)
}
