/*!
Work-tree primitives for apply/undo: path containment, hashing what is on disk,
durable writes (gix fsyncs nothing, so we do: files, then their folders), and the
fault-injection points that let tests kill the process between any two steps.
*/

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;

use gix::ObjectId;

use super::Error;
use crate::change::FileMode;
use crate::repo::Repo;

/// Set (to anything), apply and undo replace files as on a system without
/// `RENAME_EXCHANGE`: for testing that fallback.
pub const NO_EXCHANGE_ENV: &str = "GIT_ASTEDIT_NO_EXCHANGE";

/// The environment variable naming a fault point, e.g. `after-rename:3`.
pub const FAULT_ENV: &str = "GIT_ASTEDIT_FAULT";

/// Aborts the process (no destructors, like a crash) when `point` is the configured
/// fault. `after-rename:N` matches the Nth rename. `pause:<point>:<ms>` sleeps there
/// instead, so a test can change the work tree in the middle of a run. (Failed writes
/// are injected with `enospc:<point>`, see [`fault_error`].)
pub fn fault(point: &str) {
    let Some(want) = std::env::var_os(FAULT_ENV) else {
        return;
    };
    let Some(want) = want.to_str() else { return };
    if want == point {
        let _ = writeln!(std::io::stderr(), "git-astedit: fault injected at {point}");
        std::process::abort();
    }
    if let Some((p, ms)) = want.strip_prefix("pause:").and_then(|r| r.rsplit_once(':')) {
        if p == point {
            // Said, so that a test can wait for the pause and kill the process there.
            let _ = writeln!(std::io::stderr(), "git-astedit: paused at {point}");
            let ms = ms.parse().unwrap_or(0);
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
    }
}

/// A write failure injected for testing: `GIT_ASTEDIT_FAULT=enospc:<point>` makes the
/// write at `point` fail as if the disk were full (real disk-full runs are impractical
/// in tests).
pub fn fault_error(point: &str) -> Option<std::io::Error> {
    let want = std::env::var_os(FAULT_ENV)?;
    (want.to_str()?.strip_prefix("enospc:")? == point)
        .then(|| std::io::Error::from_raw_os_error(28))
}

/// `NAME_MAX` and (about) `PATH_MAX` of Linux file systems, in bytes.
const MAX_NAME: usize = 255;
const MAX_PATH: usize = 4000;
/// What a temp file's name adds to its target's: `.` + `.astedit-` + 12 hex + `.tmp`.
const TEMP_EXTRA: usize = 25;

/// Checks that a repository path is relative, normalized and not under `.git`, and not
/// longer than the file system takes.
pub fn check_path_syntax(path: &str) -> Result<(), &'static str> {
    if path.is_empty() {
        return Err("empty path");
    }
    if path.contains('\0') {
        return Err("contains a NUL byte");
    }
    if path.starts_with('/') || path.contains('\\') || path.as_bytes().get(1) == Some(&b':') {
        return Err("absolute paths are not allowed");
    }
    // Longer names fail at the file system (ENAMETOOLONG) after the checks: refuse them
    // here. The last one also needs room for the temp file beside it
    // (`.NAME.astedit-ID.tmp`, 25 bytes more).
    if path.len() > MAX_PATH {
        return Err("the path is longer than the file system allows (4000 bytes)");
    }
    let last = path.rsplit('/').next().unwrap_or(path);
    if last.len() > MAX_NAME - TEMP_EXTRA {
        return Err("the file name is longer than the file system allows (230 bytes, with room for the temp file beside it)");
    }
    for comp in path.split('/') {
        match comp {
            _ if comp.len() > MAX_NAME => {
                return Err("a folder name is longer than the file system allows (255 bytes)")
            }
            "" => return Err("empty path component"),
            "." | ".." => return Err("'.' and '..' components are not allowed"),
            c if c.eq_ignore_ascii_case(".git") => return Err("paths under .git are not allowed"),
            _ => {}
        }
    }
    Ok(())
}

/// Refuses (exit 4) a path that is not plainly inside the work tree: bad syntax, or an
/// existing ancestor folder that is a symlink or not a folder. Checked at apply time.
/// `known_dirs` holds folders already found to be plain folders (many touched paths
/// share their folders); it grows as folders are checked.
pub fn check_contained(
    repo: &Repo,
    path: &str,
    known_dirs: &mut std::collections::HashSet<PathBuf>,
) -> Result<(), Error> {
    check_contained_in(&repo.workdir, path, known_dirs)
}

