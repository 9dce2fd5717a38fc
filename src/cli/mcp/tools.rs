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
use git_astedit::ops::cancel::Cancel;
use git_astedit::ops::stage::EditRequest;
use git_astedit::render;
use git_astedit::repo::Repo;
use git_astedit::report::Action;
use git_astedit::report::CappedDiff;
use git_astedit::report::Diagnostics;
use git_astedit::report::GrepMatch;
use git_astedit::report::GrepReport;
use git_astedit::report::MetaVariables;
use git_astedit::report::PreviewRow;
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

/// Who is calling and where: the work-tree root, the client (`name/version`) and the
/// connection's session.
pub struct Call<'a> {
    pub workdir: &'a Path,
    /// The byte budget of this call's result ([`super::budget`]).
    pub budget: usize,
    pub agent: Option<String>,
    pub session: &'a Session,
    /// Set when the client cancels this request or closes stdin: staging stops
    /// between files and nothing is written after it is seen.
    pub cancel: Cancel,
}

/// The previews one connection staged, oldest first. Only ids live here; their state
/// is always read from git, so other processes and sessions still see one truth.
#[derive(Debug, Default)]
pub struct Session {
    staged: std::sync::Mutex<Vec<String>>,
}

impl Session {
    fn remember(&self, id: &str) {
        if let Ok(mut ids) = self.staged.lock() {
            ids.push(id.to_string());
        }
    }
    fn staged(&self) -> Vec<String> {
        self.staged
            .lock()
            .map(|ids| ids.clone())
            .unwrap_or_default()
    }
}

/// Faults of the server's own rules (the engines classify the rest).
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// A no-id `resolve` in a session that staged no pending preview: another
    /// session's preview is never picked without its id.
    #[error("{}", id_required_message(.staged_here, .pending))]
    IdRequired {
        /// The tool that needs the id (`resolve`, `pr`), for the hint.
        tool: &'static str,
        staged_here: bool,
        pending: Vec<PreviewRow>,
    },
}

fn id_required_message(staged_here: &bool, pending: &[PreviewRow]) -> String {
    let mut m = if *staged_here {
        "no id given, and every preview this session staged is resolved already".to_string()
    } else {
        "no id given, and this session staged no preview".to_string()
    };
    if pending.is_empty() {
        m.push_str("; there is no pending preview either");
        return m;
    }
    m.push_str(&format!(
        "; name one of the {} pending previews with id:",
        pending.len()
    ));
    for r in pending {
        m.push_str(&format!(
            "\n  {}  {}  {}  (agent: {})",
            r.id,
            r.kind,
            r.summary,
            r.agent.as_deref().unwrap_or("none")
        ));
    }
    m
}

impl git_astedit::error::Classify for ToolError {
    fn code(&self) -> &'static str {
        match self {
            ToolError::IdRequired { .. } => "id-required",
        }
    }
    fn exit(&self) -> git_astedit::error::Exit {
        match self {
            ToolError::IdRequired { pending, .. } if pending.is_empty() => {
                git_astedit::error::Exit::NothingFound
            }
            ToolError::IdRequired { .. } => git_astedit::error::Exit::BadInput,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            ToolError::IdRequired { pending, tool, .. } => Some(match pending.first() {
                Some(r) if *tool != "resolve" => {
                    format!("call {tool} again with the id, e.g. {{\"id\": \"{}\"}}", r.id)
                }
                Some(r) => format!(
                    "call resolve again with the id, e.g. {{\"action\": \"apply\", \"id\": \"{}\", \"reason\": …}}",
                    r.id
                ),
                None => "stage a preview with ast_edit or apply_patch first".into(),
            }),
        }
    }
    fn details(&self) -> Option<serde_json::Value> {
        match self {
            ToolError::IdRequired { pending, .. } => serde_json::to_value(pending)
                .ok()
                .map(|p| serde_json::json!({"pending": p})),
        }
    }
}

