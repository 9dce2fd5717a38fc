/*!
A whole answer, remembered: where git's `status` is asked what changed (see
[`super::status`]), a run that found nothing new in the tree can answer as the run
before it did without listing the files or looking one up.

A memo is kept beside the result cache's buckets, one file per query (everything that
decides the answer but the tree: the caller's [`Key`]), and holds what the run that
wrote it saw:

* the index file's trailing checksum: the tracked files' ids, modes and stat data,
  and every index extension (the untracked cache, the monitor's token, a split
  index's link) are the same;
* the digest of `git status --porcelain=v2 -z`'s answer: git found the same tracked
  files changed and the same untracked files. A file git does not report is the
  index's content (git looked at its stat data, or compared a racy one, or the monitor
  said it did not change), so its bytes are those the memo's run read;
* the `lstat` data of every path git reported (a modified, deleted or untracked file):
  git's answer does not change when such a file changes again, its stat data do;
* the folders where a `.gitattributes` would be read, and that none held one (the
  memo is written only where no attribute source or `core.autocrlf` can make a
  file's bytes differ from its blob, and used only while that still holds).

A later run whose three answers match reads the memo's payload. Anything else is a
miss, and the run lists and looks up as without it. Not remembered: a run where git
reported an untracked folder whole (its files are walked, not named by git), an index
without a checksum (`index.skipHash`), and a run where a reported file changed within
two seconds of the run's start (a change in the same clock tick could hide behind its
stat data, as git's racy entries).

A memo is written whole to a temporary file and renamed into place, and carries a
CRC-32: a reader sees an old memo or a new one, a damaged one is a miss.
*/

use std::io::Read as _;
use std::io::Seek as _;
use std::path::Path;
use std::path::PathBuf;

use gix::bstr::BString;
use serde::Deserialize;
use serde::Serialize;

use super::Key;
use super::Settings;

const MAGIC: &[u8; 8] = b"astmemo1";

/// What one run saw of the tree: what a memo is checked against, or recorded with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seen {
    /// The query: everything that decides the answer but the tree.
    key: Key,
    /// The index file's trailing checksum.
    index: Vec<u8>,
    /// The digest of git's `status` answer.
    answer: Key,
    /// The paths git reported, with their `lstat` data (`None`: not there).
    watched: Vec<(Vec<u8>, Option<Stat>)>,
}

/// A file's `lstat` data: device, inode, mode, size, mtime and ctime (seconds and
/// nanoseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Stat([i64; 8]);

impl Stat {
    fn of(path: &Path) -> Option<Stat> {
        use std::os::unix::fs::MetadataExt as _;
        let m = std::fs::symlink_metadata(path).ok()?;
        Some(Stat([
            m.dev() as i64,
            m.ino() as i64,
            i64::from(m.mode()),
            m.size() as i64,
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec(),
        ]))
    }

    /// Whether a change in the same clock tick as this look could hide behind it:
    /// its times are not older than `limit` (seconds).
    fn recent(&self, limit: i64) -> bool {
        self.0[4] >= limit || self.0[6] >= limit
    }
}

/// The header of a memo file (the payload follows it).
#[derive(Serialize, Deserialize)]
struct Header {
    seen: Seen,
    folders: Vec<Vec<u8>>,
}

impl Seen {
    /// What the run sees now: the index at `index_path` (its checksum `hash_len`
    /// bytes long), git's answer `changes`, and the reported paths under `workdir`.
    /// `None` when no memo can stand for this tree: git reported an untracked folder
    /// whole, or the index has no checksum.
    pub fn look(
        key: Key,
        index_path: &Path,
        hash_len: usize,
        changes: &super::status::Changes,
        workdir: &Path,
    ) -> Option<Seen> {
        if !changes.untracked_dirs.is_empty() {
            return None;
        }
        let index = index_checksum(index_path, hash_len)?;
        let mut paths: Vec<&BString> = changes.tracked.iter().chain(&changes.untracked).collect();
        paths.sort();
        paths.dedup();
        let watched = paths
            .into_iter()
            .map(|p| (p.to_vec(), Stat::of(&workdir.join(path_of(p)))))
            .collect();
        Some(Seen {
            key,
            index: index.to_vec(),
            answer: changes.answer,
            watched,
        })
    }