/// [`check_contained`] under `root` (another checkout of the repository, such as
/// `verify`'s worktree).
pub fn check_contained_in(
    root: &Path,
    path: &str,
    known_dirs: &mut std::collections::HashSet<PathBuf>,
) -> Result<(), Error> {
    let refused = |why: String| Error::Refused {
        path: path.to_string(),
        why,
    };
    check_path_syntax(path).map_err(|why| refused(why.to_string()))?;
    let comps: Vec<&str> = path.split('/').collect();
    match unplain_folder(root, &comps[..comps.len() - 1], known_dirs)? {
        Some(why) => Err(refused(why)),
        None => Ok(()),
    }
}

/// Refuses (exit 4) a folder (a repository path) that is not plainly inside the work
/// tree at `root`: bad syntax, or an existing folder on the way, itself included, that
/// is a symlink or not a folder (a command must not be started through one).
pub fn check_folder_contained_in(
    root: &Path,
    folder: &str,
    known_dirs: &mut std::collections::HashSet<PathBuf>,
) -> Result<(), Error> {
    if folder.is_empty() {
        return Ok(());
    }
    let refused = |why: String| Error::Refused {
        path: folder.to_string(),
        why,
    };
    check_path_syntax(folder).map_err(|why| refused(why.to_string()))?;
    let comps: Vec<&str> = folder.split('/').collect();
    match unplain_folder(root, &comps, known_dirs)? {
        Some(why) => Err(refused(why)),
        None => Ok(()),
    }
}

/// Why `path` under `root` is not plainly there, when an existing folder on its way is
/// a symlink or not a folder: git sees no file there, and reading or writing it would
/// reach elsewhere. No syntax check (see [`check_contained_in`]).
pub fn beyond_link(
    root: &Path,
    path: &str,
    known_dirs: &mut std::collections::HashSet<PathBuf>,
) -> Result<Option<String>, Error> {
    let comps: Vec<&str> = path.split('/').collect();
    unplain_folder(root, &comps[..comps.len() - 1], known_dirs)
}

/// The first of the folders `comps` names under `root` (each inside the one before)
/// that exists and is a symlink or not a folder, in words; checking stops at the first
/// that does not exist. `known_dirs` holds folders already found plain, and grows.
fn unplain_folder(
    root: &Path,
    comps: &[&str],
    known_dirs: &mut std::collections::HashSet<PathBuf>,
) -> Result<Option<String>, Error> {
    let mut cur = root.to_path_buf();
    for (i, comp) in comps.iter().enumerate() {
        cur.push(comp);
        if known_dirs.contains(&cur) {
            continue;
        }
        match std::fs::symlink_metadata(&cur) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("inspect", &cur)(e)),
            Ok(m) if m.file_type().is_symlink() => {
                return Ok(Some(format!(
                    "its folder '{}' is a symlink",
                    comps[..=i].join("/")
                )))
            }
            Ok(m) if !m.is_dir() => {
                return Ok(Some(format!("'{}' is not a folder", comps[..=i].join("/"))))
            }
            Ok(_) => {
                known_dirs.insert(cur.clone());
            }
        }
    }
    Ok(None)
}

/// What is on disk at a path, as git would store it (raw bytes, no filters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnDisk {
    Absent,
    File(ObjectId, FileMode),
    Folder,
}

/// [`on_disk`] without the repository handle (which cannot cross threads).
pub fn on_disk_in(workdir: &Path, hash: gix::hash::Kind, path: &str) -> Result<OnDisk, Error> {
    on_disk_stamped_in(workdir, hash, path).map(|(now, _)| now)
}

