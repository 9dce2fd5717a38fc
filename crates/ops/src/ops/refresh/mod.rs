/*!
`refresh`: re-derives a pending preview on the current work tree and stages the
result as a successor that supersedes it ([`crate::txn::refresh::supersede`]), and
`apply --refresh`, which applies the successor at once when it makes the same number
of changes in the same files (the DSH rule).

Per path of the preview, by what the work tree holds now:

* the preview's before side: the path is kept as it is (same blobs);
* the preview's after side: the change is already there, the path drops out;
* gone (the preview needed it): drops out;
* anything else: the path is re-derived. `edit` previews re-run their recorded ops,
  `scan` previews their recorded rules (loaded again from the recorded config files,
  and used only when those files hash as they did at staging), and `patch` previews
  resolve their recorded patch again, on the current content; `merge` previews, and
  any path where re-running is impossible (nothing recorded, rules changed, a
  language the ops do not compile for, a file that is not text), take a three-way
  merge (base = the before blob, ours = the work tree, theirs = the after blob, by
  `git merge-file`).

`--all` (edit and scan previews) also re-runs the ops or rules over the file set
recorded at staging (the pathspecs, from the folder they were typed in), so files that
match now join.

**Conflicts.** A re-run is accepted only where the user's edit and the preview's
change do not overlap (the three-way merge is clean), or, where they do, when the re-run
makes exactly the replacements the preview made (same matched text, same result: a
function moved with its calls, a re-indented block). Anything else — the user edited
text the preview rewrites — is a conflict: the refresh refuses (exit 3,
`refresh-conflict`), naming every file and the line regions of the work-tree file,
and nothing is staged. The old preview stays pending.
*/

use std::collections::BTreeSet;

use crate::change::FileChange;
use crate::change::FileContent;
use crate::change::FileMeta;
use crate::change::FileMode;
use crate::change::PreviewMeta;
use crate::error::Classify;
use crate::error::Exit;
use crate::ops::recipe::old_count;
use crate::ops::recipe::old_flags;
use crate::ops::recipe::ConflictFile;
use crate::ops::recipe::Derived;
use crate::ops::recipe::PerPath;
use crate::ops::recipe::Stale;
use crate::repo::Repo;
use crate::report::RefreshFile;
use crate::report::RefreshReport;
use crate::report::RefreshState;
use crate::report::Version;
use crate::txn;
use crate::txn::refresh::Held;
use crate::txn::ApplyOptions;
use crate::txn::ApplyReport;
use crate::txn::Preview;
use crate::txn::StoredEntry;
use crate::Error;

mod recipe;
mod whole;

pub use recipe::Recipe;
use recipe::Rederive;

/// Why a refresh or an `apply --refresh` refused.
#[derive(Debug, thiserror::Error)]
pub enum RefreshError {
    #[error("{}", conflict_message(.id, .files, .rederived))]
    Conflict {
        id: String,
        files: Vec<ConflictFile>,
        /// What the refresh found for the other paths (nothing of it was staged).
        rederived: Vec<FileOutcome>,
    },
    #[error(
        "preview {id} is stale and its refresh {successor} differs ({why}); it is staged for \
         review and nothing was written"
    )]
    Differs {
        id: String,
        successor: String,
        why: String,
    },
    #[error("refreshing preview {0} leaves nothing to change: every file dropped out; the preview stays pending")]
    Empty(String),
}

fn conflict_message(id: &str, files: &[ConflictFile], rederived: &[FileOutcome]) -> String {
    let mut s = format!(
        "cannot refresh {id}: {} file{} changed where the preview changes {}; nothing was staged",
        files.len(),
        if files.len() == 1 { "" } else { "s" },
        if files.len() == 1 { "it" } else { "them" },
    );
    for f in files {
        s.push_str(&format!("\n  {}: {}", f.path, f.why));
        for r in &f.regions {
            s.push_str(&format!("\n    {}", r.describe()));
        }
    }
    let moved: Vec<&FileOutcome> = rederived.iter().filter(|f| f.how != How::Kept).collect();
    if !moved.is_empty() {
        s.push_str("\nthe other changed files would refresh (replacements before → now):");
        for f in moved {
            s.push_str(&format!("\n  {}", f.line()));
        }
    }
    s
}

