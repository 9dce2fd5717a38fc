/*!
Previews as git objects: commit P (after-blobs of the touched paths) on top of commit
B (before-blobs), named by `refs/astedit/<id>` with id = the first 12 hex digits of P.
B has no parent, or (a preview staged with a record of its sites, which `review`
reads instead of re-running the recipe) one: commit S, whose tree holds that record.

P's message is human-readable first (summary, then a metadata block) and ends with
the [`PreviewMeta`] as JSON between two marker lines, so `git show` reads well and we
can parse the metadata back without a side file. The JSON also carries the staging
time in nanoseconds: commit dates have one-second resolution (and honour a pinned
`GIT_COMMITTER_DATE`), which is not enough to tell "newest" apart.
*/

use std::collections::BTreeMap;

use std::borrow::Cow;

use gix::bstr::ByteSlice;
use gix::objs::tree::EntryKind;
use gix::objs::Kind;
use gix::refs::transaction::PreviousValue;
use gix::ObjectId;
use serde::Deserialize;
use serde::Serialize;

use super::journal;
use super::journal::Event;
use super::journal::EventKind;
use super::objects::ObjectBatch;
use super::Error;
use super::Preview;
use super::StoredEntry;
use crate::change::ChangeSet;
use crate::change::FileChange;
use crate::change::FileMode;
use crate::change::PreviewMeta;
use crate::repo::Repo;

mod refs;
mod split;

pub use refs::list;
pub use refs::list_checked;
pub use refs::remove_bad;
pub use refs::scan;
pub use refs::BadRef;
pub use split::mark_selected;
pub use split::split;
pub use split::split_into;
pub use split::split_parts;
pub use split::Part;
pub use split::Split;

/// Where pending previews live.
pub const REF_PREFIX: &str = "refs/astedit/";
const META_BEGIN: &str = "--- astedit-meta v1 ---";
const META_END: &str = "--- end astedit-meta ---";
/// Hex digits in a preview id.
pub const ID_LEN: usize = 12;

/// The machine-readable block at the end of P's message.
#[derive(Debug, Serialize, Deserialize)]
struct Envelope {
    staged_at_ns: u64,
    meta: PreviewMeta,
}

/// Stores `changes` as a new pending preview and records a `staged` journal event.
pub fn stage(repo: &Repo, changes: &ChangeSet, meta: &PreviewMeta) -> Result<Preview, Error> {
    let mut stager = Stager::new(repo);
    for c in &changes.changes {
        stager.add_borrowed(c)?;
    }
    stager.finish(meta)
}

/// Builds a preview file by file: each change's contents go into the object batch as
/// they arrive (compressed, once the batch is large enough for a pack) and only their
/// ids are kept, so a large edit need not hold every file's text until it is staged.
/// Nothing is visible in the repository before [`finish`](Stager::finish).
pub struct Stager<'a> {
    repo: &'a Repo,
    objects: ObjectBatch<'a>,
    files: Vec<StagedFile>,
    /// Where each site of the preview is (see [`Stager::record_sites`]).
    sites: Option<Vec<u8>>,
}

/// One path of a preview being built.
pub(super) struct StagedFile {
    pub(super) path: String,
    pub(super) before: Option<(ObjectId, FileMode)>,
    pub(super) after: Option<(ObjectId, FileMode)>,
}

impl<'a> Stager<'a> {
    pub fn new(repo: &'a Repo) -> Stager<'a> {
        Stager {
            repo,
            objects: ObjectBatch::new(&repo.git),
            files: Vec::new(),
            sites: None,
        }
    }

    /// Adds a change, taking its contents.
    pub fn add(&mut self, change: FileChange) -> Result<(), Error> {
        let FileChange {
            path,
            before,
            after,
        } = change;
        let before = self.add_side(before.map(|c| (Cow::Owned(c.bytes), c.mode)))?;
        let after = self.add_side(after.map(|c| (Cow::Owned(c.bytes), c.mode)))?;
        self.files.push(StagedFile {
            path,
            before,
            after,
        });
        Ok(())
    }

    /// Adds a change whose contents outlive the stager.
    pub fn add_borrowed(&mut self, change: &'a FileChange) -> Result<(), Error> {
        let side = |c: &'a Option<crate::change::FileContent>| {
            c.as_ref()
                .map(|c| (Cow::Borrowed(c.bytes.as_slice()), c.mode))
        };
        let before = self.add_side(side(&change.before))?;
        let after = self.add_side(side(&change.after))?;
        self.files.push(StagedFile {
            path: change.path.clone(),
            before,
            after,
        });
        Ok(())
    }