/// What tells a file's version without reading it: while none of these change, neither
/// has its content (the change time moves on every write and cannot be set back).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mode: u32,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    #[cfg(unix)]
    pub fn of(meta: &std::fs::Metadata) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        Some(Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mode: meta.mode(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        })
    }

    #[cfg(not(unix))]
    pub fn of(_meta: &std::fs::Metadata) -> Option<Stamp> {
        None
    }

    /// Whether any later change of the file is sure to move its change time: its change
    /// time lies more than two seconds before `checked_at`. File systems with coarse
    /// timestamps (FAT: 2 s) give a file changed twice within one tick the same times,
    /// so a file changed just before a check could change again unseen.
    pub fn settled(&self, checked_at: std::time::SystemTime) -> bool {
        let Ok(secs) = u64::try_from(self.ctime.0) else {
            return false;
        };
        let nanos = u32::try_from(self.ctime.1).unwrap_or(0);
        let ctime = std::time::UNIX_EPOCH + std::time::Duration::new(secs, nanos);
        ctime + std::time::Duration::from_secs(2) < checked_at
    }

    /// The stamp of `path` now; `None` when it cannot tell (absent, unreadable).
    pub fn now(workdir: &Path, path: &str) -> Option<Stamp> {
        Stamp::at(&workdir.join(path))
    }

    /// The stamp of the absolute path `abs` (not following a symlink).
    pub fn at(abs: &Path) -> Option<Stamp> {
        std::fs::symlink_metadata(abs)
            .ok()
            .and_then(|m| Stamp::of(&m))
    }

    /// Whether `self`, taken after the file was renamed, tells the version `before`
    /// does. A rename moves the change time (of both files of an exchange), so the
    /// change time cannot count; everything else must match: the same inode, not
    /// written since (size and modification time).
    pub fn same_file_unwritten(&self, before: &Stamp) -> bool {
        (self.dev, self.ino, self.size, self.mode, self.mtime)
            == (
                before.dev,
                before.ino,
                before.size,
                before.mode,
                before.mtime,
            )
    }
}

/// [`on_disk_in`] and the stamp the file had before it was read (`None` for absent
/// paths and folders).
pub fn on_disk_stamped_in(
    workdir: &Path,
    hash: gix::hash::Kind,
    path: &str,
) -> Result<(OnDisk, Option<Stamp>), Error> {
    on_disk_seen_in(workdir, hash, path).map(|(now, stamp, _)| (now, stamp))
}

/// [`on_disk_stamped_in`] and, for a regular file, its permission bits (what the file
/// replacing it keeps, see [`perm_for_bits`]).
///
/// A regular file is opened (never following a symlink), its stamp taken from the open
/// file and read to its end: four system calls, where a look at the path, an open and a
/// read to a second, empty read took six. Symlinks, folders and special files take the
/// path's metadata first.
pub fn on_disk_seen_in(
    workdir: &Path,
    hash: gix::hash::Kind,
    path: &str,
) -> Result<(OnDisk, Option<Stamp>, Option<u32>), Error> {
    on_disk_seen_at(&workdir.join(path), hash, path)
}

/// What is at the absolute path `abs` (named `path` in messages), as [`on_disk_in`].
pub fn on_disk_at(abs: &Path, hash: gix::hash::Kind) -> Result<OnDisk, Error> {
    let name = abs.display().to_string();
    on_disk_seen_at(abs, hash, &name).map(|(now, _, _)| now)
}

fn on_disk_seen_at(
    abs: &Path,
    hash: gix::hash::Kind,
    path: &str,
) -> Result<(OnDisk, Option<Stamp>, Option<u32>), Error> {
    let abs = abs.to_path_buf();
    if let Some((bytes, meta)) = read_regular(&abs)? {
        let id = gix::objs::compute_hash(hash, gix::objs::Kind::Blob, &bytes)
            .map_err(|e| Error::Corrupt(format!("cannot hash {path}: {e}")))?;
        let perm = super::os::perm_bits(&meta);
        return Ok((
            OnDisk::File(id, FileMode::from_metadata(&meta)),
            Stamp::of(&meta),
            Some(perm),
        ));
    }
    let meta = match std::fs::symlink_metadata(&abs) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok((OnDisk::Absent, None, None))
        }
        Err(e) => return Err(Error::io("inspect", &abs)(e)),
        Ok(m) => m,
    };
    let stamp = Stamp::of(&meta);
    let bytes = if meta.file_type().is_symlink() {
        super::os::read_link_bytes(&abs).map_err(Error::io("read the link", &abs))?
    } else if meta.is_dir() {
        return Ok((OnDisk::Folder, None, None));
    } else {
        std::fs::read(&abs).map_err(Error::io("read", &abs))?
    };
    let id = gix::objs::compute_hash(hash, gix::objs::Kind::Blob, &bytes)
        .map_err(|e| Error::Corrupt(format!("cannot hash {path}: {e}")))?;
    let perm = meta
        .file_type()
        .is_file()
        .then(|| super::os::perm_bits(&meta));
    Ok((
        OnDisk::File(id, FileMode::from_metadata(&meta)),
        stamp,
        perm,
    ))
}