impl Classify for RefreshError {
    fn code(&self) -> &'static str {
        match self {
            RefreshError::Conflict { .. } => "refresh-conflict",
            RefreshError::Differs { .. } => "refresh-differs",
            RefreshError::Empty(_) => "refresh-empty",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            // The work tree moved on from the preview: the stale class, as apply's.
            RefreshError::Conflict { .. } | RefreshError::Differs { .. } => Exit::Stale,
            RefreshError::Empty(_) => Exit::NothingFound,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            RefreshError::Conflict { id, .. } => Some(format!(
                "put those regions back as the preview saw them (`git astedit show {id}`), or \
                 discard the preview and stage the change again"
            )),
            RefreshError::Differs { successor, .. } => Some(format!(
                "review it with `git astedit show {successor}`, then `git astedit apply {successor}`"
            )),
            _ => None,
        }
    }
    fn details(&self) -> Option<serde_json::Value> {
        match self {
            RefreshError::Conflict {
                id,
                files,
                rederived,
            } => Some(serde_json::json!({"id": id, "conflicts": files, "files": rederived})),
            RefreshError::Differs { id, successor, why } => Some(serde_json::json!({
                "id": id, "successor": successor, "why": why,
            })),
            _ => None,
        }
    }
}

/// How a path of the successor came about (a report type: `refresh --json` shows it).
pub use crate::report::How;

/// One path of the comparison.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FileOutcome {
    pub path: String,
    /// Replacements in the old preview (`None`: the path is newly matching).
    pub before: Option<usize>,
    /// Replacements now (`None`: dropped out).
    pub now: Option<usize>,
    pub how: How,
    pub why: Option<String>,
}

impl FileOutcome {
    /// `path: 2 → 3 (re-run)`, one line.
    pub fn line(&self) -> String {
        let count = |n: Option<usize>| n.map_or("-".to_string(), |n| n.to_string());
        let how = self.how.words();
        format!(
            "{}: {} → {} ({how}{})",
            crate::text::escape_line(&self.path),
            count(self.before),
            count(self.now),
            self.why
                .as_deref()
                .map(|w| format!(": {w}"))
                .unwrap_or_default()
        )
    }
}

/// What a refresh did.
#[derive(Debug, Clone)]
pub struct Refreshed {
    pub old: Preview,
    /// The successor; `None` when the preview was current (nothing to refresh).
    pub new: Option<Preview>,
    /// Per path of either preview, sorted by path.
    pub files: Vec<FileOutcome>,
    /// Notes (e.g. why a patch fell back to three-way merges).
    pub notes: Vec<String>,
}

impl Refreshed {
    /// The DSH rule: the same set of files, each with the same number of replacements.
    pub fn same_counts(&self) -> bool {
        self.files.iter().all(|f| f.before == f.now)
    }

    /// Why [`Refreshed::same_counts`] fails, in words.
    pub fn difference(&self) -> String {
        let mut parts = Vec::new();
        for f in &self.files {
            match (f.before, f.now) {
                (Some(_), None) => parts.push(format!("{} dropped out", f.path)),
                (None, Some(n)) => parts.push(format!("{} newly matches ({n})", f.path)),
                (Some(a), Some(b)) if a != b => parts.push(format!("{}: {a} → {b}", f.path)),
                _ => {}
            }
        }
        parts.join(", ")
    }
}

/// What to refresh.
#[derive(Debug, Clone, Default)]
pub struct RefreshRequest {
    /// The preview (a unique id prefix); the newest never-applied one when `None`.
    pub id: Option<String>,
    /// Re-run over the whole file set recorded at staging, not only the touched files.
    pub all: bool,
    /// The agent (MCP client name/version) acting.
    pub agent: Option<String>,
    /// Whether the caller may run programs (a command preview's command, recorded
    /// formatters): the CLI may; an MCP server only with `--allow-run`
    /// ([`crate::ops::trust::gate_refresh`]).
    pub allow_run: bool,
}

/// `refresh`: refreshes the preview `req` names (see the module docs) and reports it.
pub fn run(repo: &Repo, req: &RefreshRequest) -> Result<RefreshReport, Error> {
    Ok(report(repo, &refresh(repo, req)?))
}

