//! The refs under `refs/astedit/`: pending previews listed newest first, and the refs
//! that are not readable previews ([`BadRef`]), skipped and removed.

use gix::objs::Kind;
use gix::refs::transaction::PreviousValue;
use gix::refs::Target;
use gix::ObjectId;

use super::parse_envelope;
use super::read_preview;
use super::REF_PREFIX;
use crate::repo::Repo;
use crate::txn::journal;
use crate::txn::journal::Event;
use crate::txn::journal::EventKind;
use crate::txn::Error;
use crate::txn::Preview;

/// A ref under `refs/astedit/` that is not a readable preview (a blob, a commit that
/// is not a preview, a preview tree holding a submodule, a name that is not its
/// preview's id…), e.g. from a careless `git fetch origin 'refs/astedit/*:refs/astedit/*'`.
/// Commands skip it and say so; `discard ID` and `gc` remove it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRef {
    /// The full ref name.
    pub name: String,
    /// The name after `refs/astedit/`.
    pub id: String,
    /// What it points at, when that could be read.
    pub target: Option<ObjectId>,
    pub why: String,
}

impl BadRef {
    /// One line for a warning.
    pub fn describe(&self) -> String {
        format!(
            "{} is not a readable preview and was skipped: {} (`git astedit discard {}` or `git astedit gc` removes it)",
            self.name, self.why, self.id
        )
    }
}

/// A pending preview with its staging time in nanoseconds.
type PendingAt = (u64, Preview);

/// Pending previews with their staging time in nanoseconds, newest first, and the refs
/// that are not readable previews.
pub fn scan(repo: &Repo) -> Result<(Vec<PendingAt>, Vec<BadRef>), Error> {
    let platform = repo.git.references().map_err(Error::git("list refs"))?;
    let iter = platform
        .prefixed(REF_PREFIX)
        .map_err(Error::git("list refs"))?;
    let mut out = Vec::new();
    let mut bad = Vec::new();
    for r in iter {
        let mut r = match r {
            Ok(r) => r,
            Err(e) => {
                // A ref file that cannot be parsed: gix does not say which one.
                bad.push(BadRef {
                    name: REF_PREFIX.to_string(),
                    id: String::new(),
                    target: None,
                    why: format!("a ref cannot be read: {e}"),
                });
                continue;
            }
        };
        let name = r.name().as_bstr().to_string();
        let id = name.strip_prefix(REF_PREFIX).unwrap_or(&name).to_string();
        let target = r.target().try_id().map(|t| t.to_owned());
        let bad_ref = |why: String| BadRef {
            name: name.clone(),
            id: id.clone(),
            target,
            why,
        };
        let peeled = match r.peel_to_id() {
            Ok(p) => p.detach(),
            Err(e) => {
                bad.push(bad_ref(format!("it cannot be resolved: {e}")));
                continue;
            }
        };
        match read_pending(repo, peeled) {
            Ok((ns, p)) if p.id == id => out.push((ns, p)),
            Ok((_, p)) => bad.push(bad_ref(format!(
                "its name is not its preview's id ({})",
                p.id
            ))),
            Err(e) => bad.push(bad_ref(why_bad(repo, peeled, &e))),
        }
    }
    out.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.1.id.cmp(&a.1.id)));
    Ok((out, bad))
}

/// Why `id` is not a preview, in words.
fn why_bad(repo: &Repo, id: ObjectId, e: &Error) -> String {
    match repo.git.find_header(id) {
        Ok(h) if h.kind() != Kind::Commit => format!("it points at a {} ({id})", h.kind()),
        Ok(_) => match e {
            Error::Corrupt(what) => what.clone(),
            other => format!("{other} ({id})"),
        },
        Err(_) => format!("its object {id} is missing"),
    }
}

fn read_pending(repo: &Repo, id: ObjectId) -> Result<(u64, Preview), Error> {
    let commit = repo
        .git
        .find_commit(id)
        .map_err(Error::git(format!("read preview commit {id}")))?;
    let message = commit
        .message_raw()
        .map_err(Error::git(format!("read preview commit {id}")))?;
    let env = parse_envelope(id, message)?;
    Ok((env.staged_at_ns, read_preview(repo, id)?))
}

fn pending(repo: &Repo) -> Result<Vec<(u64, Preview)>, Error> {
    Ok(scan(repo)?.0)
}

/// Pending previews, newest first (refs that are not readable previews are skipped:
/// [`list_checked`] names them).
pub fn list(repo: &Repo) -> Result<Vec<Preview>, Error> {
    Ok(pending(repo)?.into_iter().map(|(_, p)| p).collect())
}

/// [`list`], and the refs under `refs/astedit/` that were skipped.
pub fn list_checked(repo: &Repo) -> Result<(Vec<Preview>, Vec<BadRef>), Error> {
    let (previews, bad) = scan(repo)?;
    Ok((previews.into_iter().map(|(_, p)| p).collect(), bad))
}

/// Removes bad ref `bad` (it must still point where it did) and journals a
/// `discarded` event naming it and why. Its journal commit links the ref's commit when
/// it is one (so it stays reachable, as a discarded preview does), else a commit made
/// for the purpose: a journal commit's parents must be commits.
pub fn remove_bad(
    repo: &Repo,
    bad: &BadRef,
    reason: Option<&str>,
    agent: Option<&str>,
    by: &str,
) -> Result<(), Error> {
    let is_commit = bad
        .target
        .and_then(|t| repo.git.find_header(t).ok())
        .is_some_and(|h| h.kind() == Kind::Commit);
    let link = match bad.target {
        Some(t) if is_commit => t,
        _ => placeholder_commit(repo, bad)?,
    };
    let mut event = Event::new(repo, EventKind::Discarded, &bad.id, link);
    if let Some(t) = bad.target {
        event.commit = t.to_string();
    }
    event.reason = reason.map(str::to_string);
    event.agent = agent.map(str::to_string);
    event.notes = vec![format!(
        "bad-ref-removed: {} (by {by}) was not a readable preview: {}",
        bad.name, bad.why
    )];
    let expected = match bad.target {
        Some(t) => PreviousValue::MustExistAndMatch(Target::Object(t)),
        None => PreviousValue::MustExist,
    };
    let del = journal::delete_edit(&bad.name, expected)?;
    journal::append(repo, &event, link, vec![del])?;
    Ok(())
}

/// An empty commit saying which ref it stands for, linked by the journal in place of a
/// target that is not a commit.
fn placeholder_commit(repo: &Repo, bad: &BadRef) -> Result<ObjectId, Error> {
    let tree = crate::txn::commit::empty_tree(repo)?;
    let target = bad
        .target
        .map(|t| t.to_string())
        .unwrap_or_else(|| "nothing readable".into());
    crate::txn::commit::write(
        repo,
        tree,
        [],
        format!("astedit: removed {} (it pointed at {target})\n", bad.name),
        "a commit",
    )
}
