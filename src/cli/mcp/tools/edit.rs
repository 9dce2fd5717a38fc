//! `ast_edit`: stage a structural rewrite (and its seed-style apply forms).

use git_astedit::error::UsageError;
use git_astedit::files;
use git_astedit::ops::stage::EditRequest;
use git_astedit::render;
use git_astedit::report::Action;
use git_astedit::report::Diagnostics;
use git_astedit::report::StageReport;
use git_astedit::report::StagedFile;
use git_astedit::report::Version;
use git_astedit::rewrite::Op;
use git_astedit::txn;
use git_astedit::Error;
use schemars::JsonSchema;
use serde::Deserialize;

use super::capped_diff;

use super::collect;
use super::count;
use super::diagnostics;
use super::pathspecs;
use super::push_notes;
use super::resolve;
use super::resolved;
use super::string_or_list;
use super::Call;
use super::Done;
use super::ResolveAction;
use super::ResolveInput;
use super::DEFAULT_MAX_DIFF_LINES;

/// One rewrite op: every match of `pattern` becomes `rewrite`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpInput {
    /// An ast-grep pattern, e.g. `foo($A, $B)`.
    #[serde(alias = "pat")]
    pub pattern: String,
    /// The replacement template; metavariables of the pattern are substituted,
    /// e.g. `bar($B, $A)`.
    #[serde(alias = "out")]
    pub rewrite: String,
}

/// Input of `ast_edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditInput {
    /// The rewrite ops, run in order, each on the previous one's result. Nested
    /// matches are all rewritten (`foo(foo(x))` with `foo($A)` → `bar($A)` gives
    /// `bar(bar(x))`).
    /// Required to stage (`action` `preview`, the default).
    #[serde(default)]
    pub ops: Vec<OpInput>,
    /// Parse every file as this language instead of choosing by file extension.
    #[serde(default)]
    pub lang: Option<String>,
    /// Git pathspecs relative to the repository root; `**` spans directories
    /// (default: the whole work tree).
    #[serde(default, alias = "path", deserialize_with = "string_or_list")]
    pub paths: Vec<String>,
    /// Glob patterns (`**` spans directories), added to `paths`.
    #[serde(default, deserialize_with = "string_or_list")]
    pub glob: Vec<String>,
    /// `preview` (default): stage the ops. `apply` / `reject`: apply or discard the
    /// preview `id` names (as `resolve` does), without staging.
    #[serde(default)]
    pub action: EditAction,
    /// For `apply` / `reject`: the preview id (default: the newest preview this
    /// session staged).
    #[serde(default, alias = "stagedId", alias = "staged_id")]
    pub id: Option<String>,
    /// Stage, then apply at once in this call (the same stale check as `resolve`).
    #[serde(default)]
    pub apply: bool,
    /// Why this change is made; recorded in the preview and the journal.
    #[serde(default)]
    pub reason: Option<String>,
    /// Return at most this many diff lines (default 400; 0 means no line limit,
    /// still at most 64 KiB).
    #[serde(default, deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = DEFAULT_MAX_DIFF_LINES))]
    pub max_diff_lines: Option<usize>,
}

/// The text of a staging call that staged nothing: that fact first, with why.
pub(super) fn nothing_staged_text(why: &str, notes: &[String], warnings: &[String]) -> String {
    let mut text =
        format!("nothing staged: {why}. There is no preview id: do not call resolve for this.\n");
    push_notes(&mut text, notes, warnings);
    text
}

/// What `ast_edit` does.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EditAction {
    /// Stage the ops as a preview (the default).
    #[default]
    Preview,
    /// Apply a staged preview, as `resolve` action `apply`.
    Apply,
    /// Discard a staged preview, as `resolve` action `discard`.
    Reject,
}

