/*!
The "applying" record and the machinery both a live run ([`super::apply`]) and
recovery ([`super::recover`]) drive from it: temp files, rolling forward, rolling back.

The record, `<git_dir>/astedit-applying.json`, names every path of the run with the
side it must hold (`from`) and the side it gets (`to`), its temp file, and the phase:
`prepared` (no target touched yet) or `committed` (the point of no return passed).

Every write here re-checks its target first, the same way a live apply does, and only
moves a path that holds exactly one of the two sides:

* containment: no folder on the way is a symlink or not a folder ([`fsutil::check_contained`]);
  a path that fails is left alone, and its temp file too (removing it would reach
  through the symlink): its place is reported instead;
* content: a path holding neither side (someone saved it after the crash, or during the
  renames) is left alone and reported; the record stays so that nothing is lost, and
  `git astedit recover` resolves it;
* right before each rename or removal, the target is looked at once more: its stat
  stamp (inode, size, times, mode) must be the one it had when its content was checked
  (or, for a stamp that cannot be trusted, its content is hashed again); a path to be
  created is created with `RENAME_NOREPLACE`, so it never replaces a file that appeared.
*/

use std::collections::BTreeSet;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Mutex;

use gix::refs::transaction::PreviousValue;
use gix::refs::Target;
use gix::ObjectId;
use serde::Deserialize;
use serde::Serialize;

use super::fsutil;
use super::fsutil::fault;
use super::fsutil::Stamp;
use super::journal;
use super::journal::Event;
use super::journal::EventKind;
use super::journal::TxnOp;
use super::store;
use super::Error;
use super::StalePath;
use crate::change::FileMode;
use crate::repo::Repo;

/// The record of an apply/undo in progress, inside the work tree's git dir.
pub const RECORD_FILE: &str = "astedit-applying.json";

/// One side of a path: a blob and its mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Side {
    #[serde(with = "hex_id")]
    pub blob: ObjectId,
    pub mode: FileMode,
}

impl Side {
    fn pair(s: Option<Side>) -> Option<(ObjectId, FileMode)> {
        s.map(|s| (s.blob, s.mode))
    }
}

/// One path of a run: what must be there (`from`) and what will be (`to`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathOp {
    pub path: String,
    pub from: Option<Side>,
    pub to: Option<Side>,
    /// The temp file (repository path) holding `to` before its rename.
    pub temp: Option<String>,
    /// Permission bits: of the file removed (when `to` is none), or for the file to
    /// create where nothing is (an undo giving back a removed file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perm: Option<u32>,
}

/// Where a run stands: before or after its point of no return.
/// Where an apply or undo run stands: `prepared` (before its point of no return:
/// recovery rolls it back) or `committed` (past it: recovery rolls it forward).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    Prepared,
    Committed,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Prepared => "prepared",
            Phase::Committed => "committed",
        }
    }
}

/// The durable record of a run in progress (see the module docs).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    pub version: u32,
    pub op: TxnOp,
    pub id: String,
    #[serde(with = "hex_id")]
    pub commit: ObjectId,
    pub kind: crate::change::PreviewKind,
    /// A nonce naming this run; the journal event carries it too.
    pub run: String,
    pub pid: u32,
    pub phase: Phase,
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

pub fn record_path(repo: &Repo) -> PathBuf {
    repo.git_dir.join(RECORD_FILE)
}

pub fn read_record(repo: &Repo) -> Result<Option<Record>, Error> {
    read_record_at(&record_path(repo))
}

/// The record at `path` (another work tree's, say), if there is one.
pub fn read_record_at(path: &std::path::Path) -> Result<Option<Record>, Error> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("read", path)(e)),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| Error::Corrupt(format!("{}: {e}", path.display())))
}

pub fn write_record(repo: &Repo, record: &Record) -> Result<(), Error> {
    let json = serde_json::to_vec_pretty(record)
        .map_err(|e| Error::Corrupt(format!("cannot encode the applying record: {e}")))?;
    fsutil::write_durable(&record_path(repo), &json)
}

