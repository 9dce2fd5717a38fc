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

use git_astedit::ops;
use git_astedit::ops::cancel::Cancel;
use git_astedit::ops::input::Caller;
use git_astedit::ops::input::Input;
use git_astedit::repo::Repo;
use git_astedit::report::CappedDiff;
use git_astedit::Error;
use serde::Deserialize;
use serde::Serialize;

mod edit;
mod grep;
mod lane;
mod lines;
mod log;
mod patch;
mod pr;
mod previews;
mod replace;
mod resolve;
mod review;
mod run;
mod steps;
mod undo;

pub use edit::ast_edit;
pub use edit::EditInput;
pub use grep::ast_grep;
pub use grep::GrepInput;
pub use lane::lane;
pub use lane::LaneInput;
pub use lane::LaneOutput;
pub use lines::edit_lines;
pub use lines::read;
pub use lines::EditLinesInput;
pub use lines::ReadInput;
pub use log::log;
pub use log::LogInput;
pub use patch::apply_patch;
pub use patch::PatchInput;
pub use pr::pr;
pub use pr::PrInput;
pub use previews::previews;
pub use previews::PreviewsInput;
pub use previews::PreviewsOutput;
pub use replace::replace;
pub use replace::write;
pub use replace::ReplaceInput;
pub use replace::WriteInput;
pub use resolve::ast_apply;
use resolve::non_empty;
pub use resolve::resolve;
pub use resolve::AstApplyInput;
pub use resolve::ResolveAction;
pub use resolve::ResolveInput;
pub use review::review;
pub use review::ReviewInput;
pub use review::ReviewToolOutput;
pub use run::run;
pub use run::RunInput;
pub use steps::ast_steps;
pub use steps::StepsInput;
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
    /// The server was started with `--allow-run`: this call's requests may run
    /// programs (`ops::trust` refuses them otherwise).
    pub allow_run: bool,
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

/// The preview a no-id `resolve` means: the newest one this session staged that is
/// pending and was never undone.
fn session_target(repo: &Repo, call: &Call) -> Result<String, Error> {
    ops::session::target(repo, &call.session.staged(), ops::session::Tool::Resolve)
}

/// A tool's success: text for the model, the same facts as structured content.
pub struct Done {
    pub text: String,
    pub value: serde_json::Value,
}

impl Done {
    fn new(text: String, value: &impl Serialize) -> Result<Done, Error> {
        let value = serde_json::to_value(value).map_err(|e| EncodeError(e.to_string()))?;
        Ok(Done { text, value })
    }
}

/// A tool result that cannot be encoded as JSON (a bug of ours).
#[derive(Debug, thiserror::Error)]
#[error("stored astedit data is damaged: cannot encode a tool result: {0}")]
struct EncodeError(String);

impl git_astedit::error::Classify for EncodeError {
    fn code(&self) -> &'static str {
        "corrupt"
    }
    fn exit(&self) -> git_astedit::error::Exit {
        git_astedit::error::Exit::Internal
    }
}

impl Call<'_> {
    /// Opens the repository at the work-tree root and finishes any interrupted apply,
    /// for a tool that writes (the work tree, previews, the journal): refused while
    /// that run stays unfinished, as the CLI refuses its commands that write.
    fn open(&self) -> Result<(Repo, Vec<String>), Error> {
        ops::session::open(self.workdir, true)
    }

    /// [`Call::open`] for a tool that only reads: an unfinished run is a note.
    fn open_read_only(&self) -> Result<(Repo, Vec<String>), Error> {
        ops::session::open(self.workdir, false)
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

/// The files a tool reads: `paths` and `glob` as [`pathspecs`], in `lang`, with the
/// leniency an agent gets (a stale path among good ones is a warning), through the one
/// input every front end builds.
fn input(lang: Option<&str>, paths: &[String], globs: &[String]) -> Input {
    Input {
        pathspecs: pathspecs(paths, globs),
        lang: lang.map(str::to_string),
        caller: Caller::Agent,
        ..Input::default()
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