    /// Whether the index file at `index_path` still has the checksum seen.
    pub fn same_index(&self, index_path: &Path) -> bool {
        index_checksum(index_path, self.index.len()).is_some_and(|c| c == self.index)
    }

    /// Whether `checksum` (of the index a listing read) is the one seen.
    pub fn is_index(&self, checksum: &[u8]) -> bool {
        checksum == self.index
    }
}

/// The trailing checksum of the index file: its last `hash_len` bytes; `None` when
/// it cannot be read or is null (`index.skipHash`: the bytes say nothing).
fn index_checksum(path: &Path, hash_len: usize) -> Option<Vec<u8>> {
    let mut file = std::fs::File::open(path).ok()?;
    file.seek(std::io::SeekFrom::End(-(hash_len as i64))).ok()?;
    let mut checksum = vec![0u8; hash_len];
    file.read_exact(&mut checksum).ok()?;
    checksum.iter().any(|b| *b != 0).then_some(checksum)
}

fn path_of(p: &[u8]) -> &Path {
    use std::os::unix::ffi::OsStrExt as _;
    Path::new(std::ffi::OsStr::from_bytes(p))
}

fn file(settings: &Settings, key: &Key) -> PathBuf {
    let name: String = key[..16].iter().map(|b| format!("{b:02x}")).collect();
    settings
        .dir
        .join(format!("v{}-memo-{name}", crate::VERSION))
}

/// The payload of the memo of `seen`'s query, when the memo saw what this run sees:
/// the same index, the same answer from git, the reported files' stat data as then,
/// and still no attribute source (`git`'s, or a `.gitattributes` in the folders of
/// `workdir` the memo names).
pub fn recall(
    settings: &Settings,
    seen: &Seen,
    git: &gix::Repository,
    workdir: &Path,
) -> Option<Vec<u8>> {
    let bytes = std::fs::read(file(settings, &seen.key)).ok()?;
    let body = bytes.strip_prefix(MAGIC)?;
    let (body, crc) = body.split_at_checked(body.len().checked_sub(4)?)?;
    if crc32fast::hash(body).to_le_bytes() != crc {
        return None;
    }
    let (len, body) = body.split_at_checked(8)?;
    let len = usize::try_from(u64::from_le_bytes(len.try_into().ok()?)).ok()?;
    let (header, payload) = body.split_at_checked(len)?;
    let header: Header = serde_json::from_slice(header).ok()?;
    if header.seen != *seen
        || super::global_attribute_source(git)
        || super::folder_attributes(workdir, &header.folders)
    {
        return None;
    }
    Some(payload.to_vec())
}

