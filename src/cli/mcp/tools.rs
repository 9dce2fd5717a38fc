/*!
The MCP tools as plain synchronous functions: typed input in, a text and a structured
value out, or a classified [`Error`] that the server turns into an `isError` result.

Every call opens the repository afresh (and runs crash recovery first, like every
command does): previews, the journal and the lock live in git, never in this process,
so concurrent calls, other processes and restarts all see one state. Paths in inputs
and outputs are repository paths (relative to the work-tree root), whatever folder the
server was started in: a model should not have to know the server's cwd.
*/

use std::path::Path;

use git_astedit::error::UsageError;
use git_astedit::files;
use git_astedit::ops::stage::EditRequest;
use git_astedit::render;
use git_astedit::repo::Repo;
use git_astedit::report::Action;
use git_astedit::report::BlobRef;
use git_astedit::report::CappedDiff;
use git_astedit::report::Diagnostics;
use git_astedit::report::FileStatus;
use git_astedit::report::GrepMatch;
use git_astedit::report::GrepReport;
use git_astedit::report::MetaVariables;
use git_astedit::report::PreviewRow;
use git_astedit::report::PreviewState;
use git_astedit::report::ResolveReport;
use git_astedit::report::ShownFile;
use git_astedit::report::Span;
use git_astedit::report::StageReport;
use git_astedit::report::StagedFile;
use git_astedit::report::Version;
use git_astedit::rewrite::Op;
use git_astedit::txn;
use git_astedit::Error;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

use git_astedit::ops::preview::LoadedPreview;
use git_astedit::render::render_diffs;
use git_astedit::render::DiffFile;

/// Default and ceiling of `ast_grep`'s `max_results`.
const DEFAULT_MAX_RESULTS: usize = 200;
const MAX_MAX_RESULTS: usize = 5000;
/// Default diff size returned by staging tools and `previews show`.
const DEFAULT_MAX_DIFF_LINES: usize = 400;
/// A byte ceiling on any returned diff, whatever `max_diff_lines` says: tool results
/// go into a model's context.
const MAX_DIFF_BYTES: usize = 64 * 1024;
/// Matched text longer than this is cut (with `…`) in `ast_grep` results.
const MAX_MATCH_TEXT: usize = 400;

/// Who is calling and where: the work-tree root and the client (`name/version`).
pub struct Call<'a> {
    pub workdir: &'a Path,
    pub agent: Option<String>,
}

/// A tool's success: text for the model, the same facts as structured content.
pub struct Done {
    pub text: String,
    pub value: serde_json::Value,
}

impl Done {
    fn new(text: String, value: &impl Serialize) -> Result<Done, Error> {
        let value = serde_json::to_value(value).map_err(|e| {
            Error::from(git_astedit::txn::Error::Corrupt(format!(
                "cannot encode a tool result: {e}"
            )))
        })?;
        Ok(Done { text, value })
    }
}

impl Call<'_> {
    /// Opens the repository at the work-tree root and finishes any interrupted apply.
    fn open(&self) -> Result<(Repo, Vec<String>), Error> {
        let repo = Repo::discover_from(self.workdir)?;
        let notes = txn::recover(&repo)?
            .map(|r| vec![r.message])
            .unwrap_or_default();
        Ok((repo, notes))
    }
}

fn collect(
    repo: &Repo,
    lang: Option<&str>,
    paths: &[String],
) -> Result<(files::FileSet, Option<ast_grep_language::SupportLang>), Error> {
    let lang = lang.map(files::parse_language).transpose()?;
    let opts = files::Options {
        pathspecs: paths.to_vec(),
        lang,
        max_file_size: files::DEFAULT_MAX_FILE_SIZE,
    };
    Ok((files::collect(repo, &opts)?, lang))
}

/// The diagnostics a file-reading tool passes on: languages skipped, files that parse
/// with errors, files skipped (repository paths).
fn diagnostics(
    skipped_languages: &[(String, String)],
    parse_errors: &[String],
    skipped: &files::Skipped,
) -> Diagnostics {
    Diagnostics::of(skipped_languages, parse_errors, skipped, str::to_string)
}

