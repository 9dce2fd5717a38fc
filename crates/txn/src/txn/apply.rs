/*!
Apply and undo: one machine, run forwards (before → after) or backwards.

Order of a run, with the fault point after each step (`GIT_ASTEDIT_FAULT`):

1. the repository lock ([`super::lock`]); containment of every path (exit 4); the
   stale check of every path against the side we start from (exit 3). Nothing has
   been written when any of these fail.
2. the record `<git_dir>/astedit-applying.json`, phase `prepared`, written and fsynced
   with its folder — `after-record`. From here on a crash is recoverable.
3. the folders the new files need — `after-mkdir`; a temp file beside each target with
   the target's mode, fsynced, and their folders fsynced — `after-tempfiles`.
4. the stale check once more, then the record rewritten with phase `committed`: the
   commit point — `after-commit`. A crash before it rolls back (temps and new folders
   removed), after it rolls forward ([`record::finish`]), which needs nothing but the
   record and the object database.
5. renames, each after one more look at its target (a file saved since the last stale
   check is left alone and reported: the run then ends unfinished, exit 3, and keeps
   its record for `git astedit recover`) — `after-rename:N` for the Nth,
   `after-renames`; deletions and the folders they leave empty — `after-deletes`;
   folders fsynced.
6. the journal event (`applied`/`undone`) in one ref transaction with the pending
   ref's removal (apply) or re-creation (undo) — `after-journal`; the record removed.

The record and the code that moves files from it live in [`super::record`], shared
with recovery.

Undo re-creates `refs/astedit/<id>`, so the preview is pending again and applying it
again is an ordinary apply.
*/

use std::collections::BTreeSet;

use gix::ObjectId;

use super::fsutil;
use super::fsutil::fault;
use super::index;
use super::journal::TxnOp;
use super::lock::Lock;
use super::record;
use super::record::PathOp;
use super::record::Phase;
use super::record::Record;
use super::record::Side;
use super::store;
use super::ApplyOptions;
use super::ApplyReport;
use super::Error;
use super::Preview;
use super::StalePath;
use crate::change::FileMode;
use crate::repo::Repo;

/// How to undo.
#[derive(Debug, Clone, Default)]
pub struct UndoOptions {
    pub reason: Option<String>,
    pub agent: Option<String>,
    /// Also restore the index entries of the touched paths.
    pub index: bool,
}

fn side(s: Option<(ObjectId, FileMode)>) -> Option<Side> {
    s.map(|(blob, mode)| Side { blob, mode })
}

/// Applies a pending preview (the newest when `id` is `None`).
pub fn apply(repo: &Repo, id: Option<&str>, opts: &ApplyOptions) -> Result<ApplyReport, Error> {
    let lock = Lock::acquire(repo, "apply")?;
    refuse_while_unfinished(repo)?;
    let preview = super::resolve::pending(repo, id)?;
    let report = apply_locked(repo, preview, opts)?;
    drop(lock);
    Ok(report)
}

/// Applies the part of pending preview `id` (a full id) whose paths are in `selected`:
/// the preview is split in two ([`store::split`]), the selected part applied as any
/// preview is, and the remainder left pending under its own id. The stale check
/// covers the selected paths only. When `selected` holds every path of the preview,
/// this is an ordinary apply. `pathspecs` (as typed) go into the `split` event.
pub fn apply_selected(
    repo: &Repo,
    id: &str,
    selected: &BTreeSet<String>,
    pathspecs: &[String],
    opts: &ApplyOptions,
) -> Result<ApplyReport, Error> {
    let (lock, preview) = lock_pending(repo, id)?;
    let picked: Vec<&super::StoredEntry> = preview
        .entries
        .iter()
        .filter(|e| selected.contains(&e.path))
        .collect();
    if picked.is_empty() {
        return Err(Error::InvalidChange(format!(
            "no path of preview {id} is selected"
        )));
    }
    if picked.len() == preview.entries.len() {
        let report = apply_locked(repo, preview, opts)?;
        drop(lock);
        return Ok(report);
    }
    // Refuse a stale selection before anything is split: a refused partial apply
    // leaves the preview as it was.
    let ops: Vec<PathOp> = picked.iter().map(|e| forward_op(e)).collect();
    index::check_paths(repo, &ops)?;
    check(repo, TxnOp::Apply, &preview.id, &ops)?;
    let parts = store::split(repo, &preview, selected, pathspecs)?;
    let info = super::SplitInfo {
        parent: preview.id.clone(),
        selected: parts.selected.id.clone(),
        remainder: parts.remainder.id.clone(),
        remainder_files: parts
            .remainder
            .entries
            .iter()
            .map(|e| e.path.clone())
            .collect(),
    };
    let report = apply_part(repo, parts.selected, info, opts)?;
    drop(lock);
    Ok(report)
}

