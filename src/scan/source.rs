/*!
The inputs of a scan: the work tree (like `edit`), or the index for `--cached`, so a
pre-commit hook checks exactly what is about to be committed and not a later unstaged
edit. `--shard I/N` keeps the files whose path hashes to shard I, so N CI jobs split a
tree the same way on every machine without talking to each other.
*/

use std::fmt;

use crate::lang::Lang;
use gix::bstr::ByteSlice;

use super::Error;
use super::Options;
use crate::change::FileMode;
use crate::files;
use crate::files::SkipReason;
use crate::repo::Repo;

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

/// A file to scan.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub path: String,
    pub lang: Lang,
    /// For `--cached`: the staged blob and its mode.
    pub staged: Option<(gix::ObjectId, FileMode)>,
    /// The size the index recorded (see [`files::Candidate::size_hint`]).
    pub size_hint: u64,
    /// See [`files::Candidate::tracked`].
    pub tracked: Option<crate::cache::IndexStat>,
}

/// The files to scan, in path order, and what was left out.
#[derive(Debug, Default)]
pub struct Inputs {
    pub files: Vec<Candidate>,
    pub skipped: files::Skipped,
    pub other_shards: usize,
    /// Of a tree's files, those left out for having the same blob now (see
    /// [`Tree::skip_same`]), in path order.
    pub same: Vec<String>,
}

/// A commit's tree, scanned instead of the work tree (the other side of `--baseline`).
#[derive(Debug, Clone, Copy)]
pub struct Tree {
    pub id: gix::ObjectId,
    /// Leave out the files whose blob is at the same path now: their findings are
    /// those of the scan of now, so the comparison need not read them twice.
    pub skip_same: Option<Now>,
}

/// What "now" is for [`Tree::skip_same`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Now {
    /// The index: a file is the same when its stage-0 entry has the tree's blob.
    Index,
    /// The work tree: the same when its index entry has the tree's blob and the
    /// file's stat data still match the entry (as the result cache trusts them).
    WorkTree,
}

/// Lists the files of the work tree, or of the index with `opts.cached`.
pub fn collect(
    repo: &Repo,
    opts: &Options,
    globs: &files::LanguageGlobs,
    no_ignore: bool,
) -> Result<Inputs, Error> {
    files::check_max_file_size(opts.max_file_size)?;
    let mut inputs = if let Some(tree) = opts.tree {
        collect_tree(repo, tree, &opts.pathspecs, globs)?
    } else if opts.cached {
        collect_index(repo, &opts.pathspecs, globs)?
    } else {
        let set = files::collect(
            repo,
            &files::Options {
                pathspecs: opts.pathspecs.clone(),
                lang: None,
                max_file_size: opts.max_file_size,
                globs: Default::default(),
                no_ignore,
                language_globs: globs.clone(),
            },
        )?;
        Inputs {
            files: set
                .files
                .into_iter()
                .map(|f| Candidate {
                    path: f.path,
                    lang: f.lang,
                    staged: None,
                    size_hint: f.size_hint,
                    tracked: f.tracked,
                })
                .collect(),
            skipped: set.skipped,
            other_shards: 0,
            same: Vec::new(),
        }
    };
    if let Some(only) = &opts.only {
        inputs.files.retain(|f| only.contains(&f.path));
        inputs.same.retain(|p| only.contains(p));
    }
    if let Some(shard) = opts.shard {
        let before = inputs.files.len();
        inputs.files.retain(|f| shard.contains(&f.path));
        inputs.other_shards = before - inputs.files.len();
        inputs.same.retain(|p| shard.contains(p));
    }
    Ok(inputs)
}

/// The index's stage-0 entries matching the pathspecs (relative to the current folder).
fn collect_index(
    repo: &Repo,
    pathspecs: &[String],
    globs: &files::LanguageGlobs,
) -> Result<Inputs, Error> {
    // Plain specs made relative to the top, literal under GIT_LITERAL_PATHSPECS.
    let prepared = files::Pathspecs::new(repo, pathspecs)?;
    let git = &prepared.repository(repo);
    let index = git
        .index_or_empty()
        .map_err(|e| Error::Index(Box::new(e)))?;
    let unmatched = files::unmatched_in_index(git, &index, &prepared.positive)?;
    if !unmatched.is_empty() {
        return Err(files::Error::PathspecNoMatch(unmatched).into());
    }
    let specs = search_specs(repo, prepared);
    let mut pathspec = files::pathspec_search(git, &specs, &index).map_err(Error::Files)?;

    let mut inputs = Inputs::default();
    for entry in index.entries() {
        let path_b = entry.path(&index);
        if entry.stage_raw() != 0
            || entry
                .flags
                .contains(gix::index::entry::Flags::INTENT_TO_ADD)
            || !pathspec.is_included(path_b, Some(false))
        {
            continue;
        }
        let Ok(path) = path_b.to_str() else {
            inputs
                .skipped
                .add(SkipReason::NonUtf8Path, &path_b.to_str_lossy());
            continue;
        };
        let mode = match entry.mode {
            gix::index::entry::Mode::FILE => FileMode::Regular,
            gix::index::entry::Mode::FILE_EXECUTABLE => FileMode::Executable,
            gix::index::entry::Mode::SYMLINK => {
                inputs.skipped.add(SkipReason::Symlink, path);
                continue;
            }
            gix::index::entry::Mode::COMMIT => {
                inputs.skipped.add(SkipReason::Submodule, path);
                continue;
            }
            _ => continue,
        };
        let Some(lang) = globs.language_of(path) else {
            inputs.skipped.add(SkipReason::NoLanguage, path);
            continue;
        };
        inputs.files.push(Candidate {
            path: path.to_string(),
            lang,
            staged: Some((entry.id, mode)),
            size_hint: u64::from(entry.stat.size),
            tracked: None,
        });
    }
    // Conflicted paths appear once per stage; stage-0 entries are unique and sorted.
    Ok(inputs)
}