/// The bytes and metadata (taken from the open file, before reading) of `abs` when it
/// is a regular file; `None` when it is anything else (absent, a symlink, a folder, a
/// special file), which the caller then looks at by path.
fn read_regular(abs: &Path) -> Result<Option<(Vec<u8>, std::fs::Metadata)>, Error> {
    // Not through a link, and opening a FIFO must not wait for a writer.
    let file = match super::os::open_no_follow(abs) {
        Ok(f) => f,
        Err(_) => return Ok(None),
    };
    let meta = file.metadata().map_err(Error::io("inspect", abs))?;
    if !meta.is_file() {
        return Ok(None);
    }
    // One byte more than the size: a read that comes back short has met the end, so
    // a file of the size its stamp says takes one read. A file that grew since is
    // read on to its end (its change time moved, which the stamp tells).
    let len = usize::try_from(meta.len()).unwrap_or(usize::MAX - 1);
    let mut bytes: Vec<u8> = Vec::with_capacity(len.saturating_add(1));
    loop {
        if bytes.len() == bytes.capacity() {
            bytes.reserve(bytes.capacity().max(8192));
        }
        let asked = bytes.capacity() - bytes.len();
        let n = match super::os::read_into_spare(&file, &mut bytes) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io("read", abs)(e)),
        };
        if n == 0 || (n < asked && bytes.len() >= len) {
            break;
        }
    }
    Ok(Some((bytes, meta)))
}

/// How `now` differs from `want` (None when equal), in words for a stale report.
pub fn difference(want: Option<(ObjectId, FileMode)>, now: &OnDisk) -> Option<String> {
    match (want, now) {
        (None, OnDisk::Absent) => None,
        (None, OnDisk::Folder) => Some("a folder exists where the file is to be added".into()),
        (None, OnDisk::File(..)) => Some("exists, but the preview adds it".into()),
        (Some(_), OnDisk::Absent) => Some("deleted".into()),
        (Some(_), OnDisk::Folder) => Some("is now a folder".into()),
        (Some((id, mode)), OnDisk::File(nid, nmode)) => {
            if id != *nid {
                Some(format!(
                    "modified (blob {} is now {})",
                    id.to_hex_with_len(12),
                    nid.to_hex_with_len(12)
                ))
            } else if mode != *nmode {
                Some(format!(
                    "mode changed ({} is now {})",
                    mode.git_mode(),
                    nmode.git_mode()
                ))
            } else {
                None
            }
        }
    }
}

/// Writes `bytes` (or a symlink to `bytes`) at `path` with `mode`, and fsyncs the file.
/// Any previous file at `path` (a leftover temp) is replaced.
pub fn write_file(path: &Path, bytes: &[u8], mode: FileMode) -> Result<(), Error> {
    write_file_with(path, bytes, mode, None, true)
}

/// [`write_file`] with exactly the permission bits `perm` when given (else git's
/// 0666/0777 filtered by the umask).
pub fn write_file_perm(
    path: &Path,
    bytes: &[u8],
    mode: FileMode,
    perm: Option<u32>,
) -> Result<(), Error> {
    write_file_with(path, bytes, mode, perm, true)
}

/// The permission bits a file replacing one with metadata `current` gets when it is to
/// have git mode `goal`: the current file's own bits (git knows only 644 and 755; a
/// 0444 or 0600 file keeps being one), with the execute bits put on (where it can be
/// read) or taken off when the git mode changes. `None` (the umask default) when there
/// is no regular file to take them from.
pub fn perm_for(current: Option<&std::fs::Metadata>, goal: FileMode) -> Option<u32> {
    let meta = current.filter(|m| m.file_type().is_file())?;
    perm_for_bits(Some(super::os::perm_bits(meta)), goal)
}

