//! The one place commit objects are made: previews (before and after), journal
//! events, the placeholders of repaired refs, `apply --commit`, `pr` and campaign state
//! commits. Every commit is made by the repository's identity (git's, else the
//! fallback, [`Repo::signature`]) as author and committer, with no encoding and no
//! extra headers but a signature: previews and campaign state commits are signed by
//! git when signing is on ([`super::sign`]), the rest never.

use gix::ObjectId;

use super::Error;
use crate::change::FileMode;
use crate::repo::Repo;

/// The commit object with `tree`, `parents` and `message`, signed by `sig` (the
/// repository's [`Repo::signature`], taken once for commits made together).
pub fn object(
    sig: &gix::actor::Signature,
    tree: ObjectId,
    parents: impl IntoIterator<Item = ObjectId>,
    message: String,
) -> gix::objs::Commit {
    gix::objs::Commit {
        tree,
        parents: parents.into_iter().collect(),
        author: sig.clone(),
        committer: sig.clone(),
        encoding: None,
        message: message.into(),
        extra_headers: Vec::new(),
    }
}

/// Writes [`object`] to the object database; `what` names it in an error.
pub fn write(
    repo: &Repo,
    tree: ObjectId,
    parents: impl IntoIterator<Item = ObjectId>,
    message: String,
    what: &str,
) -> Result<ObjectId, Error> {
    let commit = object(&repo.signature(), tree, parents, message);
    Ok(repo
        .git
        .write_object(&commit)
        .map_err(Error::git(format!("write {what}")))?
        .detach())
}

/// The empty tree, written (journal events and placeholders hold no files).
pub fn empty_tree(repo: &Repo) -> Result<ObjectId, Error> {
    Ok(repo
        .git
        .write_object(gix::objs::Tree::empty())
        .map_err(Error::git("write the empty tree"))?
        .detach())
}

/// Writes a commit on `parent` (none: a root commit) whose tree is the parent's with
/// `changes` made: a path with a side gets that blob and mode, a path without one is
/// removed. The commit builder of `apply --commit` and `pr`; it moves no reference.
pub fn write_commit(
    repo: &Repo,
    parent: Option<ObjectId>,
    changes: &[(&str, Option<(ObjectId, FileMode)>)],
    message: &str,
) -> Result<ObjectId, Error> {
    merge_commit(repo, parent, &[], changes, message, None)
}

/// A campaign state commit: [`write_commit`] with `also` as further parents after
/// `parent` (the shards' tips it merges; the tree is still `parent`'s with `changes`
/// made), signed by git ([`super::sign::commit`]) when previews are signed (`--sign`,
/// `astedit.signPreviews`), so a collector can tell the states its own runs recorded.
pub fn write_state_commit(
    repo: &Repo,
    parent: Option<ObjectId>,
    also: &[ObjectId],
    changes: &[(&str, Option<(ObjectId, FileMode)>)],
    message: &str,
) -> Result<ObjectId, Error> {
    let sign = super::sign::signing(repo).then_some("the campaign state commit");
    merge_commit(repo, parent, also, changes, message, sign)
}

/// A commit on `parent` and `also` whose tree is `parent`'s with `changes` made,
/// signed by git when `sign` names what is signed.
fn merge_commit(
    repo: &Repo,
    parent: Option<ObjectId>,
    also: &[ObjectId],
    changes: &[(&str, Option<(ObjectId, FileMode)>)],
    message: &str,
    sign: Option<&str>,
) -> Result<ObjectId, Error> {
    let tree = changed_tree(repo, parent, changes)?;
    let parents = parent.into_iter().chain(also.iter().copied());
    match sign {
        Some(what) => {
            let commit = object(&repo.signature(), tree, parents, message.to_string());
            super::sign::commit(repo, &commit, what)
        }
        None => write(repo, tree, parents, message.to_string(), "the commit"),
    }
}

/// The tree of `parent` (none: the empty tree) with `changes` made, written (no
/// commit: a campaign also checks a pushed commit's tree against it).
pub fn changed_tree(
    repo: &Repo,
    parent: Option<ObjectId>,
    changes: &[(&str, Option<(ObjectId, FileMode)>)],
) -> Result<ObjectId, Error> {
    let base_tree = match parent {
        Some(c) => repo
            .git
            .find_commit(c)
            .map_err(Error::git(format!("read commit {c}")))?
            .tree_id()
            .map_err(Error::git(format!("read the tree of commit {c}")))?
            .detach(),
        None => ObjectId::empty_tree(repo.git.object_hash()),
    };
    let mut editor = repo
        .git
        .edit_tree(base_tree)
        .map_err(Error::git("edit a tree"))?;
    for (path, side) in changes {
        match side {
            Some((blob, mode)) => {
                editor
                    .upsert(*path, entry_kind(*mode), *blob)
                    .map_err(Error::git(format!("add {path} to a tree")))?;
            }
            None => {
                editor
                    .remove(*path)
                    .map_err(Error::git(format!("remove {path} from a tree")))?;
            }
        }
    }
    Ok(editor.write().map_err(Error::git("write a tree"))?.detach())
}

/// The tree entry kind of a file mode.
pub fn entry_kind(mode: FileMode) -> gix::objs::tree::EntryKind {
    use gix::objs::tree::EntryKind;
    match mode {
        FileMode::Regular => EntryKind::Blob,
        FileMode::Executable => EntryKind::BlobExecutable,
        FileMode::Symlink => EntryKind::Link,
    }
}