fn push_notes(text: &mut String, notes: &[String], warnings: &[String]) {
    for n in notes {
        text.push_str(&format!("note: {n}\n"));
    }
    for w in warnings {
        text.push_str(&format!("warning: {w}\n"));
    }
}

fn capped_diff(full: String, max_lines: Option<usize>) -> CappedDiff {
    let max_lines = max_lines.unwrap_or(DEFAULT_MAX_DIFF_LINES);
    let total = full.lines().count();
    let mut out = String::new();
    let mut kept = 0;
    for line in full.split_inclusive('\n') {
        if (max_lines > 0 && kept >= max_lines) || out.len() + line.len() > MAX_DIFF_BYTES {
            break;
        }
        out.push_str(line);
        kept += 1;
    }
    let truncated = kept < total;
    if truncated {
        out.push_str(&format!(
            "… diff cut after {kept} of {total} lines; call previews with action \"show\" and a larger max_diff_lines for more\n"
        ));
    }
    CappedDiff {
        diff: out,
        diff_truncated: truncated,
        diff_lines: total,
    }
}

// ---------------------------------------------------------------- ast_grep

/// Input of `ast_grep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepInput {
    /// An ast-grep pattern: code in the target language with metavariables, e.g.
    /// `console.log($MSG)` or `fn $NAME($$$ARGS)`. `$X` matches one node, `$$$X` any
    /// number of nodes.
    pub pattern: String,
    /// Parse every file as this language (e.g. `rust`, `ts`, `python`) instead of
    /// choosing by file extension.
    #[serde(default)]
    pub lang: Option<String>,
    /// Git pathspecs relative to the repository root, e.g. `src/` or `*.ts`
    /// (default: the whole work tree, tracked and untracked-not-ignored files).
    #[serde(default)]
    pub paths: Vec<String>,
    /// Return at most this many matches (default 200, at most 5000). The result says
    /// when it was capped and how many matches there are in all.
    #[serde(default)]
    pub max_results: Option<usize>,
}

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

pub fn ast_grep(call: &Call, input: GrepInput) -> Result<Done, Error> {
    let (repo, notes) = call.open()?;
    let (set, lang) = collect(&repo, input.lang.as_deref(), &input.paths)?;
    let outcome = git_astedit::grep::grep(
        &repo,
        &set,
        &input.pattern,
        lang,
        files::DEFAULT_MAX_FILE_SIZE,
    )?;
    let cap = input
        .max_results
        .unwrap_or(DEFAULT_MAX_RESULTS)
        .clamp(1, MAX_MAX_RESULTS);
    let matches: Vec<GrepMatch> = outcome
        .files
        .iter()
        .flat_map(|f| {
            f.matches.iter().map(|m| GrepMatch {
                path: f.path.clone(),
                lang: f.lang.to_string(),
                span: Span {
                    start_byte: m.start_byte,
                    end_byte: m.end_byte,
                    line: m.line,
                    column: m.column,
                    end_line: m.end_line,
                    end_column: m.end_column,
                    text: cut(&m.text, MAX_MATCH_TEXT),
                },
                meta_variables: MetaVariables::of(&m.captures),
            })
        })
        .take(cap)
        .collect();
    let out = GrepReport {
        schema_version: Version,
        pattern: input.pattern.clone(),
        shown: matches.len(),
        capped: matches.len() < outcome.total,
        total: outcome.total,
        files_matched: outcome.files.len(),
        files_searched: outcome.files_searched,
        diagnostics: diagnostics(
            &outcome.skipped_languages,
            &outcome.parse_errors,
            &outcome.skipped,
        ),
        matches,
    };
    let mut text = String::new();
    for m in &out.matches {
        text.push_str(&format!(
            "{}:{}:{}: {}\n",
            m.path,
            m.span.line,
            m.span.column,
            render::first_line(&m.span.text)
        ));
    }
    if out.total == 0 {
        text.push_str(&format!(
            "No matches ({} searched).\n",
            render::plural(out.files_searched, "file")
        ));
    } else {
        text.push_str(&format!(
            "{} {} in {}",
            out.total,
            if out.total == 1 { "match" } else { "matches" },
            render::plural(out.files_matched, "file")
        ));
        if out.capped {
            text.push_str(&format!(
                "; capped: showing the first {} (raise max_results or narrow paths)",
                out.matches.len()
            ));
        }
        text.push_str(".\n");
    }
    push_notes(&mut text, &notes, &out.diagnostics.warnings);
    Done::new(text, &out)
}

