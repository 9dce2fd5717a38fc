/*!
`apply --index` and `apply --commit`: the git index and HEAD, kept apart from the
crash-safe work-tree machine in [`super::apply`], which calls in here before its point
of no return (checks, the commit object) and after it (HEAD, the index).

The index is written by `git update-index`, not by gix: gix 0.90 can write an index
but does not keep its tree cache valid, and git does.
*/

use std::io::Write;

use gix::refs::transaction::PreviousValue;
use gix::refs::Target;
use gix::ObjectId;
use sha2::Digest;

use super::journal;
use super::record::PathOp;
use super::store;
use super::Error;
use super::Preview;
use crate::change::FileMode;
use crate::repo::Repo;

/// `--commit` refuses paths whose index or HEAD entry holds anything but the preview's
/// before side: those changes would be swept into the commit.
pub(super) fn check_commit_possible(repo: &Repo, ops: &[PathOp]) -> Result<(), Error> {
    let index = repo
        .git
        .index_or_empty()
        .map_err(Error::git("read the index"))?;
    let head_tree = match repo.head_commit() {
        Some(c) => Some(
            repo.git
                .find_commit(c)
                .map_err(Error::git("read HEAD"))?
                .tree()
                .map_err(Error::git("read HEAD's tree"))?,
        ),
        None => None,
    };
    let mut staged = Vec::new();
    let mut uncommitted = Vec::new();
    for o in ops {
        let path: &gix::bstr::BStr = o.path.as_str().into();
        use gix::index::entry::Stage;
        let conflicted = [Stage::Base, Stage::Ours, Stage::Theirs]
            .into_iter()
            .any(|s| index.entry_by_path_and_stage(path, s).is_some());
        let in_index = index
            .entry_by_path_and_stage(path, gix::index::entry::Stage::Unconflicted)
            .map(|e| (e.id, e.mode.bits()));
        let in_head = match &head_tree {
            Some(t) => t
                .lookup_entry_by_path(&o.path)
                .map_err(Error::git("read HEAD's tree"))?
                .map(|e| (e.object_id(), u32::from(e.mode().value()))),
            None => None,
        };
        if conflicted || in_index != in_head {
            staged.push(o.path.clone());
        } else if in_head != o.from.map(|s| (s.blob, mode_bits(s.mode))) {
            uncommitted.push(o.path.clone());
        }
    }
    if !staged.is_empty() {
        return Err(Error::OtherChanges {
            paths: staged,
            why: "they have staged changes".into(),
        });
    }
    if !uncommitted.is_empty() {
        return Err(Error::OtherChanges {
            paths: uncommitted,
            why: "they differ from HEAD outside this preview".into(),
        });
    }
    Ok(())
}

fn mode_bits(mode: FileMode) -> u32 {
    match mode {
        FileMode::Regular => 0o100644,
        FileMode::Executable => 0o100755,
        FileMode::Symlink => 0o120000,
    }
}

/// Sets the index entries of the touched paths to the run's `to` side, with git.
/// (gix 0.90 can write an index but does not keep its tree cache valid; git does.)
pub(super) fn update_index(repo: &Repo, ops: &[PathOp]) -> Result<(), Error> {
    let zero = ObjectId::null(repo.git.object_hash());
    let mut input = String::new();
    for o in ops {
        match &o.to {
            Some(to) => input.push_str(&format!(
                "{:o} {}\t{}\n",
                mode_bits(to.mode),
                to.blob,
                o.path
            )),
            None => input.push_str(&format!("0 {zero}\t{}\n", o.path)),
        }
    }
    git(
        repo,
        &["update-index", "-z", "--index-info"],
        Some(input.replace('\n', "\0").as_bytes()),
    )?;
    // Fresh stat data, so `git status` need not re-hash; a refresh reporting other
    // modified paths is not an error.
    let mut args = vec!["update-index", "-q", "--refresh", "--"];
    args.extend(
        ops.iter()
            .filter(|o| o.to.is_some())
            .map(|o| o.path.as_str()),
    );
    let _ = git(repo, &args, None);
    Ok(())
}