/// The text block of a staging result: what was staged and its id first, then the
/// files; the diff is in the structured content only (`diff`), so it is sent once.
pub(super) fn staged_text(out: &StageReport, notes: &[String]) -> String {
    let mut text = String::new();
    if let Some(id) = &out.id {
        text.push_str(&format!("Preview {id}: "));
    }
    text.push_str(&format!("{}\n", out.summary));
    for f in &out.files {
        text.push_str(&format!(
            "  {} ({}{})\n",
            f.path,
            render::plural(f.count, "change"),
            if f.flags.is_empty() {
                String::new()
            } else {
                format!(
                    "; {}",
                    f.flags
                        .iter()
                        .map(|x| x.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        ));
    }
    if let Some(d) = &out.diff {
        text.push_str(&format!(
            "The diff ({} lines{}) is in the structured content's `diff`.\n",
            d.diff_lines,
            if d.diff_truncated { ", cut" } else { "" }
        ));
    }
    let flagged: Vec<&str> = out
        .files
        .iter()
        .filter(|f| {
            f.flags
                .contains(&git_astedit::change::FileFlag::IntroducesParseErrors)
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
    let resolve_as = |action| {
        resolve(
            call,
            ResolveInput {
                action,
                reason: input
                    .reason
                    .clone()
                    .unwrap_or_else(|| "ast_edit".to_string()),
                id: input.id.clone(),
                extra: None,
                commit: false,
                message: None,
                refresh: false,
                paths: Vec::new(),
            },
        )
    };
    match input.action {
        EditAction::Apply => return resolve_as(ResolveAction::Apply),
        EditAction::Reject => return resolve_as(ResolveAction::Discard),
        EditAction::Preview => {}
    }
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
    let specs = pathspecs(&input.paths, &input.glob);
    let (set, lang, path_warnings) = collect(&repo, input.lang.as_deref(), &specs)?;
    // The one staging path the CLI's `edit` takes too: files stream into the preview.
    let staged = git_astedit::ops::stage::stage_edit_cancellable(
        &repo,
        &EditRequest {
            set: &set,
            ops: &ops,
            lang,
            max_file_size: files::DEFAULT_MAX_FILE_SIZE,
            reason: input.reason.clone(),
            agent: call.agent.clone(),
        },
        &call.cancel,
    )?;
    let outcome = &staged.outcome;
    let mut diag = diagnostics(
        &outcome.skipped_languages,
        &outcome.parse_errors,
        &outcome.skipped,
    );
    diag.warnings.extend(path_warnings);
    let diff = match &staged.preview {
        Some(p) => git_astedit::ops::preview::render_preview_diffs(&repo, p, false, 0)?,
        None => String::new(),
    };
    let id = staged.preview.as_ref().map(|p| p.id.clone());
    if let Some(id) = &id {
        call.session.remember(id);
    }
    let mut out = staged_output(id, &staged.meta, diff, input.max_diff_lines, diag);
    out.files_searched = Some(outcome.files_searched);
    // The harness's one-step form: the apply is the same call `resolve` makes, with
    // its stale check (trivially fresh here, but still checked).
    if let (true, Some(id)) = (input.apply, out.id.clone()) {
        let reason = input
            .reason
            .clone()
            .unwrap_or_else(|| "ast_edit apply".into());
        let opts = txn::ApplyOptions {
            reason: Some(reason.clone()),
            agent: call.agent.clone(),
            ..Default::default()
        };
        // Staged, not applied: the preview stays pending for a later resolve.
        call.cancel.check()?;
        let report = txn::apply(&repo, Some(id.as_str()), &opts)?;
        out.applied = true;
        out.apply = Some(resolved(&report, Action::Applied, false, Some(reason)));
        let mut text = format!(
            "{}\nStaged and applied {id}; undo it with undo {{\"id\": \"{id}\"}}.\n",
            out.summary
        );
        push_notes(&mut text, &notes, &out.diagnostics.warnings);
        return Done::new(text, &out);
    }
    let text = if out.id.is_none() {
        let searched = render::plural(outcome.files_searched, "file");
        let why = if out.replacements == 0 {
            format!("0 matches in {searched} searched")
        } else {
            format!(
                "{} matches in {searched} searched, but the rewrite leaves them as they are",
                out.replacements
            )
        };
        nothing_staged_text(&why, &notes, &out.diagnostics.warnings)
    } else {
        staged_text(&out, &notes)
    };
    Done::new(text, &out)
}

pub(super) fn staged_output(
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
            .map(|f| StagedFile::of_meta(f, f.path.clone()))
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
