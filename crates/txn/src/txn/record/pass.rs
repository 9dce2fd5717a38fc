//! One pass over a record: where each path stands ([`classify`]) and the moves of every
//! path that safely can towards one side ([`converge`]).

use std::collections::BTreeSet;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Mutex;

use super::kept_dir;
use super::temp_name;
use super::temps::orphan_notes;
use super::temps::prepare_temp;
use super::temps::remove_created_dirs;
use super::temps::settle_temps;
use super::write::injected;
use super::write::remove;
use super::write::replace;
use super::write::still_holds;
use super::write::with_causes;
use super::write::Outcome;
use super::write::Replacing;
use super::write::MOVED;
use super::Direction;
use super::PathOp;
use super::Record;
use super::Side;
use crate::repo::Repo;
use crate::txn::fsutil;
use crate::txn::fsutil::fault;
use crate::txn::fsutil::Stamp;
use crate::txn::Error;
use crate::txn::StalePath;

/// Where one path of a record stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// It holds the side we are moving to.
    Done,
    /// It holds the side we are moving from; the stamp it had when checked (when it
    /// can be trusted).
    Ready(Option<Stamp>),
    /// It holds neither side.
    Conflict(String),
    /// A folder on its way is a symlink or not a folder.
    Refused(String),
}

/// Looks at one path of a record without writing. `earlier` is a trusted stamp of the
/// path holding its start side (a live apply's last stale check).
pub fn classify(
    repo: &Repo,
    known: &mut HashSet<PathBuf>,
    op: &PathOp,
    dir: Direction,
    earlier: Option<Stamp>,
) -> Result<State, Error> {
    match refused(repo, known, op)? {
        Some(why) => Ok(State::Refused(why)),
        None => content_state(&repo.workdir, repo.git.object_hash(), op, dir, earlier),
    }
}

/// Why `op`'s path may not be written (a folder on its way is a symlink or not a
/// folder), if so.
fn refused(
    repo: &Repo,
    known: &mut HashSet<PathBuf>,
    op: &PathOp,
) -> Result<Option<String>, Error> {
    match fsutil::check_contained(repo, &op.path, known) {
        Ok(()) => Ok(None),
        Err(Error::Refused { why, .. }) => Ok(Some(why)),
        Err(e) => Err(e),
    }
}

/// [`classify`] for a path already found contained, without the repository handle
/// (so that it can run on many threads).
fn content_state(
    workdir: &std::path::Path,
    hash: gix::hash::Kind,
    op: &PathOp,
    dir: Direction,
    earlier: Option<Stamp>,
) -> Result<State, Error> {
    let (start, goal) = ends(op, dir);
    if let Some(stamp) = earlier {
        if Stamp::now(workdir, &op.path) == Some(stamp) {
            return Ok(State::Ready(Some(stamp)));
        }
    }
    let checked_at = std::time::SystemTime::now();
    let (now, stamp) = fsutil::on_disk_stamped_in(workdir, hash, &op.path)?;
    if fsutil::difference(Side::pair(goal), &now).is_none() {
        return Ok(State::Done);
    }
    if fsutil::difference(Side::pair(start), &now).is_none() {
        return Ok(State::Ready(stamp.filter(|s| s.settled(checked_at))));
    }
    let now = match now {
        fsutil::OnDisk::Absent => "it is gone".to_string(),
        fsutil::OnDisk::Folder => "it is a folder now".to_string(),
        fsutil::OnDisk::File(id, mode) => {
            format!(
                "it is blob {}, mode {}",
                id.to_hex_with_len(12),
                mode.git_mode()
            )
        }
    };
    Ok(State::Conflict(format!(
        "holds neither the before nor the after side: {now}"
    )))
}

fn ends(op: &PathOp, dir: Direction) -> (Option<Side>, Option<Side>) {
    match dir {
        Direction::Forward => (op.from, op.to),
        Direction::Back => (op.to, op.from),
    }
}

/// What one pass over a record did and left.
#[derive(Debug, Default)]
pub struct Pass {
    /// Paths written or removed in this pass.
    pub changed: Vec<String>,
    /// Paths left alone: they hold neither side, or their folder is a symlink.
    pub unresolved: Vec<StalePath>,
    /// Temp files that could not be reached, and other things to tell.
    pub notes: Vec<String>,
}

