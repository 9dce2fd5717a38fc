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
4. the record rewritten with phase `committed`: the commit point — `after-commit`.
   A crash before it rolls back (temps and new folders removed), after it rolls
   forward ([`finish`]), which needs nothing but the record and the object database.
5. renames — `after-rename:N` for the Nth, `after-renames`; deletions and the folders
   they leave empty — `after-deletes`; folders fsynced.
6. the journal event (`applied`/`undone`) in one ref transaction with the pending
   ref's removal (apply) or re-creation (undo) — `after-journal`; the record removed.

Undo re-creates `refs/astedit/<id>`, so the preview is pending again and applying it
again is an ordinary apply.
*/

use std::collections::BTreeSet;

use gix::refs::transaction::PreviousValue;
use gix::refs::Target;
use gix::ObjectId;
use serde::Deserialize;
use serde::Serialize;

use super::fsutil;
use super::fsutil::fault;
use super::index;
use super::journal;
use super::journal::Event;
use super::lock::Lock;
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

/// One side of a path: a blob and its mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Side {
    #[serde(with = "hex_id")]
    pub blob: ObjectId,
    pub mode: FileMode,
}

/// One path of a run: what must be there (`from`) and what will be (`to`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PathOp {
    pub path: String,
    pub from: Option<Side>,
    pub to: Option<Side>,
    /// The temp file (repository path) holding `to` before its rename.
    pub temp: Option<String>,
}

/// The durable record of a run in progress (see the module docs).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Record {
    pub version: u32,
    /// `apply` or `undo`.
    pub op: String,
    pub id: String,
    #[serde(with = "hex_id")]
    pub commit: ObjectId,
    pub kind: String,
    /// A nonce naming this run; the journal event carries it too.
    pub run: String,
    pub pid: u32,
    /// `prepared` or `committed`.
    pub phase: String,
    pub ops: Vec<PathOp>,
    /// Folders this run creates, shallowest first (repository paths).
    pub created_dirs: Vec<String>,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub agent: Option<String>,
    /// The commit `--commit` will put on HEAD, made before the run so that the
    /// `applied` event can name it.
    #[serde(default)]
    pub made_commit: Option<String>,
}

fn side(s: Option<(ObjectId, FileMode)>) -> Option<Side> {
    s.map(|(blob, mode)| Side { blob, mode })
}

