/*!
`apply --index`, `apply --commit` and `undo --index`: the git index and HEAD, kept apart
from the crash-safe work-tree machine in [`super::apply`], which calls in here before its
point of no return ([`prepare`]: the index lock, the checks, the blobs to stage, the
commit object) and after it ([`Staging::publish`]: HEAD, then the index).

* **The index lock.** [`prepare`] takes `index.lock` the way git does (created with
  `O_CREAT|O_EXCL`) before the work tree is touched, and holds it to the end, so a held
  lock refuses the whole apply (exit 6) with nothing written, journalled or committed,
  and no other git process can write the index in between.
* **What gets staged** is what `git add` of the new file would stage, not the raw bytes
  the work tree gets: with `core.autocrlf`, `text`/`eol`/`crlf` attributes, `ident`,
  `working-tree-encoding` or a clean filter, git computes the blob
  (`git hash-object --path`), which is how [`staged_sides`] gets it. `--commit`
  commits the same blobs, and compares HEAD with the staged form of the files when
  checking for other changes.
* **Protected paths** ([`check_paths`]): inside a submodule, a nested repository or
  outside the sparse-checkout cone; refused (exit 4, `protected-path`) for every apply
  and undo, so `--index` can neither drop a gitlink nor overwrite a skip-worktree entry.

The index itself is written by `git update-index` on a copy of the index, which then
replaces it while the lock is still held (git's own protocol: the lock is only released
once the new index is in place). Not by gix: gix-index 0.58's writer emits only the
tree-cache extension (as read, not invalidated, so it would describe the old trees after
our edits and a later `git commit` could use them) and the sparse-index marker, and
drops the rest (the split index `link`, the untracked cache, fsmonitor, resolve-undo);
nor does it refresh stat data. git's update-index keeps all of these right, which the
tests check with `git status`, `git diff --cached` and `git fsck` on split, sparse and
linked-worktree indexes.

Our `index.lock` holds a marker: one left by a killed git astedit is cleared by the next
one that takes the repository lock (see [`IndexLock::acquire`]). Known gaps: the
attributes are those of the work tree before the apply (a preview that changes
`.gitattributes` stages its other files by the old rules), and with an explicit
`text=auto` attribute *and* a clean filter on a file whose index blob has CRs, git's
"leave CRs alone" rule and the filter are not separated.
*/

use std::io::Write;
use std::path::Path;
use std::path::PathBuf;

use gix::bstr::ByteSlice;
use gix::refs::transaction::PreviousValue;
use gix::refs::Target;
use gix::ObjectId;
use sha2::Digest;

use super::journal;
use super::record::PathOp;
use super::record::Side;
use super::store;
use super::ApplyOptions;
use super::Error;
use super::Preview;
use crate::change::FileMode;
use crate::repo::Protected;
use crate::repo::Repo;

/// A touched path and what the index gets for it (`None`: removed).
type Staged = (String, Option<Side>);

/// `index.lock`, held: created exclusively, removed on drop unless the new index was
/// put in place.
pub(super) struct IndexLock {
    index: PathBuf,
    lock: PathBuf,
}

/// The first bytes of an `index.lock` we create (git never reads a lock's content).
const LOCK_MARKER: &[u8] = b"git-astedit index lock";

