/*!
The result cache: what an engine found in one file's content, kept between runs so
that a second search or scan of an unchanged tree reads no file and parses nothing.

An entry is keyed by content, never by path or time: the file's blob id (taken from
the git index without reading the file when its stat data match the entry, as
`git status` does; hashed otherwise), its language, and whatever else the engine says
decides its result. Entries live in *buckets*, one file per (tool version, query
digest) — the digest of a grep pattern and its options, or of a scan's rule texts and
mode — under `.git/astedit/cache/` (or `--cache-dir`).

Safety: a bucket is written whole to a temporary file and renamed into place, so a
reader sees an old bucket or a new one, never half of one; two processes that race
lose at most each other's new entries (a later miss), never mix them. Every entry and
the bucket's index carry a CRC-32: a torn or corrupt entry is a miss, recomputed and
written again, never a wrong answer.

Size: the folder is kept under a byte budget by deleting the least recently used
buckets (a bucket's mtime is touched when it is read); one bucket keeps the entries
not used by its last run only while it stays under a quarter of the budget.
*/

use std::collections::HashMap;
use std::io::Write;
use std::os::unix::fs::FileExt as _;
use std::path::Path;
use std::path::PathBuf;

use sha2::Digest as _;

pub mod status;

/// The default byte budget of the cache folder.
pub const DEFAULT_MAX_BYTES: u64 = 256 * 1024 * 1024;

const MAGIC: &[u8; 8] = b"astcach1";
/// index offset (u64), entry count (u64), index CRC (u32), magic tail (4 bytes).
const FOOTER: usize = 8 + 8 + 4 + 4;
const TAIL: &[u8; 4] = b"ACE1";
/// key (32), offset (u64), length (u32), CRC (u32).
const INDEX_ROW: usize = 32 + 8 + 4 + 4;

/// An entry's key: a digest of the content's id and everything else its result
/// depends on.
pub type Key = [u8; 32];

/// Where the cache lives and how large it may grow; `None` in a request: no cache.
#[derive(Debug, Clone)]
pub struct Settings {
    pub dir: PathBuf,
    pub max_bytes: u64,
}

impl Settings {
    /// The default folder of a repository: `<git dir>/astedit/cache`.
    pub fn default_dir(git_dir: &Path) -> PathBuf {
        git_dir.join("astedit").join("cache")
    }
}

/// Builds a key from its parts (each length-prefixed, so that parts cannot run into
/// each other).
#[derive(Clone)]
pub struct KeyBuilder(sha2::Sha256);

impl KeyBuilder {
    pub fn new(kind: &str) -> KeyBuilder {
        let mut b = KeyBuilder(sha2::Sha256::new());
        b.add(crate::VERSION.as_bytes()).add(kind.as_bytes());
        b
    }
    pub fn add(&mut self, part: &[u8]) -> &mut KeyBuilder {
        self.0.update((part.len() as u64).to_le_bytes());
        self.0.update(part);
        self
    }
    pub fn finish(&self) -> Key {
        self.0.clone().finalize().into()
    }
}

/// One bucket: the entries of one query, read lazily from its file, and the entries
/// this run adds (streamed to a temporary file, renamed into place by [`finish`]).
///
/// [`finish`]: Bucket::finish
pub struct Bucket {
    dir: PathBuf,
    path: PathBuf,
    max_bytes: u64,
    old: Option<std::fs::File>,
    index: std::sync::Arc<Index>,
    used: std::sync::Mutex<std::collections::HashSet<Key>>,
    new: std::sync::Mutex<Option<Writer>>,
    /// An entry of the old file failed its check: the bucket is rewritten.
    damaged: bool,
}

struct Writer {
    file: std::io::BufWriter<tempfile::NamedTempFile>,
    offset: u64,
    rows: Vec<(Key, u64, u32, u32)>,
    keys: std::collections::HashSet<Key>,
}

impl Bucket {
    /// Opens the bucket of `query` (a [`KeyBuilder`] digest) under `settings.dir`. A
    /// missing, short or damaged file is an empty bucket.
    pub fn open(settings: &Settings, query: &Key) -> Bucket {
        let name = format!("v{}-{}", crate::VERSION, hex(&query[..16]));
        let path = settings.dir.join(name);
        let mut bucket = Bucket {
            dir: settings.dir.clone(),
            path,
            max_bytes: settings.max_bytes,
            old: None,
            index: Default::default(),
            used: Default::default(),
            new: Default::default(),
            damaged: false,
        };
        if let Ok(file) = std::fs::File::open(&bucket.path) {
            match remembered_index(&bucket.path, &file) {
                Some(index) => {
                    bucket.index = index;
                    // Recently used: eviction takes the oldest first.
                    let _ = file.set_modified(std::time::SystemTime::now());
                    bucket.old = Some(file);
                }
                None => bucket.damaged = true,
            }
        }
        bucket
    }