/// Applies a pending preview (the newest when `id` is `None`).
pub fn apply(repo: &Repo, id: Option<&str>, opts: &ApplyOptions) -> Result<ApplyReport, Error> {
    let lock = Lock::acquire(repo, "apply")?;
    let preview = store::find(repo, id)?;
    let ops: Vec<PathOp> = preview
        .entries
        .iter()
        .map(|e| PathOp {
            path: e.path.clone(),
            from: side(e.before),
            to: side(e.after),
            temp: None,
        })
        .collect();
    index::check_paths(repo, &ops)?;
    let stamps = check(repo, "apply", &preview.id, &ops)?;
    let reason = opts.reason.clone().or_else(|| preview.meta.reason.clone());
    // Index lock, staged blobs, commit object: before the point of no return.
    let staging = index::prepare(repo, &preview, &ops, opts, reason.as_deref())?;
    let record = run(
        repo,
        "apply",
        &preview,
        ops,
        &stamps,
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
    drop(lock);
    Ok(report)
}

/// Undoes an applied transaction (the newest applied, not yet undone, when `id` is None).
pub fn undo(repo: &Repo, id: Option<&str>, opts: &UndoOptions) -> Result<ApplyReport, Error> {
    let lock = Lock::acquire(repo, "undo")?;
    let commit = undo_target(repo, id)?;
    let preview = store::read_preview(repo, commit)?;
    let ops: Vec<PathOp> = preview
        .entries
        .iter()
        .map(|e| PathOp {
            path: e.path.clone(),
            from: side(e.after),
            to: side(e.before),
            temp: None,
        })
        .collect();
    index::check_paths(repo, &ops)?;
    let stamps = check(repo, "undo", &preview.id, &ops)?;
    let staging = index::prepare_undo(repo, commit, &ops, opts.index)?;
    let record = run(
        repo,
        "undo",
        &preview,
        ops,
        &stamps,
        opts.reason.clone(),
        opts.agent.clone(),
        None,
    )?;
    let mut report = report_of(&record);
    staging.finish(repo, &record.ops, &mut report)?;
    drop(lock);
    Ok(report)
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

/// The preview commit of the transaction to undo.
fn undo_target(repo: &Repo, id: Option<&str>) -> Result<ObjectId, Error> {
    let entries = journal::read(repo)?;
    let prefix = match id {
        Some(p) => {
            let p = p.trim().to_ascii_lowercase();
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(Error::BadId(p));
            }
            Some(p)
        }
        None => None,
    };
    let matching: Vec<&journal::Entry> = entries
        .iter()
        .filter(|e| {
            prefix
                .as_ref()
                .is_none_or(|p| e.event.id.starts_with(p.as_str()))
        })
        .collect();
    if let Some(p) = &prefix {
        let ids: BTreeSet<&str> = matching.iter().map(|e| e.event.id.as_str()).collect();
        if ids.len() > 1 {
            return Err(Error::AmbiguousId {
                prefix: p.clone(),
                candidates: ids.into_iter().map(str::to_string).collect(),
            });
        }
        if ids.is_empty() {
            return Err(Error::UnknownId(p.clone()));
        }
    }
    // Newest first: an `undone` hides every older `applied` of the same id.
    let mut undone: BTreeSet<&str> = BTreeSet::new();
    for e in &matching {
        match e.event.event.as_str() {
            "undone" => {
                undone.insert(&e.event.id);
            }
            "applied" if !undone.contains(e.event.id.as_str()) => return Ok(e.txn_commit),
            _ => {}
        }
    }
    match prefix {
        Some(p) => Err(Error::NotApplied(p)),
        None => Err(Error::NothingToUndo),
    }
}

/// Containment then staleness of every path; nothing is written either way. Returns
/// each path's stamp as checked, for the second look of [`check_stale`].
fn check(repo: &Repo, op: &'static str, id: &str, ops: &[PathOp]) -> Result<Stamps, Error> {
    let mut known_dirs = std::collections::HashSet::new();
    for o in ops {
        fsutil::check_contained(repo, &o.path, &mut known_dirs)?;
    }
    check_stale(repo, op, id, ops, None)
}

/// Per path of the ops, the stamp it had when found to hold its `from` side.
type Stamps = Vec<Option<fsutil::Stamp>>;

/// Every path must hold its `from` side (exit 3 listing every one that does not).
///
/// With the stamps of an earlier check, a path whose stamp has not changed since is
/// not read again: reading and hashing every touched file is most of an apply's own
/// work, and the second look only needs to catch files saved in between. A file
/// changed within two seconds of the check gets no stamp (see [`fsutil::Stamp::settled`])
/// and is read again.
fn check_stale(
    repo: &Repo,
    op: &'static str,
    id: &str,
    ops: &[PathOp],
    earlier: Option<&[Option<fsutil::Stamp>]>,
) -> Result<Stamps, Error> {
    use rayon::prelude::*;
    let (workdir, hash) = (repo.workdir.as_path(), repo.git.object_hash());
    let checked_at = std::time::SystemTime::now();
    type Checked = (Option<StalePath>, Option<fsutil::Stamp>);
    let checked: Vec<Result<Checked, Error>> = ops
        .par_iter()
        .enumerate()
        .map(|(i, o)| {
            if let Some(stamp) = earlier.and_then(|e| e.get(i).copied().flatten()) {
                if fsutil::Stamp::now(workdir, &o.path) == Some(stamp) {
                    return Ok((None, Some(stamp)));
                }
            }
            let (now, stamp) = fsutil::on_disk_stamped_in(workdir, hash, &o.path)?;
            let stale =
                fsutil::difference(o.from.map(|s| (s.blob, s.mode)), &now).map(|what| StalePath {
                    path: o.path.clone(),
                    what,
                });
            Ok((stale, stamp.filter(|s| s.settled(checked_at))))
        })
        .collect();
    let mut stale = Vec::new();
    let mut stamps = Vec::with_capacity(ops.len());
    for c in checked {
        let (s, stamp) = c?;
        stale.extend(s);
        stamps.push(stamp);
    }
    if stale.is_empty() {
        Ok(stamps)
    } else {
        Err(Error::Stale {
            op,
            id: id.to_string(),
            paths: stale,
        })
    }
}

pub(crate) fn record_path(repo: &Repo) -> std::path::PathBuf {
    repo.git_dir.join(super::recover::RECORD_FILE)
}

pub(crate) fn write_record(repo: &Repo, record: &Record) -> Result<(), Error> {
    let json = serde_json::to_vec_pretty(record)
        .map_err(|e| Error::Corrupt(format!("cannot encode the applying record: {e}")))?;
    fsutil::write_durable(&record_path(repo), &json)
}

/// Steps 2–6 of the module docs, for checked `ops`.
#[allow(clippy::too_many_arguments)]
fn run(
    repo: &Repo,
    op: &str,
    preview: &Preview,
    mut ops: Vec<PathOp>,
    stamps: &[Option<fsutil::Stamp>],
    reason: Option<String>,
    agent: Option<String>,
    made_commit: Option<String>,
) -> Result<Record, Error> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let run = format!("{}-{nanos:x}", std::process::id());
    let mut created: BTreeSet<String> = BTreeSet::new();
    for o in ops.iter_mut().filter(|o| o.to.is_some()) {
        let (dir, name) = match o.path.rfind('/') {
            Some(i) => (&o.path[..=i], &o.path[i + 1..]),
            None => ("", o.path.as_str()),
        };
        o.temp = Some(format!("{dir}.{name}.astedit-{}.tmp", preview.id));
        let comps: Vec<&str> = o.path.split('/').collect();
        for n in 1..comps.len() {
            let d = comps[..n].join("/");
            if !created.contains(&d) && !repo.abs_path(&d).exists() {
                created.insert(d);
            }
        }
    }
    let mut created: Vec<String> = created.into_iter().collect();
    created.sort_by_key(|d| d.matches('/').count());
    let mut record = Record {
        version: 1,
        op: op.to_string(),
        id: preview.id.clone(),
        commit: preview.commit,
        kind: preview.meta.kind.clone(),
        run,
        pid: std::process::id(),
        phase: "prepared".into(),
        ops,
        created_dirs: created,
        reason,
        agent,
        made_commit,
    };
    write_record(repo, &record)?;
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
    if let Err(e) = write_temps(repo, &record) {
        return Err(rollback_after(repo, &record, e));
    }
    fault("after-tempfiles");
    // Someone may have saved a file while the temps were written: look once more, so
    // the window in which an edit can be overwritten is the renames alone.
    let op_name: &'static str = if op == "undo" { "undo" } else { "apply" };
    if let Err(e) = check_stale(repo, op_name, &preview.id, &record.ops, Some(stamps)) {
        return Err(rollback_after(repo, &record, e));
    }

    record.phase = "committed".into();
    if let Err(e) = write_record(repo, &record) {
        return Err(rollback_after(repo, &record, e));
    }
    fault("after-commit");
    finish(repo, &record)?;
    Ok(record)
}