impl IndexLock {
    /// Takes `index.lock`; the caller holds the repository lock.
    ///
    /// An `index.lock` bearing our marker was left by a git astedit that died holding
    /// it: every holder also held the repository lock, which the caller now has, so
    /// that holder is gone and the lock is removed once (the index it guarded was never
    /// replaced). Anyone else's lock refuses.
    pub(super) fn acquire(repo: &Repo) -> Result<IndexLock, Error> {
        let (index, lock) = index_and_lock(repo);
        for attempt in 0..2 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&lock)
            {
                Ok(mut f) => {
                    let mark = format!(
                        "{} (pid {})\n",
                        String::from_utf8_lossy(LOCK_MARKER),
                        std::process::id()
                    );
                    // Only a courtesy for whoever looks at it: not worth failing over.
                    let _ = f.write_all(mark.as_bytes());
                    return Ok(IndexLock { index, lock });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if attempt == 0 && clear_stale_lock(repo)? {
                        continue;
                    }
                    break;
                }
                Err(e) => return Err(Error::io("create", &lock)(e)),
            }
        }
        Err(Error::IndexLocked {
            lock: lock.display().to_string(),
        })
    }

    /// A scratch copy of the index beside it, for git to edit (see the module docs).
    fn scratch(&self) -> Result<PathBuf, Error> {
        let tmp = self.index.with_file_name("astedit-index.tmp");
        super::fsutil::remove_if_present(&tmp)?;
        if self.index.exists() {
            std::fs::copy(&self.index, &tmp).map_err(Error::io("copy", &self.index))?;
        }
        Ok(tmp)
    }

    /// Puts `new` in place as the index, then releases the lock.
    fn commit(self, new: &Path) -> Result<(), Error> {
        if let Ok(f) = std::fs::File::open(new) {
            f.sync_all().map_err(Error::io("sync", new))?;
        }
        std::fs::rename(new, &self.index).map_err(Error::io("replace", &self.index))?;
        if let Some(dir) = self.index.parent() {
            super::fsutil::sync_dir(dir)?;
        }
        Ok(())
    }
}

impl Drop for IndexLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.lock);
    }
}

/// The index file and its lock file.
fn index_and_lock(repo: &Repo) -> (PathBuf, PathBuf) {
    let index = repo.git.index_path();
    let mut name = index.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    let lock = index.with_file_name(name);
    (index, lock)
}

/// Removes an `index.lock` that a killed git astedit left (it bears our marker); the
/// caller must hold the repository lock, which every holder of ours also held, so
/// that holder is gone. Returns whether one was removed. Recovery may call this too.
pub fn clear_stale_lock(repo: &Repo) -> Result<bool, Error> {
    let (_, lock) = index_and_lock(repo);
    let ours = std::fs::read(&lock).is_ok_and(|b| b.starts_with(LOCK_MARKER));
    if ours {
        super::fsutil::remove_if_present(&lock)?;
    }
    Ok(ours)
}

/// The pid written in an `index.lock` of ours (0 when unreadable), if one is there.
pub fn stale_lock_of_ours(repo: &Repo) -> Option<u32> {
    let (_, lock) = index_and_lock(repo);
    let bytes = std::fs::read(&lock).ok()?;
    let rest = bytes.strip_prefix(LOCK_MARKER)?;
    let text = String::from_utf8_lossy(rest);
    Some(
        text.trim()
            .trim_start_matches("(pid ")
            .trim_end_matches(')')
            .parse()
            .unwrap_or(0),
    )
}

/// The `index.lock` path when one exists.
pub fn lock_present(repo: &Repo) -> Option<String> {
    let (_, lock) = index_and_lock(repo);
    lock.exists().then(|| lock.display().to_string())
}