    /// Whether the bucket's index has an entry under `key` (not read, so not checked).
    pub fn contains(&self, key: &Key) -> bool {
        self.old.is_some() && self.index.contains_key(key)
    }

    /// The payload stored under `key`, if it is there and intact.
    pub fn get(&self, key: &Key) -> Option<Vec<u8>> {
        let &(offset, len, crc) = self.index.get(key)?;
        let file = self.old.as_ref()?;
        let mut buf = vec![0u8; len as usize];
        file.read_exact_at(&mut buf, offset).ok()?;
        (crc32fast::hash(&buf) == crc).then_some(buf)
    }

    /// Notes that `key`'s entry was used (kept when the bucket is rewritten).
    pub fn touch(&self, key: &Key) {
        lock(&self.used).insert(*key);
    }

    /// [`Bucket::touch`] for many entries, under one lock.
    pub fn touch_all<'k>(&self, keys: impl IntoIterator<Item = &'k Key>) {
        lock(&self.used).extend(keys.into_iter().copied());
    }

    /// Adds an entry (a recomputed one replaces the old). Workers call this side by
    /// side.
    pub fn put(&self, key: &Key, payload: &[u8]) {
        self.put_with(key, |out| out.write_all(payload));
    }

    /// [`Bucket::put`] with the payload written by `write` straight into the bucket:
    /// a large file's matches are not first held again as one more buffer. An error
    /// from `write` stores nothing (what it wrote stays unreferenced in the file).
    pub fn put_with(
        &self,
        key: &Key,
        write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) {
        let mut new = lock(&self.new);
        if new.is_none() {
            let Ok(tmp) = tempfile::Builder::new()
                .prefix(".tmp-")
                .tempfile_in(&self.dir)
                .or_else(|_| {
                    std::fs::create_dir_all(&self.dir)?;
                    tempfile::Builder::new()
                        .prefix(".tmp-")
                        .tempfile_in(&self.dir)
                })
            else {
                // No cache folder to write to: run without storing.
                return;
            };
            let mut file = std::io::BufWriter::new(tmp);
            if file.write_all(MAGIC).is_err() {
                return;
            }
            *new = Some(Writer {
                file,
                offset: MAGIC.len() as u64,
                rows: Vec::new(),
                keys: std::collections::HashSet::new(),
            });
        }
        let Some(w) = new.as_mut() else { return };
        if w.keys.contains(key) {
            return;
        }
        let mut out = Counted {
            inner: &mut w.file,
            len: 0,
            crc: crc32fast::Hasher::new(),
        };
        let written = write(&mut out);
        let (len, crc) = (out.len, out.crc.finalize());
        let start = w.offset;
        w.offset += len;
        match (written, u32::try_from(len)) {
            (Ok(()), Ok(len)) => {
                w.keys.insert(*key);
                w.rows.push((*key, start, len, crc));
            }
            // Too large for an entry: the bytes stay unreferenced.
            (Ok(()), Err(_)) => {}
            // A full disk (or a payload that did not encode): give up storing, the
            // results stand.
            (Err(_), _) => *new = None,
        }
    }

    /// Writes the bucket back when this run added entries (or found damage): the new
    /// entries, the old ones used, and the old ones unused while the bucket stays
    /// small; then keeps the folder under its budget. Failures only lose the cache.
    pub fn finish(self) {
        if lock(&self.new).is_none() && self.damaged {
            // Rewrite a damaged bucket even when nothing is new: start it empty.
            self.put_nothing();
        }
        let used = std::mem::take(&mut *lock(&self.used));
        let Some(mut w) = lock(&self.new).take() else {
            return;
        };
        if let Some(old) = &self.old {
            let share = self.max_bytes / 4;
            let mut old_rows: Vec<(&Key, &(u64, u32, u32))> = self
                .index
                .iter()
                .filter(|(k, _)| !w.keys.contains(*k))
                .collect();
            // Used ones first, then the rest while under the share.
            old_rows.sort_by_key(|(k, (off, _, _))| (!used.contains(*k), *off));
            for (key, &(offset, len, crc)) in old_rows {
                if !used.contains(key) && w.offset + u64::from(len) > share {
                    break;
                }
                let mut buf = vec![0u8; len as usize];
                if old.read_exact_at(&mut buf, offset).is_err() || crc32fast::hash(&buf) != crc {
                    continue;
                }
                if w.file.write_all(&buf).is_err() {
                    return;
                }
                w.rows.push((*key, w.offset, len, crc));
                w.offset += u64::from(len);
            }
        }
        let mut index = Vec::with_capacity(w.rows.len() * INDEX_ROW);
        for (key, offset, len, crc) in &w.rows {
            index.extend_from_slice(key);
            index.extend_from_slice(&offset.to_le_bytes());
            index.extend_from_slice(&len.to_le_bytes());
            index.extend_from_slice(&crc.to_le_bytes());
        }
        let mut footer = Vec::with_capacity(FOOTER);
        footer.extend_from_slice(&w.offset.to_le_bytes());
        footer.extend_from_slice(&(w.rows.len() as u64).to_le_bytes());
        footer.extend_from_slice(&crc32fast::hash(&index).to_le_bytes());
        footer.extend_from_slice(TAIL);
        if w.file.write_all(&index).is_err() || w.file.write_all(&footer).is_err() {
            return;
        }
        let Ok(tmp) = w.file.into_inner() else { return };
        // The rename is the commit point: readers see the old bucket or this one.
        if tmp.persist(&self.path).is_err() {
            return;
        }
        let _ = evict(&self.dir, self.max_bytes, Some(&self.path));
    }

    fn put_nothing(&self) {
        // A writer with no entries: `finish` writes an empty, valid bucket.
        self.put(&[0u8; 32], &[]);
        if let Some(w) = lock(&self.new).as_mut() {
            w.rows.clear();
            w.keys.clear();
        }
    }
}