fn write_temps(repo: &Repo, record: &Record) -> Result<(), Error> {
    let mut dirs = BTreeSet::new();
    for o in &record.ops {
        if o.to.is_some() && o.temp.is_some() {
            dirs.insert(fsutil::parent_dir(repo, &o.path));
        }
    }
    for d in record
        .created_dirs
        .iter()
        .map(|d| fsutil::parent_dir(repo, d))
    {
        dirs.insert(d);
    }
    // Blobs are read a batch at a time, so memory holds one batch, not the whole change.
    let writes: Vec<_> = record
        .ops
        .iter()
        .filter_map(|o| match (&o.to, &o.temp) {
            (Some(to), Some(temp)) => Some((temp, to)),
            _ => None,
        })
        .collect();
    let mut jobs = Vec::with_capacity(WRITE_BATCH);
    let mut bytes = 0;
    for (temp, to) in writes {
        let blob = store::blob(repo, to.blob)?;
        bytes += blob.len();
        jobs.push((repo.abs_path(temp), blob, to.mode));
        if jobs.len() == WRITE_BATCH || bytes >= WRITE_BATCH_BYTES {
            fsutil::write_files_durable(&jobs, &BTreeSet::new())?;
            jobs.clear();
            bytes = 0;
        }
    }
    if !jobs.is_empty() {
        fsutil::write_files_durable(&jobs, &BTreeSet::new())?;
    }
    fsutil::sync_dirs(&dirs)
}

/// Temp files written per batch (see [`write_temps`]): at most this many, and no more
/// once they hold this many bytes (a batch of 128 with a large file held 6.8 MB).
const WRITE_BATCH: usize = 128;
const WRITE_BATCH_BYTES: usize = 1 << 20;

/// Undoes a `prepared` run after an error: the caller's error is what gets reported.
fn rollback_after(repo: &Repo, record: &Record, err: Error) -> Error {
    match rollback(repo, record) {
        Ok(()) => err,
        Err(_) => err,
    }
}

/// Rolls back a run that never reached its commit point: temps and new folders go.
pub(crate) fn rollback(repo: &Repo, record: &Record) -> Result<(), Error> {
    let temps: Vec<_> = record
        .ops
        .iter()
        .filter_map(|o| o.temp.as_ref().map(|t| repo.abs_path(t)))
        .collect();
    fsutil::in_parallel(&temps, |t| fsutil::remove_if_present(t).map(|_| ()))?;
    for d in record.created_dirs.iter().rev() {
        // Only folders we made and that are still empty.
        let _ = std::fs::remove_dir(repo.abs_path(d));
    }
    fsutil::sync_dir(&repo.workdir)?;
    fsutil::remove_if_present(&record_path(repo))?;
    fsutil::sync_dir(&repo.git_dir)
}