/// The apply lock, taken with no interrupted transaction left, and pending preview
/// `id` (a full id) read under it.
fn lock_pending(repo: &Repo, id: &str) -> Result<(Lock, Preview), Error> {
    let lock = Lock::acquire(repo, "apply")?;
    refuse_while_unfinished(repo)?;
    let preview = super::resolve::pending(repo, Some(id))?;
    if preview.id != id {
        return Err(Error::UnknownId(id.to_string()));
    }
    refuse_while_elsewhere(repo, id)?;
    Ok((lock, preview))
}

/// Applies the selected part of a split (under the caller's lock); an error after the
/// split names both parts, since the parent is no longer pending.
fn apply_part(
    repo: &Repo,
    selected: Preview,
    info: super::SplitInfo,
    opts: &ApplyOptions,
) -> Result<ApplyReport, Error> {
    let mut report = apply_locked(repo, selected, opts).map_err(|e| match e {
        // A run that reached its record is the recovery's to tell about.
        e @ (Error::Unfinished { .. } | Error::RecoveryPending { .. }) => e,
        e => Error::AfterSplit {
            parent: info.parent.clone(),
            selected: info.selected.clone(),
            remainder: info.remainder.clone(),
            inner: Box::new(e),
        },
    })?;
    report.split = Some(info);
    Ok(report)
}

/// Applies `picked`, a part of pending preview `id` (a full id) that review's
/// decisions cut from it (entries whose after side holds the accepted sites only),
/// and leaves `rest` (the undecided sites, on top of `picked`) pending as a preview of
/// its own: [`store::split_into`], then an apply of the picked part, as
/// [`apply_selected`] does. The stale check covers the picked paths.
pub fn apply_cut(
    repo: &Repo,
    id: &str,
    picked: &[super::StoredEntry],
    rest: &[super::StoredEntry],
    opts: &ApplyOptions,
) -> Result<ApplyReport, Error> {
    let (lock, preview) = lock_pending(repo, id)?;
    if picked.is_empty() {
        return Err(Error::InvalidChange(format!(
            "no change of preview {id} is picked"
        )));
    }
    let ops: Vec<PathOp> = picked.iter().map(forward_op).collect();
    index::check_paths(repo, &ops)?;
    check(repo, TxnOp::Apply, &preview.id, &ops)?;
    let (selected, remainder) =
        store::split_into(repo, &preview, picked, rest, &[], Some("review"))?;
    let info = super::SplitInfo {
        parent: preview.id.clone(),
        selected: selected.id.clone(),
        remainder: remainder.as_ref().map(|r| r.id.clone()).unwrap_or_default(),
        remainder_files: remainder
            .iter()
            .flat_map(|r| r.entries.iter().map(|e| e.path.clone()))
            .collect(),
    };
    let report = apply_part(repo, selected, info, opts)?;
    drop(lock);
    Ok(report)
}

/// Replaces pending preview `id` (a full id) by `parts`, each a pending preview of
/// its own (review's split: an accepted group or pathspec a part, the sites left over
/// one more), under the lock: [`store::split_parts`]. Nothing is written to the work
/// tree.
pub fn split_cut(repo: &Repo, id: &str, parts: &[store::Part]) -> Result<Vec<Preview>, Error> {
    let (lock, preview) = lock_pending(repo, id)?;
    let made = store::split_parts(repo, &preview, parts, &[])?;
    drop(lock);
    Ok(made)
}

/// The op that moves `e` from its before side to its after side.
fn forward_op(e: &super::StoredEntry) -> PathOp {
    PathOp {
        path: e.path.clone(),
        from: side(e.before),
        to: side(e.after),
        temp: None,
        perm: None,
    }
}

/// The stale paths of `preview` (none: it applies as it is), the lock held.
pub(super) fn stale_of(repo: &Repo, preview: &Preview) -> Result<Vec<StalePath>, Error> {
    let ops: Vec<PathOp> = preview.entries.iter().map(forward_op).collect();
    match check_stale(repo, TxnOp::Apply, &preview.id, &ops, None) {
        Ok(_) => Ok(Vec::new()),
        Err(Error::Stale { paths, .. }) => Ok(paths),
        Err(e) => Err(e),
    }
}