    /// Adds a path of a stored preview as it is: its blobs are already in the
    /// object database (a refresh keeps the blobs of the files it leaves alone).
    pub fn add_stored(&mut self, entry: &StoredEntry) {
        self.files.push(StagedFile {
            path: entry.path.clone(),
            before: entry.before,
            after: entry.after,
        });
    }

    /// Records where each site of the preview is, as `review` reads it back
    /// ([`sites_record`]): a blob in a commit of its own, the before commit's parent, so
    /// that it lives, travels and is pruned with the preview.
    pub fn record_sites(&mut self, record: Option<Vec<u8>>) {
        self.sites = record;
    }

    /// The paths added so far.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether nothing was added.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The stamped metadata, the sorted files and the object batch: the parts
    /// [`super::refresh`] builds a successor from.
    pub(super) fn into_parts(
        self,
        meta: &PreviewMeta,
    ) -> (Vec<StagedFile>, ObjectBatch<'a>, PreviewMeta) {
        let mut stamped = meta.clone();
        if stamped.base_head.is_none() {
            stamped.base_head = self.repo.head_commit().map(|id| id.to_string());
        }
        if stamped.tool_version.is_empty() {
            stamped.tool_version = crate::VERSION.to_string();
        }
        if stamped.made_by.is_none() {
            stamped.made_by = Some(made_by(self.repo));
        }
        let Stager {
            objects, mut files, ..
        } = self;
        files.sort_by(|a, b| a.path.cmp(&b.path));
        (files, objects, stamped)
    }