/// The report of a refresh: repository paths, and each path as the text shows it.
pub fn report(repo: &Repo, r: &Refreshed) -> RefreshReport {
    let before = r.old.meta.replacements;
    let files: Vec<RefreshFile> = r
        .files
        .iter()
        .map(|f| RefreshFile {
            path: f.path.clone(),
            before: f.before,
            now: f.now,
            how: f.how,
            why: f.why.clone(),
            shown: repo.display_path(&f.path),
        })
        .collect();
    RefreshReport {
        schema_version: Version,
        id: r.old.id.clone(),
        state: if r.new.is_some() {
            RefreshState::Refreshed
        } else {
            RefreshState::Current
        },
        successor: r.new.as_ref().map(|p| p.id.clone()),
        kind: r.old.meta.kind,
        replacements_before: before,
        replacements_now: r
            .new
            .as_ref()
            .map(|p| p.meta.replacements)
            .unwrap_or(before),
        same_counts: r.same_counts(),
        dropped: files
            .iter()
            .filter(|f| f.before.is_some() && f.now.is_none())
            .map(|f| f.path.clone())
            .collect(),
        newly_matching: files
            .iter()
            .filter(|f| f.before.is_none())
            .map(|f| f.path.clone())
            .collect(),
        files,
        notes: r.notes.clone(),
    }
}

/// Refreshes the preview `req` names (see the module docs).
pub fn refresh(repo: &Repo, req: &RefreshRequest) -> Result<Refreshed, Error> {
    let held = txn::refresh::hold(repo, "refresh")?;
    let old = txn::find(repo, req.id.as_deref())?;
    // Before anything runs: a fetched preview's recipe is someone else's.
    let origin = crate::ops::trust::gate_refresh(repo, &old, req.allow_run)?;
    let recipe = Recipe::of(&old.meta);
    let done = if recipe.is_whole() {
        // Its recipe runs without the lock; the lock is taken again for the swap.
        drop(held);
        whole::refresh(repo, old, recipe, req)?
    } else {
        rederive(repo, &held, old, req)?
    };
    if let Some(new) = &done.new {
        crate::ops::trust::vouch_successor(repo, &origin, &done.old, new);
    }
    Ok(done)
}

/// What `apply --refresh` did: the apply, and the refresh before it when one was needed.
pub struct RefreshApplied {
    pub report: ApplyReport,
    pub refreshed: Option<Refreshed>,
}

/// `apply --refresh`: applies the preview when it is current; when it is stale,
/// refreshes it and applies the successor only if it has the same files with the same
/// counts. Otherwise the successor stays pending and the error names it (exit 3).
///
/// A current preview is applied as staged, trusted or not; refreshing a stale one goes
/// through [`crate::ops::trust::gate_refresh`] first (`allow_run`: whether the caller
/// may run programs).
pub fn apply_refreshed(
    repo: &Repo,
    id: Option<&str>,
    opts: &ApplyOptions,
    allow_run: bool,
) -> Result<RefreshApplied, Error> {
    let held = txn::refresh::hold(repo, "apply")?;
    let old = txn::find(repo, id)?;
    if txn::refresh::stale_paths(repo, &held, &old)?.is_empty() {
        let report = txn::refresh::apply_held(repo, &held, old, opts)?;
        return Ok(RefreshApplied {
            report,
            refreshed: None,
        });
    }
    let origin = crate::ops::trust::gate_refresh(repo, &old, allow_run)?;
    let req = RefreshRequest {
        id: Some(old.id.clone()),
        all: false,
        agent: opts.agent.clone(),
        allow_run,
    };
    let refreshed = rederive(repo, &held, old, &req)?;
    if let Some(new) = &refreshed.new {
        crate::ops::trust::vouch_successor(repo, &origin, &refreshed.old, new);
    }
    let Some(new) = refreshed.new.clone() else {
        // Stale, yet nothing re-derived: cannot happen, but apply it as it is then.
        let report = txn::refresh::apply_held(repo, &held, refreshed.old.clone(), opts)?;
        return Ok(RefreshApplied {
            report,
            refreshed: None,
        });
    };
    if !refreshed.same_counts() {
        return Err(RefreshError::Differs {
            id: refreshed.old.id.clone(),
            successor: new.id.clone(),
            why: refreshed.difference(),
        }
        .into());
    }
    let report = txn::refresh::apply_held(repo, &held, new, opts)?;
    Ok(RefreshApplied {
        report,
        refreshed: Some(refreshed),
    })
}

/// What the work tree holds at a path.
enum Current {
    Absent,
    /// A folder or something else that is not a file.
    Other,
    File(FileContent),
}