/// [`perm_for`] from the permission bits of the regular file there (`None`: no
/// regular file).
pub fn perm_for_bits(current: Option<u32>, goal: FileMode) -> Option<u32> {
    let perm = current? & 0o777;
    Some(match goal {
        FileMode::Executable if perm & 0o111 == 0 => perm | ((perm & 0o444) >> 2),
        FileMode::Regular => perm & !0o111,
        _ => perm,
    })
}

/// The process's umask, read once from `/proc/self/status` (Linux ≥ 4.7; reading it
/// otherwise means setting it, which would race other threads creating files). `None`
/// when it cannot be told.
fn umask() -> Option<u32> {
    static UMASK: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    *UMASK.get_or_init(|| {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find_map(|l| l.strip_prefix("Umask:"))?;
        u32::from_str_radix(line.trim(), 8).ok()
    })
}

/// [`write_file`], leaving the fsync to the caller when `sync` is false (a batch made
/// durable at once by [`sync_dirs`]).
fn write_file_with(
    path: &Path,
    bytes: &[u8],
    mode: FileMode,
    perm: Option<u32>,
    sync: bool,
) -> Result<(), Error> {
    if mode == FileMode::Symlink {
        remove_if_present(path)?;
        return super::os::create_link(bytes, path).map_err(Error::io("create the link", path));
    }
    let explicit = perm;
    // Like git: 0666/0777 filtered by the umask.
    let perm = if mode == FileMode::Executable {
        0o777
    } else {
        0o666
    };
    let open = || {
        super::os::with_mode(
            std::fs::OpenOptions::new().write(true).create_new(true),
            explicit.unwrap_or(perm),
        )
        .open(path)
    };
    // A leftover at `path` (a temp of an earlier run) is replaced: created exclusively,
    // and only when that fails removed first (no look before every create).
    let mut f = match open() {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            std::fs::remove_file(path).map_err(Error::io("remove", path))?;
            open()
        }
        other => other,
    }
    .map_err(Error::io("create", path))?;
    if let Some(bits) = explicit {
        // The umask filtered the bits given to open; set exactly these, unless it
        // left them as they are.
        if umask().is_none_or(|m| bits & m != 0) {
            super::os::set_perm_bits(&f, bits).map_err(Error::io("set the mode of", path))?;
        }
    }
    f.write_all(bytes).map_err(Error::io("write", path))?;
    if sync {
        f.sync_all().map_err(Error::io("fsync", path))?;
    }
    Ok(())
}

/// Runs `f` over `jobs` on many threads at once. Why: each fsync waits for a journal
/// commit of the file system, and replacing or removing a file frees blocks (with
/// online discard, slowly); many operations in flight share those commits, which
/// turns thousands of files from seconds into a fraction of one.
pub fn in_parallel<T: Sync>(
    jobs: &[T],
    f: impl Fn(&T) -> Result<(), Error> + Sync,
) -> Result<(), Error> {
    let threads = 64.min(jobs.len() / 8).max(1);
    if threads == 1 {
        return jobs.iter().try_for_each(f);
    }
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| scope.spawn(move || jobs.iter().skip(t).step_by(threads).try_for_each(f)))
            .collect();
        join_all(handles)
    })
}

/// Waits for every worker and returns the first error (a panicked worker is one): the
/// others still finish, so no worker outlives the scope with half its files written.
pub fn join_all(
    handles: Vec<std::thread::ScopedJoinHandle<'_, Result<(), Error>>>,
) -> Result<(), Error> {
    let mut result = Ok(());
    for h in handles {
        let r = h
            .join()
            .unwrap_or_else(|_| Err(Error::Corrupt("a worker thread panicked".into())));
        if result.is_ok() {
            result = r;
        }
    }
    result
}

/// Writes one temp file of a batch made durable at once (see [`sync_dirs`]): on Linux
/// without its own fsync, elsewhere with it.
pub fn write_temp(
    path: &Path,
    bytes: &[u8],
    mode: FileMode,
    perm: Option<u32>,
) -> Result<(), Error> {
    if let Some(e) = fault_error("temp") {
        return Err(Error::io("write", path)(e));
    }
    write_file_with(path, bytes, mode, perm, !cfg!(target_os = "linux"))
}

