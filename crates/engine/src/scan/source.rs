/*!
The inputs of a scan as the engine gets them: the files to read ([`Inputs`], listed by
`ops::input` from the work tree, the index for `--cached` or a commit's tree), the
staged or committed blobs read on the workers ([`Blobs`]), and `--shard I/N`, which
keeps the files whose path hashes to shard I, so N CI jobs split a tree the same way
on every machine without talking to each other.
*/

use std::fmt;

use super::Error;
use crate::files;

/// One part of a deterministic partition of the file set: `index` in `1..=count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Parses `I/N`.
    pub fn parse(text: &str) -> Result<Shard, Error> {
        let bad = || Error::BadShard(text.to_string());
        let (i, n) = text.trim().split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// Whether `path` belongs to this shard. The hash depends on the path alone (not on
    /// which other files exist), so machines with slightly different checkouts still
    /// agree on every shared file.
    pub fn contains(&self, path: &str) -> bool {
        (path_hash(path.as_bytes()) % self.count as u64) as usize == self.index - 1
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The first 8 bytes of the path's SHA-256: stable across platforms and releases
/// (unlike std's hasher) and well spread in every bit (unlike FNV-1a, whose low bit is
/// only the parity of the odd bytes, so `mod 2` would put most paths in one shard).
fn path_hash(bytes: &[u8]) -> u64 {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(bytes);
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

/// A file to scan: a work-tree file, or a staged or committed blob
/// ([`Candidate::blob`]).
pub use crate::files::Candidate;

/// The files to scan, in path order, and what was left out.
#[derive(Debug, Default)]
pub struct Inputs {
    pub files: Vec<Candidate>,
    pub skipped: files::Skipped,
    pub other_shards: usize,
    /// Of a tree's files, those left out for having the same blob now (see
    /// `ops::input::stored::Tree::skip_same`), in path order.
    pub same: Vec<String>,
    /// Listed from the index and git's `status` answer: what of the index was read.
    pub by_git: Option<files::ByGit>,
}

/// Paths of a scan's files and the ids of their contents (`None`: not named; see
/// [`super::ScanOutcome::ids`]).
pub type Known = std::collections::HashMap<String, Option<gix::ObjectId>>;

impl From<files::FileSet> for Inputs {
    /// The files of the work tree or the index, as `files` lists them.
    fn from(set: files::FileSet) -> Inputs {
        Inputs {
            files: set.files,
            skipped: set.skipped,
            other_shards: 0,
            same: Vec::new(),
            by_git: set.by_git,
        }
    }
}

impl Inputs {
    /// Keeps the files of `only` (when given) and of `shard` (when given), counting
    /// those `shard` leaves out.
    pub fn narrow(
        &mut self,
        only: Option<&std::collections::BTreeSet<String>>,
        shard: Option<Shard>,
    ) {
        if let Some(only) = only {
            self.files.retain(|f| only.contains(&f.path));
            self.same.retain(|p| only.contains(p));
        }
        if let Some(shard) = shard {
            let before = self.files.len();
            self.files.retain(|f| shard.contains(&f.path));
            self.other_shards = before - self.files.len();
            self.same.retain(|p| shard.contains(p));
        }
    }

    /// The files of `paths` alone, nothing skipped or left out.
    pub fn only(&self, paths: &std::collections::BTreeSet<String>) -> Inputs {
        Inputs {
            files: self
                .files
                .iter()
                .filter(|f| paths.contains(&f.path))
                .cloned()
                .collect(),
            ..Inputs::default()
        }
    }
}

/// Reads the staged and committed blobs a scan reads (shared with `grep` and `edit`).
pub use crate::files::Blobs;