    fn add_side(
        &mut self,
        side: Option<(Cow<'a, [u8]>, FileMode)>,
    ) -> Result<Option<(ObjectId, FileMode)>, Error> {
        side.map(|(bytes, mode)| Ok((self.objects.add(Kind::Blob, bytes)?, mode)))
            .transpose()
    }

    /// Writes the objects, the two commits and the preview's ref, and records a
    /// `staged` journal event. The one place that stamps the metadata every preview
    /// carries: the HEAD it was staged on and the tool version (callers set the kind,
    /// counts and agent).
    pub fn finish(self, meta: &PreviewMeta) -> Result<Preview, Error> {
        let mut stamped = meta.clone();
        if stamped.base_head.is_none() {
            stamped.base_head = self.repo.head_commit().map(|id| id.to_string());
        }
        if stamped.tool_version.is_empty() {
            stamped.tool_version = crate::VERSION.to_string();
        }
        if stamped.made_by.is_none() {
            stamped.made_by = Some(made_by(self.repo));
        }
        let meta = &stamped;
        let Stager {
            repo,
            objects,
            mut files,
            sites,
        } = self;
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let sign = super::sign::signing(repo);
        let p_id = build_preview(repo, objects, &files, meta, sign, sites)?;
        record_staged(repo, &files, meta, p_id)
    }
}

/// Who stages a preview here: the git identity, as the journal's events name it.
fn made_by(repo: &Repo) -> String {
    let sig = repo.signature();
    format!("{} <{}>", sig.name, sig.email)
}

/// Writes the trees, the two commits and every object of a preview over `changes`
/// (sorted by path); no ref, no journal event. With `sign` both commits are signed by
/// git ([`super::sign::commit`]); a signing failure fails the build. With `sites` (a
/// record of where the preview's sites are), the before commit gets a parent holding
/// it ([`sites_record`]).
pub(super) fn build_preview(
    repo: &Repo,
    mut objects: ObjectBatch<'_>,
    changes: &[StagedFile],
    meta: &PreviewMeta,
    sign: bool,
    sites: Option<Vec<u8>>,
) -> Result<ObjectId, Error> {
    validate(changes)?;
    let git = &repo.git;
    let find: &dyn gix::objs::FindExt = &git.objects;
    let mut before =
        gix::objs::tree::Editor::new(gix::objs::Tree::empty(), find, git.object_hash());
    let mut after = gix::objs::tree::Editor::new(gix::objs::Tree::empty(), find, git.object_hash());
    for c in changes {
        if let Some((id, mode)) = c.before {
            before
                .upsert(c.path.split('/'), super::commit::entry_kind(mode), id)
                .map_err(Error::git(format!("add {} to a tree", c.path)))?;
        }
        if let Some((id, mode)) = c.after {
            after
                .upsert(c.path.split('/'), super::commit::entry_kind(mode), id)
                .map_err(Error::git(format!("add {} to a tree", c.path)))?;
        }
    }
    let before_tree = before.write(|tree| objects.add_object(tree))?;
    let after_tree = after.write(|tree| objects.add_object(tree))?;
    let sites = sites
        .map(|record| sites_commit(repo, &mut objects, record, meta))
        .transpose()?;
    let trees = (before_tree, after_tree, sites);
    write_commits(repo, objects, changes, trees, meta, sign)
}

/// The name of the record's blob in its commit's tree.
const SITES_FILE: &str = "sites";

/// The commit holding a preview's record of sites (one blob, [`SITES_FILE`]), with no
/// parent: the before commit's parent.
fn sites_commit(
    repo: &Repo,
    objects: &mut ObjectBatch<'_>,
    record: Vec<u8>,
    meta: &PreviewMeta,
) -> Result<ObjectId, Error> {
    let blob = objects.add(Kind::Blob, Cow::Owned(record))?;
    let tree = gix::objs::Tree {
        entries: vec![gix::objs::tree::Entry {
            mode: EntryKind::Blob.into(),
            filename: SITES_FILE.into(),
            oid: blob,
        }],
    };
    let tree = objects.add_object(&tree)?;
    let commit = super::commit::object(
        &repo.signature(),
        tree,
        [],
        format!(
            "astedit sites: {}\n\nWhere each site of the preview is and what made it, as staging \
found them (`git astedit review` reads it, after checking it against the blobs).\n",
            one_line(&meta.summary)
        ),
    );
    objects.add_object(&commit)
}

/// The record of sites preview `p` was staged with ([`Stager::record_sites`]): the
/// blob in its before commit's parent. `None` when it has none (an older preview, a
/// refresh's successor, a patch) or it cannot be read. Nothing vouches for it: a
/// preview may come from another clone.
pub fn sites_record(repo: &Repo, p: ObjectId) -> Option<Vec<u8>> {
    let git = &repo.git;
    let b = git.find_commit(p).ok()?.parent_ids().next()?.detach();
    let s = git.find_commit(b).ok()?.parent_ids().next()?.detach();
    let tree = git.find_commit(s).ok()?.tree().ok()?;
    let entry = tree.find_entry(SITES_FILE)?;
    if entry.mode().kind() != EntryKind::Blob {
        return None;
    }
    Some(git.find_blob(entry.object_id()).ok()?.take_data())
}

/// The rest of [`build_preview`]: the commits, and every object to disk.
fn write_commits(
    repo: &Repo,
    mut objects: ObjectBatch<'_>,
    changes: &[StagedFile],
    (before_tree, after_tree, sites): (ObjectId, ObjectId, Option<ObjectId>),
    meta: &PreviewMeta,
    sign: bool,
) -> Result<ObjectId, Error> {
    let staged_at_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let sig = repo.signature();
    let b_commit = super::commit::object(
        &sig,
        before_tree,
        sites,
        format!(
            "astedit before: {}\n\nThe work-tree contents the preview was computed from.\n",
            one_line(&meta.summary)
        ),
    );
    let message = preview_message(changes, meta, staged_at_ns)?;
    if sign {
        // git writes signed commits itself, over trees it must find written.
        objects.write()?;
        let b_id = super::sign::commit(repo, &b_commit, "the preview's before commit")?;
        let p_commit = super::commit::object(&sig, after_tree, [b_id], message);
        return super::sign::commit(repo, &p_commit, "the preview commit");
    }
    let b_id = objects.add_object(&b_commit)?;
    let p_commit = super::commit::object(&sig, after_tree, [b_id], message);
    let p_id = objects.add_object(&p_commit)?;
    // Objects first, then the ref that makes them reachable.
    objects.write()?;
    Ok(p_id)
}

/// Makes a built preview pending: its ref and a `staged` event, in one transaction.
fn record_staged(
    repo: &Repo,
    changes: &[StagedFile],
    meta: &PreviewMeta,
    p_id: ObjectId,
) -> Result<Preview, Error> {
    let id = short_id(p_id);

    let mut event = Event::new(repo, EventKind::Staged, &id, p_id);
    event.reason = meta.reason.clone();
    event.agent = meta.agent.clone();
    event.kind = Some(meta.kind);
    event.files = changes.iter().map(|c| c.path.clone()).collect();
    let pending = journal::update_edit(
        &format!("{REF_PREFIX}{id}"),
        PreviousValue::MustNotExist,
        p_id,
        "astedit: staged",
    )?;
    journal::append(repo, &event, p_id, vec![pending])?;
    // Made here: after the ref, so that a crash between the two leaves the preview
    // untrusted (it can be trusted by hand), never a record without its preview that a
    // `gc` running meanwhile could not tell from one to prune. A record that cannot be
    // written leaves it untrusted the same way; the stage itself succeeded.
    let mut made = super::trusted::TrustRecord::new(repo, super::trusted::Vouched::MadeHere);
    made.agent = meta.agent.clone();
    let _ = super::trusted::record(repo, p_id, &made);
    read_preview(repo, p_id)
}

/// Refuses change sets that cannot be stored or written safely. `changes` is sorted
/// by path.
fn validate(changes: &[StagedFile]) -> Result<(), Error> {
    if changes.is_empty() {
        return Err(Error::InvalidChange("no file changes".into()));
    }
    let mut prev: Option<&str> = None;
    for c in changes {
        if let Err(why) = super::fsutil::check_path_syntax(&c.path) {
            return Err(Error::Refused {
                path: c.path.clone(),
                why: why.to_string(),
            });
        }
        if c.before.is_none() && c.after.is_none() {
            return Err(Error::InvalidChange(format!(
                "path '{}' has neither a before nor an after side",
                c.path
            )));
        }
        if prev == Some(c.path.as_str()) {
            return Err(Error::InvalidChange(format!(
                "path '{}' appears twice",
                c.path
            )));
        }
        prev = Some(&c.path);
    }
    // A file that is also a folder of another touched path cannot be written in one
    // step. Each path's folders are looked up, not every pair compared.
    let paths: std::collections::HashSet<&str> = changes.iter().map(|c| c.path.as_str()).collect();
    for c in changes {
        let mut folder = c.path.as_str();
        while let Some(cut) = folder.rfind('/') {
            folder = &folder[..cut];
            if paths.contains(folder) {
                return Err(Error::InvalidChange(format!(
                    "path '{folder}' is both a file and a folder of other touched paths"
                )));
            }
        }
    }
    Ok(())
}

fn one_line(s: &str) -> String {
    s.lines().next().unwrap_or("").trim().to_string()
}

fn preview_message(
    changes: &[StagedFile],
    meta: &PreviewMeta,
    staged_at_ns: u64,
) -> Result<String, Error> {
    let mut m = format!("astedit {}: {}\n\n", meta.kind, one_line(&meta.summary));
    m.push_str(&format!("Kind: {}\n", meta.kind));
    if let Some(r) = &meta.reason {
        m.push_str(&format!("Reason: {}\n", one_line(r)));
    }
    for op in &meta.ops {
        m.push_str(&format!(
            "Op: {} => {}\n",
            one_line(&op.pattern),
            one_line(&op.rewrite)
        ));
    }
    if let Some(d) = &meta.patch_digest {
        m.push_str(&format!("Patch-Digest: {d}\n"));
    }
    if let Some(h) = &meta.base_head {
        m.push_str(&format!("Base-Head: {h}\n"));
    }
    if !meta.tool_version.is_empty() {
        m.push_str(&format!("Tool: git-astedit {}\n", meta.tool_version));
    }
    m.push_str("Files:\n");
    // By path, not a search per file: a preview may touch tens of thousands.
    let counts: std::collections::HashMap<&str, usize> = meta
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.count))
        .collect();
    for c in changes {
        let letter = match (&c.before, &c.after) {
            (None, _) => 'A',
            (_, None) => 'D',
            _ => 'M',
        };
        let count = counts
            .get(c.path.as_str())
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        m.push_str(&format!("  {letter} {}{count}\n", c.path));
    }
    let json = serde_json::to_string_pretty(&Envelope {
        staged_at_ns,
        meta: meta.clone(),
    })
    .map_err(|e| Error::Corrupt(format!("cannot encode preview metadata: {e}")))?;
    m.push_str(&format!("\n{META_BEGIN}\n{json}\n{META_END}\n"));
    Ok(m)
}