/// Refuses (exit 4) paths inside a submodule or nested repository, or outside the
/// sparse-checkout cone.
pub(super) fn check_paths(repo: &Repo, ops: &[PathOp]) -> Result<(), Error> {
    let protected = Protected::of(repo).map_err(|e| Error::Git {
        action: "read the index".into(),
        source: e,
    })?;
    for o in ops {
        if let Some(why) = protected.check(&o.path) {
            return Err(Error::Protected {
                path: o.path.clone(),
                why: why.to_string(),
            });
        }
    }
    // A path the index does not have yet (a new file) carries no skip-worktree bit:
    // git's own sparse rules say whether it is in the cone (`git add` refuses it if not).
    let sparse = repo
        .git
        .config_snapshot()
        .boolean("core.sparseCheckout")
        .unwrap_or(false);
    if sparse && !ops.is_empty() {
        let mut input = String::new();
        for o in ops {
            input.push_str(&o.path);
            input.push('\0');
        }
        // A git without `check-rules` (before 2.41) leaves new files unchecked, as before.
        let Ok(inside) = git(
            repo,
            &["sparse-checkout", "check-rules", "-z"],
            Some(input.as_bytes()),
            &[],
        ) else {
            return Ok(());
        };
        let inside: std::collections::HashSet<&str> =
            inside.split('\0').filter(|p| !p.is_empty()).collect();
        if let Some(o) = ops.iter().find(|o| !inside.contains(o.path.as_str())) {
            return Err(Error::Protected {
                path: o.path.clone(),
                why: crate::repo::Protection::Sparse.to_string(),
            });
        }
    }
    Ok(())
}

/// What `apply --index`/`--commit` prepared before the point of no return.
pub(super) struct Staging {
    lock: IndexLock,
    /// The index entries to write: each touched path with its staged side (`None`
    /// removes it).
    entries: Vec<Staged>,
    made: Option<MadeCommit>,
}

/// Before the point of no return: the index lock, the staged blobs and, for
/// `--commit`, the check for other changes and the commit object. `None` when the
/// apply touches neither index nor HEAD.
pub(super) fn prepare(
    repo: &Repo,
    preview: &Preview,
    ops: &[PathOp],
    opts: &ApplyOptions,
    reason: Option<&str>,
) -> Result<Option<Staging>, Error> {
    if !opts.index && opts.commit.is_none() {
        return Ok(None);
    }
    let lock = IndexLock::acquire(repo)?;
    let entries = staged_entries(repo, ops)?;
    let made = match &opts.commit {
        Some(message) => {
            check_commit_possible(repo, ops)?;
            Some(prepare_commit(
                repo,
                preview,
                &entries,
                reason,
                message.as_deref(),
                opts.agent.as_deref(),
                opts.verified.as_deref(),
            )?)
        }
        None => None,
    };
    Ok(Some(Staging {
        lock,
        entries,
        made,
    }))
}

impl Staging {
    /// The commit `--commit` will put on HEAD.
    pub(super) fn commit_id(&self) -> Option<ObjectId> {
        self.made.as_ref().map(|m| m.id)
    }

    /// After the work tree is written: HEAD (for `--commit`), then the index.
    pub(super) fn publish(self, repo: &Repo) -> Result<Option<ObjectId>, Error> {
        let made = self.made.as_ref().map(|m| m.id);
        if let Some(m) = &self.made {
            publish_commit(repo, m)?;
        }
        write_index(repo, self.lock, &self.entries)?;
        Ok(made)
    }
}

