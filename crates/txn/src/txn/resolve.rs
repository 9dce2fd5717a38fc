/*!
Which preview an id (or no id) means: one rule set for every command and tool.

A transaction's state comes from two places: a pending preview has its ref
`refs/astedit/<id>`; everything else is in the journal, whose newest decisive event
says what became of it (`applied`, `undone`, `discarded`, `expired`, a completed
`recovered`, `split` by a partial apply, `refreshed` by `refresh`).

The rules:

1. **An id** is a unique prefix (hex, case-insensitive) of a preview id or commit,
   looked up among pending previews and every id the journal knows. Two or more
   distinct ids match: ambiguous (the error lists them). None: unknown. The one found
   must be in a state the operation accepts, else the error says which state it is in
   (`already-applied`, `preview-gone`, `not-applied`).
2. **No id, for a pending preview** (`apply`, `discard`, `show`, `resolve`): the newest
   pending preview that was never applied. A preview that was applied and then
   undone is pending again, but it is never picked without its id: that would
   re-apply a change someone took back (issue 11). When only such previews are
   pending, the error names them.
3. **No id, for an applied transaction** (`undo`): the newest applied one not undone.
4. **No id, for either** (`pr`): rule 3, else rule 2.
5. **No id is of this work tree**: rules 2 to 4 look only at the transactions whose
   newest staging or decisive event was made in the work tree the command runs in (the
   journal's `worktree`: the main tree, or a lane), so that an `undo` on the main tree
   never takes back a lane's edit, nor an `apply` there a preview a lane's agent
   staged. With an id, any work tree's.
*/

use std::collections::BTreeMap;

use gix::ObjectId;

use super::journal;
use super::store;
use super::Error;
use super::Preview;
use crate::repo::Repo;

/// What became of a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Its ref exists: it can be applied. `undone`: it was applied and undone since.
    Pending {
        undone: bool,
    },
    Applied,
    Discarded,
    Expired,
    /// Replaced by a refreshed preview (`Target::successors` names it).
    Superseded,
    /// Cut in two by a partial apply (`Target::successors` names the parts).
    Split,
}

impl State {
    pub fn name(self) -> &'static str {
        match self {
            State::Pending { .. } => "pending",
            State::Applied => "applied",
            State::Discarded => "discarded",
            State::Expired => "expired",
            State::Superseded => "superseded",
            State::Split => "split",
        }
    }
}

/// What the operation needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// A pending preview (apply, discard, show).
    Pending,
    /// An applied transaction (undo).
    Applied,
    /// An applied transaction, else a pending preview (pr).
    AppliedOrPending,
}

/// A resolved transaction.
#[derive(Debug, Clone)]
pub struct Target {
    pub id: String,
    /// The preview commit P.
    pub commit: ObjectId,
    pub state: State,
    /// The stored preview, when it is pending (read while listing anyway).
    pub preview: Option<Preview>,
    /// The previews that replaced it (a split: the selected part, then the remainder).
    pub successors: Vec<String>,
    /// The work tree of its newest staging or decisive event (`None`: the main tree's).
    pub worktree: Option<String>,
}

/// The decisive meaning of one journal event, if it changes the state.
fn decisive(e: &journal::Event) -> Option<State> {
    match (
        e.event.as_str(),
        e.op.map(|o| o.as_str()),
        e.action.map(|a| a.as_str()),
    ) {
        ("applied", ..) | ("recovered", Some("apply"), Some("completed")) => Some(State::Applied),
        ("undone", ..) | ("recovered", Some("undo"), Some("completed")) => {
            Some(State::Pending { undone: true })
        }
        ("discarded", ..) => Some(State::Discarded),
        ("expired", ..) => Some(State::Expired),
        ("refreshed", ..) | ("superseded", ..) => Some(State::Superseded),
        ("split", ..) => Some(State::Split),
        _ => None,
    }
}

/// Every known transaction: id → (commit, state, preview if pending, newest-first rank).
struct Known {
    /// In the order rule 2 and 3 look: pending newest-staged first, then journal order.
    rows: Vec<Target>,
}

