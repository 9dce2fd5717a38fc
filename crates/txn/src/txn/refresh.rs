/*!
The transaction half of `refresh`: the lock a refresh (and `apply --refresh`) holds
while it reads the work tree and re-derives a preview, and the swap that makes the
re-derived preview pending in place of the old one.

The swap is one ref transaction: the old preview's ref goes, the successor's ref
comes, and a `refreshed` event naming the successor is appended to the journal. So a
crash before it (the fault point `refresh-before-swap`) leaves the old preview
pending and untouched, with at most some unreferenced objects for `git gc`; a crash
after it leaves the successor pending. Never both, never neither.
*/

use gix::refs::transaction::PreviousValue;
use gix::refs::Target;

use super::fsutil;
use super::journal;
use super::journal::Event;
use super::journal::EventKind;
use super::lock::Lock;
use super::store;
use super::store::Stager;
use super::Error;
use super::Preview;
use super::StalePath;
use crate::change::PreviewMeta;
use crate::repo::Repo;

/// The repository lock, held by a refresh from before it reads the work tree until
/// the successor is pending (and, for `apply --refresh`, applied).
pub struct Held {
    _lock: Lock,
}

/// Takes the repository lock for `op` (exit 6 when another astedit holds it, or when
/// an interrupted apply or undo waits for `recover`).
pub fn hold(repo: &Repo, op: &str) -> Result<Held, Error> {
    let lock = Lock::acquire(repo, op)?;
    super::apply::refuse_while_unfinished(repo)?;
    Ok(Held { _lock: lock })
}

/// The paths of `preview` whose work-tree file no longer holds the before side (empty
/// when the preview would apply as it is). Containment is not checked here: apply does.
pub fn stale_paths(repo: &Repo, _held: &Held, preview: &Preview) -> Result<Vec<StalePath>, Error> {
    super::apply::stale_of(repo, preview)
}

/// Refuses (exit 4) before anything is read when a path of `preview` is not plainly
/// inside the work tree (a folder on the way became a symlink): a refresh must not
/// read, nor record as a before side, what lies outside it.
pub fn check_contained(repo: &Repo, _held: &Held, preview: &Preview) -> Result<(), Error> {
    let mut known = std::collections::HashSet::new();
    for e in &preview.entries {
        fsutil::check_contained(repo, &e.path, &mut known)?;
    }
    Ok(())
}

/// Makes the preview built in `stager` (with `meta`) pending in place of `old`: one ref
/// transaction deletes `old`'s ref (which must still name `old`), creates the
/// successor's and appends a `refreshed` event (`id` = old id, `successor` = new id).
pub fn supersede(
    repo: &Repo,
    _held: &Held,
    old: &Preview,
    stager: Stager<'_>,
    meta: &PreviewMeta,
) -> Result<Preview, Error> {
    let (files, objects, meta) = stager.into_parts(meta);
    // A successor is signed as any preview staged now is (`--sign`, astedit.signPreviews),
    // unless its predecessor is not vouched for here: signing would make a fetched
    // preview's recipe trusted.
    let sign = super::sign::signing(repo) && super::trusted::vouched(repo, old);
    let p_id = store::build_preview(repo, objects, &files, &meta, sign, None)?;
    // Everything of the successor is written; nothing names it yet.
    fsutil::fault("refresh-before-swap");
    let new_id = store::short_id(p_id);
    if new_id == old.id {
        // The same trees and metadata to the nanosecond cannot happen; refuse rather
        // than delete and create one ref in one transaction.
        return Err(Error::InvalidChange(format!(
            "the refreshed preview of {} is the preview itself",
            old.id
        )));
    }
    let mut event = Event::new(repo, EventKind::Refreshed, &old.id, old.commit);
    event.kind = Some(old.meta.kind);
    event.agent = meta.agent.clone();
    event.reason = old.meta.reason.clone();
    event.files = old.entries.iter().map(|e| e.path.clone()).collect();
    event.successor = Some(new_id.clone());
    let old_ref = format!("{}{}", store::REF_PREFIX, old.id);
    let new_ref = format!("{}{}", store::REF_PREFIX, new_id);
    let edits = vec![
        journal::delete_edit(
            &old_ref,
            PreviousValue::MustExistAndMatch(Target::Object(old.commit)),
        )?,
        journal::update_edit(
            &new_ref,
            PreviousValue::MustNotExist,
            p_id,
            "astedit: refreshed",
        )?,
    ];
    let journal_commit = journal::append(repo, &event, old.commit, edits)?;
    journal::sync(
        repo,
        journal_commit,
        &[journal::JOURNAL_REF, &old_ref, &new_ref],
    )?;
    fsutil::fault("refresh-after-swap");
    store::read_preview(repo, p_id)
}

/// Applies `preview` with the lock `held` already taken (`apply --refresh`).
pub fn apply_held(
    repo: &Repo,
    _held: &Held,
    preview: Preview,
    opts: &super::ApplyOptions,
) -> Result<super::ApplyReport, Error> {
    super::apply::apply_locked(repo, preview, opts)
}
