//! `merge`: previews with disjoint paths combined into one new preview (sharded CI).
//! The stored blobs are copied, nothing is recomputed; the inputs are discarded unless
//! kept.

use crate::change::ChangeSet;
use crate::change::FileChange;
use crate::change::FileContent;
use crate::repo::Repo;
use crate::report::MergeReport;
use crate::report::Version;
use crate::scan::merge;
use crate::txn;
use crate::txn::Preview;
use crate::Error;

/// Which previews to merge.
#[derive(Debug, Clone)]
pub struct MergeRequest {
    /// Preview ids or unique prefixes (at least two).
    pub ids: Vec<String>,
    /// Why (recorded in the merged preview and the journal).
    pub reason: Option<String>,
    /// Keep the merged previews pending instead of discarding them.
    pub keep: bool,
    /// Diff lines to render at most (0: no limit).
    pub max_render: usize,
}

pub fn run(repo: &Repo, req: &MergeRequest) -> Result<MergeReport, Error> {
    merge::check_count(&req.ids)?;
    let mut previews: Vec<Preview> = Vec::new();
    let mut commits: Vec<String> = Vec::new();
    for id in &req.ids {
        let p = txn::find(repo, Some(id))?;
        let commit = p.commit.to_string();
        merge::check_duplicate(&commits, &p.id, &commit)?;
        commits.push(commit);
        previews.push(p);
    }
    let paths: Vec<Vec<String>> = previews
        .iter()
        .map(|p| p.entries.iter().map(|e| e.path.clone()).collect())
        .collect();
    let parts: Vec<merge::Part<'_>> = previews
        .iter()
        .zip(&commits)
        .zip(&paths)
        .map(|((p, commit), paths)| merge::Part {
            id: &p.id,
            commit,
            meta: &p.meta,
            paths,
        })
        .collect();
    merge::check_disjoint(&parts)?;

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

    let meta = merge::merged_meta(&parts, req.reason.clone());
    let preview = txn::stage(repo, &changes, &meta)?;
    if !req.keep {
        let why = format!("merged into {}", preview.id);
        for p in &previews {
            txn::discard(repo, Some(&p.id), Some(&why))?;
        }
    }
    let files: Vec<String> = preview.entries.iter().map(|e| e.path.clone()).collect();
    Ok(MergeReport {
        schema_version: Version,
        id: preview.id.clone(),
        commit: preview.commit.to_string(),
        summary: preview.meta.summary.clone(),
        merged: previews.into_iter().map(|p| p.id).collect(),
        discarded: !req.keep,
        file_count: files.len(),
        files,
        changes,
        max_render: req.max_render,
    })
}
