//! A run's temp files: written before the commit point ([`write_temps`]), removed by a
//! rollback, settled or written again by a pass; the folders a run made.

use std::collections::BTreeSet;
use std::collections::HashSet;
use std::path::PathBuf;

use super::kept_dir;
use super::remove_record;
use super::temp_name;
use super::Direction;
use super::PathOp;
use super::Record;
use super::Side;
use crate::repo::Repo;
use crate::txn::fsutil;
use crate::txn::store;
use crate::txn::Error;

/// Writes the temp file of every path that gets content, with the permission bits the
/// target will keep ([`fsutil::perm_for`]), durably. `perms` holds, per op, the
/// permission bits of the regular file at its path as the stale check found it (so
/// that no path is looked at again here); without it each target is looked at.
///
/// This thread reads the blobs from the object database (its handle cannot cross
/// threads) while a few others write the temp files, so inflating blobs and writing
/// files overlap; the queue between them holds a few blobs, not the whole change.
pub fn write_temps(
    repo: &Repo,
    record: &Record,
    perms: Option<&[Option<u32>]>,
) -> Result<(), Error> {
    use std::sync::atomic::AtomicBool;
    use std::sync::atomic::Ordering;
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
    let writes: Vec<_> = record
        .ops
        .iter()
        .enumerate()
        .filter_map(|(i, o)| match (&o.to, &o.temp) {
            (Some(to), Some(temp)) => Some((i, o, temp.as_str(), *to)),
            _ => None,
        })
        .collect();
    let threads = fsutil::writer_threads(writes.len());
    let workdir = repo.workdir.as_path();
    let failed = AtomicBool::new(false);
    let write_one = |k: usize, bytes: &[u8]| -> Result<(), Error> {
        let (i, o, temp, to) = writes[k];
        let current = match perms {
            Some(p) => p.get(i).copied().flatten(),
            None => std::fs::symlink_metadata(workdir.join(&o.path))
                .ok()
                .filter(|m| m.file_type().is_file())
                .map(|m| crate::txn::os::perm_bits(&m)),
        };
        let perm = fsutil::perm_for_bits(current, to.mode).or(o.perm);
        fsutil::write_temp(&workdir.join(temp), bytes, to.mode, perm)?;
        crate::progress::advance(1, 0);
        Ok(())
    };
    // Blobs go to the writers in chunks, each writer its own queue of one chunk: a
    // hand-over per file woke a sleeping writer per file (thousands of futex calls).
    type Chunk = Vec<(usize, Vec<u8>)>;
    let (sends, receives): (Vec<_>, Vec<_>) = (0..threads)
        .map(|_| std::sync::mpsc::sync_channel::<Chunk>(1))
        .unzip();
    std::thread::scope(|scope| {
        let handles: Vec<_> = receives
            .into_iter()
            .map(|receive| {
                let (failed, write_one) = (&failed, &write_one);
                scope.spawn(move || -> Result<(), Error> {
                    for chunk in receive {
                        for (k, bytes) in chunk {
                            if let Err(e) = write_one(k, &bytes) {
                                failed.store(true, Ordering::Relaxed);
                                return Err(e);
                            }
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        let mut result = Ok(());
        let (mut chunk, mut size, mut to_writer) = (Vec::new(), 0, 0);
        for (k, &(_, _, _, to)) in writes.iter().enumerate() {
            if failed.load(Ordering::Relaxed) {
                break;
            }
            match store::blob_data(repo, to.blob) {
                Ok(b) => {
                    size += b.len();
                    chunk.push((k, b));
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
            if chunk.len() == CHUNK_FILES || size >= CHUNK_BYTES || k + 1 == writes.len() {
                if sends[to_writer % threads]
                    .send(std::mem::take(&mut chunk))
                    .is_err()
                {
                    break;
                }
                to_writer += 1;
                size = 0;
            }
        }
        drop(sends);
        // Every writer is waited for; a blob that could not be read comes first.
        let joined = fsutil::join_all(handles);
        result.and(joined)
    })?;
    fsutil::sync_dirs(&dirs)
}

/// A chunk of temp files handed to one writer (see [`write_temps`]): at most this many
/// files, and no more once they hold this many bytes; with one chunk queued and one
/// being written per writer, memory holds a few hundred KiB of blobs (a 128-file batch
/// with a 2.5 MB file held 6.8 MB).
const CHUNK_FILES: usize = 16;
const CHUNK_BYTES: usize = 256 << 10;

/// Rolls back a run that never reached its commit point: its temp files and the
/// folders it made go (no target was touched), then the record. Returns notes about
/// temp files it could not reach (their folder is now a symlink or gone).
pub fn rollback(repo: &Repo, record: &Record) -> Result<Vec<String>, Error> {
    let mut known = HashSet::new();
    let mut orphans = Vec::new();
    let mut temps = Vec::new();
    for o in &record.ops {
        let Some(t) = &o.temp else { continue };
        match fsutil::check_contained(repo, t, &mut known) {
            Ok(()) => temps.push(repo.abs_path(t)),
            Err(Error::Refused { why, .. }) => orphans.push((why, t.clone())),
            Err(e) => return Err(e),
        }
    }
    fsutil::in_parallel(&temps, |t| fsutil::remove_if_present(t).map(|_| ()))?;
    remove_created_dirs(repo, record, &mut known);
    fsutil::sync_dir(&repo.workdir)?;
    remove_record(repo)?;
    Ok(orphan_notes(orphans, &record.id))
}

/// Notes about temp files that could not be reached, one per reason (a folder that is
/// a symlink now usually holds many).
pub(super) fn orphan_notes(mut orphans: Vec<(String, String)>, id: &str) -> Vec<String> {
    orphans.sort();
    let mut notes = Vec::new();
    for chunk in orphans.chunk_by(|a, b| a.0 == b.0) {
        let why = &chunk[0].0;
        let first = &chunk[0].1;
        let which = match chunk.len() {
            1 => format!("temp file {first}"),
            n => format!("{n} temp files ({first}, …)"),
        };
        notes.push(format!(
            "{which}, if still there, not touched: {why}; if that folder was moved, they \
             moved with it: remove them there (names ending in .astedit-{id}.tmp)"
        ));
    }
    notes
}

/// Removes the folders the run made that are empty now, deepest first, never through
/// a symlink.
pub(super) fn remove_created_dirs(repo: &Repo, record: &Record, known: &mut HashSet<PathBuf>) {
    for d in record.created_dirs.iter().rev() {
        if fsutil::check_contained(repo, &format!("{d}/x"), known).is_err() {
            continue;
        }
        // remove_dir removes only an empty folder, and fails on a symlink.
        let abs = repo.abs_path(d);
        if std::fs::remove_dir(&abs).is_ok() {
            known.remove(&abs);
        }
    }
}

/// Removes what a run left beside `op`'s target: its temp file, or the name a removal
/// moves the target to ([`remove`]). A run killed between exchanging a file and looking
/// at what it replaced leaves that file there, and it may hold a save of the user's:
/// after a crash (`live` false) such a file is removed only when it holds one of the
/// two stored sides, and kept in [`kept_dir`] otherwise, with a note.
pub(super) fn settle_temps(
    repo: &Repo,
    record: &Record,
    op: &PathOp,
    live: bool,
    notes: &mut Vec<String>,
) -> Result<(), Error> {
    let name = op
        .temp
        .clone()
        .unwrap_or_else(|| temp_name(&op.path, &record.id));
    let abs = repo.abs_path(&name);
    if live {
        fsutil::remove_if_present(&abs)?;
        return Ok(());
    }
    match abs.symlink_metadata() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io("inspect", &abs)(e)),
        Ok(_) => {}
    }
    let now = fsutil::on_disk_at(&abs, repo.git.object_hash())?;
    let stored = [op.from, op.to]
        .iter()
        .any(|side| fsutil::difference(Side::pair(*side), &now).is_none());
    if stored {
        fsutil::remove_if_present(&abs)?;
    } else {
        let kept = fsutil::keep_file(&abs, &kept_dir(repo, &record.id), &op.path)?;
        notes.push(format!(
            "{}: a file the interrupted run had moved aside holds neither side and may be a \
             save made during the run; it is kept at {}",
            op.path,
            kept.display()
        ));
    }
    Ok(())
}

/// The temp file holding `goal` for `op`: the run's own temp when it is still there
/// (rolling forward), else written now from the object database, with the target's
/// permission bits. Missing folders on the way are made (the path was checked).
pub(super) fn prepare_temp(
    repo: &Repo,
    op: &PathOp,
    goal: Side,
    dir: Direction,
    id: &str,
) -> Result<PathBuf, Error> {
    let name = op.temp.clone().unwrap_or_else(|| temp_name(&op.path, id));
    let temp = repo.abs_path(&name);
    if dir == Direction::Forward && temp.symlink_metadata().is_ok() {
        return Ok(temp);
    }
    let parent = fsutil::parent_dir(repo, &op.path);
    std::fs::create_dir_all(&parent).map_err(Error::io("create", &parent))?;
    let current = std::fs::symlink_metadata(repo.abs_path(&op.path)).ok();
    let perm = match dir {
        Direction::Forward => fsutil::perm_for(current.as_ref(), goal.mode).or(op.perm),
        // Back: a removed file comes back with its bits.
        Direction::Back if op.to.is_none() => op.perm,
        Direction::Back => fsutil::perm_for(current.as_ref(), goal.mode),
    };
    let bytes = store::blob(repo, goal.blob)?;
    fsutil::write_file_perm(&temp, &bytes, goal.mode, perm)?;
    Ok(temp)
}
