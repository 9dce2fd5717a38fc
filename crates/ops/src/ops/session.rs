/*!
What both front ends do around every command and tool call, as operations: clear what
a killed run left and finish an interrupted apply, refusing a command that writes while
a run stays unfinished ([`prelude`], the CLI's and the server's alike: [`open`]), and
pick the preview a call without an id means from the ids its session staged
([`target`]). The session itself (the ids) is the server's; their state is always read
from git.

An agent's session has one spelling, the journal's `agent`: `HARNESS/session:ID` for
what a harness's hooks journalled (`claude-code/session:3f2a…`, `codex/session:…`), and
the MCP client's `NAME/VERSION` for what a server did. The lock error names a turn's
session the same way. Wherever a session is named (`log --session`, `undo --session`,
the MCP `log` tool), a unique prefix of that spelling or of the ID after `session:`
names it too ([`resolve_session`]).
*/

use std::path::Path;

use crate::error::Classify;
use crate::error::Exit;
use crate::repo::Repo;
use crate::report::PreviewRow;
use crate::txn;
use crate::txn::resolve::State;
use crate::txn::resolve::Want;
use crate::Error;

/// Opens the repository at `workdir` and runs the [`prelude`] a tool that `writes`
/// (the work tree, previews, the journal) needs, as every command does first. The
/// notes say what was cleared or finished.
pub fn open(workdir: &Path, writes: bool) -> Result<(Repo, Vec<String>), Error> {
    let repo = Repo::discover_from(workdir)?;
    let prelude = prelude(&repo);
    let notes = prelude.warnings.clone();
    prelude.check(writes)?;
    Ok((repo, notes))
}

/// What the recovery before a command did, and whether it left a run unfinished.
#[derive(Debug)]
pub struct Prelude {
    /// Lines for the user, in order: what was cleared, what recovery did.
    pub warnings: Vec<String>,
    /// Recovery failed (`Err`), or left this run unfinished (`Some((op, id))`).
    outcome: Result<Option<(crate::txn::TxnOp, String)>, Error>,
}

impl Prelude {
    /// The error the command gets: recovery's own failure, or (`refuse`: a command
    /// that writes) the run recovery could not finish.
    pub fn check(self, refuse: bool) -> Result<(), Error> {
        match self.outcome? {
            Some((op, id)) if refuse => Err(crate::txn::Error::RecoveryPending {
                op: op.as_str(),
                id,
            }
            .into()),
            _ => Ok(()),
        }
    }
}

/// What every command runs first: clears what killed runs of ours left behind (a
/// failure there is only a warning: the command may not need it), then finishes or
/// rolls back an interrupted apply or undo.
pub fn prelude(repo: &Repo) -> Prelude {
    let mut warnings = match crate::txn::clear_stale(repo) {
        Ok(notes) => notes,
        Err(e) => vec![format!(
            "could not clear what a killed git astedit left: {e} (`git astedit recover --status` shows it)"
        )],
    };
    let outcome = match crate::txn::recover(repo) {
        Ok(Some(r)) => {
            warnings.push(r.message.clone());
            Ok(r.pending().then(|| (r.op, r.id.clone())))
        }
        Ok(None) => Ok(None),
        Err(e) => Err(e.into()),
    };
    Prelude { warnings, outcome }
}

/// Makes every write of this process wait up to `bound` for the repository lock
/// another writer holds, instead of failing at once (agents' calls overlap; a person's
/// command does not wait).
pub fn wait_for_lock(bound: std::time::Duration) {
    crate::txn::set_lock_wait(bound);
}

/// Makes every preview and campaign state commit this process stages signed by git
/// (`--sign`), whatever `astedit.signPreviews` says.
pub fn sign_previews() {
    crate::txn::sign::sign_previews();
}

/// The tool a session target is picked for: what it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// `resolve`: a pending preview never undone.
    Resolve,
    /// `pr`: an applied transaction or a pending preview, never one undone.
    Pr,
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::Resolve => "resolve",
            Tool::Pr => "pr",
        }
    }
}

/// The transaction a call without an id means: the newest of `staged` (a session's
/// ids, oldest first) that `tool` accepts. Another session's work is never picked
/// unnamed: with none, the error lists the pending previews to name.
pub fn target(repo: &Repo, staged: &[String], tool: Tool) -> Result<String, Error> {
    let mut undone = Vec::new();
    for id in staged.iter().rev() {
        match tool {
            Tool::Resolve => match txn::resolve::resolve(repo, Some(id), Want::Pending) {
                Ok(t) if t.state == (State::Pending { undone: false }) => return Ok(t.id),
                Ok(t) => undone.push(t.id),
                // Applied, discarded or gone since: not a candidate.
                Err(_) => {}
            },
            Tool::Pr => {
                if let Ok(t) = txn::resolve::resolve(repo, Some(id), Want::AppliedOrPending) {
                    // Undone since (by anyone): publishing it unnamed would publish
                    // what its author took back, so it must be named, as for the CLI.
                    if t.state == (State::Pending { undone: true }) {
                        undone.push(t.id);
                        continue;
                    }
                    return Ok(t.id);
                }
            }
        }
    }
    if !undone.is_empty() {
        return Err(txn::Error::OnlyUndone(undone).into());
    }
    let pending = txn::list(repo)?
        .iter()
        .map(|p| {
            let origin = crate::ops::trust::origin(repo, p);
            PreviewRow::of(p, origin, crate::ops::trust::runs(&p.meta))
        })
        .collect();
    Err(SessionError::IdRequired {
        tool: tool.name(),
        staged_here: !staged.is_empty(),
        pending,
    }
    .into())
}

