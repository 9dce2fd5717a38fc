//! `ast_edit`: stage a structural rewrite (and its seed-style apply forms).

use git_astedit::change::ImportFix;
use git_astedit::error::UsageError;
use git_astedit::ops::edit::EditOptions;
use git_astedit::ops::edit::EditRequest;
use git_astedit::ops::stage::Apply;
use git_astedit::ops::stage::Audience;
use git_astedit::ops::stage::DiffOptions;
use git_astedit::ops::stage::Staging;
use git_astedit::render;
use git_astedit::report::StageReport;
use git_astedit::Error;
use schemars::JsonSchema;
use serde::Deserialize;

use super::capped_diff;
use super::count;
use super::resolve;
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
    /// Imports to fix up in each file the edit changes: `add` import statements in
    /// the file's language (e.g. `import { logger } from "./log"`; metavariables of
    /// the pattern allowed), each added unless already there, merged into an import
    /// of the same module when it can be; `remove` names whose import goes once
    /// nothing in the file refers to them.
    #[serde(default)]
    pub imports: Option<ImportFix>,
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
    /// A node kind: each pattern is parsed as written and its node of this kind is
    /// what matches (ast-grep's selector). Python annotations parse as
    /// `generic_type`: pattern `x: List[$T]` with selector `generic_type` reaches them.
    #[serde(default)]
    pub selector: Option<String>,
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
    /// Run each rewritten file through the formatter astedit.toml's [fmt] declares for
    /// its language, keeping only its hunks over the rewrite.
    #[serde(default)]
    pub fmt: bool,
    /// Return at most this many diff lines (default 400; 0 means no line limit,
    /// still at most 64 KiB).
    #[serde(default, deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = DEFAULT_MAX_DIFF_LINES))]
    pub max_diff_lines: Option<usize>,
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
                verify: None,
                verify_timeout: None,
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
    let (repo, notes) = call.open()?;
    // The one staging path the CLI's `edit` takes too: files stream into the preview.
    let request = EditRequest {
        input: super::input(input.lang.as_deref(), &input.paths, &input.glob),
        ops: input
            .ops
            .iter()
            .map(|o| (o.pattern.clone(), o.rewrite.clone()))
            .collect(),
        selector: input.selector.clone(),
        imports: merged_imports(&input.ops),
        // The harness's one-step form: the apply is the one `resolve` makes, with its
        // stale check (trivially fresh here, but still checked).
        staging: staging(
            call,
            input.reason.clone(),
            input.apply.then(|| Apply {
                reason: Some(input.reason.unwrap_or_else(|| "ast_edit apply".into())),
                index: false,
            }),
        ),
        cache: Default::default(),
        verbose: false,
        fmt: input.fmt,
        allow_fmt: Vec::new(),
    };
    let options = EditOptions {
        cancel: &call.cancel,
        select: None,
    };
    let mut out = git_astedit::ops::edit::run(&repo, &request, options)?;
    staged(call, &mut out, input.max_diff_lines);
    Done::new(render::agent::stage::edit_text(&out, &notes), &out)
}

/// The ops' imports as one set: they are fixed up in every file the edit changes.
fn merged_imports(ops: &[OpInput]) -> ImportFix {
    let mut all = ImportFix::default();
    for fix in ops.iter().filter_map(|o| o.imports.as_ref()) {
        for stmt in &fix.add {
            if !all.add.contains(stmt) {
                all.add.push(stmt.clone());
            }
        }
        for name in &fix.remove {
            if !all.remove.contains(name) {
                all.remove.push(name.clone());
            }
        }
    }
    all
}

/// What a staging tool asks of the operation: the agent's shape, and the whole diff
/// (cut to the call's size by [`staged`]).
pub(super) fn staging(call: &Call, reason: Option<String>, apply: Option<Apply>) -> Staging {
    Staging {
        reason,
        agent: call.agent.clone(),
        apply,
        diff: Some(DiffOptions::default()),
        audience: Audience::Agent,
        allow_run: call.allow_run,
    }
}

/// The session remembers what was staged; the diff goes into the structured content,
/// cut to `max_diff_lines`.
pub(super) fn staged(call: &Call, out: &mut StageReport, max_diff_lines: Option<usize>) {
    if let Some(id) = &out.id {
        call.session.remember(id);
    }
    let diff = out.text.diff.take().unwrap_or_default();
    out.diff = Some(capped_diff(diff, max_diff_lines));
}
