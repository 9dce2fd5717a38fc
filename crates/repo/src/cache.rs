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

use std::io::Write;
use std::path::Path;
use std::path::PathBuf;

use sha2::Digest as _;

pub mod memo;
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

/// One bucket: the entries of one query, looked up in its file (mapped, not read), and
/// the entries this run adds (streamed to a temporary file, renamed into place by
/// [`finish`]).
///
/// [`finish`]: Bucket::finish
pub struct Bucket {
    dir: PathBuf,
    path: PathBuf,
    max_bytes: u64,
    old: Option<std::sync::Arc<Mapped>>,
    /// The old entries read by this run, one bit per row in key order (kept first
    /// when the bucket is rewritten).
    used: Vec<std::sync::atomic::AtomicU64>,
    new: std::sync::Mutex<Option<Writer>>,
    /// The old file failed its check, or its rows are not in key order (an older
    /// build's): the bucket is rewritten.
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
            used: Vec::new(),
            new: Default::default(),
            damaged: false,
        };
        if let Ok(file) = std::fs::File::open(&bucket.path) {
            match remembered(&bucket.path, &file) {
                Some(mapped) => {
                    // Recently used: eviction takes the oldest first.
                    let _ = file.set_modified(std::time::SystemTime::now());
                    bucket.damaged = mapped.order.is_some();
                    bucket.used = (0..mapped.count.div_ceil(64))
                        .map(|_| Default::default())
                        .collect();
                    bucket.old = Some(mapped);
                }
                None => bucket.damaged = true,
            }
        }
        bucket
    }

    /// Whether the bucket's index has an entry under `key` (not read, so not checked).
    pub fn contains(&self, key: &Key) -> bool {
        self.old.as_ref().is_some_and(|m| m.find(key).is_some())
    }

    /// The payload stored under `key`, if it is there and intact; the entry counts as
    /// used by this run (kept first when the bucket is rewritten).
    pub fn get(&self, key: &Key) -> Option<&[u8]> {
        let old = self.old.as_ref()?;
        let at = old.find(key)?;
        let payload = old.payload(at)?;
        self.used[at / 64].fetch_or(1 << (at % 64), std::sync::atomic::Ordering::Relaxed);
        Some(payload)
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
    /// small, indexed in key order; then keeps the folder under its budget. Failures
    /// only lose the cache.
    pub fn finish(self) {
        if lock(&self.new).is_none() && self.damaged {
            // Rewrite a damaged bucket even when nothing is new: start it empty (an
            // older build's intact entries are carried over below).
            self.put_nothing();
        }
        let Some(mut w) = lock(&self.new).take() else {
            return;
        };
        if let Some(old) = &self.old {
            let used = |at: usize| {
                self.used[at / 64].load(std::sync::atomic::Ordering::Relaxed) & (1 << (at % 64))
                    != 0
            };
            let share = self.max_bytes / 4;
            let mut old_rows: Vec<(usize, Row<'_>)> = (0..old.count)
                .map(|at| (at, old.row(at)))
                .filter(|(_, (k, ..))| !w.keys.contains(*k))
                .collect();
            // Used ones first, then the rest while under the share.
            old_rows.sort_by_key(|&(at, (_, off, ..))| (!used(at), off));
            for (at, (key, _, len, crc)) in old_rows {
                if !used(at) && w.offset + u64::from(len) > share {
                    break;
                }
                let Some(buf) = old.payload(at) else { continue };
                if w.file.write_all(buf).is_err() {
                    return;
                }
                w.rows.push((*key, w.offset, len, crc));
                w.offset += u64::from(len);
            }
        }
        // In key order: a reader looks an entry up by a binary search of the mapped
        // index, without building a table of it.
        w.rows.sort_unstable_by_key(|row| row.0);
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

/// An index row: key, offset, length, CRC.
type Row<'m> = (&'m Key, u64, u32, u32);

/// A bucket file, mapped into memory, its footer and index checked: an entry is
/// found by a binary search of the index rows (in key order), its payload read from
/// the mapping and checked against its CRC. Nothing is parsed into a table: a warm
/// run over 500,000 files touches the pages of the rows it looks up and of their
/// payloads, and no more.
struct Mapped {
    map: memmap2::Mmap,
    /// Where the index starts, and how many rows it has.
    index_at: usize,
    count: usize,
    /// The rows' numbers in key order, when the file does not have them in that
    /// order (written by an older build); `None`: the rows are in key order.
    order: Option<Vec<u32>>,
    /// Where the keys starting with each prefix of `bits` bits start, in key order
    /// (one more at the end: `count`). Keys are digests, spread evenly: a look-up
    /// reads a handful of neighbouring rows, where a binary search of 500,000 rows
    /// would read 19 rows pages apart.
    fan: Vec<u32>,
    bits: u32,
}

impl Mapped {
    /// The mapped bucket, or `None` when it is short or damaged.
    fn open(file: &std::fs::File) -> Option<Mapped> {
        let size = usize::try_from(file.metadata().ok()?.len()).ok()?;
        if size < MAGIC.len() + FOOTER {
            return None;
        }
        // SAFETY: a bucket file is never changed in place: a writer writes a temporary
        // file and renames it over the old one (`Bucket::finish`), and a mapping keeps
        // the file it was made of; `gc` and eviction delete files, which a mapping
        // also outlives. Every payload read through the mapping is checked against
        // its CRC. (As with git's own mapped index and packs, a file truncated in
        // place by someone else while mapped would fault.)
        let map = unsafe { memmap2::Mmap::map(file) }.ok()?;
        if map.len() != size || &map[..MAGIC.len()] != MAGIC {
            return None;
        }
        let footer = &map[size - FOOTER..];
        if &footer[20..24] != TAIL {
            return None;
        }
        let index_at = usize::try_from(u64::from_le_bytes(footer[0..8].try_into().ok()?)).ok()?;
        let count = usize::try_from(u64::from_le_bytes(footer[8..16].try_into().ok()?)).ok()?;
        let crc = u32::from_le_bytes(footer[16..20].try_into().ok()?);
        let index_len = count.checked_mul(INDEX_ROW)?;
        u32::try_from(count).ok()?;
        if index_at < MAGIC.len() || index_at.checked_add(index_len)? != size - FOOTER {
            return None;
        }
        let index = &map[index_at..index_at + index_len];
        if crc32fast::hash(index) != crc {
            return None;
        }
        let mut mapped = Mapped {
            map,
            index_at,
            count,
            order: None,
            fan: Vec::new(),
            bits: 0,
        };
        let mut sorted = true;
        for i in 0..count {
            let (key, offset, len, _) = mapped.raw_row(i);
            if offset < MAGIC.len() as u64 || offset.checked_add(u64::from(len))? > index_at as u64
            {
                return None;
            }
            sorted &= i == 0 || mapped.raw_row(i - 1).0 < key;
        }
        if !sorted {
            let mut order: Vec<u32> = (0..u32::try_from(count).ok()?).collect();
            order.sort_unstable_by(|&a, &b| {
                mapped
                    .raw_row(a as usize)
                    .0
                    .cmp(mapped.raw_row(b as usize).0)
            });
            mapped.order = Some(order);
        }
        // About as many prefixes as rows (at most 2^16).
        mapped.bits = (usize::BITS - count.leading_zeros())
            .saturating_sub(1)
            .min(16);
        let mut fan = Vec::with_capacity((1 << mapped.bits) + 1);
        for at in 0..count {
            let prefix = mapped.prefix(mapped.row(at).0);
            while fan.len() <= prefix {
                fan.push(at as u32);
            }
        }
        fan.resize((1 << mapped.bits) + 1, count as u32);
        mapped.fan = fan;
        Some(mapped)
    }

    /// The first `bits` bits of `key`.
    fn prefix(&self, key: &Key) -> usize {
        let top = u32::from_be_bytes([key[0], key[1], key[2], key[3]]);
        top.checked_shr(32 - self.bits).unwrap_or(0) as usize
    }

    /// The `i`th row of the file's index: key, offset, length, CRC.
    fn raw_row(&self, i: usize) -> Row<'_> {
        let at = self.index_at + i * INDEX_ROW;
        let row = &self.map[at..at + INDEX_ROW];
        let word = |r: std::ops::Range<usize>| {
            let mut b = [0u8; 8];
            b[..r.len()].copy_from_slice(&row[r]);
            u64::from_le_bytes(b)
        };
        (
            row[..32].try_into().expect("a row starts with its key"),
            word(32..40),
            word(40..44) as u32,
            word(44..48) as u32,
        )
    }

    /// The row `at` places in key order.
    fn row(&self, at: usize) -> Row<'_> {
        match &self.order {
            Some(order) => self.raw_row(order[at] as usize),
            None => self.raw_row(at),
        }
    }

    /// The place in key order of `key`'s row.
    fn find(&self, key: &Key) -> Option<usize> {
        let prefix = self.prefix(key);
        let (mut lo, mut hi) = (self.fan[prefix] as usize, self.fan[prefix + 1] as usize);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.row(mid).0.cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// The payload of the row `at` places in key order, when it passes its CRC.
    fn payload(&self, at: usize) -> Option<&[u8]> {
        let (_, offset, len, crc) = self.row(at);
        // (Checked against the index's place when mapped; looked at again in case the
        // file was changed in place since, which no writer of ours does.)
        let start = usize::try_from(offset).ok()?;
        let payload = self.map.get(start..start.checked_add(len as usize)?)?;
        (crc32fast::hash(payload) == crc).then_some(payload)
    }
}

/// The buckets this process mapped last, by path and file identity: a long-lived
/// process (the MCP server) checks a bucket's index once, not on every call. A bucket
/// is only ever replaced by a rename (a new inode), so (device, inode, size) names one
/// version; payloads are checked against their CRC on every read anyway.
#[allow(clippy::type_complexity)]
static REMEMBERED: std::sync::Mutex<Vec<(PathBuf, (u64, u64, u64), std::sync::Arc<Mapped>)>> =
    std::sync::Mutex::new(Vec::new());
const REMEMBER: usize = 16;

fn remembered(path: &Path, file: &std::fs::File) -> Option<std::sync::Arc<Mapped>> {
    use std::os::unix::fs::MetadataExt as _;
    let meta = file.metadata().ok()?;
    let id = (meta.dev(), meta.ino(), meta.len());
    {
        let memo = lock(&REMEMBERED);
        if let Some((_, _, mapped)) = memo.iter().find(|(p, i, _)| p == path && *i == id) {
            return Some(mapped.clone());
        }
    }
    let mapped = std::sync::Arc::new(Mapped::open(file)?);
    let mut memo = lock(&REMEMBERED);
    memo.retain(|(p, _, _)| p != path);
    if memo.len() >= REMEMBER {
        memo.remove(0);
    }
    memo.push((path.to_path_buf(), id, mapped.clone()));
    Some(mapped)
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
    /// When `unfiltered`: the folders where a `.gitattributes` would be read (those
    /// of the tracked files and above), none holding one now.
    folders: Vec<gix::bstr::BString>,
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
        let folders = match autocrlf {
            true => None,
            false => unfiltered_folders(git, index),
        };
        IndexTrust {
            timestamp,
            unfiltered: folders.is_some(),
            folders: folders.unwrap_or_default(),
        }
    }

    /// The folders where a `.gitattributes` would be read, none holding one; `None`
    /// when an attribute source or `core.autocrlf` may make a file's bytes differ
    /// from its blob.
    pub fn unfiltered_folders(&self) -> Option<&[gix::bstr::BString]> {
        self.unfiltered.then_some(&self.folders[..])
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
/// `GIT_ATTR_SOURCE`. `None`: some source exists; else the folders looked in.
fn unfiltered_folders(
    git: &gix::Repository,
    index: &gix::index::State,
) -> Option<Vec<gix::bstr::BString>> {
    if global_attribute_source(git) {
        return None;
    }
    // Every folder holding a tracked file, and the folders above it: git reads a
    // `.gitattributes` in each, tracked or not.
    let mut folders: std::collections::BTreeSet<&[u8]> = std::collections::BTreeSet::new();
    folders.insert(b"");
    // The index is in path order: a file's folder is mostly the one before's.
    let mut last: &[u8] = b"";
    for entry in index.entries() {
        let path: &[u8] = entry.path(index);
        if path == b".gitattributes" || path.ends_with(b"/.gitattributes") {
            return None;
        }
        let folder = &path[..path.iter().rposition(|b| *b == b'/').unwrap_or(0)];
        if folder == last {
            continue;
        }
        last = folder;
        let mut end = path.len();
        while let Some(slash) = path[..end].iter().rposition(|b| *b == b'/') {
            if !folders.insert(&path[..slash]) {
                break;
            }
            end = slash;
        }
    }
    let folders: Vec<gix::bstr::BString> = folders.into_iter().map(Into::into).collect();
    let Some(workdir) = git.workdir() else {
        return Some(folders);
    };
    (!folder_attributes(workdir, &folders)).then_some(folders)
}

/// Whether an attribute source outside the work tree's folders exists or is named
/// (see [`IndexTrust::new`]): `core.attributesFile`, `attr.tree`, `GIT_ATTR_SOURCE`,
/// `info/attributes`, the global and the system files.
pub fn global_attribute_source(git: &gix::Repository) -> bool {
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
    files.iter().any(|f| f.symlink_metadata().is_ok())
}

/// Whether a `.gitattributes` is in any of `folders` (repository paths) of `workdir`.
pub fn folder_attributes<F: AsRef<[u8]>>(workdir: &Path, folders: &[F]) -> bool {
    folders.iter().any(|folder| {
        let Ok(folder) = std::str::from_utf8(folder.as_ref()) else {
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
        assert_eq!(b.get(&k1), Some(&b"one"[..]));
        assert_eq!(b.get(&k2), Some(&b"two"[..]));
        // Flip a payload byte: that entry is a miss, the other still a hit.
        let path = b.path.clone();
        drop(b);
        let mut bytes = std::fs::read(&path).expect("read");
        bytes[MAGIC.len()] ^= 0xff;
        std::fs::write(&path, &bytes).expect("write");
        let b = Bucket::open(&s, &q);
        assert!(b.get(&k1).is_none());
        assert_eq!(b.get(&k2), Some(&b"two"[..]));
        // Truncated: every entry a miss.
        std::fs::write(&path, &bytes[..bytes.len() - 3]).expect("write");
        let b = Bucket::open(&s, &q);
        assert!(b.get(&k2).is_none());
        assert!(b.damaged);
    }

    /// Thousands of entries are each found through the fan-out table (and a key not
    /// stored is not); a bucket whose index is not in key order (an older build's) is
    /// read all the same, and rewritten in order by the run that read it.
    #[test]
    fn entries_are_found_in_a_large_bucket_and_an_unsorted_index_is_rewritten() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let s = settings(tmp.path());
        let q = KeyBuilder::new("many").finish();
        let keys: Vec<Key> = (0..3000)
            .map(|i: u32| KeyBuilder::new(&i.to_string()).finish())
            .collect();
        let all_found = |b: &Bucket| {
            for (i, k) in keys.iter().enumerate() {
                assert_eq!(b.get(k), Some(i.to_string().as_bytes()), "entry {i}");
            }
            assert!(b.get(&KeyBuilder::new("absent").finish()).is_none());
        };
        let b = Bucket::open(&s, &q);
        for (i, k) in keys.iter().enumerate() {
            b.put(k, i.to_string().as_bytes());
        }
        b.finish();
        let b = Bucket::open(&s, &q);
        assert!(!b.damaged);
        all_found(&b);
        // The same rows in reverse order, the index's CRC made to match, renamed into
        // place as every writer does.
        let path = b.path.clone();
        drop(b);
        let mut bytes = std::fs::read(&path).expect("read");
        let n = bytes.len();
        let at = n - FOOTER;
        let index_at = u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8")) as usize;
        let end = index_at + keys.len() * INDEX_ROW;
        let reversed: Vec<u8> = bytes[index_at..end]
            .chunks(INDEX_ROW)
            .rev()
            .flatten()
            .copied()
            .collect();
        bytes[index_at..end].copy_from_slice(&reversed);
        bytes[n - 8..n - 4].copy_from_slice(&crc32fast::hash(&reversed).to_le_bytes());
        let fresh = path.with_extension("new");
        std::fs::write(&fresh, &bytes).expect("write");
        std::fs::rename(&fresh, &path).expect("rename");
        let b = Bucket::open(&s, &q);
        assert!(b.damaged, "an unsorted index is to be rewritten");
        all_found(&b);
        b.finish();
        let b = Bucket::open(&s, &q);
        assert!(!b.damaged, "rewritten in key order");
        all_found(&b);
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
