/*!
verify's Cargo target folder: `astedit/verify-target` under the repository's git dir
(shared by its linked worktrees), made on the first check of a Cargo project and kept
across runs, so that a check builds only what the preview changed.

It is seeded once, when it is made, from the checkout's target folder (the user's
`CARGO_TARGET_DIR`, else `target/` beside the shallowest tracked `Cargo.toml`): each
file is a reflink (a copy sharing the original's blocks until either is written, Linux's
`FICLONE` on btrfs, XFS, bcachefs...) where the file system has them. Where it has none,
a plain copy costs the folder's size in disk, so the folder is copied only when it is at
most [`COPY_LIMIT`]; a larger one is not copied and the first check builds from
nothing. Either way a note says what was done. The seeding is made in a folder of its
own and renamed into place, so that a check never sees half a seed.
*/

use std::path::Path;
use std::path::PathBuf;

use crate::repo::Repo;

/// The kept folder, under the git dir's `astedit` folder.
pub const FOLDER: &str = "verify-target";
/// Without reflinks, a checkout's target folder larger than this is not copied.
pub const COPY_LIMIT: u64 = 2 << 30;
/// A seeding in progress: `verify-target.seeding-PID`.
const SEEDING: &str = "verify-target.seeding-";

/// The target folder a check of the crate in `crate_folder` (a repository path, `""`
/// the top) runs with, seeded if it is new; and a note when it was seeded. `None`
/// when it cannot be made (the check then builds in its worktree, as before).
pub(super) fn cargo_target(repo: &Repo, crate_folder: &str) -> (Option<PathBuf>, Option<String>) {
    let parent = repo.common_dir.join("astedit");
    let kept = parent.join(FOLDER);
    if kept.is_dir() {
        return (Some(kept), None);
    }
    if std::fs::create_dir_all(&parent).is_err() {
        return (None, None);
    }
    remove_abandoned(&parent);
    let seeding = parent.join(format!("{SEEDING}{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&seeding);
    let source = checkout_target(repo, crate_folder);
    let how = match &source {
        Some(source) => seed(source, &seeding, COPY_LIMIT),
        None => std::fs::create_dir(&seeding).map(|()| Seeded::Nothing),
    };
    let how = match how {
        Ok(how) => how,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&seeding);
            return (
                None,
                Some(format!(
                    "verify's Cargo target folder could not be made ({e}); the check built \
                     in its worktree"
                )),
            );
        }
    };
    if std::fs::rename(&seeding, &kept).is_err() {
        // Another verify made it first: that one is used.
        let _ = std::fs::remove_dir_all(&seeding);
        return (kept.is_dir().then_some(kept), None);
    }
    let shown = shown(repo, &kept);
    let from = source.as_deref().map(|s| shown_source(repo, s));
    let note = match (how, from) {
        (Seeded::Nothing, _) | (_, None) => format!(
            "made verify's Cargo target folder {shown} (the checkout has no target folder \
             to seed it from); it is kept for the next checks"
        ),
        (Seeded::Reflinked(files), Some(from)) => format!(
            "seeded verify's Cargo target folder {shown} from {from} ({}, reflinked: \
             sharing their blocks until either is rebuilt); it is kept for the next checks",
            count(files)
        ),
        (Seeded::Copied(files, bytes), Some(from)) => format!(
            "seeded verify's Cargo target folder {shown} from {from} ({}, {}, \
             copied: this file system has no reflinks); it is kept for the next checks",
            count(files),
            size(bytes)
        ),
        (Seeded::TooBig(bytes), Some(from)) => format!(
            "made verify's Cargo target folder {shown} without seeding it: {from} is {}, \
             over the {} copied where the file system has no reflinks, so this check built \
             it; it is kept for the next checks",
            size(bytes),
            size(COPY_LIMIT)
        ),
    };
    (Some(kept), Some(note))
}

