/*!
What both front ends do around every command and tool call, as operations: clear what
a killed run left and finish an interrupted apply, refusing a command that writes while
a run stays unfinished ([`prelude`], the CLI's and the server's alike: [`open`]), and
pick the preview a call without an id means from the ids its session staged
([`target`]). The session itself (the ids) is the server's; their state is always read
from git.
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
        }
    }
    fn exit(&self) -> Exit {
        match self {
            SessionError::IdRequired { pending, .. } if pending.is_empty() => Exit::NothingFound,
            SessionError::IdRequired { .. } => Exit::BadInput,
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
        }
    }
    fn details(&self) -> Option<serde_json::Value> {
        match self {
            SessionError::IdRequired { pending, .. } => serde_json::to_value(pending)
                .ok()
                .map(|p| serde_json::json!({"pending": p})),
        }
    }
}