fn remove_record(repo: &Repo) -> Result<(), Error> {
    fsutil::remove_if_present(&record_path(repo))?;
    fsutil::sync_dir(&repo.git_dir)
}

/// The temp file name beside `path` for preview `id`.
pub fn temp_name(path: &str, id: &str) -> String {
    let (dir, name) = match path.rfind('/') {
        Some(i) => (&path[..=i], &path[i + 1..]),
        None => ("", path),
    };
    format!("{dir}.{name}.astedit-{id}.tmp")
}

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
                .map(|m| super::os::perm_bits(&m)),
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
fn orphan_notes(mut orphans: Vec<(String, String)>, id: &str) -> Vec<String> {
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
fn remove_created_dirs(repo: &Repo, record: &Record, known: &mut HashSet<PathBuf>) {
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

/// Which way to move the paths of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// `from` → `to`: finishing the run.
    Forward,
    /// `to` → `from`: abandoning it.
    Back,
}

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

/// The folder where files that may hold a save of the user's are kept when a run had
/// to move them out of the way (see [`replace`]): `<git_dir>/astedit-saved/<id>/`.
pub fn kept_dir(repo: &Repo, id: &str) -> PathBuf {
    repo.git_dir.join(KEPT_DIR).join(id)
}

/// The folder of [`kept_dir`] inside the git dir.
pub const KEPT_DIR: &str = "astedit-saved";

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

/// A write failure injected for testing: `GIT_ASTEDIT_FAULT=eperm:<what>:<path>` makes
/// the `<what>` (`rename`) of `path` fail as if the file were immutable.
fn injected(what: &str, path: &str) -> Option<std::io::Error> {
    let want = std::env::var_os(fsutil::FAULT_ENV)?;
    let rest = want.to_str()?.strip_prefix("eperm:")?;
    (rest.strip_prefix(what)?.strip_prefix(':')? == path)
        .then(|| std::io::Error::from_raw_os_error(1))
}

/// An error and its causes on one line.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

/// What one write of [`run_jobs`] did.
enum Outcome {
    Changed,
    Already,
    /// Left alone, or put back: the user saved the path during the run.
    Moved(String),
}

const MOVED: &str = "changed while the run was writing it";

/// One replacement of [`replace`]: the temp file that goes in, the target it replaces
/// and what that target was checked to hold.
#[derive(Clone, Copy)]
struct Replacing<'a> {
    hash: gix::hash::Kind,
    temp: &'a std::path::Path,
    target: &'a std::path::Path,
    /// The repository path, for messages and the kept file's name.
    path: &'a str,
    start: Side,
    /// The target's stamp when its content was checked, if trusted.
    stamp: Option<Stamp>,
    /// Where a file that may hold a save of the user's is kept.
    keep: &'a std::path::Path,
}

