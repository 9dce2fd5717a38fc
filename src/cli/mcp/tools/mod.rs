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

use git_astedit::files;
use git_astedit::ops::cancel::Cancel;
use git_astedit::repo::Repo;
use git_astedit::report::CappedDiff;
use git_astedit::report::PreviewRow;
use git_astedit::txn;
use git_astedit::Error;
use serde::Deserialize;
use serde::Serialize;

mod edit;
mod grep;
mod patch;
mod pr;
mod previews;
mod resolve;
mod undo;

pub use edit::ast_edit;
pub use edit::EditInput;
pub use grep::ast_grep;
pub use grep::GrepInput;
pub use patch::apply_patch;
pub use patch::PatchInput;
pub use pr::pr;
pub use pr::PrInput;
pub use previews::previews;
pub use previews::PreviewsInput;
pub use previews::PreviewsOutput;
pub use resolve::ast_apply;
use resolve::non_empty;
pub use resolve::resolve;
pub use resolve::AstApplyInput;
pub use resolve::ResolveAction;
pub use resolve::ResolveInput;
pub use undo::undo;
pub use undo::UndoInput;

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
        language_globs: Default::default(),
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

fn push_notes(text: &mut String, notes: &[String], warnings: &[String]) {
    git_astedit::render::agent::notes::push_notes(text, notes, warnings)
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