/// One write of a pass: the path's op, and the stamp its target must still have.
struct Job<'a> {
    op: &'a PathOp,
    stamp: Option<Stamp>,
    /// The temp file to rename into place (`None` for a removal).
    temp: Option<PathBuf>,
}

/// Moves every path of `record` that safely can towards one side (see the module
/// docs), leaving the others and reporting them. Never touches the record file.
/// `earlier` holds trusted stamps per op (a live apply's last stale check).
pub fn converge(
    repo: &Repo,
    record: &Record,
    dir: Direction,
    earlier: Option<&[Option<Stamp>]>,
) -> Result<Pass, Error> {
    let live = earlier.is_some();
    let mut pass = Pass::default();
    let mut orphans = Vec::new();
    let mut known = HashSet::new();
    let mut jobs = Vec::new();
    let mut done_removals = Vec::new();
    let mut dirs = BTreeSet::new();
    // Containment first, one thread (its cache of checked folders is shared), then
    // every contained path's content on all of them: reading and hashing is the work.
    let mut refusals = Vec::with_capacity(record.ops.len());
    for op in &record.ops {
        refusals.push(refused(repo, &mut known, op)?);
    }
    let states: Vec<Result<State, Error>> = {
        use rayon::prelude::*;
        let (workdir, hash) = (repo.workdir.as_path(), repo.git.object_hash());
        record
            .ops
            .par_iter()
            .zip(refusals.into_par_iter())
            .enumerate()
            .map(|(i, (op, why))| match why {
                Some(why) => Ok(State::Refused(why)),
                None => {
                    let stamp = earlier.and_then(|e| e.get(i).copied().flatten());
                    if live {
                        // The live run checked every path right before its commit
                        // point; the look that counts is the one right before each
                        // rename ([`still_holds`]: by stamp, or by content when the
                        // stamp cannot be trusted). Reading here too would read each
                        // recently changed file once more for nothing.
                        return Ok(State::Ready(stamp));
                    }
                    content_state(workdir, hash, op, dir, stamp)
                }
            })
            .collect()
    };
    for (op, state) in record.ops.iter().zip(states) {
        let state = state?;
        let temp = op.temp.as_deref();
        match state {
            State::Refused(why) => {
                if let Some(t) = temp {
                    // Looking for it would reach through the symlink: say where it was.
                    orphans.push((why.clone(), t.to_string()));
                }
                pass.unresolved.push(StalePath {
                    path: op.path.clone(),
                    what: why,
                });
            }
            State::Conflict(what) => {
                settle_temps(repo, record, op, live, &mut pass.notes)?;
                pass.unresolved.push(StalePath {
                    path: op.path.clone(),
                    what,
                });
            }
            State::Done => {
                settle_temps(repo, record, op, live, &mut pass.notes)?;
                if ends(op, dir).1.is_none() {
                    done_removals.push(op);
                }
            }
            State::Ready(stamp) => {
                let (_, goal) = ends(op, dir);
                dirs.insert(fsutil::parent_dir(repo, &op.path));
                let temp = match goal {
                    None => None,
                    // The live run wrote every temp before its commit point.
                    Some(_) if live && dir == Direction::Forward => {
                        op.temp.as_ref().map(|t| repo.abs_path(t))
                    }
                    Some(goal) => Some(prepare_temp(repo, op, goal, dir, &record.id)?),
                };
                jobs.push(Job { op, stamp, temp });
            }
        }
    }
    pass.notes.extend(orphan_notes(orphans, &record.id));
    // Renames first, then removals, as the fault points name them.
    let (renames, removals): (Vec<Job>, Vec<Job>) =
        jobs.into_iter().partition(|j| j.temp.is_some());
    let renamed = std::sync::atomic::AtomicUsize::new(0);
    let mut moved = run_jobs(repo, record, dir, &renames, &renamed, &mut pass.changed)?;
    fault("after-renames");
    moved.extend(run_jobs(
        repo,
        record,
        dir,
        &removals,
        &renamed,
        &mut pass.changed,
    )?);
    pass.changed.sort();
    moved.sort_by(|a, b| a.path.cmp(&b.path));
    pass.unresolved.extend(moved);
    // Removals may have emptied folders (never through a symlink: each path was
    // checked). Paths removed before a crash are looked at again for the same reason.
    let removed = removals.iter().map(|j| j.op).chain(done_removals);
    for op in removed {
        if repo.abs_path(&op.path).symlink_metadata().is_ok() {
            continue;
        }
        for gone in fsutil::remove_empty_parents(repo, &op.path) {
            if let Some(p) = gone.parent() {
                dirs.insert(p.to_path_buf());
            }
        }
    }
    if dir == Direction::Back {
        remove_created_dirs(repo, record, &mut known);
        dirs.insert(repo.workdir.clone());
    }
    fault("after-deletes");
    fsutil::sync_dirs(&dirs)?;
    Ok(pass)
}

