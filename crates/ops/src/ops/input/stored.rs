/*!
The files of a commit's tree, which a scan reads from git's object database rather
than the work tree: the other side of `scan --baseline`, read without a checkout.
They are matched by the same pathspecs as the work tree's and the index's listings
(`files::collect`, `files::collect_index`) and given their language by the same
globs; the scan engine reads their blobs.
*/

use gix::bstr::ByteSlice;

use crate::change::FileMode;
use crate::files;
use crate::files::SkipReason;
use crate::repo::Repo;
use crate::scan::source::Candidate;
use crate::scan::source::Inputs;
use crate::scan::source::Known;
use crate::scan::Error;

/// A commit's tree, scanned instead of the work tree (the other side of `--baseline`).
#[derive(Debug, Clone)]
pub struct Tree {
    pub id: gix::ObjectId,
    /// Leave out the files whose blob is at the same path now: their findings are
    /// those of the scan of now, so the comparison need not read them twice.
    pub skip_same: Option<Now>,
    /// The files the scan of now went over through the cache, with their content
    /// ids ([`crate::scan::ScanOutcome::ids`]): a file with an id is the same when its
    /// id is the tree's blob, and one not named is not (the scan of now had no rule
    /// for it, or it is gone), both told without a look at the disk; a file skipped
    /// now, and every file without these, is told as [`Tree::skip_same`] says.
    pub known: Option<std::sync::Arc<Known>>,
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

/// The files of a commit's tree matching the pathspecs (relative to the current
/// folder), in path order: the other side of `scan --baseline`, read from the object
/// database, no checkout. A spec that matches nothing there is no error (the files it
/// names may be new).
pub fn tree(
    repo: &Repo,
    tree: &Tree,
    pathspecs: &[String],
    globs: &files::LanguageGlobs,
) -> Result<Inputs, Error> {
    use gix::objs::tree::EntryKind;
    let (prepared, git, index) = files::Pathspecs::open(repo, pathspecs)?;
    let git = &git;
    let specs = files::index_specs(repo, prepared);
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
    let same = tree
        .skip_same
        .map(|now| Same::new(repo, git, &index, now, tree.known.as_deref()));
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
            size_hint: 0,
            tracked: None,
            blob: Some((entry.oid, mode)),
        });
    }
    inputs.files.sort_by(|a, b| a.path.cmp(&b.path));
    inputs.same.sort();
    Ok(inputs)
}

/// Tells whether a tree's blob is still at its path now ([`Tree::skip_same`]).
struct Same<'a> {
    index: &'a gix::index::State,
    /// The ids the scan of now named ([`Tree::known`]).
    known: Option<&'a Known>,
    /// With [`Now::WorkTree`]: the work tree, and whether the index's ids may stand for
    /// its files (made on first use: it looks for attribute files in every folder).
    workdir: Option<(
        &'a std::path::Path,
        &'a gix::Repository,
        std::cell::OnceCell<crate::cache::IndexTrust>,
    )>,
}

impl<'a> Same<'a> {
    fn new(
        repo: &'a Repo,
        git: &'a gix::Repository,
        index: &'a gix::index::State,
        now: Now,
        known: Option<&'a Known>,
    ) -> Self {
        let workdir = match now {
            Now::Index => None,
            Now::WorkTree => Some((repo.workdir.as_path(), git, Default::default())),
        };
        Same {
            index,
            known,
            workdir,
        }
    }

    fn holds(&self, path: &str, blob: gix::ObjectId) -> bool {
        match self.known.map(|known| known.get(path)) {
            Some(Some(Some(id))) => return *id == blob,
            Some(None) => return false,
            // Skipped now, or no ids: by the index and the disk.
            Some(Some(None)) | None => {}
        }
        let Some(entry) = self.index.entry_by_path(path.into()) else {
            return false;
        };
        if entry.stage_raw() != 0 || entry.id != blob {
            return false;
        }
        let Some((workdir, git, trust)) = &self.workdir else {
            return !entry
                .flags
                .contains(gix::index::entry::Flags::INTENT_TO_ADD);
        };
        let trust = trust.get_or_init(|| crate::cache::IndexTrust::new(git, self.index));
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