// ---------------------------------------------------------------- ast_edit

/// One rewrite op: every match of `pattern` becomes `rewrite`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpInput {
    /// An ast-grep pattern, e.g. `foo($A, $B)`.
    pub pattern: String,
    /// The replacement template; metavariables of the pattern are substituted,
    /// e.g. `bar($B, $A)`.
    pub rewrite: String,
}

/// Input of `ast_edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditInput {
    /// The rewrite ops, run in order, each on the previous one's result. Nested
    /// matches are all rewritten (`foo(foo(x))` with `foo($A)` → `bar($A)` gives
    /// `bar(bar(x))`).
    #[schemars(length(min = 1))]
    pub ops: Vec<OpInput>,
    /// Parse every file as this language instead of choosing by file extension.
    #[serde(default)]
    pub lang: Option<String>,
    /// Git pathspecs relative to the repository root (default: the whole work tree).
    #[serde(default)]
    pub paths: Vec<String>,
    /// Why this change is made; recorded in the preview and the journal.
    #[serde(default)]
    pub reason: Option<String>,
    /// Return at most this many diff lines (default 400; 0 means no line limit,
    /// still at most 64 KiB).
    #[serde(default)]
    pub max_diff_lines: Option<usize>,
}

fn staged_text(out: &StageReport, notes: &[String]) -> String {
    let mut text = out
        .diff
        .as_ref()
        .map(|d| d.diff.clone())
        .unwrap_or_default();
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(&format!("{}\n", out.summary));
    let flagged: Vec<&str> = out
        .files
        .iter()
        .filter(|f| {
            f.flags
                .iter()
                .any(|x| x == git_astedit::edit::FLAG_INTRODUCES_PARSE_ERRORS)
        })
        .map(|f| f.path.as_str())
        .collect();
    if !flagged.is_empty() {
        text.push_str(&format!(
            "warning: the rewrite makes {} parse with errors: {}\n",
            render::plural(flagged.len(), "file"),
            flagged.join(", ")
        ));
    }
    match &out.id {
        Some(id) => text.push_str(&format!(
            "Staged preview {id}; the work tree is unchanged. Apply it with resolve {{\"action\": \"apply\", \"id\": \"{id}\", \"reason\": …}} or drop it with action \"discard\".\n"
        )),
        None => text.push_str("No changes; nothing staged.\n"),
    }
    push_notes(&mut text, notes, &out.diagnostics.warnings);
    text
}

pub fn ast_edit(call: &Call, input: EditInput) -> Result<Done, Error> {
    if input.ops.is_empty() {
        return Err(UsageError(
            "ops is empty: give at least one {\"pattern\": …, \"rewrite\": …}".into(),
        )
        .into());
    }
    let ops: Vec<Op> = input
        .ops
        .iter()
        .map(|o| Op {
            pattern: o.pattern.clone(),
            rewrite: o.rewrite.clone(),
        })
        .collect();
    let (repo, notes) = call.open()?;
    let (set, lang) = collect(&repo, input.lang.as_deref(), &input.paths)?;
    // The one staging path the CLI's `edit` takes too: files stream into the preview.
    let staged = git_astedit::ops::stage::stage_edit(
        &repo,
        &EditRequest {
            set: &set,
            ops: &ops,
            lang,
            max_file_size: files::DEFAULT_MAX_FILE_SIZE,
            reason: input.reason.clone(),
            agent: call.agent.clone(),
        },
    )?;
    let outcome = &staged.outcome;
    let diag = diagnostics(
        &outcome.skipped_languages,
        &outcome.parse_errors,
        &outcome.skipped,
    );
    let diff = match &staged.preview {
        Some(p) => git_astedit::ops::preview::render_preview_diffs(&repo, p, false, 0)?,
        None => String::new(),
    };
    let id = staged.preview.as_ref().map(|p| p.id.clone());
    let mut out = staged_output(id, &staged.meta, diff, input.max_diff_lines, diag);
    out.files_searched = Some(outcome.files_searched);
    Done::new(staged_text(&out, &notes), &out)
}