fn parse_envelope(commit: ObjectId, message: &[u8]) -> Result<Envelope, Error> {
    let text = message.to_str_lossy();
    let start = text
        .find(&format!("\n{META_BEGIN}\n"))
        .ok_or_else(|| Error::Corrupt(format!("commit {commit} is not an astedit preview")))?
        + META_BEGIN.len()
        + 2;
    let end = text[start..]
        .find(&format!("\n{META_END}"))
        .ok_or_else(|| Error::Corrupt(format!("commit {commit}: unterminated metadata")))?;
    serde_json::from_str(&text[start..start + end])
        .map_err(|e| Error::Corrupt(format!("commit {commit}: metadata: {e}")))
}

pub fn short_id(id: ObjectId) -> String {
    id.to_hex_with_len(ID_LEN).to_string()
}

/// Reads every file of a tree: path → (blob, mode).
fn tree_files(
    repo: &Repo,
    tree: ObjectId,
) -> Result<BTreeMap<String, (ObjectId, FileMode)>, Error> {
    let tree = repo
        .git
        .find_tree(tree)
        .map_err(Error::git(format!("read tree {tree}")))?;
    let files = tree
        .traverse()
        .breadthfirst
        .files()
        .map_err(Error::git("walk a preview tree"))?;
    let mut out = BTreeMap::new();
    for f in files {
        let mode = match f.mode.kind() {
            EntryKind::Blob => FileMode::Regular,
            EntryKind::BlobExecutable => FileMode::Executable,
            EntryKind::Link => FileMode::Symlink,
            EntryKind::Tree => continue,
            EntryKind::Commit => {
                return Err(Error::Corrupt(format!(
                    "preview tree holds a submodule at {}",
                    f.filepath
                )))
            }
        };
        out.insert(f.filepath.to_str_lossy().into_owned(), (f.oid, mode));
    }
    Ok(out)
}

