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

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use crate::lang::Lang;

use crate::change::FileChange;
use crate::change::FileContent;
use crate::change::FileMeta;
use crate::change::FileMode;
use crate::change::PreviewKind;
use crate::change::PreviewMeta;
use crate::error::Classify;
use crate::error::Exit;
use crate::repo::Repo;
use crate::report::RefreshFile;
use crate::report::RefreshReport;
use crate::report::RefreshState;
use crate::report::Version;
use crate::rewrite::Op;
use crate::rewrite::Rewriter;
use crate::txn;
use crate::txn::refresh::Held;
use crate::txn::ApplyOptions;
use crate::txn::ApplyReport;
use crate::txn::Preview;
use crate::txn::StoredEntry;
use crate::Error;

mod merge;
mod record;
mod run;
mod scan;

pub use merge::merge3;
pub use merge::merge3_layout;
pub use merge::Merge3;
pub use merge::Region;
pub use record::record_edit;
pub use record::record_patch;
pub use record::record_scan;
pub use record::record_selection;
pub use record::DETAILS_KEY;
use scan::rescan_all;
use scan::ScanRules;

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
    #[error("cannot run git merge-file: {0}")]
    MergeTool(String),
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
            RefreshError::MergeTool(_) => "merge-failed",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            // The work tree moved on from the preview: the stale class, as apply's.
            RefreshError::Conflict { .. } | RefreshError::Differs { .. } => Exit::Stale,
            RefreshError::Empty(_) => Exit::NothingFound,
            RefreshError::MergeTool(_) => Exit::Internal,
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

/// A file a refresh cannot re-derive, and where.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct ConflictFile {
    pub path: String,
    /// What is in the way, e.g. `edited where the preview changes it`.
    pub why: String,
    /// Line regions of the work-tree file (1-based, inclusive) where the edits collide.
    pub regions: Vec<Region>,
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
    if old.meta.kind == PreviewKind::Run {
        // Its command runs without the lock; the lock is taken again for the swap.
        drop(held);
        return run::refresh(repo, old, req);
    }
    rederive(repo, &held, old, req)
}

/// What `apply --refresh` did: the apply, and the refresh before it when one was needed.
pub struct RefreshApplied {
    pub report: ApplyReport,
    pub refreshed: Option<Refreshed>,
}