/// [`apply`] of a found preview, with the lock held.
pub(super) fn apply_locked(
    repo: &Repo,
    preview: Preview,
    opts: &ApplyOptions,
) -> Result<ApplyReport, Error> {
    refuse_while_elsewhere(repo, &preview.id)?;
    let ops: Vec<PathOp> = preview.entries.iter().map(forward_op).collect();
    index::check_paths(repo, &ops)?;
    let seen = check(repo, TxnOp::Apply, &preview.id, &ops)?;
    let reason = opts.reason.clone().or_else(|| preview.meta.reason.clone());
    // Index lock, staged blobs, commit object: before the point of no return.
    let staging = index::prepare(repo, &preview, &ops, opts, reason.as_deref())?;
    let record = run(
        repo,
        TxnOp::Apply,
        &preview,
        ops,
        &seen,
        reason,
        opts.agent.clone(),
        staging
            .as_ref()
            .and_then(|s| s.commit_id())
            .map(|id| id.to_string()),
    )?;
    let mut report = report_of(&record);
    if let Some(staging) = staging {
        report.commit = staging.publish(repo)?.map(|id| id.to_string());
    }
    Ok(report)
}

/// Undoes an applied transaction (the newest applied, not yet undone, when `id` is None).
pub fn undo(repo: &Repo, id: Option<&str>, opts: &UndoOptions) -> Result<ApplyReport, Error> {
    let lock = Lock::acquire(repo, "undo")?;
    refuse_while_unfinished(repo)?;
    let (commit, removed_modes) = undo_target(repo, id)?;
    let preview = store::read_preview(repo, commit)?;
    refuse_while_elsewhere(repo, &preview.id)?;
    let ops: Vec<PathOp> = preview
        .entries
        .iter()
        .map(|e| PathOp {
            path: e.path.clone(),
            from: side(e.after),
            to: side(e.before),
            temp: None,
            // A file the apply removed comes back with the bits it had.
            perm: match (e.after, removed_modes.get(&e.path)) {
                (None, Some(bits)) => u32::from_str_radix(bits, 8).ok(),
                _ => None,
            },
        })
        .collect();
    index::check_paths(repo, &ops)?;
    let seen = check(repo, TxnOp::Undo, &preview.id, &ops)?;
    let staging = index::prepare_undo(repo, commit, &ops, opts.index)?;
    let record = run(
        repo,
        TxnOp::Undo,
        &preview,
        ops,
        &seen,
        opts.reason.clone(),
        opts.agent.clone(),
        None,
    )?;
    let mut report = report_of(&record);
    report.pending_again = record::pending_again(record.kind);
    staging.finish(repo, &record.ops, &mut report)?;
    drop(lock);
    Ok(report)
}

/// Refuses to run preview `id` while another work tree (the main one, or a lane)
/// holds an interrupted run of it: the preview is shared by every work tree, and that
/// run's recovery would finish it there after it ran here. A run there that is live
/// holds the main tree's lock, which every apply and undo takes, so only a record its
/// killed writer left is seen here.
pub(super) fn refuse_while_elsewhere(repo: &Repo, id: &str) -> Result<(), Error> {
    for (git_dir, worktree) in other_work_trees(repo) {
        // A record that cannot be read is that tree's recovery's to report.
        let Ok(Some(r)) = record::read_record_at(&git_dir.join(record::RECORD_FILE)) else {
            continue;
        };
        if r.id == id {
            return Err(Error::UnfinishedElsewhere {
                op: r.op.as_str(),
                id: r.id,
                worktree: worktree.display().to_string(),
            });
        }
    }
    Ok(())
}

/// The git dir and folder of every work tree of the repository but this one: the main
/// tree's (the common dir) and each linked one's (`<common dir>/worktrees/NAME`, whose
/// `gitdir` file names the `.git` file in its folder).
fn other_work_trees(repo: &Repo) -> Vec<(std::path::PathBuf, std::path::PathBuf)> {
    let mut trees = Vec::new();
    if repo.git_dir != repo.common_dir {
        let main = match repo.common_dir.file_name() {
            Some(n) if n == ".git" => repo.common_dir.parent().unwrap_or(&repo.common_dir),
            _ => &repo.common_dir,
        };
        trees.push((repo.common_dir.clone(), main.to_path_buf()));
    }
    let Ok(linked) = std::fs::read_dir(repo.common_dir.join("worktrees")) else {
        return trees;
    };
    for entry in linked.flatten() {
        let dir = entry.path();
        if dir.canonicalize().ok().as_ref() == Some(&repo.git_dir) {
            continue;
        }
        let folder = std::fs::read_to_string(dir.join("gitdir"))
            .ok()
            .map(|s| std::path::PathBuf::from(s.trim_end()))
            .and_then(|p| p.parent().map(|p| p.to_path_buf()))
            .unwrap_or_else(|| dir.clone());
        trees.push((dir, folder));
    }
    trees
}