fn read_current(repo: &Repo, path: &str) -> Result<Current, Error> {
    let abs = repo.workdir.join(path);
    let meta = match std::fs::symlink_metadata(&abs) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Current::Absent),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => return Ok(Current::Absent),
        Err(source) => {
            return Err(crate::error::IoError {
                action: "read",
                path: path.to_string(),
                source,
            }
            .into())
        }
    };
    let mode = FileMode::from_metadata(&meta);
    let bytes = if meta.file_type().is_symlink() {
        let target = std::fs::read_link(&abs).map_err(|source| crate::error::IoError {
            action: "read",
            path: path.to_string(),
            source,
        })?;
        target.to_string_lossy().into_owned().into_bytes()
    } else if meta.is_file() {
        std::fs::read(&abs).map_err(|source| crate::error::IoError {
            action: "read",
            path: path.to_string(),
            source,
        })?
    } else {
        return Ok(Current::Other);
    };
    Ok(Current::File(FileContent { bytes, mode }))
}

/// The id git gives a blob of `bytes` (nothing is written).
pub fn blob_id(repo: &Repo, bytes: &[u8]) -> Result<gix::ObjectId, Error> {
    gix::objs::compute_hash(repo.git.object_hash(), gix::objs::Kind::Blob, bytes).map_err(|e| {
        crate::error::IoError {
            action: "hash",
            path: "a work-tree file".into(),
            source: std::io::Error::other(e.to_string()),
        }
        .into()
    })
}

/// The successor's after mode: the preview's mode change carried over, else the
/// mode the file has now.
fn after_mode(e: &StoredEntry, now: FileMode) -> FileMode {
    match (e.before, e.after) {
        (Some((_, b)), Some((_, a))) if a != b => a,
        _ => now,
    }
}

/// The refresh itself, the lock held: by the preview's recipe, path by path or whole.
fn rederive(
    repo: &Repo,
    held: &Held,
    old: Preview,
    req: &RefreshRequest,
) -> Result<Refreshed, Error> {
    txn::refresh::check_contained(repo, held, &old)?;
    let recipe = Recipe::of(&old.meta);
    let unit = recipe.unit();
    let mut notes = Vec::new();
    match recipe.rederive(&old.meta, &mut notes) {
        Rederive::Whole(whole) => whole::rederive(repo, held, old, whole.as_ref(), req, unit),
        Rederive::PerPath(kind) => {
            let mut paths = Paths::new(repo);
            paths.notes = notes;
            paths.fmt = crate::ops::fmt::Formatters::recorded(&old.meta);
            // A recorded formatter runs again only with the user's consent to it as it
            // is now (its command and the scripts it names).
            if let Some(fmts) = &paths.fmt {
                crate::ops::consent::require_fmt(repo, fmts, &[])?;
            }
            per_path(repo, held, old, kind, paths, req, unit)
        }
    }
}

/// What a path-by-path refresh gathers.
struct Paths<'a> {
    repo: &'a Repo,
    stager: txn::Stager<'a>,
    outcomes: Vec<FileOutcome>,
    conflicts: Vec<ConflictFile>,
    files: Vec<FileMeta>,
    notes: Vec<String>,
    /// Some path is not as the preview left its before side.
    changed_any: bool,
    /// The formatters the preview was staged with (`--fmt`): each re-run path is
    /// formatted again, limited to the rewrite, as staging did.
    fmt: Option<crate::ops::fmt::Formatters>,
    /// A preview staged from the index (`--cached`): the index, and the stale paths
    /// whose work-tree file does not hold their staged blob (the refusal's).
    index: Option<gix::worktree::Index>,
    unstaged: Vec<String>,
}