/// Writes the memo of `seen` with `payload` (what the run answered), `folders` being
/// where a `.gitattributes` would be read (none held one). Not written when a
/// reported file changed within two seconds before `started` (or after). Failures
/// only lose the memo.
pub fn record(
    settings: &Settings,
    seen: &Seen,
    folders: &[BString],
    payload: &[u8],
    started: std::time::SystemTime,
) {
    let limit = started
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
        - 2;
    if seen
        .watched
        .iter()
        .any(|(_, stat)| stat.is_some_and(|s| s.recent(limit)))
    {
        return;
    }
    let header = Header {
        seen: seen.clone(),
        folders: folders.iter().map(|f| f.to_vec()).collect(),
    };
    let Ok(header) = serde_json::to_vec(&header) else {
        return;
    };
    let mut body = Vec::with_capacity(8 + header.len() + payload.len());
    body.extend_from_slice(&(header.len() as u64).to_le_bytes());
    body.extend_from_slice(&header);
    body.extend_from_slice(payload);
    let crc = crc32fast::hash(&body);
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(&settings.dir)?;
        let mut tmp = tempfile::Builder::new()
            .prefix(".tmp-")
            .tempfile_in(&settings.dir)?;
        use std::io::Write as _;
        tmp.write_all(MAGIC)?;
        tmp.write_all(&body)?;
        tmp.write_all(&crc.to_le_bytes())?;
        tmp.persist(file(settings, &seen.key))?;
        Ok(())
    };
    let _ = write();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changes(tracked: &[&str], untracked: &[&str]) -> super::super::status::Changes {
        super::super::status::Changes {
            tracked: tracked.iter().map(|p| BString::from(*p)).collect(),
            untracked: untracked.iter().map(|p| BString::from(*p)).collect(),
            untracked_dirs: Vec::new(),
            answer: [7; 32],
        }
    }

    /// A memo is found while everything it saw holds, and missed when the index's
    /// checksum, git's answer, a reported file or the query differ, or the file is
    /// damaged; nothing is written when a reported file changed just now.
    #[test]
    fn a_memo_is_found_only_while_what_it_saw_holds() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let work = tmp.path().join("work");
        std::fs::create_dir_all(&work).expect("mkdir");
        let git = gix::init(&work).expect("git init");
        let index = tmp.path().join("index");
        std::fs::write(&index, b"DIRC....0123456789abcdefghij").expect("index");
        std::fs::write(work.join("a.py"), "x").expect("write");
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(work.join("a.py"))
            .expect("open")
            .set_modified(old)
            .expect("mtime");
        let settings = Settings {
            dir: tmp.path().join("cache"),
            max_bytes: super::super::DEFAULT_MAX_BYTES,
        };
        let look = |key: Key, c: &super::super::status::Changes| {
            Seen::look(key, &index, 20, c, &work).expect("seen")
        };
        let seen = look([1; 32], &changes(&["a.py"], &["new.py"]));
        assert!(recall(&settings, &seen, &git, &work).is_none());
        // The file's ctime is now: not recorded yet.
        record(
            &settings,
            &seen,
            &[],
            b"payload",
            std::time::SystemTime::now(),
        );
        assert!(recall(&settings, &seen, &git, &work).is_none());
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        record(&settings, &seen, &[BString::from("")], b"payload", later);
        assert_eq!(
            recall(&settings, &seen, &git, &work).as_deref(),
            Some(&b"payload"[..])
        );
        let again = look([1; 32], &changes(&["a.py"], &["new.py"]));
        assert_eq!(
            recall(&settings, &again, &git, &work).as_deref(),
            Some(&b"payload"[..])
        );
        // Another answer from git; another query.
        let mut other = changes(&["a.py"], &["new.py"]);
        other.answer = [8; 32];
        assert!(recall(&settings, &look([1; 32], &other), &git, &work).is_none());
        assert!(recall(&settings, &look([2; 32], &other), &git, &work).is_none());
        // A reported file rewritten; then a `.gitattributes` at the top.
        std::fs::write(work.join("new.py"), "y").expect("write");
        let after = look([1; 32], &changes(&["a.py"], &["new.py"]));
        assert!(recall(&settings, &after, &git, &work).is_none());
        std::fs::remove_file(work.join("new.py")).expect("rm");
        assert_eq!(
            recall(&settings, &again, &git, &work).as_deref(),
            Some(&b"payload"[..])
        );
        std::fs::write(work.join(".gitattributes"), "*.py text\n").expect("write");
        assert!(recall(&settings, &again, &git, &work).is_none());
        std::fs::remove_file(work.join(".gitattributes")).expect("rm");
        // The index rewritten.
        std::fs::write(&index, b"DIRC....0123456789abcdefghiJ").expect("index");
        assert!(!again.same_index(&index));
        let moved = look([1; 32], &changes(&["a.py"], &["new.py"]));
        assert!(recall(&settings, &moved, &git, &work).is_none());
        // A damaged memo.
        let path = file(&settings, &seen.key);
        let mut bytes = std::fs::read(&path).expect("read");
        let last = bytes.len() - 6;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).expect("write");
        assert!(recall(&settings, &again, &git, &work).is_none());
    }
}