/// Replaces `target` (checked to hold `start`, with `stamp` when trusted) by `temp`.
///
/// Where the system can, the two are exchanged atomically, so that what the target
/// held an instant before is not destroyed but lies at `temp`: if it is not what was
/// checked (the user saved in the instant between the last look and the exchange),
/// it is exchanged back, and the path is reported. Anything that was in the target's
/// place in between is kept in `keep` (never removed), so a save that replaced the
/// file is never lost. Without an exchange, the old file is opened before a plain
/// rename and looked at through the open descriptor afterwards: a save written into it
/// in place is copied to `keep` and reported.
fn replace(r: &Replacing) -> Result<Outcome, Error> {
    let Replacing {
        hash,
        temp,
        target,
        path,
        start,
        stamp,
        keep,
    } = *r;
    let ours = Stamp::at(temp);
    match fsutil::rename_exchange(temp, target) {
        Some(Ok(())) => {}
        Some(Err(e)) => return Err(Error::io("rename into place", target)(e)),
        None => return replace_by_rename(r),
    }
    // `temp` names what `target` held an instant ago.
    if holds(hash, temp, start, stamp)? {
        fsutil::remove_if_present(temp)?;
        return Ok(Outcome::Changed);
    }
    // A save landed between the last look and the exchange: it goes back in place.
    match fsutil::rename_exchange(temp, target) {
        Some(Ok(())) => {}
        Some(Err(e)) => {
            let kept = fsutil::keep_file(temp, keep, path)?;
            let e = std::io::Error::new(
                e.kind(),
                format!("{e}; the save is kept at {}", kept.display()),
            );
            return Err(Error::io(
                "put back a save made during the run over",
                target,
            )(e));
        }
        None => unreachable_exchange(target)?,
    }
    // `temp` holds our file again, unless another save came in between: that one is
    // kept, since which of two saves the user meant cannot be told.
    let back = Stamp::at(temp);
    match (back, ours) {
        (Some(b), Some(o)) if b.same_file_unwritten(&o) => {
            fsutil::remove_if_present(temp)?;
            Ok(Outcome::Moved(
                "saved during the run: the save was put back in place, nothing of it was \
                 overwritten"
                    .into(),
            ))
        }
        (None, _) => Ok(Outcome::Moved(
            "saved during the run: the save was put back in place".into(),
        )),
        _ => {
            let kept = fsutil::keep_file(temp, keep, path)?;
            Ok(Outcome::Moved(format!(
                "saved twice during the run: one save is in place, the other kept at {}",
                kept.display()
            )))
        }
    }
}

/// [`replace`] where files cannot be exchanged: the old file is held open across a
/// plain rename and looked at through its descriptor after it. What this cannot see is
/// a save that replaces the file (by its own rename) between the open and the rename,
/// two system calls apart.
fn replace_by_rename(r: &Replacing) -> Result<Outcome, Error> {
    use std::io::Read;
    let old = super::os::open_no_follow(r.target).ok();
    std::fs::rename(r.temp, r.target).map_err(Error::io("rename into place", r.target))?;
    let Some(mut old) = old else {
        // A symlink (or nothing readable): nothing can be written into it in place.
        return Ok(Outcome::Changed);
    };
    let meta = old.metadata().map_err(Error::io("inspect", r.target))?;
    let mut bytes = None;
    let untouched = match (r.stamp, Stamp::of(&meta)) {
        (Some(s), Some(now)) => now.same_file_unwritten(&s),
        _ => {
            let mut read = Vec::new();
            old.read_to_end(&mut read)
                .map_err(Error::io("read", r.target))?;
            let id = gix::objs::compute_hash(r.hash, gix::objs::Kind::Blob, &read)
                .map_err(|e| Error::Corrupt(format!("cannot hash {}: {e}", r.path)))?;
            bytes = Some(read);
            id == r.start.blob
        }
    };
    if untouched {
        return Ok(Outcome::Changed);
    }
    let bytes = match bytes {
        Some(b) => b,
        None => {
            let mut read = Vec::new();
            old.read_to_end(&mut read)
                .map_err(Error::io("read", r.target))?;
            read
        }
    };
    let dest = r.keep.join(r.path);
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent).map_err(Error::io("create", parent))?;
    }
    std::fs::write(&dest, &bytes).map_err(Error::io("write", &dest))?;
    Ok(Outcome::Moved(format!(
        "saved during the run and replaced by it: the save is kept at {}",
        dest.display()
    )))
}

fn unreachable_exchange(target: &std::path::Path) -> Result<(), Error> {
    Err(Error::io("exchange back", target)(std::io::Error::from(
        std::io::ErrorKind::Unsupported,
    )))
}

