/*!
Where review decisions live: beside a preview, not in it (its id is its commit's
hash). `refs/astedit-review/<id>` points at the newest batch; each batch is one commit
whose tree holds one blob, `decisions.json` (what the batch decided, site by site),
whose parent is the batch before it, and whose author names who decided (the page,
the terminal, an agent). The decisions travel with their own refspec
(`refs/astedit-review/…`).

Which batches were made here is a local record, `<common git dir>/astedit/reviewed`
(one commit id a line; outside `refs/`, so no fetch carries it, and linked worktrees
share it), written atomically (a temp file, then a rename).
*/

use gix::ObjectId;

use super::Error;
use crate::repo::Repo;

/// The prefix of the refs holding a preview's decisions.
pub const REVIEW_REF_PREFIX: &str = "refs/astedit-review/";

/// The blob each batch's tree holds.
const FILE: &str = "decisions.json";

/// How many batches of a preview are read at most (newest first).
const MAX_BATCHES: usize = 10_000;

/// One batch of decisions as stored.
#[derive(Debug, Clone)]
pub struct Batch {
    pub commit: ObjectId,
    /// The author's name: who decided.
    pub by: String,
    /// Seconds since the epoch.
    pub time: i64,
    /// The `decisions.json` blob's bytes.
    pub data: Vec<u8>,
}

fn ref_name(id: &str) -> String {
    format!("{REVIEW_REF_PREFIX}{id}")
}

/// The tip of preview `id`'s decisions, if any.
pub fn tip(repo: &Repo, id: &str) -> Result<Option<ObjectId>, Error> {
    let found = repo
        .git
        .try_find_reference(ref_name(id).as_str())
        .map_err(Error::git("read a review ref"))?;
    match found {
        None => Ok(None),
        Some(mut r) => Ok(Some(
            r.peel_to_id()
                .map_err(Error::git("read a review ref"))?
                .detach(),
        )),
    }
}

/// The batches from `tip` down its first parents, oldest first.
pub fn batches(repo: &Repo, tip: ObjectId) -> Result<Vec<Batch>, Error> {
    let mut out = Vec::new();
    let mut next = Some(tip);
    while let Some(id) = next {
        if out.len() >= MAX_BATCHES {
            break;
        }
        let commit = repo
            .git
            .find_commit(id)
            .map_err(Error::git(format!("read review batch {id}")))?;
        let decoded = commit
            .decode()
            .map_err(Error::git(format!("read review batch {id}")))?;
        let by = decoded
            .author()
            .map(|a| a.name.to_string())
            .unwrap_or_default();
        let time = decoded
            .author()
            .ok()
            .and_then(|a| a.time().ok())
            .map(|t| t.seconds)
            .unwrap_or(0);
        next = decoded.parents().next();
        let tree = commit
            .tree()
            .map_err(Error::git(format!("read review batch {id}")))?;
        let data = match tree.find_entry(FILE) {
            Some(entry) => {
                entry
                    .object()
                    .map_err(Error::git(format!("read review batch {id}")))?
                    .detach()
                    .data
            }
            None => Vec::new(),
        };
        out.push(Batch {
            commit: id,
            by,
            time,
            data,
        });
    }
    out.reverse();
    Ok(out)
}

/// Writes one batch for preview `id` on top of `parent` (the ref's tip, or the last
/// batch of the preview it was refreshed from), authored by `by`, moves the ref from
/// `was` (`None`: it must not exist), and records the commit as made here.
pub fn write_batch(
    repo: &Repo,
    id: &str,
    parent: Option<ObjectId>,
    was: Option<ObjectId>,
    data: &[u8],
    by: &str,
    message: String,
) -> Result<ObjectId, Error> {
    let blob = super::keep_blob(repo, data)?;
    let mut tree = gix::objs::Tree::empty();
    tree.entries.push(gix::objs::tree::Entry {
        mode: gix::objs::tree::EntryKind::Blob.into(),
        filename: FILE.into(),
        oid: blob,
    });
    let tree = repo
        .git
        .write_object(&tree)
        .map_err(Error::git("write a review tree"))?
        .detach();
    let committer = repo.signature();
    let mut author = committer.clone();
    author.name = by.into();
    let commit = gix::objs::Commit {
        tree,
        parents: parent.into_iter().collect(),
        author,
        committer,
        encoding: None,
        message: message.into(),
        extra_headers: Vec::new(),
    };
    let commit = repo
        .git
        .write_object(&commit)
        .map_err(Error::git("write a review batch"))?
        .detach();
    // Recorded before the ref moves: a batch the ref names is never one we forgot.
    record_made_here(repo, commit)?;
    let was = match was {
        Some(c) => super::RefWas::At(c),
        None => super::RefWas::Absent,
    };
    super::set_ref(
        repo,
        &ref_name(id),
        commit,
        was,
        "astedit: review",
        "review",
    )?;
    Ok(commit)
}

/// The local record of the batches made here.
fn record_path(repo: &Repo) -> std::path::PathBuf {
    repo.common_dir.join("astedit").join("reviewed")
}

/// The batches made here (a missing record is an empty one).
pub fn made_here(repo: &Repo) -> std::collections::HashSet<ObjectId> {
    std::fs::read_to_string(record_path(repo))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| ObjectId::from_hex(l.trim().as_bytes()).ok())
        .collect()
}

fn record_made_here(repo: &Repo, commit: ObjectId) -> Result<(), Error> {
    let path = record_path(repo);
    let dir = path.parent().unwrap_or(&repo.common_dir).to_path_buf();
    let io = |action: &'static str| {
        let path = path.display().to_string();
        move |source: std::io::Error| Error::Io {
            action,
            path,
            source,
        }
    };
    std::fs::create_dir_all(&dir).map_err(io("create the folder of"))?;
    let mut text = std::fs::read_to_string(&path).unwrap_or_default();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!("{commit}\n"));
    let tmp = dir.join(format!("reviewed.tmp{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(io("write"))?;
    std::fs::rename(&tmp, &path).map_err(io("replace"))?;
    Ok(())
}
