/*!
`merge ID…`: several previews with disjoint paths become one new preview.

This is how sharded CI comes back together: N jobs each stage their part of a scan,
push the `refs/astedit/` refs, and one job fetches them all and merges them into the single
preview an unsharded run would have staged. Blobs are copied from the stored previews,
nothing is recomputed, so the merge is exact; paths touched by two previews are refused
(naming them), since no order of applying both is obviously right.
*/

use std::collections::BTreeMap;

use crate::change::ChangeSet;
use crate::change::FileChange;
use crate::change::FileContent;
use crate::change::PreviewMeta;
use crate::change::RuleCount;
use crate::error::Classify;
use crate::error::Exit;
use crate::repo::Repo;
use crate::txn;
use crate::txn::Preview;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("merge needs at least two previews")]
    TooFew,
    #[error("preview {0} is named twice")]
    Duplicate(String),
    #[error("{}", overlap_message(.0))]
    Overlap(Vec<(String, Vec<String>)>),
    #[error(transparent)]
    Txn(#[from] txn::Error),
}

fn overlap_message(paths: &[(String, Vec<String>)]) -> String {
    let mut s = format!(
        "cannot merge: {} touched by more than one preview",
        crate::text::plural(paths.len(), "path")
    );
    for (path, ids) in paths {
        s.push_str(&format!("\n  {path}: {}", ids.join(", ")));
    }
    s
}

impl Classify for Error {
    fn code(&self) -> &'static str {
        match self {
            Error::TooFew => "usage",
            Error::Duplicate(_) => "duplicate-id",
            Error::Overlap(_) => "overlapping-previews",
            Error::Txn(e) => e.code(),
        }
    }
    fn exit(&self) -> Exit {
        match self {
            Error::Txn(e) => e.exit(),
            _ => Exit::BadInput,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            Error::Overlap(_) => Some(
                "apply one preview first and re-run the other's scan, or merge only disjoint ones"
                    .into(),
            ),
            Error::Txn(e) => e.hint(),
            _ => None,
        }
    }
}

/// What a merge made.
#[derive(Debug)]
pub struct Merged {
    pub preview: Preview,
    pub changes: ChangeSet,
    /// The ids merged, in the order given.
    pub inputs: Vec<String>,
    /// The inputs were discarded (unless `keep`).
    pub discarded: bool,
}

/// Merges the previews `ids` into a new one; the inputs are discarded unless `keep`.
pub fn merge(
    repo: &Repo,
    ids: &[String],
    reason: Option<String>,
    keep: bool,
) -> Result<Merged, Error> {
    if ids.len() < 2 {
        return Err(Error::TooFew);
    }
    let mut previews: Vec<Preview> = Vec::new();
    for id in ids {
        let p = txn::find(repo, Some(id))?;
        if previews.iter().any(|q| q.commit == p.commit) {
            return Err(Error::Duplicate(p.id));
        }
        previews.push(p);
    }
    let mut owners: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for p in &previews {
        for e in &p.entries {
            owners
                .entry(e.path.as_str())
                .or_default()
                .push(p.id.clone());
        }
    }
    let overlap: Vec<(String, Vec<String>)> = owners
        .into_iter()
        .filter(|(_, ids)| ids.len() > 1)
        .map(|(path, ids)| (path.to_string(), ids))
        .collect();
    if !overlap.is_empty() {
        return Err(Error::Overlap(overlap));
    }

    let mut changes = ChangeSet::default();
    for p in &previews {
        for e in &p.entries {
            let read = |side: Option<(gix::ObjectId, crate::change::FileMode)>| {
                side.map(|(id, mode)| txn::blob(repo, id).map(|bytes| FileContent { bytes, mode }))
                    .transpose()
            };
            changes.changes.push(FileChange {
                path: e.path.clone(),
                before: read(e.before)?,
                after: read(e.after)?,
            });
        }
    }
    changes.sort();

    let meta = merged_meta(&previews, reason);
    let preview = txn::stage(repo, &changes, &meta)?;
    if !keep {
        let why = format!("merged into {}", preview.id);
        for p in &previews {
            txn::discard(repo, Some(&p.id), Some(&why))?;
        }
    }
    Ok(Merged {
        preview,
        changes,
        inputs: previews.into_iter().map(|p| p.id).collect(),
        discarded: !keep,
    })
}

/// Sums what the inputs recorded: per-rule counts (first-seen order), files, totals.
fn merged_meta(previews: &[Preview], reason: Option<String>) -> PreviewMeta {
    let mut rules: Vec<RuleCount> = Vec::new();
    for p in previews {
        for rc in &p.meta.rules {
            match rules.iter_mut().find(|r| r.rule == rc.rule) {
                Some(r) => r.count += rc.count,
                None => rules.push(rc.clone()),
            }
        }
    }
    let mut files: Vec<_> = previews
        .iter()
        .flat_map(|p| p.meta.files.iter().cloned())
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let replacements: usize = previews.iter().map(|p| p.meta.replacements).sum();
    let paths: usize = previews.iter().map(|p| p.entries.len()).sum();
    let heads: Vec<&Option<String>> = previews.iter().map(|p| &p.meta.base_head).collect();
    let base_head = if heads.windows(2).all(|w| w[0] == w[1]) {
        heads.first().and_then(|h| (*h).clone())
    } else {
        None
    };
    let kinds: Vec<&str> = previews.iter().map(|p| p.meta.kind.as_str()).collect();
    let counted = if kinds.iter().all(|k| *k == "scan") {
        super::fixes_word(replacements)
    } else {
        crate::text::plural(replacements, "replacement")
    };
    PreviewMeta {
        kind: crate::change::PreviewKind::Merge,
        summary: format!(
            "{} in {} (merge of {})",
            counted,
            crate::text::plural(paths, "file"),
            previews
                .iter()
                .map(|p| p.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        reason,
        rules,
        files,
        replacements,
        base_head,
        tool_version: crate::VERSION.to_string(),
        details: serde_json::json!({
            "merged": previews.iter().map(|p| serde_json::json!({
                "id": p.id,
                "commit": p.commit.to_string(),
                "kind": p.meta.kind,
                "summary": p.meta.summary,
            })).collect::<Vec<_>>(),
        }),
        ..Default::default()
    }
}