/// Finishes an `apply --commit` killed past its point of no return: the work tree is
/// done and the `applied` event names commit `made`, but HEAD and the index were not
/// published. Puts `made` on HEAD when HEAD is still the commit it was made on (or is
/// `made` already), then sets the index entries of `paths` to HEAD's, as the run would
/// have. When HEAD moved on meanwhile nothing is changed. Returns a note saying which.
/// The caller holds the repository lock, and the index lock is free.
pub fn complete_commit(repo: &Repo, made: &str, paths: &[String]) -> Result<String, Error> {
    let Ok(made_id) = ObjectId::from_hex(made.as_bytes()) else {
        return Ok(format!("made-commit-unknown: {made} is not a commit id"));
    };
    let commit = repo
        .git
        .find_commit(made_id)
        .map_err(Error::git(format!("read commit {made}")))?;
    let parent = commit.parent_ids().next().map(|p| p.detach());
    let subject = commit
        .message_raw()
        .map(|m| {
            m.lines()
                .next()
                .unwrap_or_default()
                .to_str_lossy()
                .into_owned()
        })
        .unwrap_or_default();
    let head = repo.head_commit();
    let short = &made[..made.len().min(12)];
    if head != Some(made_id) {
        if head != parent {
            return Ok(format!(
                "made-commit-not-on-head: the interrupted apply --commit made {short}, which \
                 never reached HEAD, and HEAD has moved since: the work tree holds the change; \
                 `git add` its files and `git commit -C {short}` to make it"
            ));
        }
        publish_commit(
            repo,
            &MadeCommit {
                id: made_id,
                head,
                subject,
            },
        )?;
    }
    let lock = IndexLock::acquire(repo)?;
    let scratch = lock.scratch()?;
    let env = [
        ("GIT_INDEX_FILE", scratch.as_os_str()),
        ("GIT_LITERAL_PATHSPECS", std::ffi::OsStr::new("1")),
    ];
    let mut args = vec!["reset", "-q", made, "--"];
    args.extend(paths.iter().map(String::as_str));
    let written = git(repo, &args, None, &env).and_then(|_| {
        let _ = git(repo, &["update-index", "-q", "--refresh"], None, &env);
        lock.commit(&scratch)
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&scratch);
    }
    written?;
    Ok(format!(
        "made-commit-completed: the interrupted apply --commit's commit {short} is on HEAD \
         and its files are staged, as the run would have left them"
    ))
}

/// What `undo` prepared before its point of no return.
pub(super) struct UndoStaging {
    /// `undo --index`: the lock and the entries to write.
    restore: Option<(IndexLock, Vec<Staged>)>,
    /// The commit the undone `apply --commit` made.
    commit_kept: Option<String>,
}

/// Before undo's point of no return: with `--index`, the index lock and the entries to
/// restore (the before side, as `git add` would stage it).
pub(super) fn prepare_undo(
    repo: &Repo,
    txn_commit: ObjectId,
    ops: &[PathOp],
    restore_index: bool,
) -> Result<UndoStaging, Error> {
    let commit_kept = journal::find_newest(repo, |e| {
        e.txn_commit == txn_commit && e.event.event == journal::EventKind::Applied
    })?
    .and_then(|e| e.event.made_commit)
    // Only one HEAD still has: a crash can keep a made commit off the branch.
    .filter(|c| git(repo, &["merge-base", "--is-ancestor", c, "HEAD"], None, &[]).is_ok());
    let restore = if restore_index {
        let lock = IndexLock::acquire(repo)?;
        let entries = staged_entries(repo, ops)?;
        Some((lock, entries))
    } else {
        None
    };
    Ok(UndoStaging {
        restore,
        commit_kept,
    })
}

impl UndoStaging {
    /// After the work tree is restored: the index (with `--index`), or which of its
    /// entries still hold the applied content, and the commit that stays in history.
    pub(super) fn finish(
        self,
        repo: &Repo,
        ops: &[PathOp],
        report: &mut super::ApplyReport,
    ) -> Result<(), Error> {
        report.commit_kept = self.commit_kept;
        if let Some((lock, entries)) = self.restore {
            write_index(repo, lock, &entries)?;
            report.index_restored = true;
            return Ok(());
        }
        report.index_left = index_holding_applied(repo, ops)?;
        Ok(())
    }
}