/// How many threads write `jobs` temp files. On Linux a write waits for nothing (one
/// `syncfs` makes the batch durable afterwards), so a thread per core keeps them busy;
/// elsewhere each write waits for its fsync, and many in flight share the file
/// system's commits (see [`in_parallel`]).
pub fn writer_threads(jobs: usize) -> usize {
    let cap = if cfg!(target_os = "linux") {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
            .clamp(2, 8)
    } else {
        64
    };
    cap.min(jobs.div_ceil(8)).max(1)
}

/// Makes the entries of `dirs` (renames, deletions, new files) durable: on Linux one
/// `syncfs` per file system — thousands of fsyncs cost thousands of journal commits,
/// one `syncfs` costs one — else an fsync per folder.
pub fn sync_dirs(dirs: &BTreeSet<PathBuf>) -> Result<(), Error> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::MetadataExt;
        extern "C" {
            fn syncfs(fd: std::os::raw::c_int) -> std::os::raw::c_int;
        }
        let mut devices = BTreeSet::new();
        for dir in dirs {
            // One look per folder; a folder is opened only for a file system not yet
            // synced.
            let dev = match std::fs::metadata(dir) {
                Ok(m) => m.dev(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io("inspect", dir)(e)),
            };
            if devices.insert(dev) {
                let f = match std::fs::File::open(dir) {
                    Ok(f) => f,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        devices.remove(&dev);
                        continue;
                    }
                    Err(e) => return Err(Error::io("open the folder", dir)(e)),
                };
                // SAFETY: `f` is an open descriptor for the duration of the call.
                if unsafe { syncfs(f.as_raw_fd()) } != 0 {
                    return Err(Error::io("sync the file system of", dir)(
                        std::io::Error::last_os_error(),
                    ));
                }
            }
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        for dir in dirs {
            sync_dir(dir)?;
        }
        Ok(())
    }
}

/// `renameat2(from, to, flags)`; `None` when the kernel or the file system does not
/// do `flags` (and on systems other than Linux).
#[cfg(target_os = "linux")]
fn renameat2(from: &Path, to: &Path, flags: std::os::raw::c_uint) -> Option<std::io::Result<()>> {
    use std::os::unix::ffi::OsStrExt;
    extern "C" {
        fn renameat2(
            olddirfd: std::os::raw::c_int,
            oldpath: *const std::os::raw::c_char,
            newdirfd: std::os::raw::c_int,
            newpath: *const std::os::raw::c_char,
            flags: std::os::raw::c_uint,
        ) -> std::os::raw::c_int;
    }
    const AT_FDCWD: std::os::raw::c_int = -100;
    let cstr = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))
    };
    let (f, t) = match (cstr(from), cstr(to)) {
        (Ok(f), Ok(t)) => (f, t),
        (Err(e), _) | (_, Err(e)) => return Some(Err(e)),
    };
    // SAFETY: both are NUL-terminated strings alive for the duration of the call.
    let rc = unsafe { renameat2(AT_FDCWD, f.as_ptr(), AT_FDCWD, t.as_ptr(), flags) };
    if rc == 0 {
        return Some(Ok(()));
    }
    let err = std::io::Error::last_os_error();
    // EINVAL: the file system does not do it; ENOSYS: neither does the kernel.
    if matches!(err.raw_os_error(), Some(22) | Some(38)) {
        return None;
    }
    Some(Err(err))
}

/// Renames `from` to `to` only if `to` does not exist, atomically (Linux
/// `renameat2(RENAME_NOREPLACE)`; elsewhere, or where the file system lacks it, a hard
/// link, which fails on an existing name just as atomically, then unlinking `from`).
pub fn rename_noreplace(from: &Path, to: &Path) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    if let Some(done) = renameat2(from, to, 1 /* RENAME_NOREPLACE */) {
        return done;
    }
    std::fs::hard_link(from, to)?;
    std::fs::remove_file(from)
}

/// Swaps the files at `a` and `b` atomically (Linux `renameat2(RENAME_EXCHANGE)`):
/// replacing a target this way destroys nothing, since what it held an instant ago is
/// then at `a`, to be looked at. `None` where the system or file system cannot.
pub fn rename_exchange(a: &Path, b: &Path) -> Option<std::io::Result<()>> {
    // Tests take the path of systems without an exchange this way.
    if std::env::var_os(NO_EXCHANGE_ENV).is_some() {
        return None;
    }
    #[cfg(target_os = "linux")]
    {
        renameat2(a, b, 2 /* RENAME_EXCHANGE */)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (a, b);
        None
    }
}

