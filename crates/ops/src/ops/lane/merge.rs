/*!
`lane merge NAME…`: lanes brought back into the work tree the command runs in, as one
preview staged there (nothing is written; `apply` does that).

Under the work tree's lock (no agent's turn or apply changes a file while it is read),
each lane's changes ([`super::changes`]) are merged, lane after lane in the order
given, into what the work tree holds (with the lanes merged before): base = the lane's
base, ours = the work tree so far, theirs = the lane. A file only one side changed is
taken from it; one both changed is merged by the one merge engine of `refresh`
([`merge3_file`]), by syntax node: two lanes that changed two different functions of
a file merge cleanly, one function changed on both sides is a conflict naming its kind,
name and lines. Any conflict stages nothing (`lane-conflict`, exit 3).
*/

use std::collections::BTreeMap;

use serde::Serialize;

use super::changes;
use super::find;
use super::on_disk;
use super::same_dir;
use super::LaneError;
use crate::change::ChangeSet;
use crate::change::FileChange;
use crate::change::FileContent;
use crate::change::FileFlag;
use crate::change::FileMeta;
use crate::change::FileMode;
use crate::change::PreviewKind;
use crate::change::PreviewMeta;
use crate::error::Classify;
use crate::error::Exit;
use crate::ops::apply::VerifyPlan;
use crate::ops::recipe::merge::merge3_file;
use crate::ops::recipe::merge::BothChanged;
use crate::ops::recipe::merge::NodeConflict;
use crate::ops::recipe::merge::Region;
use crate::repo::Repo;
use crate::report::lane::LaneMergeReport;
use crate::report::lane::MergedFile;
use crate::report::lane::MergedHow;
use crate::report::Version;
use crate::text::plural;
use crate::txn;
use crate::Error;

/// What to merge.
#[derive(Debug, Clone)]
pub struct MergeRequest {
    /// The lanes, merged in this order.
    pub names: Vec<String>,
    /// Why (recorded in the preview).
    pub reason: Option<String>,
    /// Check the merged preview in a worktree of it (`--verify`).
    pub verify: Option<VerifyPlan>,
    /// Diff lines to render at most (0: no limit).
    pub max_render: usize,
}

/// A lane's change that could not be merged.
#[derive(Debug, Clone, Serialize)]
pub struct LaneConflict {
    pub lane: String,
    pub path: String,
    pub why: String,
    /// Lines of the work tree (with the lanes merged before) where the sides collide.
    pub regions: Vec<Region>,
    /// The declarations both sides changed, by kind and name.
    pub nodes: Vec<NodeConflict>,
    /// The lanes merged before that changed the file too (else it was the work tree).
    pub also_changed_by: Vec<String>,
}

impl LaneConflict {
    fn describe(&self) -> String {
        let by = if self.also_changed_by.is_empty() {
            "this work tree".to_string()
        } else {
            format!("lane {}", self.also_changed_by.join(", lane "))
        };
        let mut s = format!(
            "lane {}, {}: {} (the other side: {by})",
            self.lane, self.path, self.why
        );
        if self.nodes.is_empty() {
            for r in &self.regions {
                s.push_str(&format!("\n    {}", r.describe()));
            }
        }
        for n in &self.nodes {
            s.push_str(&format!("\n    {}", n.describe()));
        }
        s
    }
}

/// Lanes that could not be merged: nothing was staged.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot merge {}: {}; nothing was staged{}",
    lanes.join(", "),
    plural(conflicts.len(), "conflict"),
    conflicts.iter().map(|c| format!("\n  {}", c.describe())).collect::<String>()
)]
pub struct LaneConflictError {
    pub lanes: Vec<String>,
    pub conflicts: Vec<LaneConflict>,
}

impl Classify for LaneConflictError {
    fn code(&self) -> &'static str {
        "lane-conflict"
    }
    fn exit(&self) -> Exit {
        Exit::Stale
    }
    fn hint(&self) -> Option<String> {
        Some(
            "make the two changes agree in one lane (or here), then merge again; `git astedit \
             lane merge` of the lanes one at a time says which pair collides"
                .into(),
        )
    }
    fn details(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({"lanes": self.lanes, "conflicts": self.conflicts}))
    }
}

/// One path being merged: what the work tree held, what it holds with the lanes so
/// far, how and by which lanes.
struct Merging {
    start: Option<FileContent>,
    now: Option<FileContent>,
    how: MergedHow,
    lanes: Vec<String>,
}

/// What one lane's change of a path does to it.
enum Fold {
    /// Nothing: the path holds it already.
    Held,
    Take(Option<FileContent>, MergedHow),
    Conflict(String, Vec<Region>, Vec<NodeConflict>),
}