/// The preview a no-id `resolve` means: the newest one this session staged that is
/// pending and was never undone.
fn session_target(repo: &Repo, call: &Call) -> Result<String, Error> {
    use git_astedit::txn::resolve::State;
    let ids = call.session.staged();
    let mut undone = Vec::new();
    for id in ids.iter().rev() {
        match txn::resolve::resolve(repo, Some(id), txn::resolve::Want::Pending) {
            Ok(t) if t.state == (State::Pending { undone: false }) => return Ok(t.id),
            Ok(t) => undone.push(t.id),
            // Applied, discarded or gone since: not a candidate.
            Err(_) => {}
        }
    }
    if !undone.is_empty() {
        return Err(txn::Error::OnlyUndone(undone).into());
    }
    let pending = txn::list(repo)?.iter().map(PreviewRow::of).collect();
    Err(ToolError::IdRequired {
        tool: "resolve",
        staged_here: !ids.is_empty(),
        pending,
    }
    .into())
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
        let mut notes = txn::clear_stale(&repo).unwrap_or_else(|e| {
            vec![format!(
                "could not clear what a killed git astedit left: {e} (`git astedit recover --status` shows it)"
            )]
        });
        notes.extend(txn::recover(&repo)?.map(|r| r.message));
        Ok((repo, notes))
    }
}

/// Accepts a list of strings, or one string that lists them separated by `;` (the seed
/// tools' `path: "a; b"`).
fn string_or_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(s) => s
            .split(';')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect(),
        OneOrMany::Many(v) => v,
    })
}

/// A count argument: an integer, or the same written as a string (some clients send
/// every argument as text), or null for the default. Declared `integer` in the schema
/// (`count_schema`), since clients convert only what is declared so.
fn count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Count {
        Number(usize),
        Text(String),
    }
    match Option::<Count>::deserialize(d)? {
        None => Ok(None),
        Some(Count::Number(n)) => Ok(Some(n)),
        Some(Count::Text(t)) if t.trim().is_empty() => Ok(None),
        Some(Count::Text(t)) => t.trim().parse().map(Some).map_err(|_| {
            serde::de::Error::custom(format!("expected a non-negative whole number, got \"{t}\""))
        }),
    }
}

/// The pathspecs a tool searches: `paths` as given, except that a path with `**` means
/// what agents mean by it (git's `:(glob)` magic, where `**` spans directories; a plain
/// git pathspec would match nothing), and every `glob` is a `:(glob)` pathspec.
fn pathspecs(paths: &[String], globs: &[String]) -> Vec<String> {
    let glob = |p: &str| format!(":(glob){}", p.trim_start_matches("./"));
    paths
        .iter()
        .map(|p| {
            if p.contains("**") && !p.starts_with(':') {
                glob(p)
            } else {
                p.clone()
            }
        })
        .chain(globs.iter().map(|g| {
            if g.starts_with(':') {
                g.clone()
            } else {
                glob(g)
            }
        }))
        .collect()
}

/// The files `paths` name, and a warning per path that names none. Only when every
/// path names nothing is it an error: a search of nothing must not look clean, but a
/// model's one stale path among good ones should not cost it the whole call.
fn collect(
    repo: &Repo,
    lang: Option<&str>,
    paths: &[String],
) -> Result<
    (
        files::FileSet,
        Option<ast_grep_language::SupportLang>,
        Vec<String>,
    ),
    Error,
> {
    let lang = lang.map(files::parse_language).transpose()?;
    let mut opts = files::Options {
        pathspecs: paths.to_vec(),
        lang,
        max_file_size: files::DEFAULT_MAX_FILE_SIZE,
    };
    match files::collect(repo, &opts) {
        Ok(set) => Ok((set, lang, Vec::new())),
        Err(files::Error::PathspecNoMatch(unmatched)) if unmatched.len() < opts.pathspecs.len() => {
            opts.pathspecs.retain(|p| !unmatched.contains(p));
            let set = files::collect(repo, &opts)?;
            let warnings = unmatched
                .iter()
                .map(|p| format!("path '{p}' matches no file; searched the other paths"))
                .collect();
            Ok((set, lang, warnings))
        }
        Err(e) => Err(e.into()),
    }
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
    #[serde(alias = "pat")]
    pub pattern: String,
    /// Parse every file as this language (e.g. `rust`, `ts`, `python`) instead of
    /// choosing by file extension.
    #[serde(default)]
    pub lang: Option<String>,
    /// Git pathspecs relative to the repository root, e.g. `src/`, `*.ts` or
    /// `src/**/*.ts` (`**` spans directories) (default: the whole work tree, tracked
    /// and untracked-not-ignored files).
    #[serde(default, alias = "path", deserialize_with = "string_or_list")]
    pub paths: Vec<String>,
    /// Glob patterns (`**` spans directories), added to `paths`.
    #[serde(default, deserialize_with = "string_or_list")]
    pub glob: Vec<String>,
    /// Return at most this many matches (default 200, at most 5000). The result says
    /// when it was capped and how many matches there are in all.
    #[serde(default, alias = "limit", deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = DEFAULT_MAX_RESULTS))]
    pub max_results: Option<usize>,
    /// Skip this many matches first (paging: call again with the next offset the
    /// result gives).
    #[serde(default, alias = "skip", deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = 0))]
    pub offset: Option<usize>,
}

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