fn staged_output(
    id: Option<String>,
    meta: &git_astedit::change::PreviewMeta,
    diff: String,
    max_diff_lines: Option<usize>,
    diagnostics: Diagnostics,
) -> StageReport {
    StageReport {
        schema_version: Version,
        kind: meta.kind,
        staged: id.is_some(),
        applied: false,
        id,
        summary: meta.summary.clone(),
        replacements: meta.replacements,
        files: meta
            .files
            .iter()
            .map(|f| StagedFile {
                path: f.path.clone(),
                count: f.count,
                flags: f.flags.clone(),
                changes: Vec::new(),
                dropped: Vec::new(),
            })
            .collect(),
        file_count: meta.files.len(),
        files_searched: None,
        patch_digest: None,
        ops: None,
        apply: None,
        diff: Some(capped_diff(diff, max_diff_lines)),
        diagnostics,
    }
}

// ---------------------------------------------------------------- apply_patch

/// Input of `apply_patch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchInput {
    /// The whole patch, from `*** Begin Patch` to `*** End Patch`. Paths are relative
    /// to the repository root.
    pub patch: String,
    /// Why this change is made; recorded in the preview and the journal.
    #[serde(default)]
    pub reason: Option<String>,
    /// Return at most this many diff lines (default 400; 0 means no line limit,
    /// still at most 64 KiB).
    #[serde(default)]
    pub max_diff_lines: Option<usize>,
}

pub fn apply_patch(call: &Call, input: PatchInput) -> Result<Done, Error> {
    use sha2::Digest;
    let (repo, notes) = call.open()?;
    let tree = git_astedit::patch::FsTree::for_repo(&repo)?;
    // Paths in the patch are relative to the top, whatever the server's cwd.
    let res = git_astedit::patch::resolve_text(&input.patch, &tree, "")?;
    let digest = format!("{:x}", sha2::Sha256::digest(input.patch.as_bytes()));
    let mut meta = git_astedit::ops::patch::preview_meta(&res, &digest, input.reason.clone());
    let id =
        git_astedit::ops::stage::stage_changes(&repo, &res.changes, &mut meta, call.agent.clone())?
            .map(|p| p.id);
    let mut diag = Diagnostics::default();
    if res.report.rescued() > 0 {
        diag.warnings.push(
            "some chunks were placed by a rescue: check the drifted lines in the report".into(),
        );
    }
    if id.is_none() && res.report.already_applied() > 0 {
        diag.warnings
            .push("the patch is already applied; nothing staged".into());
    }
    let diff = render_diffs(&DiffFile::from_changes(&res.changes), false, 0);
    let mut out = staged_output(id, &meta, diff, input.max_diff_lines, diag);
    out.patch_digest = Some(digest);
    out.ops = serde_json::to_value(&res.report)
        .ok()
        .and_then(|v| v.get("ops").cloned());
    let mut text = git_astedit::ops::patch::report_text(&repo, &res);
    text.push_str(&staged_text(&out, &notes));
    Done::new(text, &out)
}

// ---------------------------------------------------------------- previews

/// What `previews` does.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PreviewsAction {
    /// List pending previews, newest first.
    #[default]
    List,
    /// Show one preview: metadata, per-file line counts and its diff.
    Show,
}

/// Input of `previews`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreviewsInput {
    /// `list` (default) or `show`.
    #[serde(default)]
    pub action: PreviewsAction,
    /// For `show`: a preview id or unique prefix (default: the newest pending one).
    #[serde(default)]
    pub id: Option<String>,
    /// For `show`: return at most this many diff lines (default 400; 0: no line
    /// limit, still at most 64 KiB).
    #[serde(default)]
    pub max_diff_lines: Option<usize>,
}

