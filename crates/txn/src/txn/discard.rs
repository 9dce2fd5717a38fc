/*!
Discard: drops a pending preview (or a ref under `refs/astedit/` that is not one) and
journals it. Above both the store and the id resolver, which it uses.
*/

use gix::refs::transaction::PreviousValue;
use gix::refs::Target;
use gix::ObjectId;

use super::journal;
use super::journal::Event;
use super::journal::EventKind;
use super::store::remove_bad;
use super::store::scan;
use super::store::BadRef;
use super::store::REF_PREFIX;
use super::Error;
use super::Preview;
use crate::change::PreviewMeta;
use crate::repo::Repo;

/// Drops a pending preview and records a `discarded` event.
pub fn discard(repo: &Repo, id: Option<&str>, reason: Option<&str>) -> Result<Preview, Error> {
    discard_as(repo, id, reason, None)
}

/// [`discard`], recording the agent (MCP client name/version) that acted.
pub fn discard_as(
    repo: &Repo,
    id: Option<&str>,
    reason: Option<&str>,
    agent: Option<&str>,
) -> Result<Preview, Error> {
    // The lock keeps a discard from racing an apply of the same preview.
    let _lock = super::lock::Lock::acquire(repo, "discard")?;
    let preview = match super::resolve::pending(repo, id) {
        Ok(p) => p,
        Err(e @ (Error::UnknownId(_) | Error::BadId(_) | Error::NoPending)) => {
            // Not a preview: maybe a bad ref of that name, which discard removes.
            let Some(prefix) = id else { return Err(e) };
            let (_, bad) = scan(repo)?;
            let hits: Vec<&BadRef> = bad
                .iter()
                .filter(|b| !b.id.is_empty() && (b.id == prefix || b.id.starts_with(prefix)))
                .collect();
            match hits.as_slice() {
                [one] => {
                    remove_bad(repo, one, reason, agent, "discard")?;
                    return Ok(Preview {
                        id: one.id.clone(),
                        commit: one
                            .target
                            .unwrap_or_else(|| ObjectId::null(repo.git.object_hash())),
                        time: 0,
                        meta: PreviewMeta {
                            summary: format!("{} (not a preview: {})", one.name, one.why),
                            ..PreviewMeta::default()
                        },
                        entries: Vec::new(),
                    });
                }
                [] => return Err(e),
                many => {
                    return Err(Error::AmbiguousId {
                        prefix: prefix.to_string(),
                        candidates: many.iter().map(|b| b.id.clone()).collect(),
                    })
                }
            }
        }
        Err(e) => return Err(e),
    };
    let mut event = Event::new(repo, EventKind::Discarded, &preview.id, preview.commit);
    event.reason = reason.map(str::to_string);
    event.agent = agent.map(str::to_string);
    event.kind = Some(preview.meta.kind);
    event.files = preview.entries.iter().map(|e| e.path.clone()).collect();
    let del = journal::delete_edit(
        &format!("{REF_PREFIX}{}", preview.id),
        PreviousValue::MustExistAndMatch(Target::Object(preview.commit)),
    )?;
    journal::append(repo, &event, preview.commit, vec![del])?;
    super::trusted::forget(repo, preview.commit);
    Ok(preview)
}