/// The session `given` names, as the journal spells it (see the module docs): the
/// spelling itself, else the one session whose spelling, or whose id after
/// `session:`, starts with `given`.
pub fn resolve_session(repo: &Repo, given: &str) -> Result<String, Error> {
    let mut known: Vec<String> = Vec::new();
    for e in txn::log(repo)? {
        if let Some(a) = e.agent {
            if !known.contains(&a) {
                known.push(a);
            }
        }
    }
    Ok(match_session(&known, given)?)
}

/// [`resolve_session`] among `known` (newest first).
fn match_session(known: &[String], given: &str) -> Result<String, SessionError> {
    if given.is_empty() {
        return Err(SessionError::UnknownSession {
            given: given.to_string(),
            known: known.to_vec(),
        });
    }
    if known.iter().any(|k| k == given) {
        return Ok(given.to_string());
    }
    let id_of = |k: &str| k.split_once("/session:").map(|(_, id)| id.to_string());
    let matches: Vec<String> = known
        .iter()
        .filter(|k| k.starts_with(given) || id_of(k).is_some_and(|id| id.starts_with(given)))
        .cloned()
        .collect();
    match matches.len() {
        1 => Ok(matches[0].clone()),
        0 => Err(SessionError::UnknownSession {
            given: given.to_string(),
            known: known.to_vec(),
        }),
        _ => Err(SessionError::AmbiguousSession {
            given: given.to_string(),
            matches,
        }),
    }
}

/// Faults of the server's own rules (the engines classify the rest).
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// A no-id `resolve` (or `pr`) in a session that staged no pending preview:
    /// another session's preview is never picked without its id.
    #[error("{}", id_required_message(.staged_here, .pending))]
    IdRequired {
        /// The tool that needs the id (`resolve`, `pr`), for the hint.
        tool: &'static str,
        staged_here: bool,
        pending: Vec<PreviewRow>,
    },
    /// A session named that the journal does not know.
    #[error("no session in the journal is named `{}`{}", crate::text::escape_line(.given), sessions_line(.known))]
    UnknownSession { given: String, known: Vec<String> },
    /// A session prefix that names more than one.
    #[error("`{}` names {} sessions: {}", crate::text::escape_line(.given), .matches.len(), .matches.iter().map(|m| crate::text::escape_line(m)).collect::<Vec<_>>().join(", "))]
    AmbiguousSession { given: String, matches: Vec<String> },
}

/// The sessions the journal knows, for an error (the newest ten).
fn sessions_line(known: &[String]) -> String {
    if known.is_empty() {
        return "; it names none".into();
    }
    let shown: Vec<String> = known
        .iter()
        .take(10)
        .map(|k| crate::text::escape_line(k).into_owned())
        .collect();
    format!(
        "; it knows {}{}",
        shown.join(", "),
        if known.len() > 10 { ", …" } else { "" }
    )
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

impl Classify for SessionError {
    fn code(&self) -> &'static str {
        match self {
            SessionError::IdRequired { .. } => "id-required",
            SessionError::UnknownSession { .. } => "unknown-session",
            SessionError::AmbiguousSession { .. } => "ambiguous-session",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            SessionError::IdRequired { pending, .. } if pending.is_empty() => Exit::NothingFound,
            SessionError::IdRequired { .. } => Exit::BadInput,
            SessionError::UnknownSession { .. } | SessionError::AmbiguousSession { .. } => {
                Exit::BadInput
            }
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            SessionError::IdRequired { pending, tool, .. } => Some(match pending.first() {
                Some(r) if *tool != "resolve" => {
                    format!("call {tool} again with the id, e.g. {{\"id\": \"{}\"}}", r.id)
                }
                Some(r) => format!(
                    "call resolve again with the id, e.g. {{\"action\": \"apply\", \"id\": \"{}\", \"reason\": …}}",
                    r.id
                ),
                None => "stage a preview with ast_edit or apply_patch first".into(),
            }),
            SessionError::UnknownSession { .. } => {
                Some("`git astedit log` names each event's session after `agent:`".into())
            }
            SessionError::AmbiguousSession { .. } => {
                Some("give more of the session's id, or its whole spelling".into())
            }
        }
    }
    fn details(&self) -> Option<serde_json::Value> {
        match self {
            SessionError::IdRequired { pending, .. } => serde_json::to_value(pending)
                .ok()
                .map(|p| serde_json::json!({"pending": p})),
            SessionError::UnknownSession { known, .. } => {
                Some(serde_json::json!({"sessions": known}))
            }
            SessionError::AmbiguousSession { matches, .. } => {
                Some(serde_json::json!({"sessions": matches}))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_named_whole_or_by_a_unique_prefix() {
        let known: Vec<String> = [
            "claude-code/session:3f2a-1",
            "claude-code/session:3f9b-2",
            "codex/session:77aa",
            "claude-code/2.1.0",
        ]
        .map(String::from)
        .to_vec();
        let m = |g: &str| match_session(&known, g);
        assert_eq!(m("codex/session:77aa").unwrap(), "codex/session:77aa");
        assert_eq!(m("77").unwrap(), "codex/session:77aa");
        assert_eq!(m("3f2").unwrap(), "claude-code/session:3f2a-1");
        assert_eq!(
            m("claude-code/session:3f9").unwrap(),
            "claude-code/session:3f9b-2"
        );
        assert_eq!(m("claude-code/2").unwrap(), "claude-code/2.1.0");
        assert!(
            matches!(m("3f"), Err(SessionError::AmbiguousSession { matches, .. }) if matches.len() == 2)
        );
        assert!(matches!(
            m("claude-code"),
            Err(SessionError::AmbiguousSession { .. })
        ));
        assert!(matches!(m("zz"), Err(SessionError::UnknownSession { .. })));
        assert!(matches!(m(""), Err(SessionError::UnknownSession { .. })));
    }
}
