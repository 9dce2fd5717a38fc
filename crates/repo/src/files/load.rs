/*!
Reading a listed file: once, checking its size, binary content and UTF-8, or
through the result cache; and reading blobs (staged or committed files) on worker
threads.
*/

use super::Candidate;
use super::Error;
use super::FileSet;
use super::SkipReason;
use super::MAX_FILE_SIZE_CEILING;
use crate::change::FileMode;
use crate::repo::Repo;

/// A file's text, or why it was skipped.
pub enum Loaded {
    Text(String, FileMode),
    Skipped(SkipReason),
}

/// Reads a candidate once, checking size, binary content and UTF-8.
pub fn load(workdir: &std::path::Path, path: &str, max_file_size: u64) -> Loaded {
    let abs = workdir.join(path);
    let meta = match std::fs::symlink_metadata(&abs) {
        Ok(m) => m,
        Err(_) => return Loaded::Skipped(SkipReason::Unreadable),
    };
    if meta.file_type().is_symlink() {
        return Loaded::Skipped(SkipReason::Symlink);
    }
    // The ceiling holds even for a caller that never checked its limit.
    if meta.len() > max_file_size.min(MAX_FILE_SIZE_CEILING) {
        return Loaded::Skipped(SkipReason::TooLarge);
    }
    let bytes = match std::fs::read(&abs) {
        Ok(b) => b,
        Err(_) => return Loaded::Skipped(SkipReason::Unreadable),
    };
    classify_bytes(bytes, FileMode::from_metadata(&meta))
}

/// Decides whether bytes are text we can work on.
pub fn classify_bytes(bytes: Vec<u8>, mode: FileMode) -> Loaded {
    // Like git: a NUL byte in the first 8000 bytes means binary.
    let head = &bytes[..bytes.len().min(8000)];
    if memchr::memchr(0, head).is_some() {
        return Loaded::Skipped(SkipReason::Binary);
    }
    match String::from_utf8(bytes) {
        Ok(s) => Loaded::Text(s, mode),
        Err(_) => Loaded::Skipped(SkipReason::NonUtf8),
    }
}

/// A candidate looked up in the result cache.
pub enum CachedLoad {
    Skipped(SkipReason),
    /// An intact entry; `text` when the file had to be read to name its content.
    Hit {
        key: crate::cache::Key,
        /// The id of the content the entry is of.
        id: gix::ObjectId,
        payload: Vec<u8>,
        text: Option<(String, FileMode)>,
    },
    /// No entry (or a damaged one): the result is computed from `text` and stored
    /// under `key`.
    Miss {
        key: crate::cache::Key,
        id: gix::ObjectId,
        text: (String, FileMode),
    },
}

/// Like [`load`], through the cache: a tracked file whose stat data match its index
/// entry is named by the entry's id and not read on a hit; any other file is read and
/// hashed. `key_of` turns the content's id into the entry's key.
pub fn load_cached(
    workdir: &std::path::Path,
    path: &str,
    tracked: Option<&crate::cache::IndexStat>,
    max_file_size: u64,
    hash_kind: gix::hash::Kind,
    bucket: &crate::cache::Bucket,
    key_of: impl Fn(&gix::oid) -> crate::cache::Key,
) -> CachedLoad {
    // An entry git vouched for names a regular file of its size: no look at the file
    // while the cache answers for it.
    if let Some(t) = tracked.filter(|t| t.vouched) {
        let size = u64::from(t.stat.size);
        if size > 0 && size <= max_file_size.min(MAX_FILE_SIZE_CEILING) {
            let key = key_of(&t.id);
            if let Some(payload) = bucket.get(&key) {
                return CachedLoad::Hit {
                    key,
                    id: t.id,
                    payload: payload.to_vec(),
                    text: None,
                };
            }
        }
    }
    let abs = workdir.join(path);
    let meta = match std::fs::symlink_metadata(&abs) {
        Ok(m) => m,
        Err(_) => return CachedLoad::Skipped(SkipReason::Unreadable),
    };
    if meta.file_type().is_symlink() {
        return CachedLoad::Skipped(SkipReason::Symlink);
    }
    if meta.len() > max_file_size.min(MAX_FILE_SIZE_CEILING) {
        return CachedLoad::Skipped(SkipReason::TooLarge);
    }
    if let Some(id) = tracked.and_then(|t| t.id_if_unchanged(&meta)) {
        let key = key_of(&id);
        if let Some(payload) = bucket.get(&key) {
            return CachedLoad::Hit {
                key,
                id,
                payload: payload.to_vec(),
                text: None,
            };
        }
    }
    let (text, id) = match read_named(workdir, path, tracked, max_file_size, hash_kind) {
        Ok(read) => read,
        Err(reason) => return CachedLoad::Skipped(reason),
    };
    let key = key_of(&id);
    match bucket.get(&key) {
        Some(payload) => CachedLoad::Hit {
            key,
            id,
            payload: payload.to_vec(),
            text: Some(text),
        },
        None => CachedLoad::Miss { key, id, text },
    }
}