/// The specs gix gets: the positive ones, then the exclusions; like git, no positive
/// spec means the current folder and below.
fn search_specs(repo: &Repo, prepared: files::Pathspecs) -> Vec<String> {
    let mut specs: Vec<String> = prepared.positive.into_iter().map(|(s, _)| s).collect();
    specs.extend(prepared.negative);
    if !specs.iter().any(|s| !is_exclude(s)) {
        match repo.prefix.as_deref() {
            Some(p) if !p.is_empty() => specs.push(format!(":(top){p}")),
            _ => specs.push(":/".into()),
        }
    }
    specs
}

/// The files of a commit's tree matching the pathspecs (relative to the current
/// folder), in path order: the other side of `scan --baseline`, read from the object
/// database, no checkout. A spec that matches nothing there is no error (the files it
/// names may be new).
fn collect_tree(
    repo: &Repo,
    tree: Tree,
    pathspecs: &[String],
    globs: &files::LanguageGlobs,
) -> Result<Inputs, Error> {
    use gix::objs::tree::EntryKind;
    let prepared = files::Pathspecs::new(repo, pathspecs)?;
    let git = &prepared.repository(repo);
    let index = git
        .index_or_empty()
        .map_err(|e| Error::Index(Box::new(e)))?;
    let specs = search_specs(repo, prepared);
    let mut pathspec = files::pathspec_search(git, &specs, &index).map_err(Error::Files)?;
    let unreadable = |e: Box<dyn std::error::Error + Send + Sync>| Error::Tree {
        tree: tree.id.to_string(),
        source: e,
    };
    let entries = git
        .find_tree(tree.id)
        .map_err(|e| unreadable(e.into()))?
        .traverse()
        .breadthfirst
        .files()
        .map_err(|e| unreadable(e.into()))?;
    let same = tree.skip_same.map(|now| Same::new(repo, git, &index, now));
    let mut inputs = Inputs::default();
    for entry in entries {
        let path_b = entry.filepath.as_bstr();
        if !pathspec.is_included(path_b, Some(false)) {
            continue;
        }
        let Ok(path) = path_b.to_str() else {
            inputs
                .skipped
                .add(SkipReason::NonUtf8Path, &path_b.to_str_lossy());
            continue;
        };
        let mode = match entry.mode.kind() {
            EntryKind::Blob => FileMode::Regular,
            EntryKind::BlobExecutable => FileMode::Executable,
            EntryKind::Link => {
                inputs.skipped.add(SkipReason::Symlink, path);
                continue;
            }
            EntryKind::Commit => {
                inputs.skipped.add(SkipReason::Submodule, path);
                continue;
            }
            EntryKind::Tree => continue,
        };
        let Some(lang) = globs.language_of(path) else {
            inputs.skipped.add(SkipReason::NoLanguage, path);
            continue;
        };
        if same.as_ref().is_some_and(|s| s.holds(path, entry.oid)) {
            inputs.same.push(path.to_string());
            continue;
        }
        inputs.files.push(Candidate {
            path: path.to_string(),
            lang,
            staged: Some((entry.oid, mode)),
            size_hint: 0,
            tracked: None,
        });
    }
    inputs.files.sort_by(|a, b| a.path.cmp(&b.path));
    inputs.same.sort();
    Ok(inputs)
}

/// Tells whether a tree's blob is still at its path now ([`Tree::skip_same`]).
struct Same<'a> {
    index: &'a gix::index::State,
    workdir: Option<(&'a std::path::Path, crate::cache::IndexTrust)>,
}

impl<'a> Same<'a> {
    fn new(repo: &'a Repo, git: &gix::Repository, index: &'a gix::index::State, now: Now) -> Self {
        let workdir = match now {
            Now::Index => None,
            Now::WorkTree => Some((
                repo.workdir.as_path(),
                crate::cache::IndexTrust::new(git, index),
            )),
        };
        Same { index, workdir }
    }

    fn holds(&self, path: &str, blob: gix::ObjectId) -> bool {
        let Some(entry) = self.index.entry_by_path(path.into()) else {
            return false;
        };
        if entry.stage_raw() != 0 || entry.id != blob {
            return false;
        }
        let Some((workdir, trust)) = &self.workdir else {
            return !entry
                .flags
                .contains(gix::index::entry::Flags::INTENT_TO_ADD);
        };
        // The file's bytes are the entry's blob only while its stat data say so.
        trust.entry(entry).is_some_and(|stat| {
            std::fs::symlink_metadata(workdir.join(path))
                .ok()
                .filter(|m| m.is_file())
                .and_then(|m| stat.id_if_unchanged(&m))
                == Some(blob)
        })
    }
}

fn is_exclude(spec: &str) -> bool {
    spec.starts_with(":!") || spec.starts_with(":^") || spec.starts_with(":(exclude")
}

/// Reads the staged and committed blobs a scan reads (shared with `grep` and `edit`).
pub use crate::files::Blobs;