/// `lane merge`: see the module docs.
pub fn run(repo: &Repo, req: &MergeRequest) -> Result<LaneMergeReport, Error> {
    if req.names.is_empty() {
        return Err(crate::error::UsageError("name at least one lane to merge".into()).into());
    }
    let mut lanes = Vec::new();
    for name in &req.names {
        let lane = find(repo, name)?;
        if same_dir(&lane.path, &repo.workdir) {
            return Err(LaneError::InLane { name: name.clone() }.into());
        }
        if !lanes.iter().any(|l: &super::Lane| l.name == lane.name) {
            lanes.push(lane);
        }
    }
    let names: Vec<String> = lanes.iter().map(|l| l.name.clone()).collect();
    let lock = txn::TreeLock::take(repo, "lane merge")?;
    let mut files: BTreeMap<String, Merging> = BTreeMap::new();
    let mut conflicts = Vec::new();
    for lane in &lanes {
        for c in changes(repo, lane)? {
            let m = match files.entry(c.path.clone()) {
                std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::btree_map::Entry::Vacant(e) => {
                    let here = on_disk(&repo.workdir, &c.path)?;
                    e.insert(Merging {
                        start: here.clone(),
                        now: here,
                        how: MergedHow::Taken,
                        lanes: Vec::new(),
                    })
                }
            };
            match fold(&c, &m.now)? {
                Fold::Held => {}
                Fold::Take(now, how) => {
                    m.now = now;
                    m.how = m.how.max(how);
                    m.lanes.push(lane.name.clone());
                }
                Fold::Conflict(why, regions, nodes) => conflicts.push(LaneConflict {
                    lane: lane.name.clone(),
                    path: c.path.clone(),
                    why,
                    regions,
                    nodes,
                    also_changed_by: m.lanes.clone(),
                }),
            }
        }
    }
    if !conflicts.is_empty() {
        return Err(LaneConflictError {
            lanes: names,
            conflicts,
        }
        .into());
    }
    let (changes, rows) = settled(files);
    let mut report = LaneMergeReport {
        schema_version: Version,
        id: None,
        summary: format!(
            "{} from {}",
            plural(changes.changes.len(), "file"),
            plural(names.len(), "lane")
        ),
        file_count: rows.len(),
        files: rows,
        lanes: names,
        verify: None,
        changes,
        max_render: req.max_render,
    };
    if report.changes.changes.is_empty() {
        report.summary = "the lanes hold nothing this work tree does not".into();
        return Ok(report);
    }
    let preview = txn::stage(repo, &report.changes, &meta(req, &lanes, &report))?;
    drop(lock);
    report.id = Some(preview.id.clone());
    if let Some(plan) = &req.verify {
        let verify = crate::ops::verify::VerifyRequest {
            id: Some(preview.id.clone()),
            command: plan.command.clone(),
            timeout: plan.timeout,
            agent: None,
            new_only: false,
        };
        report.verify = Some(crate::ops::verify::run(
            repo,
            &verify,
            &crate::cancel::Cancel::never(),
        )?);
    }
    Ok(report)
}

/// What one lane's change of a path does to what the path holds now.
fn fold(c: &FileChange, now: &Option<FileContent>) -> Result<Fold, Error> {
    if c.after == *now {
        return Ok(Fold::Held);
    }
    if c.before == *now {
        return Ok(Fold::Take(c.after.clone(), MergedHow::Taken));
    }
    let conflict = |why: &str| Ok(Fold::Conflict(why.to_string(), Vec::new(), Vec::new()));
    match (&c.before, now, &c.after) {
        (Some(b), Some(h), Some(t)) => {
            if [b.mode, h.mode, t.mode].contains(&FileMode::Symlink) {
                return conflict("a symlink changed on both sides");
            }
            if [&b.bytes, &h.bytes, &t.bytes]
                .iter()
                .any(|x| x.contains(&0))
            {
                return conflict("a binary file changed on both sides");
            }
            let m = merge3_file(&c.path, &b.bytes, &h.bytes, &t.bytes, BothChanged::Conflict)?;
            if !m.conflicts.is_empty() {
                let why = if m.nodes.is_empty() {
                    "both sides changed these lines (line merge conflict)"
                } else {
                    "both sides changed the same declarations"
                };
                return Ok(Fold::Conflict(why.to_string(), m.conflicts, m.nodes));
            }
            let mode = if t.mode != b.mode { t.mode } else { h.mode };
            let how = if m.by_nodes {
                MergedHow::ByNode
            } else {
                MergedHow::ByLine
            };
            Ok(Fold::Take(
                Some(FileContent {
                    bytes: m.text,
                    mode,
                }),
                how,
            ))
        }
        (None, Some(_), Some(_)) => conflict("added on both sides, differently"),
        (Some(_), None, Some(_)) => conflict("deleted on the other side, changed in the lane"),
        (Some(_), Some(_), None) => conflict("changed on the other side, deleted in the lane"),
        _ => Ok(Fold::Held),
    }
}

/// The preview's changes (the paths whose content moved) and the report's rows.
fn settled(files: BTreeMap<String, Merging>) -> (ChangeSet, Vec<MergedFile>) {
    let mut changes = ChangeSet::default();
    let mut rows = Vec::new();
    for (path, m) in files {
        if m.start == m.now {
            continue;
        }
        rows.push(MergedFile {
            path: path.clone(),
            how: m.how,
            lanes: m.lanes,
        });
        changes.changes.push(FileChange {
            path,
            before: m.start,
            after: m.now,
        });
    }
    changes.sort();
    (changes, rows)
}

fn meta(req: &MergeRequest, lanes: &[super::Lane], report: &LaneMergeReport) -> PreviewMeta {
    let files = report
        .changes
        .changes
        .iter()
        .map(|c| FileMeta {
            path: c.path.clone(),
            count: 1,
            flags: match (&c.before, &c.after) {
                (None, _) => vec![FileFlag::Added],
                (_, None) => vec![FileFlag::Deleted],
                _ => Vec::new(),
            },
        })
        .collect();
    PreviewMeta {
        kind: PreviewKind::Merge,
        summary: format!(
            "{} (lane merge of {})",
            report.summary,
            report.lanes.join(", ")
        ),
        reason: req.reason.clone(),
        files,
        replacements: report.changes.changes.len(),
        details: serde_json::json!({"lanes": lanes
            .iter()
            .map(|l| serde_json::json!({"name": l.name, "base": l.base}))
            .collect::<Vec<_>>()}),
        ..PreviewMeta::default()
    }
}
