/*!
Whether the commit a campaign's state says it pushed is one this campaign made for the
repository's current preview — asked by `campaign merge` before anything is merged.

The state is shared (pushed, fetched, collected from CI shards): anyone who can write
the ref can write any entry, so its `pushed_commit` proves nothing by itself. A commit
is vouched for one of two ways:

* **The preview is here** (`refs/astedit/<id>` in the campaign's own clone, made by its
  `stage` or `refresh`): the commit's one parent is the base the preview was staged on,
  and its tree is that base's with exactly the preview's changes — what `publish`
  builds. The check is by content, so it holds for any honest publish however the
  state was shared.
* **The preview is not here** (a collector that merges what shards staged and
  published): the state commit that recorded this `pushed_commit` for the repository
  must be signed by an allowed signer, as git verifies it ([`crate::txn::sign`]).
*/

use std::path::Path;

use super::git;
use super::State;
use crate::repo::Repo;
use crate::report::campaign::RepoState;
use crate::txn;

/// `Ok` when `s.pushed_commit` is a commit this campaign made for `s`'s preview (see
/// the module's text); else why not, in a sentence for the entry's reason.
pub(super) fn pushed_commit_is_ours(
    repo: &Repo,
    state: &State,
    clone_dir: &Path,
    branch: &str,
    s: &RepoState,
) -> Result<(), String> {
    let pushed = s
        .pushed_commit
        .as_deref()
        .and_then(|c| gix::ObjectId::from_hex(c.as_bytes()).ok())
        .ok_or_else(|| "the state records no commit pushed for it".to_string())?;
    let clone = Repo::discover_from(clone_dir)
        .map_err(|e| format!("cannot open the clone {}: {e}", clone_dir.display()))?;
    match preview_here(&clone, s.preview.as_deref()) {
        Some(preview) => {
            have_commit(&clone, clone_dir, branch, pushed)?;
            // A fresh handle sees the objects a fetch brought.
            let clone = Repo::discover_from(clone_dir).map_err(|e| e.to_string())?;
            matches_preview(&clone, pushed, &preview)
        }
        None => vouched_by_signed_state(repo, state, s, pushed),
    }
}

/// The preview `id` names, when its ref is in the clone.
fn preview_here(clone: &Repo, id: Option<&str>) -> Option<txn::Preview> {
    let id = id.filter(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_hexdigit()))?;
    let mut found = clone
        .git
        .try_find_reference(format!("{}{id}", txn::REF_PREFIX).as_str())
        .ok()??;
    let commit = found.peel_to_id().ok()?.detach();
    txn::read_preview(clone, commit).ok()
}

/// Fetches the branch when the clone lacks `pushed` (someone else pushed it).
fn have_commit(
    clone: &Repo,
    dir: &Path,
    branch: &str,
    pushed: gix::ObjectId,
) -> Result<(), String> {
    if clone.git.find_commit(pushed).is_ok() {
        return Ok(());
    }
    let refspec = format!("refs/heads/{branch}");
    git(
        dir,
        &["fetch", "--quiet", "--no-tags", "--", "origin", &refspec],
    )?;
    Ok(())
}

/// Whether `pushed` is the preview's change on its base: one parent, the base; the
/// base's tree with the preview's files.
fn matches_preview(
    clone: &Repo,
    pushed: gix::ObjectId,
    preview: &txn::Preview,
) -> Result<(), String> {
    let not_ours = |why: String| {
        format!(
            "commit {pushed} is not the commit this campaign made for preview {} ({why}): \
             it was not merged",
            preview.id
        )
    };
    let base = preview
        .meta
        .base_head
        .as_deref()
        .and_then(|h| gix::ObjectId::from_hex(h.as_bytes()).ok())
        .ok_or_else(|| not_ours("the preview records no base commit".into()))?;
    let commit = clone
        .git
        .find_commit(pushed)
        .map_err(|e| not_ours(format!("cannot read it: {e}")))?;
    let parents: Vec<gix::ObjectId> = commit.parent_ids().map(|p| p.detach()).collect();
    let tree = commit
        .tree_id()
        .map_err(|e| not_ours(format!("cannot read its tree: {e}")))?
        .detach();
    if parents != [base] {
        return Err(not_ours(format!("its parent is not the base {base}")));
    }
    let changes: Vec<(&str, Option<(gix::ObjectId, crate::change::FileMode)>)> = preview
        .entries
        .iter()
        .map(|e| (e.path.as_str(), e.after))
        .collect();
    let expected = txn::changed_tree(clone, Some(base), &changes).map_err(|e| e.to_string())?;
    if tree != expected {
        return Err(not_ours(
            "its files are not the base's with the preview's changes".into(),
        ));
    }
    Ok(())
}

/// The state commit that recorded `pushed` for `s` (the oldest of the newest run of
/// commits whose entry holds it) must be signed by an allowed signer.
fn vouched_by_signed_state(
    repo: &Repo,
    state: &State,
    s: &RepoState,
    pushed: gix::ObjectId,
) -> Result<(), String> {
    let no_preview = format!(
        "preview {} is not in its clone, so commit {pushed} is vouched for only by a signed \
         state commit",
        s.preview.as_deref().unwrap_or("(none)")
    );
    let tip = state
        .commit
        .ok_or_else(|| format!("{no_preview}, and there is no state"))?;
    let recorder = recorded_by(repo, tip, &s.key, pushed)
        .map_err(|e| format!("{no_preview}: cannot find the state commit that recorded it: {e}"))?;
    let check = txn::sign::verify(repo, recorder)
        .map_err(|e| format!("{no_preview}: cannot verify state commit {recorder}: {e}"))?;
    if check.trusted() {
        return Ok(());
    }
    Err(format!(
        "{no_preview}; state commit {recorder}, which recorded it, is not signed by an allowed \
         signer ({}): it was not merged",
        check.describe()
    ))
}

/// The state commit that recorded `pushed` as entry `key`'s pushed commit: walking
/// the commits that changed `<key>.json`, newest first, the last one before the entry
/// said something else.
fn recorded_by(
    repo: &Repo,
    tip: gix::ObjectId,
    key: &str,
    pushed: gix::ObjectId,
) -> Result<gix::ObjectId, String> {
    let path = format!("{key}.json");
    let listed = git(
        &repo.workdir,
        &[
            "log",
            "--format=%H",
            "--end-of-options",
            &tip.to_string(),
            "--",
            &path,
        ],
    )?;
    let wanted = pushed.to_string();
    let mut recorder = None;
    for line in listed.lines() {
        let Ok(commit) = gix::ObjectId::from_hex(line.trim().as_bytes()) else {
            continue;
        };
        let held = pushed_at(repo, commit, &path);
        if held.as_deref() != Some(wanted.as_str()) {
            break;
        }
        recorder = Some(commit);
    }
    recorder.ok_or_else(|| format!("no state commit records {pushed} for {key}"))
}

/// The `pushed_commit` entry `path` holds at state commit `commit`.
fn pushed_at(repo: &Repo, commit: gix::ObjectId, path: &str) -> Option<String> {
    let tree = repo.git.find_commit(commit).ok()?.tree().ok()?;
    let entry = tree.lookup_entry_by_path(path).ok()??;
    let blob = txn::blob(repo, entry.object_id()).ok()?;
    let entry: RepoState = serde_json::from_slice(&blob).ok()?;
    entry.pushed_commit
}