/// Of undo's ops (`from`: the applied side, `to`: the restored one), the paths whose
/// index entry holds the applied side, raw or as `git add` stages it.
fn index_holding_applied(repo: &Repo, ops: &[PathOp]) -> Result<Vec<String>, Error> {
    let index = repo
        .git
        .index_or_empty()
        .map_err(Error::git("read the index"))?;
    let in_index = |path: &str| {
        index
            .entry_by_path_and_stage(path.into(), gix::index::entry::Stage::Unconflicted)
            .map(|e| (e.id, e.mode.bits()))
    };
    let bits = |s: Option<Side>| s.map(|s| (s.blob, mode_bits(s.mode)));
    // Entries that match neither raw side need the staged forms to tell.
    let unsure: Vec<&PathOp> = ops
        .iter()
        .filter(|o| {
            let now = in_index(&o.path);
            now != bits(o.to) && (o.from.is_none() || now != bits(o.from))
        })
        .collect();
    let sides = |pick: fn(&PathOp) -> Option<Side>| -> Result<Vec<Option<Side>>, Error> {
        let wanted: Vec<(&str, Side)> = unsure
            .iter()
            .filter_map(|o| pick(o).map(|s| (o.path.as_str(), s)))
            .collect();
        let mut staged = staged_sides(repo, &wanted)?.into_iter();
        Ok(unsure
            .iter()
            .map(|o| pick(o).and_then(|_| staged.next()))
            .collect())
    };
    let staged_applied = sides(|o| o.from)?;
    let staged_restored = sides(|o| o.to)?;
    // By path: a search of `unsure` per op was quadratic when many entries are unsure.
    let unsure_at: std::collections::HashMap<&str, usize> = unsure
        .iter()
        .enumerate()
        .map(|(i, u)| (u.path.as_str(), i))
        .collect();
    let mut left = Vec::new();
    for o in ops {
        let now = in_index(&o.path);
        if now == bits(o.to) || o.from == o.to {
            continue;
        }
        if o.from.is_some() && now == bits(o.from) {
            left.push(o.path.clone());
            continue;
        }
        if let Some(&i) = unsure_at.get(o.path.as_str()) {
            let applied = bits(staged_applied[i]);
            if now != bits(staged_restored[i]) && now == applied {
                left.push(o.path.clone());
            }
        }
    }
    Ok(left)
}

/// Each op's `to` side as `git add` would stage it.
fn staged_entries(repo: &Repo, ops: &[PathOp]) -> Result<Vec<Staged>, Error> {
    let wanted: Vec<(&str, Side)> = ops
        .iter()
        .filter_map(|o| o.to.map(|s| (o.path.as_str(), s)))
        .collect();
    let mut staged = staged_sides(repo, &wanted)?.into_iter();
    Ok(ops
        .iter()
        .map(|o| (o.path.clone(), o.to.and_then(|_| staged.next())))
        .collect())
}

/// The attributes that make `git add` stage something other than the raw bytes.
const CONVERSION_ATTRS: [&str; 6] = [
    "text",
    "eol",
    "crlf",
    "filter",
    "ident",
    "working-tree-encoding",
];