/// Reads a file and names its content: the index entry's id when the file's stat
/// data, taken after the read, still match the entry (a later change would have moved
/// the mtime past the entry's, which is older than the index); else the bytes' hash.
pub fn read_named(
    workdir: &std::path::Path,
    path: &str,
    tracked: Option<&crate::cache::IndexStat>,
    max_file_size: u64,
    hash_kind: gix::hash::Kind,
) -> Result<((String, FileMode), gix::ObjectId), SkipReason> {
    let (bytes, mode) = load_bytes(workdir, path, max_file_size)?;
    let after = std::fs::symlink_metadata(workdir.join(path)).ok();
    let id = match (tracked, after) {
        (Some(t), Some(meta)) => t.id_if_unchanged(&meta),
        _ => None,
    };
    let id = match id {
        Some(id) => id,
        None => crate::cache::blob_id(hash_kind, &bytes).ok_or(SkipReason::Unreadable)?,
    };
    match classify_bytes(bytes, mode) {
        Loaded::Text(t, m) => Ok(((t, m), id)),
        Loaded::Skipped(r) => Err(r),
    }
}

fn load_bytes(
    workdir: &std::path::Path,
    path: &str,
    max_file_size: u64,
) -> Result<(Vec<u8>, FileMode), SkipReason> {
    let abs = workdir.join(path);
    let meta = std::fs::symlink_metadata(&abs).map_err(|_| SkipReason::Unreadable)?;
    if meta.file_type().is_symlink() {
        return Err(SkipReason::Symlink);
    }
    if meta.len() > max_file_size.min(MAX_FILE_SIZE_CEILING) {
        return Err(SkipReason::TooLarge);
    }
    let bytes = std::fs::read(&abs).map_err(|_| SkipReason::Unreadable)?;
    Ok((bytes, FileMode::from_metadata(&meta)))
}

/// Reads blobs (staged or committed files) on a run's worker threads, each of which
/// opens the repository once for itself (a `gix::Repository` cannot be sent to
/// another thread); a thread that reads nothing opens nothing.
pub struct Blobs {
    git_dir: std::path::PathBuf,
    options: gix::open::Options,
    /// Tells this reader's handles from an earlier one's on a reused thread.
    id: u64,
}

thread_local! {
    static HANDLE: std::cell::RefCell<Option<(u64, gix::Repository)>> =
        const { std::cell::RefCell::new(None) };
}

impl Blobs {
    pub fn new(repo: &Repo) -> Blobs {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        Blobs {
            git_dir: repo.git.path().to_path_buf(),
            options: repo.git.open_options().clone(),
            id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// A reader for `set` when one of its files names a blob.
    pub fn for_set(repo: &Repo, set: &FileSet) -> Option<Blobs> {
        set.files
            .iter()
            .chain(&set.hosts)
            .any(|f| f.blob.is_some())
            .then(|| Blobs::new(repo))
    }

    /// The text of blob `id` at `path`, or why it is skipped.
    pub fn load(
        &self,
        path: &str,
        id: gix::ObjectId,
        mode: FileMode,
        max_file_size: u64,
    ) -> Result<Loaded, Error> {
        let unreadable = |e: Box<dyn std::error::Error + Send + Sync>| Error::Blob {
            path: path.to_string(),
            source: e,
        };
        HANDLE.with(|handle| {
            let mut handle = handle.borrow_mut();
            if handle.as_ref().is_none_or(|(of, _)| *of != self.id) {
                let git = gix::open_opts(&self.git_dir, self.options.clone())
                    .map_err(|e| unreadable(e.into()))?;
                *handle = Some((self.id, git));
            }
            let (_, git) = handle.as_ref().expect("opened above");
            let mut blob = git.find_blob(id).map_err(|e| unreadable(e.into()))?;
            if blob.data.len() as u64 > max_file_size.min(MAX_FILE_SIZE_CEILING) {
                return Ok(Loaded::Skipped(SkipReason::TooLarge));
            }
            Ok(classify_bytes(blob.take_data(), mode))
        })
    }

    /// The text of `file`'s blob; `None` when it names none (the work-tree file is
    /// read).
    pub fn load_file(&self, file: &Candidate, max_file_size: u64) -> Option<Result<Loaded, Error>> {
        let (id, mode) = file.blob?;
        Some(self.load(&file.path, id, mode, max_file_size))
    }
}

impl Drop for Blobs {
    fn drop(&mut self) {
        // The calling thread's handle (a run on one thread); the workers' went with
        // their threads.
        let _ = HANDLE.try_with(|h| {
            let mut h = h.borrow_mut();
            if h.as_ref().is_some_and(|(of, _)| *of == self.id) {
                *h = None;
            }
        });
    }
}