/// How a seeding went.
enum Seeded {
    /// No source: an empty folder.
    Nothing,
    /// Every file reflinked (a file that could not be is copied): the count.
    Reflinked(usize),
    /// Copied: files and bytes.
    Copied(usize, u64),
    /// No reflinks and over [`COPY_LIMIT`] (its size): an empty folder.
    TooBig(u64),
}

/// The checkout's target folder: the user's `CARGO_TARGET_DIR` (relative to the work
/// tree's top when relative), else `target` beside the crate's `Cargo.toml`.
fn checkout_target(repo: &Repo, crate_folder: &str) -> Option<PathBuf> {
    let dir = match std::env::var_os("CARGO_TARGET_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => repo.workdir.join(dir),
        None => repo.workdir.join(crate_folder).join("target"),
    };
    // Its own folder, not a symlink's: a link is followed, as cargo would.
    dir.is_dir().then_some(dir)
}

/// A file of the source: its path relative to the source, and what it is.
enum Entry {
    Dir(PathBuf),
    File(PathBuf, u64),
    Link(PathBuf, PathBuf),
}

/// Copies `source` into the new folder `dest` (see the module docs); without reflinks,
/// only when it is at most `limit` bytes.
fn seed(source: &Path, dest: &Path, limit: u64) -> std::io::Result<Seeded> {
    let entries = walk(source)?;
    let total: u64 = entries
        .iter()
        .map(|e| match e {
            Entry::File(_, len) => *len,
            _ => 0,
        })
        .sum();
    std::fs::create_dir(dest)?;
    // Whether the file system has reflinks, asked of the first non-empty file.
    let reflinks = entries
        .iter()
        .find_map(|e| match e {
            Entry::File(rel, len) if *len > 0 => Some(rel),
            _ => None,
        })
        .is_some_and(|rel| can_reflink(&source.join(rel), dest));
    if !reflinks && total > limit {
        return Ok(Seeded::TooBig(total));
    }
    let mut files = 0;
    for entry in &entries {
        match entry {
            Entry::Dir(rel) => std::fs::create_dir_all(dest.join(rel))?,
            Entry::Link(rel, to) => symlink(to, &dest.join(rel))?,
            Entry::File(rel, _) => {
                copy_file(&source.join(rel), &dest.join(rel), reflinks)?;
                files += 1;
            }
        }
    }
    Ok(if reflinks {
        Seeded::Reflinked(files)
    } else {
        Seeded::Copied(files, total)
    })
}

/// Everything under `root`, folders before what they hold; symlinks not followed.
fn walk(root: &Path) -> std::io::Result<Vec<Entry>> {
    let mut entries = Vec::new();
    let mut folders = vec![PathBuf::new()];
    while let Some(rel) = folders.pop() {
        for item in std::fs::read_dir(root.join(&rel))? {
            let item = item?;
            let path = rel.join(item.file_name());
            let meta = std::fs::symlink_metadata(item.path())?;
            if meta.is_dir() {
                entries.push(Entry::Dir(path.clone()));
                folders.push(path);
            } else if meta.file_type().is_symlink() {
                entries.push(Entry::Link(path, std::fs::read_link(item.path())?));
            } else if meta.is_file() {
                entries.push(Entry::File(path, meta.len()));
            }
        }
    }
    Ok(entries)
}

/// Copies a file, as a reflink when `reflink` (falling back to a copy), keeping its
/// permissions and modification time (cargo compares build scripts' outputs' times).
fn copy_file(from: &Path, to: &Path, reflink: bool) -> std::io::Result<()> {
    let meta = std::fs::metadata(from)?;
    if !(reflink && clone_file(from, to).is_ok()) {
        std::fs::copy(from, to)?;
    }
    // The time before the permissions: a read-only file cannot be opened to set it.
    let file = std::fs::OpenOptions::new().write(true).open(to)?;
    file.set_modified(meta.modified()?)?;
    drop(file);
    std::fs::set_permissions(to, meta.permissions())
}