/// Moves `from` (a file a save of the user's may be in) to `dir/path`, or beside it
/// under a numbered name when that is taken, copying when the two are on different
/// file systems; returns where it is now.
pub fn keep_file(from: &Path, dir: &Path, path: &str) -> Result<PathBuf, Error> {
    let mut dest = dir.join(path);
    let mut n = 1;
    while dest.symlink_metadata().is_ok() {
        dest = dir.join(format!("{path}.{n}"));
        n += 1;
    }
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent).map_err(Error::io("create", parent))?;
    }
    match std::fs::rename(from, &dest) {
        Ok(()) => Ok(dest),
        Err(e) if e.raw_os_error() == Some(18) => {
            // EXDEV: the git dir is on another file system.
            std::fs::copy(from, &dest).map_err(Error::io("copy", from))?;
            std::fs::remove_file(from).map_err(Error::io("remove", from))?;
            Ok(dest)
        }
        Err(e) => Err(Error::io("keep", from)(e)),
    }
}

/// fsyncs a folder so that renames and deletions in it are durable.
pub fn sync_dir(dir: &Path) -> Result<(), Error> {
    match std::fs::File::open(dir) {
        Ok(f) => f.sync_all().map_err(Error::io("fsync the folder", dir)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io("open the folder", dir)(e)),
    }
}

/// Writes a small file atomically and durably: temp, fsync, rename, fsync the folder.
/// A failed write (a full disk) leaves no temp file behind.
pub fn write_durable(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let tmp = path.with_extension("tmp");
    let _ = std::fs::remove_file(&tmp);
    let written =
        write_file(&tmp, bytes, FileMode::Regular).and_then(|()| match fault_error("record") {
            Some(e) => Err(Error::io("write", &tmp)(e)),
            None => Ok(()),
        });
    if let Err(e) = written
        .and_then(|()| std::fs::rename(&tmp, path).map_err(Error::io("rename into place", path)))
    {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    sync_dir(path.parent().unwrap_or(Path::new(".")))
}

/// Removes `path` if it is there; true when something was removed.
pub fn remove_if_present(path: &Path) -> Result<bool, Error> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io("remove", path)(e)),
    }
}

/// Removes the empty folders from `path`'s parent up to (not including) the work tree.
pub fn remove_empty_parents(repo: &Repo, path: &str) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let mut comps: Vec<&str> = path.split('/').collect();
    comps.pop();
    while !comps.is_empty() {
        let dir = repo.workdir.join(comps.join("/"));
        // remove_dir only succeeds on an empty folder, which is exactly the condition.
        if std::fs::remove_dir(&dir).is_err() {
            break;
        }
        removed.push(dir);
        comps.pop();
    }
    removed
}