/// With the lock held, a record left behind is a run that was interrupted (its
/// writer killed after the prelude of this one ran) or that ended unfinished: it is
/// finished or rolled back here as the prelude would, and only a run that stays
/// unfinished keeps anything else from writing until the user resolves it.
pub(super) fn refuse_while_unfinished(repo: &Repo) -> Result<(), Error> {
    match record::read_record(repo)? {
        None => Ok(()),
        Some(r) => match super::recover::roll(repo, r)? {
            done if !done.pending() => Ok(()),
            left => Err(Error::RecoveryPending {
                op: left.op.as_str(),
                id: left.id,
            }),
        },
    }
}

fn report_of(record: &Record) -> ApplyReport {
    ApplyReport {
        id: record.id.clone(),
        written: record
            .ops
            .iter()
            .filter(|o| o.to.is_some())
            .map(|o| o.path.clone())
            .collect(),
        deleted: record
            .ops
            .iter()
            .filter(|o| o.to.is_none())
            .map(|o| o.path.clone())
            .collect(),
        ..Default::default()
    }
}

/// The preview commit of the transaction to undo (rules in [`super::resolve`]), and
/// the permission bits of the files its apply removed.
fn undo_target(
    repo: &Repo,
    id: Option<&str>,
) -> Result<(ObjectId, std::collections::BTreeMap<String, String>), Error> {
    let target = super::resolve::resolve(repo, id, super::resolve::Want::Applied)?;
    // The newest `applied` event of the target: near the journal's end, so the walk
    // stops long before the journal's start.
    let modes = super::journal::find_newest(repo, |e| {
        e.event.id == target.id && e.event.event == super::journal::EventKind::Applied
    })?
    .map(|e| e.event.removed_modes)
    .unwrap_or_default();
    Ok((target.commit, modes))
}

/// Containment then staleness of every path; nothing is written either way. Returns
/// what the check saw of each path, for the second look of [`check_stale`] and the
/// permission bits of the temp files.
fn check(repo: &Repo, op: TxnOp, id: &str, ops: &[PathOp]) -> Result<Seen, Error> {
    let mut known_dirs = std::collections::HashSet::new();
    for o in ops {
        fsutil::check_contained(repo, &o.path, &mut known_dirs)?;
    }
    let _phase = crate::progress::phase(crate::progress::Phase::Check, ops.len());
    let mut seen = check_stale(repo, op, id, ops, None)?;
    seen.folders = known_dirs;
    Ok(seen)
}

/// Per path of the ops, the stamp it had when found to hold its `from` side, when that
/// stamp can be trusted to tell a later change ([`fsutil::Stamp::settled`]).
type Stamps = Vec<Option<fsutil::Stamp>>;

/// What a stale check saw, per path of the ops: its trusted stamp, and the permission
/// bits of the regular file there (read, not looked up again, when the temp is made).
struct Seen {
    stamps: Stamps,
    perms: Vec<Option<u32>>,
    /// Folders (absolute) the containment check found to be plain folders.
    folders: std::collections::HashSet<std::path::PathBuf>,
}

/// Every path must hold its `from` side (exit 3 listing every one that does not).
///
/// With the stamps of an earlier check, a path whose stamp has not changed since is
/// not read again: reading and hashing every touched file is most of an apply's own
/// work, and the second look only needs to catch files saved in between. A file
/// changed within two seconds of the check gets no stamp (see [`fsutil::Stamp::settled`])
/// and is read again.
fn check_stale(
    repo: &Repo,
    op: TxnOp,
    id: &str,
    ops: &[PathOp],
    earlier: Option<&[Option<fsutil::Stamp>]>,
) -> Result<Seen, Error> {
    use rayon::prelude::*;
    let (workdir, hash) = (repo.workdir.as_path(), repo.git.object_hash());
    let checked_at = std::time::SystemTime::now();
    type Checked = (Option<StalePath>, Option<fsutil::Stamp>, Option<u32>);
    let checked: Vec<Result<Checked, Error>> = ops
        .par_iter()
        .enumerate()
        .map(|(i, o)| {
            if let Some(stamp) = earlier.and_then(|e| e.get(i).copied().flatten()) {
                if fsutil::Stamp::now(workdir, &o.path) == Some(stamp) {
                    return Ok((None, Some(stamp), None));
                }
            }
            let (now, stamp, perm) = fsutil::on_disk_seen_in(workdir, hash, &o.path)?;
            crate::progress::advance(1, 0);
            let stale =
                fsutil::difference(o.from.map(|s| (s.blob, s.mode)), &now).map(|what| StalePath {
                    path: o.path.clone(),
                    what,
                });
            Ok((stale, stamp.filter(|s| s.settled(checked_at)), perm))
        })
        .collect();
    let mut stale = Vec::new();
    let mut stamps = Vec::with_capacity(ops.len());
    let mut perms = Vec::with_capacity(ops.len());
    for c in checked {
        let (s, stamp, perm) = c?;
        stale.extend(s);
        stamps.push(stamp);
        perms.push(perm);
    }
    if stale.is_empty() {
        Ok(Seen {
            stamps,
            perms,
            folders: Default::default(),
        })
    } else {
        Err(Error::Stale {
            op: op.as_str(),
            id: id.to_string(),
            paths: stale,
        })
    }
}

