//! Cutting a pending preview into parts (a partial apply's selection and remainder,
//! review's cut by decisions): one ref transaction replaces the parent by its parts.

use gix::refs::transaction::PreviousValue;
use gix::refs::Target;
use gix::ObjectId;

use super::build_preview;
use super::one_line;
use super::read_preview;
use super::short_id;
use super::StagedFile;
use super::REF_PREFIX;
use crate::change::PreviewMeta;
use crate::repo::Repo;
use crate::txn::journal;
use crate::txn::journal::Event;
use crate::txn::journal::EventKind;
use crate::txn::objects::ObjectBatch;
use crate::txn::Error;
use crate::txn::Preview;
use crate::txn::StoredEntry;

/// The two previews a split makes: the part selected and the remainder.
#[derive(Debug, Clone)]
pub struct Split {
    pub selected: Preview,
    pub remainder: Preview,
}

/// Cuts pending `preview` in two: the entries whose path is in `selected` and the
/// rest, each a new pending preview with the parent's metadata narrowed to its files
/// (`details.split_from` names the parent). One ref transaction removes the parent's
/// ref, creates both children's and appends a `split` event naming them, so the
/// parent is pending or split, never both. The caller holds the lock.
pub fn split(
    repo: &Repo,
    preview: &Preview,
    selected: &std::collections::BTreeSet<String>,
    pathspecs: &[String],
) -> Result<Split, Error> {
    let (picked, rest): (Vec<StoredEntry>, Vec<StoredEntry>) = preview
        .entries
        .iter()
        .cloned()
        .partition(|e| selected.contains(&e.path));
    match split_into(repo, preview, &picked, &rest, pathspecs, None)? {
        (selected, Some(remainder)) => Ok(Split {
            selected,
            remainder,
        }),
        (_, None) => Err(Error::InvalidChange(format!(
            "every path of preview {} is selected: nothing to split",
            preview.id
        ))),
    }
}

/// Cuts pending `preview` into `picked` and `rest` (entries whose sides need not be
/// the parent's: review's cut by decisions makes new blobs, a remainder's before side
/// being the picked part's after side), each a new pending preview with the parent's
/// metadata narrowed to its files; an empty `rest` makes no remainder. `by` names
/// what cut it in the parts' `details.split_by` (`None`: the pathspecs). One ref
/// transaction, as [`split`].
pub fn split_into(
    repo: &Repo,
    preview: &Preview,
    picked: &[StoredEntry],
    rest: &[StoredEntry],
    pathspecs: &[String],
    by: Option<&str>,
) -> Result<(Preview, Option<Preview>), Error> {
    let part = |entries: &[StoredEntry], part: &str| -> Part {
        let files: Vec<StagedFile> = entries.iter().map(staged_file).collect();
        let mut meta = narrowed_meta(
            &preview.meta,
            &preview.id,
            &files,
            preview.entries.len(),
            part,
        );
        if let Some(by) = by {
            mark_selected(&mut meta, by);
        }
        Part {
            entries: entries.to_vec(),
            meta,
            label: part.to_string(),
        }
    };
    let mut parts = vec![part(picked, "selected")];
    if !rest.is_empty() {
        parts.push(part(rest, "remainder"));
    }
    let mut made = split_parts(repo, preview, &parts, pathspecs)?.into_iter();
    match made.next() {
        Some(selected) => Ok((selected, made.next())),
        None => Err(Error::InvalidChange(format!(
            "no part of preview {} was made",
            preview.id
        ))),
    }
}

/// One part a pending preview is cut into: its entries, its metadata, and what it is
/// (`selected`, `remainder`, a group's key) in its ref's log.
pub struct Part {
    pub entries: Vec<StoredEntry>,
    pub meta: PreviewMeta,
    pub label: String,
}

fn staged_file(e: &StoredEntry) -> StagedFile {
    StagedFile {
        path: e.path.clone(),
        before: e.before,
        after: e.after,
    }
}

/// Marks a part's metadata as cut by `by` (`details.split_by`): it holds a selection
/// of what the recipe makes, so a refresh merges it three-way instead of re-running
/// the recipe (which would make it all).
pub fn mark_selected(meta: &mut PreviewMeta, by: &str) {
    if let serde_json::Value::Object(details) = &mut meta.details {
        details.insert("split_by".into(), serde_json::Value::from(by));
        if let Some(serde_json::Value::Object(recipe)) = details.get_mut("refresh") {
            recipe.insert("selected".into(), serde_json::Value::Bool(true));
        }
    }
}