/// Removes `target` (checked to hold `start`): it is first renamed to `trash` beside
/// it, atomically, and looked at there; a file saved since the last look is renamed
/// back (or, when something new took its place meanwhile, kept in `keep`).
fn remove(
    hash: gix::hash::Kind,
    trash: &std::path::Path,
    target: &std::path::Path,
    path: &str,
    start: Option<Side>,
    stamp: Option<Stamp>,
    keep: &std::path::Path,
) -> Result<Outcome, Error> {
    let _ = std::fs::remove_file(trash);
    match std::fs::rename(target, trash) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Outcome::Already),
        Err(e) => return Err(Error::io("remove", target)(e)),
    }
    let Some(start) = start else {
        // Nothing was expected there; the caller only removes what it checked.
        fsutil::remove_if_present(trash)?;
        return Ok(Outcome::Changed);
    };
    if holds(hash, trash, start, stamp)? {
        fsutil::remove_if_present(trash)?;
        return Ok(Outcome::Changed);
    }
    match fsutil::rename_noreplace(trash, target) {
        Ok(()) => Ok(Outcome::Moved(
            "saved during the run: the save was put back in place, nothing of it was \
             removed"
                .into(),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let kept = fsutil::keep_file(trash, keep, path)?;
            Ok(Outcome::Moved(format!(
                "saved twice during the run: one save is in place, the other kept at {}",
                kept.display()
            )))
        }
        Err(e) => Err(Error::io("put back", target)(e)),
    }
}

/// Whether the file at `abs` (moved there by a rename) is the version checked to hold
/// `start`: by its stamp when one was trusted, else by its content.
fn holds(
    hash: gix::hash::Kind,
    abs: &std::path::Path,
    start: Side,
    stamp: Option<Stamp>,
) -> Result<bool, Error> {
    if let Some(s) = stamp {
        return Ok(Stamp::at(abs).is_some_and(|now| now.same_file_unwritten(&s)));
    }
    let now = fsutil::on_disk_at(abs, hash)?;
    Ok(fsutil::difference(Side::pair(Some(start)), &now).is_none())
}