/// Steps 2–6 of the module docs, for checked `ops`.
#[allow(clippy::too_many_arguments)]
fn run(
    repo: &Repo,
    op: TxnOp,
    preview: &Preview,
    mut ops: Vec<PathOp>,
    seen: &Seen,
    reason: Option<String>,
    agent: Option<String>,
    made_commit: Option<String>,
) -> Result<Record, Error> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let run = format!("{}-{nanos:x}", std::process::id());
    for o in ops.iter_mut().filter(|o| o.to.is_none()) {
        // Kept in the journal, so that undo gives the file back with these bits.
        o.perm = std::fs::symlink_metadata(repo.abs_path(&o.path))
            .ok()
            .filter(|m| m.file_type().is_file())
            .map(|m| super::os::perm_bits(&m));
    }
    let mut created: BTreeSet<String> = BTreeSet::new();
    // Folders looked at: many paths share theirs, and each is looked at once.
    let mut existing: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for o in ops.iter_mut().filter(|o| o.to.is_some()) {
        o.temp = Some(record::temp_name(&o.path, &preview.id));
    }
    for o in ops.iter().filter(|o| o.to.is_some()) {
        for (i, _) in o.path.match_indices('/') {
            let d = &o.path[..i];
            if existing.contains(d) || created.contains(d) {
                continue;
            }
            let abs = repo.abs_path(d);
            if seen.folders.contains(&abs) || abs.exists() {
                existing.insert(d);
            } else {
                created.insert(d.to_string());
            }
        }
    }
    let mut created: Vec<String> = created.into_iter().collect();
    created.sort_by_key(|d| d.matches('/').count());
    let mut record = Record {
        version: 1,
        op,
        id: preview.id.clone(),
        commit: preview.commit,
        kind: preview.meta.kind,
        run,
        pid: std::process::id(),
        phase: Phase::Prepared,
        ops,
        created_dirs: created,
        reason,
        agent,
        made_commit,
    };
    record::write_record(repo, &record)?;
    fault("after-record");

    for d in &record.created_dirs {
        let abs = repo.abs_path(d);
        match std::fs::create_dir(&abs) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(rollback_after(repo, &record, Error::io("create", &abs)(e))),
        }
    }
    fault("after-mkdir");
    let writing = crate::progress::phase(
        crate::progress::Phase::Write,
        record.ops.iter().filter(|o| o.to.is_some()).count(),
    );
    let written = record::write_temps(repo, &record, Some(&seen.perms));
    drop(writing);
    if let Err(e) = written {
        return Err(rollback_after(repo, &record, e));
    }
    fault("after-tempfiles");
    // Someone may have saved a file while the temps were written: look once more, so
    // the window in which an edit can be overwritten is the renames alone (and each
    // rename looks at its target once more, see [`record::converge`]).
    let stamps = match check_stale(repo, op, &preview.id, &record.ops, Some(&seen.stamps)) {
        Ok(s) => s.stamps,
        Err(e) => return Err(rollback_after(repo, &record, e)),
    };

    record.phase = Phase::Committed;
    if let Err(e) = record::write_record(repo, &record) {
        return Err(rollback_after(repo, &record, e));
    }
    fault("after-commit");
    let pass = record::finish(repo, &record, Some(&stamps))?;
    if !pass.unresolved.is_empty() {
        return Err(Error::Unfinished {
            op: op.as_str(),
            id: record.id.clone(),
            paths: pass.unresolved,
        });
    }
    Ok(record)
}

/// Undoes a `prepared` run after an error: the caller's error is what gets reported.
fn rollback_after(repo: &Repo, record: &Record, err: Error) -> Error {
    // A failed rollback leaves the record, and the next command rolls back again.
    let _ = record::rollback(repo, record);
    err
}