fn git(repo: &Repo, args: &[&str], stdin: Option<&[u8]>) -> Result<String, Error> {
    let mut cmd = std::process::Command::new("git");
    cmd.arg("--git-dir")
        .arg(&repo.git_dir)
        .arg("--work-tree")
        .arg(&repo.workdir)
        .args(args)
        .current_dir(&repo.workdir)
        .stdin(if stdin.is_some() {
            std::process::Stdio::piped()
        } else {
            std::process::Stdio::null()
        })
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let what = format!("git {}", args.first().copied().unwrap_or(""));
    let mut child = cmd.spawn().map_err(Error::io("run", &what))?;
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(input)
            .map_err(Error::io("write to", &what))?;
    }
    let out = child.wait_with_output().map_err(Error::io("run", &what))?;
    if !out.status.success() {
        return Err(Error::Io {
            action: "run",
            path: what,
            source: std::io::Error::other(String::from_utf8_lossy(&out.stderr).trim().to_string()),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A `--commit` commit, written but not yet on HEAD.
pub(super) struct MadeCommit {
    pub id: ObjectId,
    /// HEAD when it was made: its parent, and what HEAD must still be to move it.
    head: Option<ObjectId>,
    subject: String,
}

/// `--commit`: writes a commit whose tree is HEAD's with exactly the preview's changes.
pub(super) fn prepare_commit(
    repo: &Repo,
    preview: &Preview,
    ops: &[PathOp],
    reason: Option<&str>,
    message: Option<&str>,
) -> Result<MadeCommit, Error> {
    let head = repo.head_commit();
    let base_tree = match head {
        Some(c) => repo
            .git
            .find_commit(c)
            .map_err(Error::git("read HEAD"))?
            .tree_id()
            .map_err(Error::git("read HEAD's tree"))?
            .detach(),
        None => ObjectId::empty_tree(repo.git.object_hash()),
    };
    let mut editor = repo
        .git
        .edit_tree(base_tree)
        .map_err(Error::git("edit a tree"))?;
    for o in ops {
        match &o.to {
            Some(to) => {
                editor
                    .upsert(o.path.as_str(), store::entry_kind(to.mode), to.blob)
                    .map_err(Error::git(format!("add {} to a tree", o.path)))?;
            }
            None => {
                editor
                    .remove(o.path.as_str())
                    .map_err(Error::git(format!("remove {} from a tree", o.path)))?;
            }
        }
    }
    let tree = editor.write().map_err(Error::git("write a tree"))?.detach();
    let meta = &preview.meta;
    let subject = message.map(str::to_string).unwrap_or_else(|| {
        format!(
            "astedit {}: {}",
            meta.kind,
            meta.summary.lines().next().unwrap_or("")
        )
    });
    let mut trailers = format!("Astedit-Id: {}\nAstedit-Kind: {}\n", preview.id, meta.kind);
    if let Some(r) = reason {
        trailers.push_str(&format!(
            "Astedit-Reason: {}\n",
            r.lines().next().unwrap_or("")
        ));
    }
    if !meta.ops.is_empty() {
        let json = serde_json::to_vec(&meta.ops).unwrap_or_default();
        trailers.push_str(&format!(
            "Astedit-Ops-Digest: sha256:{:x}\n",
            sha2::Sha256::digest(&json)
        ));
    }
    if let Some(d) = &meta.patch_digest {
        trailers.push_str(&format!("Astedit-Patch-Digest: {d}\n"));
    }
    let sig = repo.signature();
    let commit = gix::objs::Commit {
        tree,
        parents: head.into_iter().collect(),
        author: sig.clone(),
        committer: sig,
        encoding: None,
        message: format!("{}\n\n{trailers}", subject.trim_end()).into(),
        extra_headers: Vec::new(),
    };
    let id = repo
        .git
        .write_object(&commit)
        .map_err(Error::git("write the commit"))?
        .detach();
    Ok(MadeCommit {
        id,
        head,
        subject: subject.lines().next().unwrap_or("").to_string(),
    })
}

/// Moves HEAD (through its branch) to the made commit, if HEAD did not move meanwhile,
/// and stages the touched paths so `git status` is clean for them.
pub(super) fn publish_commit(repo: &Repo, made: &MadeCommit, ops: &[PathOp]) -> Result<(), Error> {
    let expected = match made.head {
        Some(h) => PreviousValue::MustExistAndMatch(Target::Object(h)),
        None => PreviousValue::MustNotExist,
    };
    let mut edit = journal::update_edit(
        "HEAD",
        expected,
        made.id,
        &format!("commit: {}", made.subject),
    )?;
    edit.deref = true;
    match journal::commit_edits(repo, vec![edit]) {
        Err(Error::Git { source, .. }) if source.is_conflict() => {
            return Err(Error::Concurrent(
                "HEAD (the work tree is applied, but no commit was made)".into(),
            ))
        }
        other => other?,
    }
    update_index(repo, ops)
}