pub fn ast_grep(call: &Call, input: GrepInput) -> Result<Done, Error> {
    let (repo, notes) = call.open()?;
    let specs = pathspecs(&input.paths, &input.glob);
    let (set, lang, path_warnings) = collect(&repo, input.lang.as_deref(), &specs)?;
    let outcome = git_astedit::grep::grep_cancellable(
        &repo,
        &set,
        &input.pattern,
        lang,
        files::DEFAULT_MAX_FILE_SIZE,
        &call.cancel,
    )?;
    // A partial search must not pass for a whole one.
    call.cancel.check()?;
    let cap = input
        .max_results
        .unwrap_or(DEFAULT_MAX_RESULTS)
        .clamp(1, MAX_MAX_RESULTS);
    let offset = input.offset.unwrap_or(0);
    // Matches are taken while they fit the result's byte budget (a tenth kept for the
    // rest of the result); the first always is.
    let room = call.budget - call.budget / 10;
    let mut used = 0;
    let mut budget_cut = false;
    let matches: Vec<GrepMatch> = outcome
        .files
        .iter()
        .flat_map(|f| {
            f.matches.iter().map(|m| {
                let mut vars = MetaVariables::of(&m.captures);
                // Captures are cut as match text is: one `$$$B` can hold a whole class.
                for span in vars
                    .single
                    .values_mut()
                    .chain(vars.multi.values_mut().flatten())
                {
                    span.text = cut(&span.text, MAX_MATCH_TEXT);
                }
                GrepMatch {
                    path: f.path.clone(),
                    lang: f.lang.to_string(),
                    span: Span::of(m, cut(&m.text, MAX_MATCH_TEXT)),
                    meta_variables: vars,
                    context_before: None,
                    context_after: None,
                }
            })
        })
        .skip(offset)
        .take(cap)
        .take_while(|m| {
            // The match as JSON, and its line of text.
            let size = serde_json::to_string(m).map_or(0, |s| s.len())
                + m.path.len()
                + render::first_line(&m.span.text).len()
                + 16;
            used += size;
            let fits = used <= room || used == size;
            budget_cut |= !fits;
            fits
        })
        .collect();
    let mut out = GrepReport {
        schema_version: Version,
        pattern: input.pattern.clone(),
        shown: matches.len(),
        capped: offset + matches.len() < outcome.total,
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
    out.diagnostics.warnings.extend(path_warnings);
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
        if offset > 0 || out.capped {
            text.push_str(&format!(
                "; showing {} from offset {offset}",
                out.matches.len()
            ));
        }
        if out.capped {
            text.push_str(&format!(
                "; more: call again with offset {} ({}or narrow paths)",
                offset + out.matches.len(),
                if budget_cut {
                    format!(
                        "the {}-byte result budget was reached; or raise max_bytes, ",
                        call.budget
                    )
                } else {
                    "or raise max_results, ".to_string()
                }
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
fn nothing_staged_text(why: &str, notes: &[String], warnings: &[String]) -> String {
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
fn staged_text(out: &StageReport, notes: &[String]) -> String {
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
                format!("; {}", f.flags.join(", "))
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
    #[serde(default, deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = DEFAULT_MAX_DIFF_LINES))]
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
    git_astedit::ops::refresh::record_patch(&mut meta, &input.patch, "");
    call.cancel.check()?;
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
    let text = match &out.id {
        Some(id) => {
            call.session.remember(id);
            let mut text = git_astedit::ops::patch::report_text(&repo, &res);
            text.push_str(&staged_text(&out, &notes));
            text
        }
        None => {
            let why = if res.report.already_applied() > 0 {
                "the patch changes nothing (it is already applied)"
            } else {
                "the patch changes nothing"
            };
            let mut text = nothing_staged_text(why, &notes, &out.diagnostics.warnings);
            text.push_str(&git_astedit::ops::patch::report_text(&repo, &res));
            text
        }
    };
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
    #[serde(default, deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = DEFAULT_MAX_DIFF_LINES))]
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
            let preview = git_astedit::ops::preview::pending(&repo, input.id.as_deref())?;
            let loaded = LoadedPreview::load(&repo, preview)?;
            let files = loaded.files();
            let shown: Vec<ShownFile> = loaded.shown_files();
            let diff = capped_diff(render_diffs(&files, false, 0), input.max_diff_lines);
            let r = PreviewRow::of(&loaded.preview);
            let mut text = format!("preview {}  {}  {}\n{}\n", r.id, r.time, r.kind, r.summary);
            if let Some(reason) = &r.reason {
                text.push_str(&format!("reason: {reason}\n"));
            }
            for f in &shown {
                text.push_str(&format!(
                    "  {} (+{} -{})\n",
                    f.path, f.added_lines, f.removed_lines
                ));
            }
            text.push_str(&format!(
                "The diff ({} lines{}) is in the structured content's `diff`.\n",
                diff.diff_lines,
                if diff.diff_truncated { ", cut" } else { "" }
            ));
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
    /// Drop the preview; nothing is written. (`reject` is accepted too.)
    #[serde(alias = "reject")]
    Discard,
}

/// The seed tools' `extra` object of `resolve`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ResolveExtra {
    /// The preview id (the same as `id`).
    #[serde(default, alias = "previewId")]
    pub preview_id: Option<String>,
}

/// Input of `resolve`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveInput {
    /// `apply` or `discard`.
    pub action: ResolveAction,
    /// Why: recorded in the journal with the agent's name.
    pub reason: String,
    /// A preview id or unique prefix (default: the newest preview this session
    /// staged; when it staged none, the error lists the pending previews to name).
    #[serde(default)]
    pub id: Option<String>,
    /// With `apply`: also make a commit on HEAD holding exactly the preview's changes,
    /// with `Astedit-*` trailers (as `git astedit apply --commit`). Other staged or
    /// unstaged changes stay out of the commit.
    #[serde(default)]
    pub commit: bool,
    /// With `commit`: the commit message's subject (default: `astedit KIND: SUMMARY`).
    #[serde(default)]
    pub message: Option<String>,
    /// With `apply`: when the preview is stale, refresh it on the current files and
    /// apply the refreshed preview only if it makes the same number of changes in the
    /// same files (as `git astedit apply --refresh`); otherwise the refreshed preview
    /// is staged for review and the error names it (`details.successor`).
    #[serde(default)]
    pub refresh: bool,
    /// With `apply`: apply only the part of the preview under these git pathspecs
    /// (relative to the repository root); the rest stays pending as a new preview,
    /// named in `split.remainder` (as `git astedit apply ID -- PATHSPEC…`).
    #[serde(default, deserialize_with = "string_or_list")]
    pub paths: Vec<String>,
    /// Accepted for callers of older tools: `extra.previewId` is the same as `id`.
    #[serde(default)]
    pub extra: Option<ResolveExtra>,
}

/// Input of the legacy `ast_apply` tool (the same as `resolve`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstApplyInput {
    /// `apply` or `discard` (`reject`).
    pub action: ResolveAction,
    /// The preview id (default: the newest preview this session staged).
    #[serde(default, alias = "previewId")]
    pub id: Option<String>,
    /// Why; journalled.
    #[serde(default)]
    pub reason: Option<String>,
}

pub fn ast_apply(call: &Call, input: AstApplyInput) -> Result<Done, Error> {
    resolve(
        call,
        ResolveInput {
            action: input.action,
            reason: non_empty(input.reason).unwrap_or_else(|| "ast_apply".into()),
            id: input.id,
            extra: None,
            commit: false,
            message: None,
            refresh: false,
            paths: Vec::new(),
        },
    )
}

/// The report of an apply or undo, as the CLI's `--json` gives it.
fn resolved(
    report: &txn::ApplyReport,
    action: Action,
    index: bool,
    reason: Option<String>,
) -> ResolveReport {
    ResolveReport::of(report, action, None, index, reason)
}

fn non_empty(reason: Option<String>) -> Option<String> {
    reason.filter(|r| !r.trim().is_empty())
}

pub fn resolve(call: &Call, input: ResolveInput) -> Result<Done, Error> {
    let Some(reason) = non_empty(Some(input.reason.clone())) else {
        return Err(UsageError(
            "reason is empty: say why the preview is applied or discarded".into(),
        )
        .into());
    };
    if input.commit && matches!(input.action, ResolveAction::Discard) {
        return Err(UsageError("commit goes with action \"apply\", not \"discard\"".into()).into());
    }
    if input.message.is_some() && !input.commit {
        return Err(
            UsageError("message is the commit's subject: set commit: true too".into()).into(),
        );
    }
    if (input.refresh || !input.paths.is_empty()) && matches!(input.action, ResolveAction::Discard)
    {
        return Err(UsageError("refresh and paths go with action \"apply\"".into()).into());
    }
    if input.refresh && !input.paths.is_empty() {
        return Err(UsageError("refresh and paths cannot be combined".into()).into());
    }
    let (repo, notes) = call.open()?;
    let named = input
        .id
        .clone()
        .or_else(|| input.extra.as_ref().and_then(|e| e.preview_id.clone()));
    let id = match named {
        Some(id) => id,
        None => session_target(&repo, call)?,
    };
    call.cancel.check()?;
    let (out, mut text) = match input.action {
        ResolveAction::Apply => {
            use git_astedit::ops::apply::ApplyScope;
            let request = git_astedit::ops::apply::ApplyRequest {
                id: Some(id),
                scope: if input.refresh {
                    ApplyScope::Refreshed
                } else if !input.paths.is_empty() {
                    ApplyScope::Part(pathspecs(&input.paths, &[]))
                } else {
                    ApplyScope::Whole
                },
                // The CLI's `apply --commit`: the commit goes through the index.
                options: txn::ApplyOptions {
                    reason: Some(reason.clone()),
                    agent: call.agent.clone(),
                    index: input.commit,
                    commit: input.commit.then(|| non_empty(input.message.clone())),
                },
            };
            let applied = git_astedit::ops::apply::apply(&repo, &request)?;
            let refreshed = applied
                .refreshed
                .as_ref()
                .map(|r| git_astedit::report::RefreshReport::of(r, str::to_string));
            let report = applied.report;
            let mut text = String::new();
            if let Some(r) = &refreshed {
                text.push_str(&format!(
                    "Preview {} was stale: refreshed as {} with the same counts.\n",
                    r.id,
                    r.successor.as_deref().unwrap_or("?")
                ));
            }
            if let Some(s) = &report.split {
                text.push_str(&format!(
                    "Split {}: the selected part is {}, the remainder ({}) stays pending as {}.\n",
                    s.parent,
                    s.selected,
                    render::plural(s.remainder_files.len(), "file"),
                    s.remainder
                ));
            }
            text.push_str(&format!(
                "Applied {} ({} written{}). Undo it with undo {{\"id\": \"{}\"}}.\n",
                report.id,
                render::plural(report.written.len(), "file"),
                if report.deleted.is_empty() {
                    String::new()
                } else {
                    format!(", {} deleted", report.deleted.len())
                },
                report.id
            ));
            if let Some(c) = &report.commit {
                text.push_str(&format!(
                    "Committed {c} on HEAD with exactly the preview's changes (Astedit-* \
                     trailers). undo restores the work tree but leaves the commit in history.\n"
                ));
            }
            let mut out = report;
            out.refreshed = refreshed.map(Box::new);
            (out, text)
        }
        ResolveAction::Discard => {
            let discarded = git_astedit::ops::apply::discard(
                &repo,
                &git_astedit::ops::apply::DiscardRequest {
                    id: Some(id),
                    reason: Some(reason),
                    agent: call.agent.clone(),
                },
            )?;
            let text = format!("Discarded {}: {}\n", discarded.report.id, discarded.summary);
            (discarded.report, text)
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
    let request = git_astedit::ops::apply::UndoRequest {
        id: input.id,
        options: txn::UndoOptions {
            reason,
            agent: call.agent.clone(),
            index: false,
        },
    };
    call.cancel.check()?;
    let report = git_astedit::ops::apply::undo(&repo, &request)?;
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
    text.push_str(&format!(
        "Preview {id} is pending again (state: pending, undone). A resolve without an id never \
         picks it: apply it again only by naming it, resolve {{\"action\": \"apply\", \"id\": \"{id}\", \"reason\": …}}, \
         or drop it with action \"discard\".\n",
        id = report.id
    ));
    push_notes(&mut text, &notes, &[]);
    Done::new(text, &report)
}

// ---------------------------------------------------------------- pr

/// Input of `pr`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrInput {
    /// The transaction's id or unique prefix, applied or pending (default: the newest
    /// preview this session staged that is applied or pending; when there is none,
    /// the error lists the pending previews to name).
    #[serde(default, alias = "previewId")]
    pub id: Option<String>,
    /// The remote to push the branch `astedit/<id>` to (default `origin`).
    #[serde(default)]
    pub remote: Option<String>,
    /// The branch the pull request merges into (default: the repository's default
    /// branch).
    #[serde(default)]
    pub base: Option<String>,
    /// The pull request's title (default: the preview's reason, else its summary).
    #[serde(default)]
    pub title: Option<String>,
    /// Open it ready for review instead of as a draft (default: a draft).
    #[serde(default)]
    pub ready: bool,
}

/// The transaction a no-id `pr` means: the newest one this session staged that is
/// still applied or pending. Another session's work is never published unnamed.
fn session_pr_target(repo: &Repo, call: &Call) -> Result<String, Error> {
    let ids = call.session.staged();
    let mut undone = Vec::new();
    for id in ids.iter().rev() {
        if let Ok(t) = txn::resolve::resolve(repo, Some(id), txn::resolve::Want::AppliedOrPending) {
            // Undone since (by anyone): publishing it unnamed would publish what its
            // author took back, so it must be named, as for the CLI.
            if t.state == (txn::resolve::State::Pending { undone: true }) {
                undone.push(t.id);
                continue;
            }
            return Ok(t.id);
        }
    }
    if !undone.is_empty() {
        return Err(txn::Error::OnlyUndone(undone).into());
    }
    let pending = txn::list(repo)?.iter().map(PreviewRow::of).collect();
    Err(ToolError::IdRequired {
        tool: "pr",
        staged_here: !ids.is_empty(),
        pending,
    }
    .into())
}

pub fn pr(call: &Call, input: PrInput) -> Result<Done, Error> {
    let (repo, notes) = call.open()?;
    let id = match input.id {
        Some(id) => id,
        None => session_pr_target(&repo, call)?,
    };
    call.cancel.check()?;
    // The CLI's `pr`, in-process: the same branch, commit, push and `gh` calls.
    let report = git_astedit::ops::pr::open(
        &repo,
        &git_astedit::ops::pr::PrRequest {
            id: Some(id),
            remote: non_empty(input.remote).unwrap_or_else(|| "origin".into()),
            base: non_empty(input.base),
            title: non_empty(input.title),
            ready: input.ready,
            agent: call.agent.clone(),
        },
    )?;
    let (url, branch, id) = (&report.url, &report.branch, &report.id);
    let mut text = if report.created {
        format!(
            "Opened {}pull request {url} for {id} (branch {branch} at {}).\n",
            if report.draft { "draft " } else { "" },
            report.commit
        )
    } else {
        format!("A pull request for {id} already exists: {url} (branch {branch}, pushed again).\n")
    };
    push_notes(&mut text, &notes, &[]);
    Done::new(text, &report)
}