/// A writer that counts and checksums what goes through it.
struct Counted<'a, W: Write> {
    inner: &'a mut W,
    len: u64,
    crc: crc32fast::Hasher,
}

impl<W: Write> Write for Counted<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.len += n as u64;
        self.crc.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned lock only means a worker panicked; the data stay valid.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where each entry of a bucket file sits: key → (offset, length, CRC).
type Index = HashMap<Key, (u64, u32, u32)>;

/// The indexes of the buckets this process read last, by path and file identity: a
/// long-lived process (the MCP server) reads a bucket's index once, not on every call.
/// A bucket is only ever replaced by a rename (a new inode), so (device, inode, size)
/// names one version; payloads are checked against their CRC on every read anyway.
#[allow(clippy::type_complexity)]
static REMEMBERED: std::sync::Mutex<Vec<(PathBuf, (u64, u64, u64), std::sync::Arc<Index>)>> =
    std::sync::Mutex::new(Vec::new());
const REMEMBER: usize = 16;

fn remembered_index(path: &Path, file: &std::fs::File) -> Option<std::sync::Arc<Index>> {
    use std::os::unix::fs::MetadataExt as _;
    let meta = file.metadata().ok()?;
    let id = (meta.dev(), meta.ino(), meta.len());
    {
        let memo = lock(&REMEMBERED);
        if let Some((_, _, index)) = memo.iter().find(|(p, i, _)| p == path && *i == id) {
            return Some(index.clone());
        }
    }
    let index = std::sync::Arc::new(read_index(file)?);
    let mut memo = lock(&REMEMBERED);
    memo.retain(|(p, _, _)| p != path);
    if memo.len() >= REMEMBER {
        memo.remove(0);
    }
    memo.push((path.to_path_buf(), id, index.clone()));
    Some(index)
}