/// Output of `previews`: `previews` for `list` (as `git astedit list --json`), or
/// `preview`, `meta`, `files` and the diff for `show` (as `git astedit show --json`).
#[derive(Debug, Serialize, JsonSchema)]
pub struct PreviewsOutput {
    pub schema_version: Version,
    /// For `list`: every pending preview, newest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previews: Option<Vec<PreviewRow>>,
    /// For `show`: the preview.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<PreviewRow>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<git_astedit::change::PreviewMeta>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<ShownFile>>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub diff: Option<CappedDiff>,
}

pub fn previews(call: &Call, input: PreviewsInput) -> Result<Done, Error> {
    let (repo, notes) = call.open()?;
    match input.action {
        PreviewsAction::List => {
            let rows: Vec<PreviewRow> = txn::list(&repo)?.iter().map(PreviewRow::of).collect();
            let mut text = String::new();
            for r in &rows {
                text.push_str(&format!(
                    "{}  {}  {:<5}  {}",
                    r.id, r.time, r.kind, r.summary
                ));
                if let Some(reason) = &r.reason {
                    text.push_str(&format!("  ({reason})"));
                }
                text.push('\n');
            }
            if rows.is_empty() {
                text.push_str("No pending previews.\n");
            }
            push_notes(&mut text, &notes, &[]);
            Done::new(
                text,
                &PreviewsOutput {
                    schema_version: Version,
                    previews: Some(rows),
                    preview: None,
                    meta: None,
                    files: None,
                    diff: None,
                },
            )
        }
        PreviewsAction::Show => {
            let preview = txn::find(&repo, input.id.as_deref())?;
            let loaded = LoadedPreview::load(&repo, preview)?;
            let files = loaded.files();
            let shown: Vec<ShownFile> = loaded
                .preview
                .entries
                .iter()
                .zip(&files)
                .map(|(e, f)| {
                    let counts = render::line_counts(
                        f.before.map(|s| s.bytes).unwrap_or_default(),
                        f.after.map(|s| s.bytes).unwrap_or_default(),
                    );
                    ShownFile {
                        path: e.path.clone(),
                        status: match (&e.before, &e.after) {
                            (None, _) => FileStatus::Added,
                            (_, None) => FileStatus::Deleted,
                            _ => FileStatus::Modified,
                        },
                        before: BlobRef::of(e.before),
                        after: BlobRef::of(e.after),
                        added_lines: counts.added,
                        removed_lines: counts.removed,
                    }
                })
                .collect();
            let diff = capped_diff(render_diffs(&files, false, 0), input.max_diff_lines);
            let r = PreviewRow::of(&loaded.preview);
            let mut text = format!("preview {}  {}  {}\n{}\n", r.id, r.time, r.kind, r.summary);
            if let Some(reason) = &r.reason {
                text.push_str(&format!("reason: {reason}\n"));
            }
            text.push('\n');
            text.push_str(&diff.diff);
            push_notes(&mut text, &notes, &[]);
            Done::new(
                text,
                &PreviewsOutput {
                    schema_version: Version,
                    previews: None,
                    meta: Some(loaded.preview.meta.clone()),
                    preview: Some(r),
                    files: Some(shown),
                    diff: Some(diff),
                },
            )
        }
    }
}

// ---------------------------------------------------------------- resolve, undo

/// What `resolve` does with a pending preview.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ResolveAction {
    /// Write the preview to the work tree, after checking that no touched file
    /// changed since it was staged.
    Apply,
    /// Drop the preview; nothing is written.
    Discard,
}

/// Input of `resolve`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveInput {
    /// `apply` or `discard`.
    pub action: ResolveAction,
    /// Why: recorded in the journal with the agent's name.
    pub reason: String,
    /// A preview id or unique prefix (default: the newest pending preview).
    #[serde(default)]
    pub id: Option<String>,
}