fn known(repo: &Repo) -> Result<Known, Error> {
    let pending = store::list(repo)?;
    let entries = journal::read(repo)?;
    // The newest decisive event per id (the journal is newest first).
    let mut last: BTreeMap<&str, (State, ObjectId, Vec<String>)> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    // The work tree of each id's newest staging or decisive event (a split's or
    // refresh's successors: that event's).
    let mut trees: BTreeMap<String, Option<String>> = BTreeMap::new();
    for e in &entries {
        if e.event.event == journal::EventKind::Staged || decisive(&e.event).is_some() {
            for id in std::iter::once(e.event.id.clone()).chain(e.event.successors()) {
                trees.entry(id).or_insert_with(|| e.event.worktree.clone());
            }
        }
    }
    let tree_of = |id: &str| trees.get(id).cloned().flatten();
    for e in &entries {
        let id = e.event.id.as_str();
        if !last.contains_key(id) {
            if let Some(state) = decisive(&e.event) {
                last.insert(id, (state, e.txn_commit, e.event.successors()));
                order.push(id);
            }
        }
    }
    let mut rows = Vec::new();
    for p in pending {
        let undone = matches!(
            last.get(p.id.as_str()),
            Some((State::Pending { undone: true }, ..)) | Some((State::Applied, ..))
        );
        rows.push(Target {
            id: p.id.clone(),
            commit: p.commit,
            worktree: tree_of(&p.id),
            state: State::Pending { undone },
            preview: Some(p),
            successors: Vec::new(),
        });
    }
    for id in order {
        if rows.iter().any(|r| r.id == id) {
            continue;
        }
        let (state, commit, successors) = &last[id];
        let (state, commit) = (*state, *commit);
        // An undone preview whose ref is gone again was applied or dropped since by
        // means the journal lost; it is not pending without its ref.
        let state = match state {
            State::Pending { .. } => State::Discarded,
            s => s,
        };
        rows.push(Target {
            id: id.to_string(),
            commit,
            state,
            preview: None,
            successors: successors.clone(),
            worktree: tree_of(id),
        });
    }
    // Ids the journal knows only from `staged` (the ref deleted by hand or by git):
    // they are gone.
    for e in &entries {
        if !rows.iter().any(|r| r.id == e.event.id) {
            rows.push(Target {
                id: e.event.id.clone(),
                commit: e.txn_commit,
                state: State::Discarded,
                preview: None,
                successors: Vec::new(),
                worktree: e.event.worktree.clone(),
            });
        }
    }
    Ok(Known { rows })
}

/// Parses an id prefix: hex digits, lower-cased.
fn prefix_of(id: &str) -> Result<String, Error> {
    let p = id.trim().to_ascii_lowercase();
    if p.is_empty() || !p.bytes().all(|b| b.is_ascii_hexdigit()) {
        // The user's text as typed: a path's case is part of it.
        return Err(Error::BadId(id.trim().to_string()));
    }
    Ok(p)
}

/// Resolves `id` (or no id) for an operation that wants `want`, by the rules above.
pub fn resolve(repo: &Repo, id: Option<&str>, want: Want) -> Result<Target, Error> {
    let mut known = known(repo)?;
    let Some(id) = id else {
        let here = repo.worktree_name();
        known.rows.retain(|r| r.worktree == here);
        return newest(known, want);
    };
    let prefix = prefix_of(id)?;
    let mut hits: Vec<Target> = known
        .rows
        .into_iter()
        .filter(|r| r.id.starts_with(&prefix) || r.commit.to_string().starts_with(&prefix))
        .collect();
    if hits.len() > 1 {
        return Err(Error::AmbiguousId {
            prefix,
            candidates: hits.into_iter().map(|r| r.id).collect(),
        });
    }
    let Some(hit) = hits.pop() else {
        return Err(Error::UnknownId(prefix));
    };
    let fits = matches!(
        (want, hit.state),
        (Want::Pending, State::Pending { .. })
            | (Want::Applied, State::Applied)
            | (
                Want::AppliedOrPending,
                State::Applied | State::Pending { .. }
            )
    );
    if fits {
        return Ok(hit);
    }
    Err(match (want, hit.state) {
        (Want::Pending, State::Applied) => Error::AlreadyApplied(hit.id),
        (Want::Applied, State::Pending { .. }) => Error::NotApplied(hit.id),
        (_, State::Split) => Error::Gone {
            how: match hit.successors.as_slice() {
                [part, rest] => format!("split: its selected part is {part}, the remainder {rest}"),
                other => format!("split into {}", other.join(", ")),
            },
            id: hit.id,
        },
        (_, State::Superseded) => Error::Gone {
            how: match hit.successors.as_slice() {
                [next] => format!("refreshed: its successor is {next}"),
                other => format!("refreshed into {}", other.join(", ")),
            },
            id: hit.id,
        },
        (_, state) => Error::Gone {
            id: hit.id,
            how: state.name().to_string(),
        },
    })
}

fn newest(known: Known, want: Want) -> Result<Target, Error> {
    let applied = || known.rows.iter().find(|r| r.state == State::Applied);
    let fresh = || {
        known
            .rows
            .iter()
            .find(|r| r.state == State::Pending { undone: false })
    };
    let found = match want {
        Want::Applied => applied(),
        Want::Pending => fresh(),
        Want::AppliedOrPending => applied().or_else(fresh),
    };
    if let Some(t) = found {
        return Ok(t.clone());
    }
    let undone: Vec<String> = known
        .rows
        .iter()
        .filter(|r| r.state == State::Pending { undone: true })
        .map(|r| r.id.clone())
        .collect();
    Err(match want {
        Want::Applied => Error::NothingToUndo,
        _ if !undone.is_empty() => Error::OnlyUndone(undone),
        _ => Error::NoPending,
    })
}

/// The pending preview `id` names (or the newest never-applied one).
pub fn pending(repo: &Repo, id: Option<&str>) -> Result<Preview, Error> {
    let target = resolve(repo, id, Want::Pending)?;
    match target.preview {
        Some(p) => Ok(p),
        None => store::read_preview(repo, target.commit),
    }
}