impl<'a> Paths<'a> {
    fn new(repo: &'a Repo) -> Paths<'a> {
        Paths {
            repo,
            stager: txn::Stager::new(repo),
            outcomes: Vec::new(),
            conflicts: Vec::new(),
            files: Vec::new(),
            notes: Vec::new(),
            changed_any: false,
            fmt: None,
            index: None,
            unstaged: Vec::new(),
        }
    }

    /// Whether the index holds `current` at `path`, byte for byte and with its mode
    /// (always, for a preview of the work tree).
    fn index_holds(&self, path: &str, current: &FileContent) -> Result<bool, Error> {
        let Some(index) = &self.index else {
            return Ok(true);
        };
        use gix::index::entry::Mode;
        let mode = match current.mode {
            FileMode::Regular => Mode::FILE,
            FileMode::Executable => Mode::FILE_EXECUTABLE,
            FileMode::Symlink => Mode::SYMLINK,
        };
        let staged = index
            .entry_by_path_and_stage(path.into(), gix::index::entry::Stage::Unconflicted)
            .map(|e| (e.id, e.mode));
        Ok(staged == Some((blob_id(self.repo, &current.bytes)?, mode)))
    }

    /// A path of the successor, and its row. A re-run path of a preview staged with
    /// `--fmt` goes through its formatter first (a failure is a note).
    fn add(
        &mut self,
        mut change: FileChange,
        before: Option<usize>,
        count: usize,
        flags: Vec<crate::change::FileFlag>,
        how: How,
        why: Option<String>,
    ) -> Result<(), Error> {
        if let (Some(fmts), How::Rerun) = (&self.fmt, how) {
            let workdir = &self.repo.workdir;
            self.notes
                .extend(crate::ops::fmt::format_change(workdir, fmts, &mut change));
        }
        self.outcomes.push(FileOutcome {
            path: change.path.clone(),
            before,
            now: Some(count),
            how,
            why,
        });
        self.files.push(FileMeta {
            path: change.path.clone(),
            count,
            flags,
        });
        Ok(self.stager.add(change)?)
    }
}

/// The path-by-path refresh: each path kept, dropped or re-derived by `kind`, and
/// with `--all` the files the recipe changes now.
fn per_path(
    repo: &Repo,
    held: &Held,
    old: Preview,
    mut kind: Box<dyn PerPath>,
    mut paths: Paths<'_>,
    req: &RefreshRequest,
    unit: &str,
) -> Result<Refreshed, Error> {
    let meta = &old.meta;
    if kind.cached() {
        let index = repo.git.index_or_empty();
        paths.index = Some(index.map_err(txn::Error::git("read the index"))?);
    }
    for e in &old.entries {
        one_path(repo, meta, e, kind.as_mut(), &mut paths)?;
    }
    if req.all {
        let known: BTreeSet<String> = old.entries.iter().map(|e| e.path.clone()).collect();
        match kind.all(repo, meta, &known, &mut paths.notes)? {
            Some(fresh) => {
                for (_, change, count, flags) in fresh {
                    paths.changed_any = true;
                    paths.add(change, None, count, flags, How::Rerun, None)?;
                }
            }
            None => paths.notes.push(format!(
                "--all re-runs recorded ops or rules; a {} preview has none, so only its own \
                 files were refreshed",
                meta.kind
            )),
        }
    }
    let Paths {
        repo: _,
        stager,
        mut outcomes,
        conflicts,
        files,
        notes,
        changed_any,
        fmt: _,
        index: _,
        unstaged,
    } = paths;
    // A path of staged content the work tree does not hold could only be stale again.
    crate::ops::stage::refuse(unstaged)?;
    outcomes.sort_by(|a, b| a.path.cmp(&b.path));
    if !conflicts.is_empty() {
        return Err(RefreshError::Conflict {
            id: old.id.clone(),
            files: conflicts,
            rederived: outcomes,
        }
        .into());
    }
    if !changed_any {
        return Ok(Refreshed {
            old,
            new: None,
            files: outcomes,
            notes,
        });
    }
    if stager.is_empty() {
        return Err(RefreshError::Empty(old.id.clone()).into());
    }
    let new_meta = successor_meta(&old, files, req.agent.clone(), unit);
    let new = txn::refresh::supersede(repo, held, &old, stager, &new_meta)?;
    Ok(Refreshed {
        old,
        new: Some(new),
        files: outcomes,
        notes,
    })
}

/// One path of the old preview: kept when the work tree holds its before side,
/// dropped when it holds the after side or nothing, else re-derived by `kind`.
fn one_path(
    repo: &Repo,
    meta: &PreviewMeta,
    e: &StoredEntry,
    kind: &mut dyn PerPath,
    paths: &mut Paths<'_>,
) -> Result<(), Error> {
    let current = read_current(repo, &e.path)?;
    let before_count = Some(old_count(meta, &e.path));
    let keeps_before = match (&current, e.before) {
        (Current::Absent, None) => true,
        (Current::File(c), Some((id, mode))) => mode == c.mode && blob_id(repo, &c.bytes)? == id,
        _ => false,
    };
    if keeps_before {
        paths.stager.add_stored(e);
        paths.files.push(FileMeta {
            path: e.path.clone(),
            count: old_count(meta, &e.path),
            flags: old_flags(meta, &e.path),
        });
        paths.outcomes.push(FileOutcome {
            path: e.path.clone(),
            before: before_count,
            now: before_count,
            how: How::Kept,
            why: None,
        });
        return Ok(());
    }
    paths.changed_any = true;
    let after_bytes = e.after.map(|(id, _)| txn::blob(repo, id)).transpose()?;
    let before_bytes = e.before.map(|(id, _)| txn::blob(repo, id)).transpose()?;
    let conflict = |why: &str| {
        Derived::Conflict(ConflictFile {
            path: e.path.clone(),
            why: why.into(),
            regions: Vec::new(),
        })
    };
    let derived = match (&current, &before_bytes, &after_bytes) {
        (Current::Other, ..) => conflict("is no longer a file"),
        (Current::Absent, _, None) => Derived::Dropped("already deleted".into()),
        (Current::Absent, ..) => Derived::Dropped("deleted from the work tree".into()),
        (Current::File(c), _, Some(after)) if &c.bytes == after => {
            Derived::Dropped("already holds the preview's change".into())
        }
        (Current::File(_), None, _) => conflict("exists now, and the preview adds it"),
        (Current::File(c), Some(before), after) => {
            // `--cached`: re-derived from the staged blob, which the work tree must hold.
            if !paths.index_holds(&e.path, c)? {
                paths.unstaged.push(e.path.clone());
                return Ok(());
            }
            let stale = Stale {
                repo,
                meta,
                entry: e,
                before,
                after: after.as_deref(),
                current: c,
            };
            kind.path(&stale, &mut paths.notes)?
        }
    };
    match derived {
        Derived::Changed {
            after,
            count,
            how,
            flags,
            why,
        } => {
            let Current::File(c) = current else {
                unreachable!("only a file is re-derived")
            };
            let mode = after_mode(e, c.mode);
            let change = FileChange {
                path: e.path.clone(),
                before: Some(c),
                after: Some(FileContent { bytes: after, mode }),
            };
            paths.add(change, before_count, count, flags, how, why)?;
        }
        Derived::Dropped(why) => paths.outcomes.push(FileOutcome {
            path: e.path.clone(),
            before: before_count,
            now: None,
            how: How::Dropped,
            why: Some(why),
        }),
        Derived::Conflict(c) => paths.conflicts.push(c),
    }
    Ok(())
}

/// The successor's metadata: the old one's, with the new per-file counts, the summary
/// saying what it was refreshed from, and `details.refreshed_from`.
fn successor_meta(
    old: &Preview,
    files: Vec<FileMeta>,
    agent: Option<String>,
    word: &str,
) -> PreviewMeta {
    let mut meta = old.meta.clone();
    meta.files = files;
    meta.files.sort_by(|a, b| a.path.cmp(&b.path));
    meta.replacements = meta.files.iter().map(|f| f.count).sum();
    meta.summary = format!(
        "{} in {} (refreshed from {})",
        crate::text::plural(meta.replacements, word),
        crate::text::plural(meta.files.len(), "file"),
        old.id
    );
    // Staged on the tree as it is now.
    meta.base_head = None;
    meta.tool_version = String::new();
    meta.made_by = None;
    if agent.is_some() {
        meta.agent = agent;
    }
    crate::ops::recipe::insert_detail_at(
        &mut meta,
        "refreshed_from",
        serde_json::Value::from(old.id.clone()),
    );
    meta
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_counts_is_the_dsh_rule() {
        let row = |path: &str, before, now| FileOutcome {
            path: path.into(),
            before,
            now,
            how: How::Rerun,
            why: None,
        };
        let mut r = Refreshed {
            old: Preview {
                id: "a".into(),
                commit: gix::ObjectId::null(gix::hash::Kind::Sha1),
                time: 0,
                meta: PreviewMeta::default(),
                entries: Vec::new(),
            },
            new: None,
            files: vec![row("x", Some(1), Some(1))],
            notes: Vec::new(),
        };
        assert!(r.same_counts());
        r.files.push(row("y", Some(2), Some(3)));
        r.files.push(row("z", Some(1), None));
        r.files.push(row("w", None, Some(1)));
        assert!(!r.same_counts());
        assert_eq!(
            r.difference(),
            "y: 2 → 3, z dropped out, w newly matches (1)"
        );
    }
}
