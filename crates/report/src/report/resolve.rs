//! What resolving a preview returns: `apply`, `undo`, `discard`, a session's undo, a
//! refresh, a partial apply's split, and `pr`.

use schemars::JsonSchema;
use serde::Serialize;

use super::review;
use super::Version;
use crate::error::Exit;

/// What happened to the transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Applied,
    Undone,
    Discarded,
}

/// The state a preview is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PreviewState {
    /// Staged (or undone) and not applied: `apply ID` applies it.
    Pending,
    Applied,
    Discarded,
    Expired,
}

/// `undo --session S --json`: each transaction undone, newest first.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SessionUndoReport {
    pub schema_version: Version,
    /// The session, as the journal spells it.
    pub session: String,
    pub undone: Vec<ResolveReport>,
}

impl SessionUndoReport {
    pub fn exit(&self) -> Exit {
        if self.undone.is_empty() {
            Exit::NothingFound
        } else {
            Exit::Ok
        }
    }
}

/// `apply`, `undo`, `discard` (and `resolve`, the `resolve`/`undo` tools).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ResolveReport {
    pub schema_version: Version,
    pub id: String,
    pub action: Action,
    /// The preview's state now: `applied` after apply, `pending` after undo (it can be
    /// applied again, by id only), `discarded` after discard.
    pub state: PreviewState,
    /// Paths written (created or replaced).
    pub written: Vec<String>,
    /// Paths deleted.
    pub deleted: Vec<String>,
    /// Paths the preview touches (for `discard`, what would have been written).
    pub files: Vec<String>,
    pub file_count: usize,
    /// Whether the index entries were updated (`--index`, `--commit`).
    pub index: bool,
    /// The commit `--commit` made.
    pub commit: Option<String>,
    pub reason: Option<String>,
    /// `undo --index`: the index entries were restored too.
    pub index_restored: bool,
    /// `undo`: paths whose index entries still hold the applied content.
    pub index_left: Vec<String>,
    /// `undo` after `apply --commit`: the commit stays in history (undo never rewrites
    /// commits).
    pub commit_kept: Option<String>,
    /// `apply ID -- PATHSPEC…` that selected part of the preview: how it was split
    /// (`id` is then the selected part's id). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<SplitReport>,
    /// `apply` of a preview with review decisions: the sites applied, dropped and
    /// left pending (`split` then names the parts). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<review::CutCounts>,
    /// `apply --refresh` of a stale preview: its refresh (`id` is then the successor's
    /// id, `refreshed.id` the stale preview's). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refreshed: Option<Box<RefreshReport>>,
    /// `apply --verify`: the check the preview passed in a worktree of its own before
    /// it was applied. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<Box<crate::report::verify::VerifyReport>>,
    /// `discard`: the dropped preview's summary, for the text.
    #[serde(skip)]
    pub summary: String,
}

impl ResolveReport {
    /// The report of an apply or undo, the same from every front end. `files` is the
    /// preview's paths; `None` means the paths written and deleted, sorted.
    pub fn of(
        report: &crate::txn::ApplyReport,
        action: Action,
        files: Option<Vec<String>>,
        index: bool,
        reason: Option<String>,
    ) -> Self {
        let files = files.unwrap_or_else(|| {
            let mut touched: Vec<String> = report
                .written
                .iter()
                .chain(&report.deleted)
                .cloned()
                .collect();
            touched.sort();
            touched
        });
        ResolveReport {
            schema_version: Version,
            id: report.id.clone(),
            action,
            state: match action {
                Action::Applied => PreviewState::Applied,
                Action::Undone if report.pending_again => PreviewState::Pending,
                // An agent's own edit: nothing was staged, nothing is pending.
                Action::Undone => PreviewState::Discarded,
                Action::Discarded => PreviewState::Discarded,
            },
            written: report.written.clone(),
            deleted: report.deleted.clone(),
            file_count: files.len(),
            files,
            index,
            commit: report.commit.clone(),
            reason,
            index_restored: report.index_restored,
            index_left: report.index_left.clone(),
            commit_kept: report.commit_kept.clone(),
            split: report.split.as_ref().map(SplitReport::of),
            review: None,
            refreshed: None,
            verified: None,
            summary: String::new(),
        }
    }