/// Rolls a committed run forward; idempotent, so recovery can call it again.
pub(crate) fn finish(repo: &Repo, record: &Record) -> Result<(), Error> {
    let mut dirs = BTreeSet::new();
    let mut renames = Vec::new();
    for o in &record.ops {
        let Some(to) = &o.to else { continue };
        let target = repo.abs_path(&o.path);
        let temp = o.temp.as_ref().map(|t| repo.abs_path(t));
        match temp {
            Some(temp) if temp.symlink_metadata().is_ok() => renames.push((temp, target)),
            _ => {
                // Already renamed (a crash after it), unless the target is not what we wrote.
                let now = fsutil::on_disk(repo, &o.path)?;
                if fsutil::difference(Some((to.blob, to.mode)), &now).is_some() {
                    let bytes = store::blob(repo, to.blob)?;
                    let tmp = target.with_file_name(format!(".astedit-{}.redo.tmp", record.id));
                    fsutil::write_file(&tmp, &bytes, to.mode)?;
                    std::fs::rename(&tmp, &target)
                        .map_err(Error::io("rename into place", &target))?;
                }
            }
        }
        dirs.insert(fsutil::parent_dir(repo, &o.path));
    }
    fsutil::rename_parallel(&renames)?;
    fault("after-renames");
    let deletions: Vec<_> = record
        .ops
        .iter()
        .filter(|o| o.to.is_none())
        .map(|o| repo.abs_path(&o.path))
        .collect();
    fsutil::in_parallel(&deletions, |p| fsutil::remove_if_present(p).map(|_| ()))?;
    for o in record.ops.iter().filter(|o| o.to.is_none()) {
        dirs.insert(fsutil::parent_dir(repo, &o.path));
        for removed in fsutil::remove_empty_parents(repo, &o.path) {
            if let Some(p) = removed.parent() {
                dirs.insert(p.to_path_buf());
            }
        }
    }
    fault("after-deletes");
    fsutil::sync_dirs(&dirs)?;
    record_event(repo, record)?;
    fault("after-journal");
    fsutil::remove_if_present(&record_path(repo))?;
    fsutil::sync_dir(&repo.git_dir)
}

/// Writes the run's `applied`/`undone` event (once: skipped when the journal has it),
/// removing (apply) or re-creating (undo) the pending ref in the same transaction.
fn record_event(repo: &Repo, record: &Record) -> Result<(), Error> {
    let entries = journal::read(repo)?;
    if entries
        .iter()
        .any(|e| e.event.run.as_deref() == Some(record.run.as_str()))
    {
        return Ok(());
    }
    let name = format!("{}{}", store::REF_PREFIX, record.id);
    let pending = repo
        .git
        .try_find_reference(name.as_str())
        .map_err(Error::git(format!("read {name}")))?
        .is_some();
    let mut extra = Vec::new();
    let kind = if record.op == "undo" {
        if !pending {
            extra.push(journal::update_edit(
                &name,
                PreviousValue::MustNotExist,
                record.commit,
                "astedit: undone",
            )?);
        }
        "undone"
    } else {
        if pending {
            extra.push(journal::delete_edit(
                &name,
                PreviousValue::MustExistAndMatch(Target::Object(record.commit)),
            )?);
        }
        "applied"
    };
    let mut event = Event::new(repo, kind, &record.id, record.commit);
    event.reason = record.reason.clone();
    event.agent = record.agent.clone();
    event.kind = Some(record.kind.clone());
    event.files = record.ops.iter().map(|o| o.path.clone()).collect();
    event.run = Some(record.run.clone());
    event.made_commit = record.made_commit.clone();
    let id = journal::append(repo, &event, record.commit, extra)?;
    // The record may only disappear once the event is on disk (gix fsyncs nothing).
    journal::sync(repo, id, &[journal::JOURNAL_REF, &name])
}

/// Object ids as hex strings in the record.
mod hex_id {
    use gix::ObjectId;
    use serde::Deserialize;

    pub fn serialize<S: serde::Serializer>(id: &ObjectId, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&id.to_string())
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<ObjectId, D::Error> {
        let s = String::deserialize(d)?;
        ObjectId::from_hex(s.as_bytes()).map_err(serde::de::Error::custom)
    }
}