/// Reads a preview back from its commit P (pending or not: the journal names it).
pub fn read_preview(repo: &Repo, p: ObjectId) -> Result<Preview, Error> {
    let commit = repo
        .git
        .find_commit(p)
        .map_err(Error::git(format!("read preview commit {p}")))?;
    let message = commit
        .message_raw()
        .map_err(Error::git(format!("read preview commit {p}")))?;
    let env = parse_envelope(p, message)?;
    let b = commit
        .parent_ids()
        .next()
        .ok_or_else(|| Error::Corrupt(format!("preview commit {p} has no parent")))?
        .detach();
    let p_tree = commit
        .tree_id()
        .map_err(Error::git(format!("read preview commit {p}")))?
        .detach();
    let b_tree = repo
        .git
        .find_commit(b)
        .map_err(Error::git(format!("read before commit {b}")))?
        .tree_id()
        .map_err(Error::git(format!("read before commit {b}")))?
        .detach();
    let before = tree_files(repo, b_tree)?;
    let after = tree_files(repo, p_tree)?;
    let mut paths: Vec<&String> = before.keys().chain(after.keys()).collect();
    paths.sort();
    paths.dedup();
    let entries = paths
        .into_iter()
        .map(|path| StoredEntry {
            path: path.clone(),
            before: before.get(path).copied(),
            after: after.get(path).copied(),
        })
        .collect();
    Ok(Preview {
        id: short_id(p),
        commit: p,
        time: (env.staged_at_ns / 1_000_000_000) as i64,
        meta: env.meta,
        entries,
    })
}