/// `apply --refresh`: applies the preview when it is current; when it is stale,
/// refreshes it and applies the successor only if it has the same files with the same
/// counts. Otherwise the successor stays pending and the error names it (exit 3).
pub fn apply_refreshed(
    repo: &Repo,
    id: Option<&str>,
    opts: &ApplyOptions,
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
    let req = RefreshRequest {
        id: Some(old.id.clone()),
        all: false,
        agent: opts.agent.clone(),
    };
    let refreshed = rederive(repo, &held, old, &req)?;
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

pub(super) fn blob_id(repo: &Repo, bytes: &[u8]) -> Result<gix::ObjectId, Error> {
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

/// One path re-derived.
enum Derived {
    /// New after bytes and the count of changes in them.
    Changed {
        after: Vec<u8>,
        count: usize,
        how: How,
        flags: Vec<crate::change::FileFlag>,
        /// Said in the file's row (e.g. that only the layout at its sites changed).
        why: Option<String>,
    },
    /// No change left to make at this path.
    Dropped(String),
    Conflict(ConflictFile),
}

/// The edit ops recorded in a preview, and the language forced at staging.
struct EditOps {
    ops: Vec<Op>,
    imports: crate::change::ImportFix,
    forced: Option<Lang>,
}

impl EditOps {
    fn of(meta: &PreviewMeta) -> Option<EditOps> {
        if meta.kind != PreviewKind::Edit || meta.ops.is_empty() || record::is_selection(meta) {
            return None;
        }
        let forced = match meta.ops[0].lang.as_deref() {
            Some(l) => Some(crate::files::parse_language(l).ok()?),
            None => None,
        };
        Some(EditOps {
            ops: meta
                .ops
                .iter()
                .map(|o| Op {
                    pattern: o.pattern.clone(),
                    rewrite: o.rewrite.clone(),
                })
                .collect(),
            imports: meta.imports.clone(),
            forced,
        })
    }

    fn rewriter(&self, path: &str) -> Option<Rewriter> {
        // A file that embeds the forced language (HTML under `-l js`) was edited in its
        // embedded regions only: not re-run as a whole, merged instead.
        if let (Some(forced), Some(own)) = (self.forced, crate::files::language_of(path)) {
            if own != forced && crate::lang::Injection::hosts_of(forced, &[]).contains(&own) {
                return None;
            }
        }
        let lang = self.forced.or_else(|| crate::files::language_of(path))?;
        Rewriter::for_language(&self.ops, lang, self.forced)
            .ok()
            .map(|r| r.with_imports(&self.imports))
    }
}

/// The replacements a re-run made, as (op, matched text, replacement), sorted: the
/// identity of "the same change" wherever it sits in the file.
fn pairs(rw: &Option<crate::rewrite::FileRewrite>) -> Vec<(usize, String, String)> {
    let mut v: Vec<(usize, String, String)> = rw
        .iter()
        .flat_map(|r| &r.replacements)
        .map(|r| (r.op, r.before.clone(), r.after.clone()))
        .collect();
    v.sort();
    v
}

/// Whether two re-runs' replacements are the same sites but for layout: pairwise,
/// the matched texts and the results are the same tokens (a formatter ran between).
fn same_sites(
    lang: Lang,
    now: &[(usize, String, String)],
    then: &[(usize, String, String)],
) -> bool {
    let key = |v: &[(usize, String, String)]| {
        let mut k: Vec<(usize, Vec<String>, Vec<String>)> = v
            .iter()
            .map(|(op, b, a)| {
                (
                    *op,
                    crate::rewrite::layout_key(lang, b),
                    crate::rewrite::layout_key(lang, a),
                )
            })
            .collect();
        k.sort();
        k
    };
    now.len() == then.len() && key(now) == key(then)
}

/// Says (in the refresh's notes, and returns for the file's row) that a path was
/// re-derived although its sites changed, because only their layout did.
fn reformatted_note(path: &str, what: &str, notes: &mut Vec<String>) -> String {
    let why = "only whitespace changed at the preview's sites (a formatter?); the same \
               replacements were made on the reformatted text";
    notes.push(format!(
        "{}: only whitespace or formatting changed where the preview's {what} apply; re-ran \
         them on the reformatted text",
        crate::text::escape_line(path)
    ));
    why.to_string()
}

/// The old preview's count for `path`.
fn old_count(meta: &PreviewMeta, path: &str) -> usize {
    meta.files
        .iter()
        .find(|f| f.path == path)
        .map(|f| f.count)
        .unwrap_or(0)
}

fn old_flags(meta: &PreviewMeta, path: &str) -> Vec<crate::change::FileFlag> {
    meta.files
        .iter()
        .find(|f| f.path == path)
        .map(|f| f.flags.clone())
        .unwrap_or_default()
}

/// A recorded patch re-resolved on the current work tree: path → (after, count).
type Repatched = BTreeMap<String, (Option<FileContent>, usize, Vec<crate::change::FileFlag>)>;

fn repatch(repo: &Repo, meta: &PreviewMeta, notes: &mut Vec<String>) -> Result<Repatched, String> {
    let rec = meta
        .details
        .get(DETAILS_KEY)
        .ok_or("the preview did not record its patch (staged by an older version)")?;
    let text = rec
        .get("patch")
        .and_then(|v| v.as_str())
        .ok_or("the preview did not record its patch")?;
    let base = rec.get("base").and_then(|v| v.as_str()).unwrap_or("");
    let tree = crate::patch::FsTree::for_repo(repo).map_err(|e| e.to_string())?;
    // Re-indented context (a formatter) is placed with indentation ignored: the patch
    // placed once already, so a unique match of the same lines is the same place.
    let opts = crate::patch::Options { reindent: true };
    let res = crate::patch::resolve_text_with(text, &tree, base, opts)
        .map_err(|e| format!("the patch no longer resolves: {e}"))?;
    // A rescue overwrites drifted lines: someone's edit there would be lost unseen.
    if res.report.rescued() > 0 {
        return Err(
            "the patch resolves again only by a rescue that overwrites drifted lines".into(),
        );
    }
    for op in &res.report.ops {
        use crate::patch::Level;
        let has = |l: Level| op.chunks.iter().any(|c| c.level == l);
        let path = crate::text::escape_line(&op.path);
        if has(Level::Indentation) {
            notes.push(format!(
                "{path}: the patch's context differs from the file only in indentation (a \
                 formatter?); placed with indentation ignored and its added lines re-indented"
            ));
        } else if has(Level::TrailingWhitespace) || has(Level::UnicodeTrailingWhitespace) {
            notes.push(format!(
                "{path}: the patch's context differs from the file only in trailing whitespace; \
                 the file's lines were kept"
            ));
        }
    }
    let files = super::patch::preview_meta(&res, "", None).files;
    Ok(res
        .changes
        .changes
        .into_iter()
        .map(|c| {
            let f = files.iter().find(|f| f.path == c.path);
            let count = f.map(|f| f.count).unwrap_or(0);
            let flags = f.map(|f| f.flags.clone()).unwrap_or_default();
            (c.path, (c.after, count, flags))
        })
        .collect())
}

/// The refresh itself, the lock held.
fn rederive(
    repo: &Repo,
    held: &Held,
    old: Preview,
    req: &RefreshRequest,
) -> Result<Refreshed, Error> {
    txn::refresh::check_contained(repo, held, &old)?;
    if old.meta.kind == PreviewKind::Run {
        return run::rederive(repo, held, old, req);
    }
    let meta = &old.meta;
    let edit_ops = EditOps::of(meta);
    let mut notes = Vec::new();
    if meta.kind == PreviewKind::Edit && record::is_selection(meta) {
        notes.push(
            "the preview holds a selection of the matches (-i): its changed files are merged \
             three-way, not re-run"
                .into(),
        );
    }
    let mut stager = txn::Stager::new(repo);
    let mut outcomes = Vec::new();
    let mut conflicts = Vec::new();
    let mut new_files: Vec<FileMeta> = Vec::new();
    let mut changed_any = false;
    // Re-resolved once, on the first stale path, for a patch preview; the rules of a
    // scan loaded once likewise.
    let mut repatched: Option<Result<Repatched, String>> = None;
    let mut scan_rules: Option<Result<ScanRules, String>> = None;

    for e in &old.entries {
        let current = read_current(repo, &e.path)?;
        let before_count = Some(old_count(meta, &e.path));
        let keeps_before = match (&current, e.before) {
            (Current::Absent, None) => true,
            (Current::File(c), Some((id, mode))) => {
                mode == c.mode && blob_id(repo, &c.bytes)? == id
            }
            _ => false,
        };
        if keeps_before {
            stager.add_stored(e);
            new_files.push(FileMeta {
                path: e.path.clone(),
                count: old_count(meta, &e.path),
                flags: old_flags(meta, &e.path),
            });
            outcomes.push(FileOutcome {
                path: e.path.clone(),
                before: before_count,
                now: before_count,
                how: How::Kept,
                why: None,
            });
            continue;
        }
        changed_any = true;
        let after_bytes = e.after.map(|(id, _)| txn::blob(repo, id)).transpose()?;
        let before_bytes = e.before.map(|(id, _)| txn::blob(repo, id)).transpose()?;
        let derived = match (&current, &before_bytes, &after_bytes) {
            (Current::Other, ..) => Derived::Conflict(ConflictFile {
                path: e.path.clone(),
                why: "is no longer a file".into(),
                regions: Vec::new(),
            }),
            (Current::Absent, _, None) => Derived::Dropped("already deleted".into()),
            (Current::Absent, ..) => Derived::Dropped("deleted from the work tree".into()),
            (Current::File(c), _, Some(after)) if &c.bytes == after => {
                Derived::Dropped("already holds the preview's change".into())
            }
            (Current::File(_), None, _) => Derived::Conflict(ConflictFile {
                path: e.path.clone(),
                why: "exists now, and the preview adds it".into(),
                regions: Vec::new(),
            }),
            (Current::File(c), Some(before), after) => derive_file(
                repo,
                &old,
                e,
                &edit_ops,
                &mut repatched,
                &mut scan_rules,
                &mut notes,
                before,
                after.as_deref(),
                c,
            )?,
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
                stager.add(FileChange {
                    path: e.path.clone(),
                    before: Some(c),
                    after: Some(FileContent { bytes: after, mode }),
                })?;
                new_files.push(FileMeta {
                    path: e.path.clone(),
                    count,
                    flags,
                });
                outcomes.push(FileOutcome {
                    path: e.path.clone(),
                    before: before_count,
                    now: Some(count),
                    how,
                    why,
                });
            }
            Derived::Dropped(why) => outcomes.push(FileOutcome {
                path: e.path.clone(),
                before: before_count,
                now: None,
                how: How::Dropped,
                why: Some(why),
            }),
            Derived::Conflict(c) => conflicts.push(c),
        }
    }
    if req.all {
        let known: BTreeSet<String> = old.entries.iter().map(|e| e.path.clone()).collect();
        let fresh = match (&edit_ops, meta.kind) {
            (Some(ops), _) => Some(rerun_all(repo, meta, ops, &known, &mut notes)?),
            (None, PreviewKind::Scan) => {
                let rules = scan_rules.get_or_insert_with(|| ScanRules::of(repo, meta));
                match rules {
                    Ok(rules) => Some(rescan_all(repo, meta, rules, &known, &mut notes)?),
                    Err(why) => {
                        notes.push(format!("--all needs the recorded rules: {why}"));
                        Some(Vec::new())
                    }
                }
            }
            _ => None,
        };
        if let Some(fresh) = fresh {
            for (path, change, count, flags) in fresh {
                changed_any = true;
                stager.add(change)?;
                new_files.push(FileMeta {
                    path: path.clone(),
                    count,
                    flags,
                });
                outcomes.push(FileOutcome {
                    path,
                    before: None,
                    now: Some(count),
                    how: How::Rerun,
                    why: None,
                });
            }
        } else {
            notes.push(format!(
                "--all re-runs recorded ops or rules; a {} preview has none, so only its own \
                 files were refreshed",
                meta.kind
            ));
        }
    }
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
    let new_meta = successor_meta(&old, new_files, req.agent.clone());
    let new = txn::refresh::supersede(repo, held, &old, stager, &new_meta)?;
    Ok(Refreshed {
        old,
        new: Some(new),
        files: outcomes,
        notes,
    })
}

/// Re-derives one path whose work-tree content is neither side of the preview.
#[allow(clippy::too_many_arguments)]
fn derive_file(
    repo: &Repo,
    old: &Preview,
    e: &StoredEntry,
    edit_ops: &Option<EditOps>,
    repatched: &mut Option<Result<Repatched, String>>,
    scan_rules: &mut Option<Result<ScanRules, String>>,
    notes: &mut Vec<String>,
    before: &[u8],
    after: Option<&[u8]>,
    current: &FileContent,
) -> Result<Derived, Error> {
    let meta = &old.meta;
    let merge = |after: &[u8]| merge3_layout(before, &current.bytes, after);
    match meta.kind {
        PreviewKind::Edit => {
            let (Some(ops), Some(after)) = (edit_ops, after) else {
                return merged(e, meta, after, merge);
            };
            let (Some(rewriter), Ok(now_text), Ok(before_text)) = (
                ops.rewriter(&e.path),
                std::str::from_utf8(&current.bytes),
                std::str::from_utf8(before),
            ) else {
                return merged(e, meta, Some(after), merge);
            };
            let (Ok(now), Ok(then)) = (rewriter.rewrite(now_text), rewriter.rewrite(before_text))
            else {
                return merged(e, meta, Some(after), merge);
            };
            let merge = merge(after)?;
            let mut why = None;
            if !merge.conflicts.is_empty() && pairs(&now) != pairs(&then) {
                if !same_sites(rewriter.language(), &pairs(&now), &pairs(&then)) {
                    return Ok(Derived::Conflict(ConflictFile {
                        path: e.path.clone(),
                        why: "edited where the preview changes it, and re-running the ops \
                              there gives other replacements"
                            .into(),
                        regions: merge.conflicts,
                    }));
                }
                why = Some(reformatted_note(&e.path, "ops", notes));
            }
            Ok(match now.filter(|r| r.text.as_bytes() != current.bytes) {
                None => Derived::Dropped("the ops no longer match".into()),
                Some(rw) => Derived::Changed {
                    count: rw.replacements.len(),
                    flags: rw.flags(),
                    after: rw.text.into_bytes(),
                    how: How::Rerun,
                    why,
                },
            })
        }
        PreviewKind::Patch => {
            let res = repatched.get_or_insert_with(|| {
                let r = repatch(repo, meta, notes);
                if let Err(why) = &r {
                    notes.push(format!("{why}; changed files are merged three-way instead"));
                }
                r
            });
            match res {
                Ok(map) => Ok(match map.get(&e.path) {
                    Some((Some(a), count, flags)) => Derived::Changed {
                        after: a.bytes.clone(),
                        count: *count,
                        how: How::Repatched,
                        flags: flags.clone(),
                        why: None,
                    },
                    Some((None, ..)) => Derived::Conflict(ConflictFile {
                        path: e.path.clone(),
                        why: "edited, and the patch deletes it".into(),
                        regions: Vec::new(),
                    }),
                    None => Derived::Dropped("the patch no longer changes it".into()),
                }),
                Err(_) => merged(e, meta, after, merge),
            }
        }
        PreviewKind::Scan => {
            let rules = scan_rules.get_or_insert_with(|| {
                let r = ScanRules::of(repo, meta);
                if let Err(why) = &r {
                    notes.push(format!("{why}; changed files are merged three-way instead"));
                }
                r
            });
            let (Ok(rules), Some(after)) = (rules, after) else {
                return merged(e, meta, after, merge);
            };
            let (Ok(now_text), Ok(before_text)) = (
                std::str::from_utf8(&current.bytes),
                std::str::from_utf8(before),
            ) else {
                return merged(e, meta, Some(after), merge);
            };
            let (Some(now), Some(then)) = (
                rules.run(&e.path, now_text),
                rules.run(&e.path, before_text),
            ) else {
                return merged(e, meta, Some(after), merge);
            };
            let merge = merge(after)?;
            let mut why = None;
            if !merge.conflicts.is_empty() && now.pairs != then.pairs {
                let lang = crate::files::language_of(&e.path);
                if !lang.is_some_and(|l| same_sites(l, &now.pairs, &then.pairs)) {
                    return Ok(Derived::Conflict(ConflictFile {
                        path: e.path.clone(),
                        why: "edited where the preview changes it, and re-running the rules \
                              there gives other fixes"
                            .into(),
                        regions: merge.conflicts,
                    }));
                }
                why = Some(reformatted_note(&e.path, "rules", notes));
            }
            Ok(match now.after.filter(|t| t.as_bytes() != current.bytes) {
                None => Derived::Dropped("the rules no longer fix it".into()),
                Some(text) => Derived::Changed {
                    after: text.into_bytes(),
                    count: now.count,
                    how: How::Rerun,
                    why,
                    flags: now.flags.clone(),
                },
            })
        }
        // Line edits are merged three-way from the blob they were staged on.
        // A run is re-run whole (`run::rederive`), never path by path.
        PreviewKind::Merge
        | PreviewKind::Lines
        | PreviewKind::Run
        | PreviewKind::Replace
        | PreviewKind::Write
        | PreviewKind::Hook => merged(e, meta, after, merge),
    }
}

/// The three-way merge of one path, as a derived path.
fn merged(
    e: &StoredEntry,
    meta: &PreviewMeta,
    after: Option<&[u8]>,
    merge: impl FnOnce(&[u8]) -> Result<Merge3, Error>,
) -> Result<Derived, Error> {
    let Some(after) = after else {
        return Ok(Derived::Conflict(ConflictFile {
            path: e.path.clone(),
            why: "edited, and the preview deletes it".into(),
            regions: Vec::new(),
        }));
    };
    let m = merge(after)?;
    if !m.conflicts.is_empty() {
        return Ok(Derived::Conflict(ConflictFile {
            path: e.path.clone(),
            why: "edited where the preview changes it (three-way merge conflict)".into(),
            regions: m.conflicts,
        }));
    }
    Ok(Derived::Changed {
        after: m.text,
        count: old_count(meta, &e.path),
        how: How::Merged,
        flags: old_flags(meta, &e.path),
        why: m.by_layout.then(|| {
            "only whitespace at the ends of lines changed next to the preview's change (a \
             formatter?); merged line by line"
                .to_string()
        }),
    })
}

/// A newly matching file: its path, change, count and flags.
type NewFile = (String, FileChange, usize, Vec<crate::change::FileFlag>);

/// `refresh --all` of an edit: the ops over the file set recorded at staging, for the
/// files not in the preview. Returns the newly matching ones.
fn rerun_all(
    repo: &Repo,
    meta: &PreviewMeta,
    ops: &EditOps,
    known: &BTreeSet<String>,
    notes: &mut Vec<String>,
) -> Result<Vec<NewFile>, Error> {
    let rec = meta.details.get(DETAILS_KEY);
    let pathspecs: Vec<String> = rec
        .and_then(|r| r.get("pathspecs"))
        .and_then(|p| serde_json::from_value(p.clone()).ok())
        .unwrap_or_default();
    let prefix = rec
        .and_then(|r| r.get("prefix"))
        .and_then(|p| p.as_str())
        .unwrap_or("");
    let max_file_size = rec
        .and_then(|r| r.get("max_file_size"))
        .and_then(|m| m.as_u64())
        .unwrap_or(crate::files::DEFAULT_MAX_FILE_SIZE);
    if rec.is_none() {
        notes.push(
            "the preview did not record its file set (staged by an older version): --all \
             re-ran over the whole work tree"
                .into(),
        );
    }
    // The pathspecs are relative to the folder they were typed in.
    let at = Repo::discover_from(&repo.workdir.join(prefix))?;
    // The project's root sgconfig.yml, as an edit run at the root reads it: its
    // languageGlobs name the files' languages, its injections the embedding ones.
    let language_globs = crate::scan::rules::project_language_globs(&at, None)?;
    let set = crate::files::collect(
        &at,
        &crate::files::Options {
            pathspecs,
            lang: ops.forced,
            max_file_size,
            globs: Default::default(),
            no_ignore: false,
            language_globs,
        },
    )?;
    let unknown = |files: Vec<crate::files::Candidate>| -> Vec<crate::files::Candidate> {
        files
            .into_iter()
            .filter(|f| !known.contains(&f.path))
            .collect()
    };
    let fresh = crate::files::FileSet {
        files: unknown(set.files),
        hosts: unknown(set.hosts),
        injections: set.injections,
        ..Default::default()
    };
    let outcome = crate::edit::edit(
        repo,
        &fresh,
        &ops.ops,
        &ops.imports,
        ops.forced,
        max_file_size,
    )?;
    let mut out = Vec::new();
    for (change, edit) in outcome.changes.changes.into_iter().zip(&outcome.files) {
        out.push((
            change.path.clone(),
            change,
            edit.replacements.len(),
            edit.flags.clone(),
        ));
    }
    Ok(out)
}

/// The successor's metadata: the old one's, with the new per-file counts, the summary
/// saying what it was refreshed from, and `details.refreshed_from`.
pub(super) fn successor_meta(
    old: &Preview,
    files: Vec<FileMeta>,
    agent: Option<String>,
) -> PreviewMeta {
    let mut meta = old.meta.clone();
    meta.files = files;
    meta.files.sort_by(|a, b| a.path.cmp(&b.path));
    meta.replacements = meta.files.iter().map(|f| f.count).sum();
    let word = match meta.kind {
        PreviewKind::Edit => "replacement",
        PreviewKind::Scan => "fix",
        PreviewKind::Patch => "chunk",
        PreviewKind::Merge => "change",
        PreviewKind::Lines => "line range",
        PreviewKind::Run => "change",
        PreviewKind::Replace => "replacement",
        PreviewKind::Write | PreviewKind::Hook => "file",
    };
    meta.summary = format!(
        "{} in {} (refreshed from {})",
        crate::text::plural(meta.replacements, word),
        crate::text::plural(meta.files.len(), "file"),
        old.id
    );
    // Staged on the tree as it is now.
    meta.base_head = None;
    meta.tool_version = String::new();
    if agent.is_some() {
        meta.agent = agent;
    }
    record::insert_detail_at(
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
    fn a_moved_call_makes_the_same_replacements_an_edited_one_does_not() {
        let meta = PreviewMeta {
            ops: vec![crate::change::OpMeta {
                pattern: "foo($A, $B)".into(),
                rewrite: "foo($B, $A)".into(),
                lang: None,
            }],
            ..PreviewMeta::default()
        };
        let ops = EditOps::of(&meta).expect("edit ops");
        let rw = ops.rewriter("a.js").expect("compiles for js");
        let run = |t: &str| pairs(&rw.rewrite(t).expect("rewrite"));
        let before = "function h() {}\nfunction m() { foo(1, k); }\n";
        let moved = "function m() { foo(1, k); }\n\nfunction h() {}\n";
        let edited = "function h() {}\nfunction m() { foo(1, j); }\n";
        assert_eq!(run(before), run(moved));
        assert_ne!(run(before), run(edited));
        assert!(ops.rewriter("notes.unknown-extension").is_none());
    }

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