/// Replaces pending `preview` by `parts` (entries whose blobs are written already),
/// each a new pending preview: one ref transaction removes the parent's ref, creates
/// each part's and appends a `split` event naming them in order, so the parent is
/// pending or split, never both. The caller holds the lock.
pub fn split_parts(
    repo: &Repo,
    preview: &Preview,
    parts: &[Part],
    pathspecs: &[String],
) -> Result<Vec<Preview>, Error> {
    if parts.is_empty() || parts.iter().any(|p| p.entries.is_empty()) {
        return Err(Error::InvalidChange(format!(
            "a part of preview {} would hold no change",
            preview.id
        )));
    }
    // The parts of a fetched preview are not signed here: that would vouch for it.
    let sign = crate::txn::sign::signing(repo) && crate::txn::trusted::vouched(repo, preview);
    let mut made: Vec<(ObjectId, String, &str)> = Vec::with_capacity(parts.len());
    for p in parts {
        let files: Vec<StagedFile> = p.entries.iter().map(staged_file).collect();
        // The blobs are written already: only trees and commits are new.
        let id = build_preview(
            repo,
            ObjectBatch::new(&repo.git),
            &files,
            &p.meta,
            sign,
            None,
        )?;
        made.push((id, short_id(id), p.label.as_str()));
    }
    let mut event = Event::new(repo, EventKind::Split, &preview.id, preview.commit);
    event.kind = Some(preview.meta.kind);
    event.agent = preview.meta.agent.clone();
    event.files = preview.entries.iter().map(|e| e.path.clone()).collect();
    event.children = made.iter().map(|(_, short, _)| short.clone()).collect();
    event.pathspecs = pathspecs.to_vec();
    let parent_ref = format!("{REF_PREFIX}{}", preview.id);
    let mut edits = vec![journal::delete_edit(
        &parent_ref,
        PreviousValue::MustExistAndMatch(Target::Object(preview.commit)),
    )?];
    let mut synced = vec![journal::JOURNAL_REF.to_string(), parent_ref.clone()];
    for (id, short, label) in &made {
        let name = format!("{REF_PREFIX}{short}");
        edits.push(journal::update_edit(
            &name,
            PreviousValue::MustNotExist,
            *id,
            &format!("astedit: split ({label})"),
        )?);
        synced.push(name);
    }
    let journal_commit = journal::append(repo, &event, preview.commit, edits)?;
    let synced: Vec<&str> = synced.iter().map(String::as_str).collect();
    journal::sync(repo, journal_commit, &synced)?;
    // Every part is the parent's changes and recipe: trusted here as it was.
    let ids: Vec<ObjectId> = made.iter().map(|(id, _, _)| *id).collect();
    crate::txn::trusted::inherit(repo, preview, &ids);
    ids.into_iter().map(|id| read_preview(repo, id)).collect()
}

/// The parent's metadata for one part of a split: per-file counts of its files only,
/// the total re-added, the summary saying which part of which preview it is.
fn narrowed_meta(
    parent: &PreviewMeta,
    parent_id: &str,
    files: &[StagedFile],
    parent_files: usize,
    part: &str,
) -> PreviewMeta {
    let paths: std::collections::HashSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let mut meta = parent.clone();
    meta.files.retain(|f| paths.contains(f.path.as_str()));
    if !parent.files.is_empty() {
        meta.replacements = meta.files.iter().map(|f| f.count).sum();
    }
    meta.summary = format!(
        "{} ({part} part of {parent_id}: {} of {} files)",
        one_line(&parent.summary),
        files.len(),
        parent_files
    );
    let mut details = match std::mem::take(&mut meta.details) {
        serde_json::Value::Object(map) => map,
        serde_json::Value::Null => serde_json::Map::new(),
        other => {
            let mut map = serde_json::Map::new();
            map.insert("parent_details".into(), other);
            map
        }
    };
    details.insert("split_from".into(), serde_json::Value::from(parent_id));
    details.insert("split_part".into(), serde_json::Value::from(part));
    meta.details = serde_json::Value::Object(details);
    meta
}