/// The bytes of a stored blob.
pub fn blob(repo: &Repo, id: gix::ObjectId) -> Result<Vec<u8>, Error> {
    Ok(repo
        .git
        .find_blob(id)
        .map_err(Error::git(format!("read blob {id}")))?
        .data
        .clone())
}

/// Writes `bytes` as a blob (a loose object, pruned by `git gc` when nothing refers to
/// it): what a content-addressed read keeps, so a later edit of that read can merge
/// three-way from it even after the file changed.
pub fn keep_blob(repo: &Repo, bytes: &[u8]) -> Result<gix::ObjectId, Error> {
    Ok(repo
        .git
        .write_blob(bytes)
        .map_err(|e| Error::Git {
            action: "write a blob".into(),
            source: Box::new(e),
        })?
        .detach())
}

/// Whether the object database holds blob `id`.
pub fn has_blob(repo: &Repo, id: gix::ObjectId) -> bool {
    repo.git.find_blob(id).is_ok()
}

/// [`blob`] without a copy: the buffer the object database read into is taken.
pub fn blob_data(repo: &Repo, id: gix::ObjectId) -> Result<Vec<u8>, Error> {
    Ok(repo
        .git
        .find_blob(id)
        .map_err(Error::git(format!("read blob {id}")))?
        .take_data())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::change::FileChange;
    use crate::change::FileContent;

    /// The staged form of `set`, sorted, with placeholder ids.
    fn staged(set: &ChangeSet) -> Vec<StagedFile> {
        let null = ObjectId::null(gix::hash::Kind::Sha1);
        let mut files: Vec<StagedFile> = set
            .changes
            .iter()
            .map(|c| StagedFile {
                path: c.path.clone(),
                before: c.before.as_ref().map(|b| (null, b.mode)),
                after: c.after.as_ref().map(|a| (null, a.mode)),
            })
            .collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        files
    }

    fn change(path: &str, before: Option<&str>, after: Option<&str>) -> FileChange {
        let c = |s: &str| FileContent {
            bytes: s.as_bytes().to_vec(),
            mode: FileMode::Regular,
        };
        FileChange {
            path: path.into(),
            before: before.map(c),
            after: after.map(c),
        }
    }

    #[test]
    fn metadata_survives_the_commit_message() {
        let changes = ChangeSet {
            changes: vec![
                change("a", Some("x"), Some("y")),
                change("b", None, Some("z")),
            ],
        };
        let meta = PreviewMeta {
            kind: crate::change::PreviewKind::Edit,
            summary: "2 replacements\nin 2 files".into(),
            reason: Some("tidy --- astedit-meta v1 ---".into()),
            replacements: 2,
            ..PreviewMeta::default()
        };
        let msg = preview_message(&staged(&changes), &meta, 42).expect("message");
        assert!(msg.starts_with("astedit edit: 2 replacements\n\n"), "{msg}");
        assert!(msg.contains("  M a\n  A b\n"), "{msg}");
        let id = ObjectId::null(gix::hash::Kind::Sha1);
        let env = parse_envelope(id, msg.as_bytes()).expect("parse");
        assert_eq!(env.staged_at_ns, 42);
        assert_eq!(env.meta, meta);
        assert!(parse_envelope(id, b"just a commit\n").is_err());
    }

    #[test]
    fn unstorable_change_sets_are_refused() {
        let dup = ChangeSet {
            changes: vec![change("a", None, Some("1")), change("a", None, Some("2"))],
        };
        assert!(matches!(
            validate(&staged(&dup)),
            Err(Error::InvalidChange(_))
        ));
        let nested = ChangeSet {
            changes: vec![change("a", Some("1"), None), change("a/b", None, Some("2"))],
        };
        assert!(matches!(
            validate(&staged(&nested)),
            Err(Error::InvalidChange(_))
        ));
        let escape = ChangeSet {
            changes: vec![change("../x", None, Some("1"))],
        };
        assert!(matches!(
            validate(&staged(&escape)),
            Err(Error::Refused { .. })
        ));
        assert!(matches!(validate(&[]), Err(Error::InvalidChange(_))));
    }
}
