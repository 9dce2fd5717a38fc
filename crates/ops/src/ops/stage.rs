//! Staging: what `edit`, `patch` (and scan's fixes) share. A request says who the
//! report is for, whether to apply at once and whether to make the diff; [`settle`]
//! stages-then-applies in one place. [`crate::txn::Stager`] stamps the base HEAD and
//! tool version; the request carries the agent.

use std::collections::HashMap;

use crate::cancel::Cancel;
use crate::change::ChangeSet;
use crate::change::PreviewMeta;
use crate::ops::grep::Paths;
use crate::repo::Repo;
use crate::report::Action;
use crate::report::ResolveReport;
use crate::report::StageReport;
use crate::txn;
use crate::txn::Preview;
use crate::Error;

/// Who a staging report is for. The two front ends have always been given different
/// shapes, and they stay byte for byte as they were.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// A person at the CLI: paths relative to the current folder, each replacement
    /// listed, what needs a look (files that parse with errors, outer matches left
    /// alone, rescued chunks) said as warnings.
    Person,
    /// An agent through the server: repository paths, files as the preview counts
    /// them (the text block names files that parse with errors itself).
    Agent,
}

impl Audience {
    pub fn paths(self) -> Paths {
        match self {
            Audience::Person => Paths::Display,
            Audience::Agent => Paths::Repo,
        }
    }
}

/// The diff to make for the report's text.
#[derive(Debug, Clone, Copy, Default)]
pub struct DiffOptions {
    pub color: bool,
    /// At most this many lines (0: no limit); the rest is summarized.
    pub max_lines: usize,
}

/// Apply the preview right after staging it.
#[derive(Debug, Clone, Default)]
pub struct Apply {
    /// Recorded in the journal and the apply's report.
    pub reason: Option<String>,
    /// Update the touched paths' index entries too (`apply --index`): a preview of the
    /// staged content (`edit --cached`) is applied so.
    pub index: bool,
}

/// What every staging request says besides its changes.
#[derive(Debug, Clone)]
pub struct Staging {
    /// Why the change is made (recorded in the preview and the journal).
    pub reason: Option<String>,
    /// The MCP client (`name/version`) staging it.
    pub agent: Option<String>,
    pub apply: Option<Apply>,
    pub diff: Option<DiffOptions>,
    pub audience: Audience,
    /// Whether programs may run: `run`'s command, `--fmt`'s formatters, a verify
    /// command (the CLI: yes; the MCP server: only with `--allow-run`). Checked by
    /// [`crate::ops::trust::allow_run`].
    pub allow_run: bool,
}

/// Fills in what staging decided: the preview's id, and with `staging.apply` the
/// apply made at once (checked against `cancel` first: a cancelled call leaves the
/// preview pending).
pub(super) fn settle(
    repo: &Repo,
    report: &mut StageReport,
    preview: Option<&Preview>,
    staging: &Staging,
    cancel: &Cancel,
) -> Result<(), Error> {
    settle_verified(repo, report, preview, staging, None, cancel)
}

/// [`settle`] of a preview that passed a check first (`run --apply --verify`): `verified`
/// is the line for the commit's `Astedit-Verified` trailer.
pub(super) fn settle_verified(
    repo: &Repo,
    report: &mut StageReport,
    preview: Option<&Preview>,
    staging: &Staging,
    verified: Option<String>,
    cancel: &Cancel,
) -> Result<(), Error> {
    let Some(preview) = preview else {
        return Ok(());
    };
    report.id = Some(preview.id.clone());
    report.staged = true;
    let Some(apply) = &staging.apply else {
        return Ok(());
    };
    cancel.check()?;
    let opts = txn::ApplyOptions {
        reason: apply.reason.clone(),
        agent: staging.agent.clone(),
        verified,
        index: apply.index,
        ..Default::default()
    };
    let applied = txn::apply(repo, Some(&preview.id), &opts)?;
    let files = preview.entries.iter().map(|e| e.path.clone()).collect();
    report.applied = true;
    report.apply = Some(ResolveReport::of(
        &applied,
        Action::Applied,
        Some(files),
        false,
        apply.reason.clone(),
    ));
    Ok(())
}

/// Stages computed changes (a patch, scan fixes) as one preview with `meta` (the agent
/// set from `agent`); `None` when there is nothing to stage.
pub fn stage_changes(
    repo: &Repo,
    changes: &ChangeSet,
    meta: &mut PreviewMeta,
    agent: Option<String>,
) -> Result<Option<Preview>, Error> {
    if changes.is_empty() {
        return Ok(None);
    }
    meta.agent = agent;
    Ok(Some(txn::stage(repo, changes, meta)?))
}