/// Whether `file` can be reflinked into the folder `dest` (tried, then removed).
fn can_reflink(file: &Path, dest: &Path) -> bool {
    let probe = dest.join(".reflink-probe");
    let ok = clone_file(file, &probe).is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}

/// `to`, a new file sharing `from`'s blocks.
#[cfg(target_os = "linux")]
fn clone_file(from: &Path, to: &Path) -> std::io::Result<()> {
    use std::os::fd::AsRawFd as _;
    let src = std::fs::File::open(from)?;
    let dst = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(to)?;
    // SAFETY: FICLONE takes the source's descriptor as its argument; both descriptors
    // are open files owned here for the length of the call.
    let r = unsafe { libc::ioctl(dst.as_raw_fd(), libc::FICLONE, src.as_raw_fd()) };
    if r == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    drop(dst);
    let _ = std::fs::remove_file(to);
    Err(e)
}

#[cfg(not(target_os = "linux"))]
fn clone_file(_: &Path, _: &Path) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

#[cfg(unix)]
fn symlink(to: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(to, link)
}

#[cfg(not(unix))]
fn symlink(_: &Path, _: &Path) -> std::io::Result<()> {
    // A link in a target folder is cargo's own shortcut; without it cargo rebuilds.
    Ok(())
}

/// Removes the seedings of verifies that are gone (killed while seeding).
fn remove_abandoned(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix(SEEDING))
            .and_then(|pid| pid.parse::<i32>().ok());
        if pid.is_some_and(|pid| !super::super::worktree::process_alive(pid)) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The kept folder as the user would find it: relative to the work tree when inside.
fn shown(repo: &Repo, path: &Path) -> String {
    path.strip_prefix(&repo.workdir)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The source folder, relative to the work tree when inside, with a trailing `/`.
fn shown_source(repo: &Repo, path: &Path) -> String {
    format!("{}/", shown(repo, path))
}

/// A size in words: `312.4 MiB`, `2.0 GiB`.
fn size(bytes: u64) -> String {
    let mib = bytes as f64 / f64::from(1 << 20);
    if mib < 1024.0 {
        format!("{mib:.1} MiB")
    } else {
        format!("{:.1} GiB", mib / 1024.0)
    }
}

/// `1 file`, `3 files`.
fn count(files: usize) -> String {
    if files == 1 {
        "1 file".into()
    } else {
        format!("{files} files")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_keeps_times_modes_and_links_and_a_big_one_is_not_copied() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("target");
        std::fs::create_dir_all(source.join("debug/deps")).unwrap();
        std::fs::write(source.join("debug/deps/libx.rlib"), b"rlib").unwrap();
        let then = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1 << 30);
        let file = std::fs::File::options()
            .write(true)
            .open(source.join("debug/deps/libx.rlib"))
            .unwrap();
        file.set_modified(then).unwrap();
        drop(file);
        #[cfg(unix)]
        std::os::unix::fs::symlink("deps/libx.rlib", source.join("debug/libx.rlib")).unwrap();
        let dest = dir.path().join("seeded");
        let how = seed(&source, &dest, COPY_LIMIT).unwrap();
        assert!(matches!(how, Seeded::Reflinked(1) | Seeded::Copied(1, 4)));
        let copied = dest.join("debug/deps/libx.rlib");
        assert_eq!(std::fs::read(&copied).unwrap(), b"rlib");
        assert_eq!(
            std::fs::metadata(&copied).unwrap().modified().unwrap(),
            then
        );
        #[cfg(unix)]
        assert_eq!(
            std::fs::read_link(dest.join("debug/libx.rlib")).unwrap(),
            Path::new("deps/libx.rlib")
        );
        // Over the limit and without reflinks: nothing copied.
        let small = dir.path().join("small");
        match seed(&source, &small, 3).unwrap() {
            Seeded::TooBig(4) => assert_eq!(std::fs::read_dir(&small).unwrap().count(), 0),
            Seeded::Reflinked(1) => {}
            _ => panic!("neither reflinked nor refused"),
        }
    }
}