/// Removes what a run left beside `op`'s target: its temp file, or the name a removal
/// moves the target to ([`remove`]). A run killed between exchanging a file and looking
/// at what it replaced leaves that file there, and it may hold a save of the user's:
/// after a crash (`live` false) such a file is removed only when it holds one of the
/// two stored sides, and kept in [`kept_dir`] otherwise, with a note.
fn settle_temps(
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

/// Whether `path` still holds `start`: its stamp unchanged since it was checked, or
/// (no trusted stamp) its content read again.
fn still_holds(
    workdir: &std::path::Path,
    hash: gix::hash::Kind,
    path: &str,
    start: Option<Side>,
    stamp: Option<Stamp>,
) -> Result<bool, Error> {
    if let Some(s) = stamp {
        return Ok(Stamp::now(workdir, path) == Some(s));
    }
    let now = fsutil::on_disk_in(workdir, hash, path)?;
    Ok(fsutil::difference(Side::pair(start), &now).is_none())
}

/// The temp file holding `goal` for `op`: the run's own temp when it is still there
/// (rolling forward), else written now from the object database, with the target's
/// permission bits. Missing folders on the way are made (the path was checked).
fn prepare_temp(
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

/// Whether the run's `applied`/`undone` event is in the journal: it is written only
/// once every path was moved, so the run was complete.
pub fn event_landed(repo: &Repo, record: &Record) -> Result<bool, Error> {
    Ok(journal::find_newest(repo, |e| {
        e.event.run.as_deref() == Some(record.run.as_str())
    })?
    .is_some())
}

/// Rolls a committed run forward: every path that safely can be is moved; when all
/// are, the `applied`/`undone` event is written and the record removed. Idempotent, so
/// recovery can call it again. Paths left (see [`Pass::unresolved`]) keep the record.
///
/// `earlier` (the live run's stamps) is given only by the run that wrote the record and
/// still holds the lock: its event cannot have landed, so the journal is not searched
/// for it (a search that finds nothing reads the whole journal).
pub fn finish(
    repo: &Repo,
    record: &Record,
    earlier: Option<&[Option<Stamp>]>,
) -> Result<Pass, Error> {
    let live = earlier.is_some();
    if !live && event_landed(repo, record)? {
        remove_record(repo)?;
        return Ok(Pass::default());
    }
    let pass = converge(repo, record, Direction::Forward, earlier)?;
    if pass.unresolved.is_empty() {
        record_event(repo, record, live)?;
        fault("after-journal");
        remove_record(repo)?;
    }
    Ok(pass)
}

/// Whether the undo of a transaction of `kind` makes its preview pending again: not
/// for an agent's own edit (`agent-hook`), which nobody staged.
pub fn pending_again(kind: crate::change::PreviewKind) -> bool {
    kind != crate::change::PreviewKind::Hook
}

/// Rolls a committed run back as far as it safely can (`recover --abandon`), removes
/// its temps and the record. Paths holding neither side are left as they are.
pub fn abandon(repo: &Repo, record: &Record) -> Result<Pass, Error> {
    let pass = converge(repo, record, Direction::Back, None)?;
    remove_record(repo)?;
    Ok(pass)
}

/// Writes the run's `applied`/`undone` event (once: skipped when the journal has it),
/// removing (apply) or re-creating (undo) the pending ref in the same transaction. An
/// agent's own edit journalled by `agent-hook` (kind `hook`) was never a preview
/// anyone staged: its undo leaves none pending ([`pending_again`]).
/// `live`: called by the run itself, which has written no event yet.
fn record_event(repo: &Repo, record: &Record, live: bool) -> Result<(), Error> {
    if !live && event_landed(repo, record)? {
        return Ok(());
    }
    let name = format!("{}{}", store::REF_PREFIX, record.id);
    let pending = repo
        .git
        .try_find_reference(name.as_str())
        .map_err(Error::git(format!("read {name}")))?
        .is_some();
    let mut extra = Vec::new();
    let kind = match record.op {
        TxnOp::Undo => {
            if !pending && pending_again(record.kind) {
                extra.push(journal::update_edit(
                    &name,
                    PreviousValue::MustNotExist,
                    record.commit,
                    "astedit: undone",
                )?);
            }
            EventKind::Undone
        }
        TxnOp::Apply => {
            if pending {
                extra.push(journal::delete_edit(
                    &name,
                    PreviousValue::MustExistAndMatch(Target::Object(record.commit)),
                )?);
            }
            EventKind::Applied
        }
    };
    let mut event = Event::new(repo, kind, &record.id, record.commit);
    event.reason = record.reason.clone();
    event.agent = record.agent.clone();
    event.kind = Some(record.kind);
    event.files = record.ops.iter().map(|o| o.path.clone()).collect();
    event.run = Some(record.run.clone());
    event.made_commit = record.made_commit.clone();
    event.removed_modes = record
        .ops
        .iter()
        .filter(|o| o.to.is_none())
        .filter_map(|o| o.perm.map(|p| (o.path.clone(), format!("{p:04o}"))))
        .collect();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_and_ops_keep_their_on_disk_strings() {
        assert_eq!(
            serde_json::to_string(&Phase::Committed).expect("encode"),
            "\"committed\""
        );
        let p: Phase = serde_json::from_str("\"prepared\"").expect("decode");
        assert_eq!(p, Phase::Prepared);
        let op: TxnOp = serde_json::from_str("\"undo\"").expect("decode");
        assert_eq!(op, TxnOp::Undo);
    }

    #[test]
    fn temp_names_sit_beside_their_target() {
        assert_eq!(temp_name("a.js", "abc"), ".a.js.astedit-abc.tmp");
        assert_eq!(temp_name("d/e/f.js", "abc"), "d/e/.f.js.astedit-abc.tmp");
    }
}