/// The index of a bucket file, or `None` when it is short or damaged.
fn read_index(file: &std::fs::File) -> Option<Index> {
    let size = file.metadata().ok()?.len();
    if size < (MAGIC.len() + FOOTER) as u64 {
        return None;
    }
    let mut head = [0u8; 8];
    file.read_exact_at(&mut head, 0).ok()?;
    if &head != MAGIC {
        return None;
    }
    let mut footer = [0u8; FOOTER];
    file.read_exact_at(&mut footer, size - FOOTER as u64).ok()?;
    if &footer[20..24] != TAIL {
        return None;
    }
    let index_at = u64::from_le_bytes(footer[0..8].try_into().ok()?);
    let count = u64::from_le_bytes(footer[8..16].try_into().ok()?);
    let crc = u32::from_le_bytes(footer[16..20].try_into().ok()?);
    let index_len = count.checked_mul(INDEX_ROW as u64)?;
    if index_at.checked_add(index_len)? != size - FOOTER as u64 {
        return None;
    }
    let mut index = vec![0u8; usize::try_from(index_len).ok()?];
    file.read_exact_at(&mut index, index_at).ok()?;
    if crc32fast::hash(&index) != crc {
        return None;
    }
    let mut out = HashMap::with_capacity(count as usize);
    for row in index.chunks_exact(INDEX_ROW) {
        let key: Key = row[..32].try_into().ok()?;
        let offset = u64::from_le_bytes(row[32..40].try_into().ok()?);
        let len = u32::from_le_bytes(row[40..44].try_into().ok()?);
        let crc = u32::from_le_bytes(row[44..48].try_into().ok()?);
        if offset.checked_add(u64::from(len))? > index_at {
            return None;
        }
        out.insert(key, (offset, len, crc));
    }
    Some(out)
}

/// What [`prune`] did.
#[derive(Debug, Default, Clone, Copy)]
pub struct Pruned {
    pub removed: usize,
    pub freed: u64,
    pub kept: usize,
}

/// Deletes the least recently used buckets until the folder holds at most
/// `max_bytes` (never `keep`), and temporary files older than an hour (a killed
/// writer's).
fn evict(dir: &Path, max_bytes: u64, keep: Option<&Path>) -> std::io::Result<Pruned> {
    let mut buckets = Vec::new();
    let mut total = 0u64;
    let mut pruned = Pruned::default();
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let mtime = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
        if name.starts_with(".tmp-") {
            if mtime < hour_ago && std::fs::remove_file(entry.path()).is_ok() {
                pruned.removed += 1;
                pruned.freed += meta.len();
            }
            continue;
        }
        total += meta.len();
        buckets.push((mtime, entry.path(), meta.len()));
    }
    buckets.sort();
    for (_, path, len) in &buckets {
        if total <= max_bytes {
            break;
        }
        if Some(path.as_path()) == keep {
            continue;
        }
        if std::fs::remove_file(path).is_ok() {
            total -= len;
            pruned.removed += 1;
            pruned.freed += len;
        }
    }
    pruned.kept = buckets.len().saturating_sub(pruned.removed);
    Ok(pruned)
}