/// What `git add` would stage for each (path, raw side): the same blob unless a
/// conversion applies, in which case git computes it (`hash-object --path`, writing
/// the blob). Symlinks are never converted.
pub(super) fn staged_sides(repo: &Repo, items: &[(&str, Side)]) -> Result<Vec<Side>, Error> {
    let files: Vec<&str> = items
        .iter()
        .filter(|(_, s)| s.mode != FileMode::Symlink)
        .map(|(p, _)| *p)
        .collect();
    if files.is_empty() {
        return Ok(items.iter().map(|(_, s)| *s).collect());
    }
    let autocrlf = repo
        .git
        .config_snapshot()
        .string("core.autocrlf")
        .map(|v| {
            let v = v.to_string().to_ascii_lowercase();
            !matches!(v.as_str(), "false" | "no" | "off" | "0" | "")
        })
        .unwrap_or(false);
    let attrs = check_attr(repo, &files)?;
    let index = repo
        .git
        .index_or_empty()
        .map_err(Error::git("read the index"))?;
    let git_at = GitAt::of(repo);
    let mut out = Vec::with_capacity(items.len());
    // Blobs are read a batch at a time (memory holds one batch); git runs in parallel.
    for batch in items.chunks(HASH_BATCH) {
        let mut jobs: Vec<(usize, Vec<u8>, bool)> = Vec::new();
        for (i, (path, side)) in batch.iter().enumerate() {
            out.push(*side);
            if side.mode == FileMode::Symlink {
                continue;
            }
            let a = attrs.get(*path);
            let attr = |name: &str| {
                a.and_then(|m| m.get(name))
                    .map(String::as_str)
                    .unwrap_or("unspecified")
            };
            let specified = |name: &str| attr(name) != "unspecified";
            if !autocrlf && !CONVERSION_ATTRS.iter().any(|n| specified(n)) {
                continue;
            }
            // git's "safer autocrlf": with `text=auto` (or autocrlf and no text
            // attribute) a file whose index blob has a CR is not converted.
            let auto_text = attr("text") == "auto"
                || (autocrlf && !specified("text") && !specified("crlf") && !specified("eol"));
            let mut no_autocrlf = false;
            if auto_text && index_blob_has_cr(repo, &index, path)? {
                let other = ["filter", "ident", "working-tree-encoding"]
                    .iter()
                    .any(|n| specified(n));
                if !other {
                    continue;
                }
                no_autocrlf = true;
            }
            jobs.push((i, store::blob(repo, side.blob)?, no_autocrlf));
        }
        let base = out.len() - batch.len();
        use rayon::prelude::*;
        let hashed: Vec<Result<(usize, ObjectId), Error>> = jobs
            .par_iter()
            .map(|(i, bytes, no_autocrlf)| {
                let path = batch[*i].0;
                let path_arg = format!("--path={path}");
                let mut args: Vec<&str> = Vec::new();
                if *no_autocrlf {
                    args.extend(["-c", "core.autocrlf=false"]);
                }
                args.extend(["hash-object", "-w", path_arg.as_str(), "--stdin"]);
                let printed = git_at.run(&args, Some(bytes), &[]).map_err(|e| match e {
                    // e.g. `core.safecrlf=true` on an irreversible conversion: git add
                    // refuses too.
                    Error::Io { source, .. } => Error::Refused {
                        path: path.to_string(),
                        why: format!("git cannot stage it: {source}"),
                    },
                    e => e,
                })?;
                let blob = ObjectId::from_hex(printed.trim().as_bytes()).map_err(|_| {
                    Error::Corrupt(format!("git hash-object printed '{}'", printed.trim()))
                })?;
                Ok((*i, blob))
            })
            .collect();
        for h in hashed {
            let (i, blob) = h?;
            out[base + i].blob = blob;
        }
    }
    Ok(out)
}

/// Files hashed per batch by [`staged_sides`].
const HASH_BATCH: usize = 64;

fn index_blob_has_cr(repo: &Repo, index: &gix::worktree::Index, path: &str) -> Result<bool, Error> {
    let Some(e) =
        index.entry_by_path_and_stage(path.into(), gix::index::entry::Stage::Unconflicted)
    else {
        return Ok(false);
    };
    if e.mode != gix::index::entry::Mode::FILE && e.mode != gix::index::entry::Mode::FILE_EXECUTABLE
    {
        return Ok(false);
    }
    Ok(store::blob(repo, e.id)?.contains(&b'\r'))
}

type Attrs = std::collections::HashMap<String, std::collections::HashMap<String, String>>;

/// `git check-attr` of the conversion attributes for `paths`, as git sees them now.
fn check_attr(repo: &Repo, paths: &[&str]) -> Result<Attrs, Error> {
    let mut input = Vec::new();
    for p in paths {
        input.extend_from_slice(p.as_bytes());
        input.push(0);
    }
    let mut args = vec!["check-attr", "-z", "--stdin"];
    args.extend(CONVERSION_ATTRS);
    let out = git(repo, &args, Some(&input), &[])?;
    let mut attrs = Attrs::new();
    let fields: Vec<&str> = out.split('\0').collect();
    for f in fields.chunks_exact(3) {
        attrs
            .entry(f[0].to_string())
            .or_default()
            .insert(f[1].to_string(), f[2].to_string());
    }
    Ok(attrs)
}