/// The report of an apply or undo, as the CLI's `--json` gives it.
fn resolved(
    report: &txn::ApplyReport,
    action: Action,
    index: bool,
    reason: Option<String>,
) -> ResolveReport {
    let mut files: Vec<String> = report
        .written
        .iter()
        .chain(&report.deleted)
        .cloned()
        .collect();
    files.sort();
    ResolveReport {
        schema_version: Version,
        id: report.id.clone(),
        action,
        state: match action {
            Action::Applied => PreviewState::Applied,
            Action::Undone => PreviewState::Pending,
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
        split: report
            .split
            .as_ref()
            .map(git_astedit::report::SplitReport::of),
    }
}

fn non_empty(reason: Option<String>) -> Option<String> {
    reason.filter(|r| !r.trim().is_empty())
}

pub fn resolve(call: &Call, input: ResolveInput) -> Result<Done, Error> {
    let Some(reason) = non_empty(Some(input.reason)) else {
        return Err(UsageError(
            "reason is empty: say why the preview is applied or discarded".into(),
        )
        .into());
    };
    let (repo, notes) = call.open()?;
    let (out, mut text) = match input.action {
        ResolveAction::Apply => {
            let opts = txn::ApplyOptions {
                reason: Some(reason.clone()),
                agent: call.agent.clone(),
                ..Default::default()
            };
            let report = txn::apply(&repo, input.id.as_deref(), &opts)?;
            let text = format!(
                "Applied {} ({} written{}). Undo it with undo {{\"id\": \"{}\"}}.\n",
                report.id,
                render::plural(report.written.len(), "file"),
                if report.deleted.is_empty() {
                    String::new()
                } else {
                    format!(", {} deleted", report.deleted.len())
                },
                report.id
            );
            let out = resolved(&report, Action::Applied, false, Some(reason));
            (out, text)
        }
        ResolveAction::Discard => {
            let preview = txn::discard_as(
                &repo,
                input.id.as_deref(),
                Some(&reason),
                call.agent.as_deref(),
            )?;
            let text = format!("Discarded {}: {}\n", preview.id, preview.meta.summary);
            let files: Vec<String> = preview.entries.iter().map(|e| e.path.clone()).collect();
            let out = ResolveReport {
                schema_version: Version,
                id: preview.id,
                action: Action::Discarded,
                state: PreviewState::Discarded,
                written: Vec::new(),
                deleted: Vec::new(),
                file_count: files.len(),
                files,
                index: false,
                commit: None,
                reason: Some(reason),
                index_restored: false,
                index_left: Vec::new(),
                commit_kept: None,
                split: None,
            };
            (out, text)
        }
    };
    push_notes(&mut text, &notes, &[]);
    Done::new(text, &out)
}

/// Input of `undo`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UndoInput {
    /// The applied transaction's id or unique prefix (default: the newest applied
    /// one not yet undone).
    #[serde(default)]
    pub id: Option<String>,
    /// Why; recorded in the journal.
    #[serde(default)]
    pub reason: Option<String>,
}

pub fn undo(call: &Call, input: UndoInput) -> Result<Done, Error> {
    let (repo, notes) = call.open()?;
    let reason = non_empty(input.reason);
    let opts = txn::UndoOptions {
        reason: reason.clone(),
        agent: call.agent.clone(),
        index: false,
    };
    let report = txn::undo(&repo, input.id.as_deref(), &opts)?;
    let mut text = format!(
        "Undid {}: {} restored{}.\n",
        report.id,
        render::plural(report.written.len(), "file"),
        if report.deleted.is_empty() {
            String::new()
        } else {
            format!(", {} removed", report.deleted.len())
        }
    );
    // Undo restores the work tree only: say what stays applied.
    if let Some(c) = &report.commit_kept {
        text.push_str(&format!(
            "The commit {c} made by apply --commit stays in history; record the reversal \
             with `git commit -m 'Revert …' -- <files>`.\n"
        ));
    } else if !report.index_left.is_empty() {
        text.push_str(&format!(
            "The index still holds the applied content of: {}.\n",
            report.index_left.join(", ")
        ));
    }
    push_notes(&mut text, &notes, &[]);
    let out = resolved(&report, Action::Undone, false, reason);
    Done::new(text, &out)
}