/// `gc`: deletes the buckets of other tool versions and stale temporary files, then
/// the least recently used buckets beyond `max_bytes`. A missing folder is empty.
pub fn prune(dir: &Path, max_bytes: u64) -> std::io::Result<Pruned> {
    let mut pruned = Pruned::default();
    let current = format!("v{}-", crate::VERSION);
    match std::fs::read_dir(dir) {
        Ok(entries) => {
            for entry in entries.flatten() {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if name.starts_with('v') && !name.starts_with(&current) {
                    let len = entry.metadata().map_or(0, |m| m.len());
                    if std::fs::remove_file(entry.path()).is_ok() {
                        pruned.removed += 1;
                        pruned.freed += len;
                    }
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(pruned),
        Err(e) => return Err(e),
    }
    let more = evict(dir, max_bytes, None)?;
    Ok(Pruned {
        removed: pruned.removed + more.removed,
        freed: pruned.freed + more.freed,
        kept: more.kept,
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The id git gives `bytes` as a blob, in the repository's hash kind.
pub fn blob_id(kind: gix::hash::Kind, bytes: &[u8]) -> Option<gix::ObjectId> {
    gix::objs::compute_hash(kind, gix::objs::Kind::Blob, bytes).ok()
}

/// A tracked file's index entry, when its id may stand for the file's bytes: stage 0,
/// not racy, not intent-to-add or skip-worktree, and no content filter in the
/// repository that could make the work-tree bytes differ from the blob.
#[derive(Debug, Clone, Copy)]
pub struct IndexStat {
    pub id: gix::ObjectId,
    pub stat: gix::index::entry::Stat,
    /// git itself has just said that the work-tree file is this entry's content (its
    /// `status` listed the path as unchanged, with its untracked cache or fsmonitor on;
    /// see [`status`]): the id stands without a look at the file, and a regular file
    /// of the entry's size is there.
    pub vouched: bool,
}

impl IndexStat {
    /// The entry's id, when the file's stat data (`meta`, from `lstat`) still match it.
    pub fn id_if_unchanged(&self, meta: &std::fs::Metadata) -> Option<gix::ObjectId> {
        let stat = stat_of(meta)?;
        stat.matches(&self.stat, stat_options()).then_some(self.id)
    }

    /// The entry's id without a look at the file, when git vouched for it.
    pub fn vouched_id(&self) -> Option<gix::ObjectId> {
        self.vouched.then_some(self.id)
    }
}

fn stat_options() -> gix::index::entry::stat::Options {
    gix::index::entry::stat::Options::default()
}

fn stat_of(meta: &std::fs::Metadata) -> Option<gix::index::entry::Stat> {
    use std::os::unix::fs::MetadataExt as _;
    let time = |secs: i64, nsecs: i64| gix::index::entry::stat::Time {
        secs: secs as u32,
        nsecs: nsecs as u32,
    };
    Some(gix::index::entry::Stat {
        mtime: time(meta.mtime(), meta.mtime_nsec()),
        ctime: time(meta.ctime(), meta.ctime_nsec()),
        dev: meta.dev() as u32,
        ino: meta.ino() as u32,
        uid: meta.uid(),
        gid: meta.gid(),
        size: meta.size() as u32,
    })
}

/// What makes index ids trustworthy for a whole index: read once per file set.
pub struct IndexTrust {
    timestamp: gix::index::entry::stat::Time,
    /// No attribute source git reads and no `core.autocrlf`: the work-tree bytes of an
    /// unchanged file are its blob's.
    unfiltered: bool,
}

impl IndexTrust {
    pub fn new(git: &gix::Repository, index: &gix::index::State) -> IndexTrust {
        let ts = index.timestamp();
        let timestamp = gix::index::entry::stat::Time {
            secs: ts.unix_seconds() as u32,
            nsecs: ts.nanoseconds(),
        };
        let config = git.config_snapshot();
        let autocrlf = config
            .string("core.autocrlf")
            .is_some_and(|v| !v.eq_ignore_ascii_case(b"false"));
        IndexTrust {
            timestamp,
            unfiltered: !(autocrlf || may_filter(git, index)),
        }
    }

    /// The entry of `path`, when its id may stand for the file's bytes.
    pub fn entry(&self, entry: &gix::index::Entry) -> Option<IndexStat> {
        use gix::index::entry::Flags;
        if !self.unfiltered
            || entry.stage_raw() != 0
            || entry
                .flags
                .intersects(Flags::INTENT_TO_ADD | Flags::SKIP_WORKTREE | Flags::ASSUME_VALID)
        {
            return None;
        }
        // Racy git: an entry written in the same second as (or after) the index may
        // hide a change made in that second; such a file is hashed.
        // Whole seconds, as git without USE_NSEC: the safe side.
        if entry.stat.mtime.secs >= self.timestamp.secs {
            return None;
        }
        Some(IndexStat {
            id: entry.id,
            stat: entry.stat,
            vouched: false,
        })
    }

    /// [`IndexTrust::entry`] for an entry git's `status` has just reported unchanged
    /// in the work tree (see [`status`]): vouched for, when it is a regular file's.
    /// The racy-entry rule of [`IndexTrust::entry`] still holds (git compares a racy
    /// entry's content, but the index it then writes may be the one we read).
    pub fn vouched(&self, entry: &gix::index::Entry) -> Option<IndexStat> {
        use gix::index::entry::Mode;
        let regular = matches!(entry.mode, Mode::FILE | Mode::FILE_EXECUTABLE);
        self.entry(entry).map(|stat| IndexStat {
            vouched: regular,
            ..stat
        })
    }
}

/// Whether any attribute source git reads at checkout exists: an attribute there can
/// name a filter (`smudge`), `text`/`eol`, `ident` or `working-tree-encoding`, which
/// make a file's bytes differ from its blob while its stat data match the index.
/// Every source counts, whatever it says: a `.gitattributes` in the work tree
/// (tracked or not) in a folder of a tracked file or above, `info/attributes`,
/// `core.attributesFile` or the default global file (`$XDG_CONFIG_HOME/git/attributes`,
/// `~/.config/git/attributes`), the system's `gitattributes`, and `attr.tree` /
/// `GIT_ATTR_SOURCE`.
fn may_filter(git: &gix::Repository, index: &gix::index::State) -> bool {
    let config = git.config_snapshot();
    if config.string("core.attributesFile").is_some()
        || config.string("attr.tree").is_some()
        || std::env::var_os("GIT_ATTR_SOURCE").is_some()
    {
        return true;
    }
    let mut files = vec![
        git.git_dir().join("info").join("attributes"),
        git.common_dir().join("info").join("attributes"),
    ];
    match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(xdg) => files.push(PathBuf::from(xdg).join("git").join("attributes")),
        None => {
            if let Some(home) = std::env::var_os("HOME") {
                files.push(PathBuf::from(home).join(".config/git/attributes"));
            }
        }
    }
    if std::env::var_os("GIT_ATTR_NOSYSTEM").is_none() {
        // `$(prefix)/etc/gitattributes` of the common git builds (asking git for its
        // prefix would cost a process).
        for prefix in ["/", "/usr/local", "/opt/homebrew"] {
            files.push(Path::new(prefix).join("etc/gitattributes"));
        }
    }
    if files.iter().any(|f| f.symlink_metadata().is_ok()) {
        return true;
    }
    // Every folder holding a tracked file, and the folders above it: git reads a
    // `.gitattributes` in each, tracked or not.
    let mut folders: std::collections::BTreeSet<&[u8]> = std::collections::BTreeSet::new();
    folders.insert(b"");
    for entry in index.entries() {
        let path: &[u8] = entry.path(index);
        if path == b".gitattributes" || path.ends_with(b"/.gitattributes") {
            return true;
        }
        let mut end = path.len();
        while let Some(slash) = path[..end].iter().rposition(|b| *b == b'/') {
            if !folders.insert(&path[..slash]) {
                break;
            }
            end = slash;
        }
    }
    let Some(workdir) = git.workdir() else {
        return false;
    };
    folders.iter().any(|folder| {
        let Ok(folder) = std::str::from_utf8(folder) else {
            // Not a path we can name: assume the worst.
            return true;
        };
        workdir
            .join(folder)
            .join(".gitattributes")
            .symlink_metadata()
            .is_ok()
    })
}

/// A file's blob id: the index's when `tracked` still matches the file's stat
/// data, else by hashing `bytes()`; `None` when the file cannot be read.
pub fn id_of(
    kind: gix::hash::Kind,
    tracked: Option<&IndexStat>,
    meta: &std::fs::Metadata,
    bytes: &[u8],
) -> Option<gix::ObjectId> {
    tracked
        .and_then(|t| t.id_if_unchanged(meta))
        .or_else(|| blob_id(kind, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(dir: &Path) -> Settings {
        Settings {
            dir: dir.to_path_buf(),
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }

    #[test]
    fn entries_survive_a_round_trip_and_damage_is_a_miss() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let s = settings(tmp.path());
        let q = KeyBuilder::new("t").finish();
        let k1 = KeyBuilder::new("k1").finish();
        let k2 = KeyBuilder::new("k2").finish();
        let b = Bucket::open(&s, &q);
        assert!(b.get(&k1).is_none());
        b.put(&k1, b"one");
        b.put(&k2, b"two");
        b.finish();
        let b = Bucket::open(&s, &q);
        assert_eq!(b.get(&k1).as_deref(), Some(&b"one"[..]));
        assert_eq!(b.get(&k2).as_deref(), Some(&b"two"[..]));
        // Flip a payload byte: that entry is a miss, the other still a hit.
        let path = b.path.clone();
        drop(b);
        let mut bytes = std::fs::read(&path).expect("read");
        bytes[MAGIC.len()] ^= 0xff;
        std::fs::write(&path, &bytes).expect("write");
        let b = Bucket::open(&s, &q);
        assert!(b.get(&k1).is_none());
        assert_eq!(b.get(&k2).as_deref(), Some(&b"two"[..]));
        // Truncated: every entry a miss.
        std::fs::write(&path, &bytes[..bytes.len() - 3]).expect("write");
        let b = Bucket::open(&s, &q);
        assert!(b.get(&k2).is_none());
        assert!(b.damaged);
    }

    #[test]
    fn eviction_keeps_the_folder_under_budget() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let s = Settings {
            dir: tmp.path().to_path_buf(),
            max_bytes: 2000,
        };
        for i in 0..10u8 {
            let b = Bucket::open(&s, &KeyBuilder::new(&i.to_string()).finish());
            b.put(&[i; 32], &[i; 500]);
            b.finish();
        }
        let total: u64 = std::fs::read_dir(tmp.path())
            .expect("dir")
            .map(|e| e.expect("entry").metadata().expect("meta").len())
            .sum();
        assert!(total <= 2000, "{total}");
    }
}