/// Writes `entries` into the index under `lock` and refreshes its stat data, so that
/// `git status` need not re-hash the touched files.
fn write_index(repo: &Repo, lock: IndexLock, entries: &[Staged]) -> Result<(), Error> {
    let zero = ObjectId::null(repo.git.object_hash());
    let mut input = String::new();
    for (path, side) in entries {
        match side {
            Some(s) => input.push_str(&format!("{:o} {}\t{path}\0", mode_bits(s.mode), s.blob)),
            None => input.push_str(&format!("0 {zero}\t{path}\0")),
        }
    }
    let scratch = lock.scratch()?;
    let env = [("GIT_INDEX_FILE", scratch.as_os_str())];
    // git's `update-index --refresh` writes a split index whole (its `link` extension
    // gone) when it writes at all; `git add` keeps it split. So a split index is split
    // again after the refresh. (gix reads a split index whole and does not say it was
    // split: git tells.)
    let split = git(repo, &["rev-parse", "--shared-index-path"], None, &[])
        .is_ok_and(|out| !out.trim().is_empty());
    let sparse_index = repo
        .git
        .config_snapshot()
        .boolean("index.sparse")
        .unwrap_or(false);
    let written = git(
        repo,
        &["update-index", "-z", "--index-info"],
        Some(input.as_bytes()),
        &env,
    )
    .and_then(|_| {
        // A refresh that reports other modified paths is not an error.
        let _ = git(repo, &["update-index", "-q", "--refresh"], None, &env);
        if split {
            // Not worth failing over: the index is right, only no longer split.
            let _ = git(repo, &["update-index", "--split-index"], None, &env);
        }
        if sparse_index {
            // A sparse index's cache tree names trees that update-index computes but
            // does not write (`git fsck`: "missing tree"); `git add` writes them.
            // It refuses an index with conflicts: then fsck's complaint stays, as before.
            let _ = git(repo, &["write-tree"], None, &env);
        }
        lock.commit(&scratch)
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&scratch);
    }
    written
}

