/*!
Ref-level primitives of the journal, below both it and the ref transactions that clear
killed ones ([`super::reflocks`]): the journal's ref name, its tip, and the edits every
ref transaction of ours is made of.
*/

use gix::refs::transaction::Change;
use gix::refs::transaction::LogChange;
use gix::refs::transaction::PreviousValue;
use gix::refs::transaction::RefEdit;
use gix::refs::transaction::RefLog;
use gix::refs::Target;
use gix::ObjectId;

use super::Error;
use crate::repo::Repo;

/// The journal ref.
pub const JOURNAL_REF: &str = "refs/astedit-journal";

/// The journal tip, if any.
pub fn tip(repo: &Repo) -> Result<Option<ObjectId>, Error> {
    let found = repo
        .git
        .try_find_reference(JOURNAL_REF)
        .map_err(Error::git("read the journal ref"))?;
    match found {
        None => Ok(None),
        Some(mut r) => Ok(Some(
            r.peel_to_id()
                .map_err(Error::git("read the journal ref"))?
                .detach(),
        )),
    }
}

pub fn update_edit(
    name: &str,
    expected: PreviousValue,
    new: ObjectId,
    message: &str,
) -> Result<RefEdit, Error> {
    Ok(RefEdit {
        change: Change::Update {
            log: LogChange {
                mode: RefLog::AndReference,
                force_create_reflog: false,
                message: message.into(),
            },
            expected,
            new: Target::Object(new),
        },
        name: full_name(name)?,
        deref: false,
    })
}

pub fn delete_edit(name: &str, expected: PreviousValue) -> Result<RefEdit, Error> {
    Ok(RefEdit {
        change: Change::Delete {
            expected,
            log: RefLog::AndReference,
        },
        name: full_name(name)?,
        deref: false,
    })
}

fn full_name(name: &str) -> Result<gix::refs::FullName, Error> {
    gix::refs::FullName::try_from(name)
        .map_err(|e| Error::Corrupt(format!("invalid ref name '{name}': {e}")))
}