/// Runs renames (jobs with a temp) or removals, in parallel, each after one more look
/// at its target, and each followed by a look at what it replaced ([`replace`],
/// [`remove`]). Pushes the paths changed onto `changed`; returns those that moved
/// under us (left holding the user's save, their temp removed), with what happened.
fn run_jobs(
    repo: &Repo,
    record: &Record,
    dir: Direction,
    jobs: &[Job],
    renamed: &std::sync::atomic::AtomicUsize,
    changed: &mut Vec<String>,
) -> Result<Vec<StalePath>, Error> {
    use std::sync::atomic::Ordering;
    let (done, moved) = (Mutex::new(Vec::new()), Mutex::new(Vec::new()));
    // The repository handle cannot cross threads; these can.
    let (workdir, hash) = (repo.workdir.as_path(), repo.git.object_hash());
    let keep = kept_dir(repo, &record.id);
    fsutil::in_parallel(jobs, |job| {
        let target = workdir.join(&job.op.path);
        let (start, _) = ends(job.op, dir);
        // The look and the write that follows it run on this thread, back to back.
        let unchanged = still_holds(workdir, hash, &job.op.path, start, job.stamp)?;
        let written = match (&job.temp, unchanged, start) {
            (_, false, _) => Ok(Outcome::Moved(MOVED.into())),
            (Some(temp), true, None) => {
                fault(&format!("before-rename:{}", job.op.path));
                match injected("rename", &job.op.path)
                    .map_or_else(|| fsutil::rename_noreplace(temp, &target), Err)
                {
                    Ok(()) => Ok(Outcome::Changed),
                    // A file appeared where the run creates one.
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                        Ok(Outcome::Moved(MOVED.into()))
                    }
                    Err(e) => Err(Error::io("rename into place", &target)(e)),
                }
            }
            (Some(temp), true, Some(start)) => {
                fault(&format!("before-rename:{}", job.op.path));
                match injected("rename", &job.op.path) {
                    Some(e) => Err(Error::io("rename into place", &target)(e)),
                    None => replace(&Replacing {
                        hash,
                        temp,
                        target: &target,
                        path: &job.op.path,
                        start,
                        stamp: job.stamp,
                        keep: &keep,
                    }),
                }
            }
            (None, true, _) => {
                fault(&format!("before-remove:{}", job.op.path));
                let trash = workdir.join(temp_name(&job.op.path, &record.id));
                remove(hash, &trash, &target, &job.op.path, start, job.stamp, &keep)
            }
        };
        // Past the point of no return one path that cannot be written (an immutable
        // file, a read-only folder, a name too long) must not stop the others half
        // way: it is left as it is and reported, and the record stays, so that
        // `recover --finish` completes the run once it can be written (or `--abandon`
        // puts the rest back).
        let outcome = written.unwrap_or_else(|e| {
            Outcome::Moved(format!(
                "could not be written ({}); the other paths were",
                with_causes(&e)
            ))
        });
        if matches!(outcome, Outcome::Changed) && job.temp.is_some() {
            let n = renamed.fetch_add(1, Ordering::SeqCst) + 1;
            fault(&format!("after-rename:{n}"));
        }
        let push = |m: &Mutex<Vec<StalePath>>, what: String| {
            m.lock().unwrap_or_else(|e| e.into_inner()).push(StalePath {
                path: job.op.path.clone(),
                what,
            })
        };
        match outcome {
            Outcome::Changed => push(&done, String::new()),
            Outcome::Already => {}
            Outcome::Moved(what) => {
                if let Some(temp) = &job.temp {
                    let _ = std::fs::remove_file(temp);
                }
                push(&moved, what);
            }
        }
        Ok(())
    })?;
    changed.extend(
        done.into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .into_iter()
            .map(|p| p.path),
    );
    Ok(moved.into_inner().unwrap_or_else(|e| e.into_inner()))
}