/// `--commit` refuses paths whose index or HEAD entry holds anything but the preview's
/// before side (as `git add` would stage it): those changes would be swept into the
/// commit.
fn check_commit_possible(repo: &Repo, ops: &[PathOp]) -> Result<(), Error> {
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
    let froms: Vec<(&str, Side)> = ops
        .iter()
        .filter_map(|o| o.from.map(|s| (o.path.as_str(), s)))
        .collect();
    let mut staged_from = staged_sides(repo, &froms)?.into_iter();
    let mut staged = Vec::new();
    let mut uncommitted = Vec::new();
    for o in ops {
        let from = o.from.and_then(|_| staged_from.next());
        let path: &gix::bstr::BStr = o.path.as_str().into();
        use gix::index::entry::Stage;
        let conflicted = [Stage::Base, Stage::Ours, Stage::Theirs]
            .into_iter()
            .any(|s| index.entry_by_path_and_stage(path, s).is_some());
        let in_index = index
            .entry_by_path_and_stage(path, Stage::Unconflicted)
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
        } else if in_head != from.map(|s| (s.blob, mode_bits(s.mode))) {
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

fn git(
    repo: &Repo,
    args: &[&str],
    stdin: Option<&[u8]>,
    env: &[(&str, &std::ffi::OsStr)],
) -> Result<String, Error> {
    GitAt::of(repo).run(args, stdin, env)
}

/// Where git runs for a repository: plain paths, so that threads can share it.
struct GitAt {
    git_dir: PathBuf,
    workdir: PathBuf,
}

impl GitAt {
    fn of(repo: &Repo) -> GitAt {
        GitAt {
            git_dir: repo.git_dir.clone(),
            workdir: repo.workdir.clone(),
        }
    }

    fn run(
        &self,
        args: &[&str],
        stdin: Option<&[u8]>,
        env: &[(&str, &std::ffi::OsStr)],
    ) -> Result<String, Error> {
        let mut cmd = std::process::Command::new("git");
        cmd.arg("--git-dir")
            .arg(&self.git_dir)
            .arg("--work-tree")
            .arg(&self.workdir)
            .args(args)
            .envs(env.iter().copied())
            .current_dir(&self.workdir)
            .stdin(if stdin.is_some() {
                std::process::Stdio::piped()
            } else {
                std::process::Stdio::null()
            })
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let what = format!(
            "git {}",
            args.iter()
                .find(|a| !a.starts_with('-') && !a.contains('='))
                .copied()
                .unwrap_or("")
        );
        let mut child = cmd.spawn().map_err(Error::io("run", &what))?;
        // Written from a thread: git may fill its output pipe before reading all input.
        let writer = match (stdin, child.stdin.take()) {
            (Some(input), Some(mut pipe)) => {
                let input = input.to_vec();
                Some(std::thread::spawn(move || pipe.write_all(&input)))
            }
            _ => None,
        };
        let out = child.wait_with_output().map_err(Error::io("run", &what))?;
        // git's own complaint first: a broken pipe only says that it stopped reading.
        if !out.status.success() {
            return Err(Error::Io {
                action: "run",
                path: what,
                source: std::io::Error::other(
                    String::from_utf8_lossy(&out.stderr).trim().to_string(),
                ),
            });
        }
        if let Some(w) = writer {
            match w.join() {
                Ok(r) => r.map_err(Error::io("write to", &what))?,
                Err(_) => {
                    return Err(Error::io("write to", &what)(std::io::Error::other(
                        "the writer thread panicked",
                    )))
                }
            }
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// A `--commit` commit, written but not yet on HEAD.
struct MadeCommit {
    id: ObjectId,
    /// HEAD when it was made: its parent, and what HEAD must still be to move it.
    head: Option<ObjectId>,
    subject: String,
}

/// `--commit`: writes a commit whose tree is HEAD's with exactly the preview's changes.
fn prepare_commit(
    repo: &Repo,
    preview: &Preview,
    entries: &[Staged],
    reason: Option<&str>,
    message: Option<&str>,
    agent: Option<&str>,
    verified: Option<&str>,
) -> Result<MadeCommit, Error> {
    let head = repo.head_commit();
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
    if let Some(a) = agent {
        trailers.push_str(&agent_trailer(a));
    }
    if let Some(v) = verified {
        trailers.push_str(&format!(
            "Astedit-Verified: {}\n",
            crate::text::escape_line(v.lines().next().unwrap_or(""))
        ));
    }
    let changes: Vec<(&str, Option<(ObjectId, FileMode)>)> = entries
        .iter()
        .map(|(path, side)| (path.as_str(), side.as_ref().map(|s| (s.blob, s.mode))))
        .collect();
    let message = format!("{}\n\n{trailers}", subject.trim_end());
    let id = super::commit::write_commit(repo, head, &changes, &message)?;
    Ok(MadeCommit {
        id,
        head,
        subject: subject.lines().next().unwrap_or("").to_string(),
    })
}

/// `Astedit-Agent: NAME` for a commit an agent (MCP client) made. A trailer is one
/// line: control characters are escaped, as `git astedit log` shows client names.
pub fn agent_trailer(agent: &str) -> String {
    format!(
        "Astedit-Agent: {}\n",
        crate::text::escape_line(agent.trim())
    )
}

/// Moves HEAD (through its branch) to the made commit, if HEAD did not move meanwhile.
fn publish_commit(repo: &Repo, made: &MadeCommit) -> Result<(), Error> {
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
    match journal::commit_edits_as(repo, vec![edit], "head") {
        Err(Error::Git { source, .. }) if source.is_conflict() => Err(Error::Concurrent(
            "HEAD (the work tree is applied, but no commit was made)".into(),
        )),
        other => other,
    }
}
