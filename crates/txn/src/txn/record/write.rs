//! The guarded writes of a pass: each rename or removal looks at its target once more
//! and keeps a save the user made meanwhile (module docs of [`super`]).

use super::Side;
use crate::txn::fsutil;
use crate::txn::fsutil::Stamp;
use crate::txn::Error;

/// A write failure injected for testing: `GIT_ASTEDIT_FAULT=eperm:<what>:<path>` makes
/// the `<what>` (`rename`) of `path` fail as if the file were immutable.
pub(super) fn injected(what: &str, path: &str) -> Option<std::io::Error> {
    let want = std::env::var_os(fsutil::FAULT_ENV)?;
    let rest = want.to_str()?.strip_prefix("eperm:")?;
    (rest.strip_prefix(what)?.strip_prefix(':')? == path)
        .then(|| std::io::Error::from_raw_os_error(1))
}

/// An error and its causes on one line.
pub(super) fn with_causes(e: &dyn std::error::Error) -> String {
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
pub(super) enum Outcome {
    Changed,
    Already,
    /// Left alone, or put back: the user saved the path during the run.
    Moved(String),
}

pub(super) const MOVED: &str = "changed while the run was writing it";

/// One replacement of [`replace`]: the temp file that goes in, the target it replaces
/// and what that target was checked to hold.
#[derive(Clone, Copy)]
pub(super) struct Replacing<'a> {
    pub(super) hash: gix::hash::Kind,
    pub(super) temp: &'a std::path::Path,
    pub(super) target: &'a std::path::Path,
    /// The repository path, for messages and the kept file's name.
    pub(super) path: &'a str,
    pub(super) start: Side,
    /// The target's stamp when its content was checked, if trusted.
    pub(super) stamp: Option<Stamp>,
    /// Where a file that may hold a save of the user's is kept.
    pub(super) keep: &'a std::path::Path,
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
pub(super) fn replace(r: &Replacing) -> Result<Outcome, Error> {
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
    let old = crate::txn::os::open_no_follow(r.target).ok();
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
pub(super) fn remove(
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

/// Whether `path` still holds `start`: its stamp unchanged since it was checked, or
/// (no trusted stamp) its content read again.
pub(super) fn still_holds(
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