    /// Apply, undo and discard exit 0; their refusals are errors.
    pub fn exit(&self) -> crate::error::Exit {
        crate::error::Exit::Ok
    }
}

/// `refresh --json`: a pending preview re-derived on the current work tree.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RefreshReport {
    pub schema_version: Version,
    /// The preview refreshed.
    pub id: String,
    /// `refreshed`: a successor replaced it (`successor`); `current`: the work tree
    /// still holds its before side, nothing was staged.
    pub state: RefreshState,
    /// The new pending preview (the old one is `refreshed` in the journal).
    pub successor: Option<String>,
    pub kind: crate::change::PreviewKind,
    /// Total replacements (or chunks, fixes) before and now.
    pub replacements_before: usize,
    pub replacements_now: usize,
    /// The DSH rule: the same files, each with the same count.
    pub same_counts: bool,
    /// Per path of either preview, sorted.
    pub files: Vec<RefreshFile>,
    /// Paths in the old preview, not in the successor.
    pub dropped: Vec<String>,
    /// Paths in the successor, not in the old preview (`refresh --all`).
    pub newly_matching: Vec<String>,
    pub notes: Vec<String>,
}

/// What a refresh did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RefreshState {
    Refreshed,
    Current,
}

/// One path of a refresh.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RefreshFile {
    pub path: String,
    /// Replacements in the old preview (`null`: newly matching).
    pub before: Option<usize>,
    /// Replacements in the successor (`null`: dropped out).
    pub now: Option<usize>,
    /// `kept` (unchanged file, same blobs), `rerun`, `repatched`, `merged` (three-way)
    /// or `dropped`.
    pub how: How,
    /// Why it dropped out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The path as the text shows it (relative to the current folder); JSON carries the
    /// repository path.
    #[serde(skip)]
    pub shown: String,
}

/// How a path of the successor came about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum How {
    /// Unchanged in the work tree: the old blobs, as they were.
    Kept,
    /// The ops (or rules) ran again on the current content.
    Rerun,
    /// The recorded patch was resolved again.
    Repatched,
    /// A three-way merge of the preview's change into the current content.
    Merged,
    /// Not in the successor (see `why`).
    Dropped,
}

impl How {
    /// The words a line about the path says (`re-run`, `three-way merge`, …).
    pub fn words(self) -> &'static str {
        match self {
            How::Kept => "kept",
            How::Rerun => "re-run",
            How::Repatched => "patch resolved again",
            How::Merged => "three-way merge",
            How::Dropped => "dropped out",
        }
    }
}

impl RefreshReport {
    /// A refresh always exits 0; its refusals are errors.
    pub fn exit(&self) -> crate::error::Exit {
        crate::error::Exit::Ok
    }
}

/// How a partial apply split its preview.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SplitReport {
    /// The preview that was split; it is no longer pending (state `split`).
    pub parent: String,
    /// The part under the pathspecs, the one applied.
    pub selected: String,
    /// The rest, pending under this id.
    pub remainder: String,
    /// The remainder's paths.
    pub remainder_files: Vec<String>,
    pub remainder_file_count: usize,
}

impl SplitReport {
    pub fn of(s: &crate::txn::SplitInfo) -> SplitReport {
        SplitReport {
            parent: s.parent.clone(),
            selected: s.selected.clone(),
            remainder: s.remainder.clone(),
            remainder_file_count: s.remainder_files.len(),
            remainder_files: s.remainder_files.clone(),
        }
    }
}

/// `pr --json`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PrReport {
    pub schema_version: Version,
    pub id: String,
    /// `applied` or `pending`.
    pub state: PreviewState,
    pub branch: String,
    pub commit: String,
    pub remote: String,
    pub url: String,
    /// Whether this run opened it (else it existed).
    pub created: bool,
    pub draft: bool,
}

impl PrReport {
    /// `pr` exits 0 when the pull request exists; its refusals are errors.
    pub fn exit(&self) -> crate::error::Exit {
        crate::error::Exit::Ok
    }
}