/// The parent folder of a repository path, absolute.
pub fn parent_dir(repo: &Repo, path: &str) -> PathBuf {
    match path.rfind('/') {
        Some(i) => repo.workdir.join(&path[..i]),
        None => repo.workdir.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_stamps_older_than_two_seconds_are_settled() {
        let at = |secs: i64, nanos: i64| Stamp {
            dev: 1,
            ino: 2,
            size: 3,
            mode: 0o100644,
            mtime: (secs, nanos),
            ctime: (secs, nanos),
        };
        let checked_at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000);
        assert!(at(997, 999_999_999).settled(checked_at));
        assert!(!at(998, 0).settled(checked_at));
        assert!(!at(999, 500).settled(checked_at));
        assert!(
            !at(2_000, 0).settled(checked_at),
            "a change time in the future"
        );
        assert!(
            !at(-5, 0).settled(checked_at),
            "before the epoch: no telling"
        );
    }

    #[test]
    fn permission_bits_follow_the_file_and_the_git_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("f");
        std::fs::write(&f, "x").expect("write");
        let bits = |mode: u32, goal: FileMode| {
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(mode)).expect("chmod");
            let meta = std::fs::symlink_metadata(&f).expect("meta");
            perm_for(Some(&meta), goal)
        };
        assert_eq!(bits(0o444, FileMode::Regular), Some(0o444));
        assert_eq!(bits(0o600, FileMode::Executable), Some(0o700));
        assert_eq!(bits(0o644, FileMode::Executable), Some(0o755));
        assert_eq!(bits(0o750, FileMode::Regular), Some(0o640));
        assert_eq!(bits(0o755, FileMode::Executable), Some(0o755));
        assert_eq!(perm_for(None, FileMode::Regular), None);
    }

    #[test]
    fn what_is_on_disk_is_read_through_the_open_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let hash = gix::hash::Kind::Sha1;
        let blob =
            |b: &[u8]| gix::objs::compute_hash(hash, gix::objs::Kind::Blob, b).expect("hash");
        // Sizes around the one-more-byte read, and an empty file.
        for len in [0usize, 1, 4095, 4096, 4097, 70_000] {
            let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            std::fs::write(dir.path().join("f"), &bytes).expect("write");
            std::fs::set_permissions(dir.path().join("f"), std::fs::Permissions::from_mode(0o640))
                .expect("chmod");
            let (now, stamp, perm) = on_disk_seen_in(dir.path(), hash, "f").expect("look");
            assert_eq!(
                now,
                OnDisk::File(blob(&bytes), FileMode::Regular),
                "{len} bytes"
            );
            assert_eq!(stamp, Stamp::now(dir.path(), "f"));
            assert_eq!(perm, Some(0o640));
        }
        std::os::unix::fs::symlink("f", dir.path().join("l")).expect("symlink");
        let (now, _, perm) = on_disk_seen_in(dir.path(), hash, "l").expect("look");
        assert_eq!(now, OnDisk::File(blob(b"f"), FileMode::Symlink));
        assert_eq!(perm, None);
        std::fs::create_dir(dir.path().join("d")).expect("mkdir");
        let (now, stamp, _) = on_disk_seen_in(dir.path(), hash, "d").expect("look");
        assert_eq!((now, stamp), (OnDisk::Folder, None));
        let (now, stamp, _) = on_disk_seen_in(dir.path(), hash, "gone").expect("look");
        assert_eq!((now, stamp), (OnDisk::Absent, None));
    }

    #[test]
    fn temp_files_replace_leftovers_and_get_exact_bits() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let t = dir.path().join(".f.tmp");
        std::fs::write(&t, "leftover of a killed run").expect("write");
        write_temp(&t, b"new", FileMode::Regular, Some(0o604)).expect("temp");
        assert_eq!(std::fs::read(&t).expect("read"), b"new");
        let mode = std::fs::metadata(&t).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o604);
        write_temp(&t, b"x", FileMode::Executable, Some(0o700)).expect("temp");
        let mode = std::fs::metadata(&t).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert!(
            umask().is_some(),
            "Linux tells the umask in /proc/self/status"
        );
    }

    #[test]
    fn permission_bits_from_bits_match_those_from_metadata() {
        assert_eq!(
            perm_for_bits(Some(0o600), FileMode::Executable),
            Some(0o700)
        );
        assert_eq!(perm_for_bits(Some(0o755), FileMode::Regular), Some(0o644));
        assert_eq!(perm_for_bits(None, FileMode::Regular), None);
    }

    #[test]
    fn path_syntax() {
        assert!(check_path_syntax("a/b.txt").is_ok());
        assert!(check_path_syntax(".gitignore").is_ok());
        for bad in [
            "",
            "/etc/passwd",
            "a/../b",
            "./a",
            "a//b",
            ".git/config",
            "x/.GIT/y",
            "a\0b",
            "a/",
            "..",
        ] {
            assert!(check_path_syntax(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn difference_words() {
        let id = gix::ObjectId::empty_blob(gix::hash::Kind::Sha1);
        let f = OnDisk::File(id, FileMode::Regular);
        assert_eq!(difference(Some((id, FileMode::Regular)), &f), None);
        assert!(difference(None, &f).is_some());
        assert_eq!(
            difference(Some((id, FileMode::Regular)), &OnDisk::Absent).as_deref(),
            Some("deleted")
        );
        assert!(difference(Some((id, FileMode::Executable)), &f)
            .is_some_and(|s| s.starts_with("mode changed")));
    }
}