/// Whether the work-tree file holds `change`'s before-side (see [`holds`]): a preview
/// of the staged content (`--cached`) is sound only where it does.
pub(super) fn work_tree_holds(repo: &Repo, change: &crate::change::FileChange) -> bool {
    change
        .before
        .as_ref()
        .is_some_and(|b| holds(repo, &change.path, &b.bytes, b.mode))
}

/// Whether the work-tree file at `path` holds `bytes` byte for byte, with `mode`'s
/// executable bit: what apply's stale check will ask of a preview's before-side.
fn holds(repo: &Repo, path: &str, bytes: &[u8], mode: crate::change::FileMode) -> bool {
    let path = repo.workdir.join(path);
    let same_kind = std::fs::symlink_metadata(&path).is_ok_and(|m| {
        !m.file_type().is_symlink() && crate::change::FileMode::from_metadata(&m) == mode
    });
    same_kind && std::fs::read(&path).is_ok_and(|on_disk| on_disk == bytes)
}

/// Refuses a preview of the staged content (`--cached`) that changes files whose work
/// tree holds other bytes than its before-side, naming them all with `known` (files
/// already found so, see [`StagedFiles`]).
pub(super) fn refuse_unstaged(
    repo: &Repo,
    changes: &ChangeSet,
    known: Vec<String>,
) -> Result<(), Error> {
    let mut paths = known;
    paths.extend(
        (changes.changes.iter())
            .filter(|c| !work_tree_holds(repo, c))
            .map(|c| c.path.clone()),
    );
    refuse(paths)
}

/// The `unstaged-changes` refusal naming `paths` (sorted, once each), if any.
pub fn refuse(mut paths: Vec<String>) -> Result<(), Error> {
    if paths.is_empty() {
        return Ok(());
    }
    paths.sort();
    paths.dedup();
    Err(txn::Error::Unstaged { paths }.into())
}

/// The staged files an edit or scan of the staged content (`--cached`) reads, and
/// whether each one's work-tree file holds its staged blob, found out the first time a
/// change in it is offered. A change in a file that does not cannot be staged: `edit
/// -i` and `scan -i` decline it without asking anyone ([`StagedFiles::keep`]) and the
/// file is named in the refusal at the end ([`StagedFiles::unstaged`]).
pub(super) struct StagedFiles<'r> {
    repo: &'r Repo,
    staged: HashMap<&'r str, StagedBlob>,
    unstaged: Vec<String>,
}

/// A staged file's blob and mode, and whether the work tree holds it, once asked.
struct StagedBlob {
    id: gix::ObjectId,
    mode: crate::change::FileMode,
    held: Option<bool>,
}

impl<'r> StagedFiles<'r> {
    /// The files of `files` read from the index (none when the work tree was read).
    pub(super) fn new(
        repo: &'r Repo,
        files: impl IntoIterator<Item = &'r crate::files::Candidate>,
    ) -> StagedFiles<'r> {
        let staged = (files.into_iter())
            .filter_map(|f| {
                let (id, mode) = f.blob?;
                let blob = StagedBlob {
                    id,
                    mode,
                    held: None,
                };
                Some((f.path.as_str(), blob))
            })
            .collect();
        StagedFiles {
            repo,
            staged,
            unstaged: Vec::new(),
        }
    }

    /// Whether no file was read from the index.
    pub(super) fn is_empty(&self) -> bool {
        self.staged.is_empty()
    }

    /// Whether a change in the file at `path` can be staged: it was not read from the
    /// index, or its work-tree file holds the staged blob. A file that does not is
    /// recorded for the refusal.
    pub(super) fn keep(&mut self, path: &str) -> bool {
        let Some(blob) = self.staged.get_mut(path) else {
            return true;
        };
        let repo = self.repo;
        let held = *blob.held.get_or_insert_with(|| {
            repo.git
                .find_blob(blob.id)
                .is_ok_and(|b| holds(repo, path, &b.data, blob.mode))
        });
        if !held && !self.unstaged.iter().any(|u| u == path) {
            self.unstaged.push(path.to_string());
        }
        held
    }

    /// The files whose changes [`StagedFiles::keep`] declined, in the order found.
    pub(super) fn unstaged(self) -> Vec<String> {
        self.unstaged
    }
}
