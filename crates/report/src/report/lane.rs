//! `lane --json`: the lanes a command started, listed or dropped.

use schemars::JsonSchema;
use serde::Serialize;

use super::Version;

/// What the lane command did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LaneAction {
    Start,
    List,
    Drop,
}

/// `lane start|list|drop --json`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LaneReport {
    pub schema_version: Version,
    pub action: LaneAction,
    /// The lane started or dropped, or every lane (`list`), by name.
    pub lanes: Vec<LaneRow>,
}

/// One lane.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LaneRow {
    pub name: String,
    /// Its work tree, where the agent runs (absolute).
    pub path: String,
    /// The commit it started from (`refs/astedit-lanes/NAME`).
    pub base: String,
    /// Its work tree is there (`false`: removed by hand; `lane drop` forgets it).
    pub present: bool,
    /// Paths the lane changed since its base (its work tree against the base,
    /// untracked files included).
    pub changed: Vec<String>,
    /// Of those, the ones whose change the work tree the command ran in does not hold
    /// yet; for `drop --force`, the changes lost with the lane.
    pub unmerged: Vec<String>,
}

/// How a file of a lane merge was merged, from the plainest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MergedHow {
    /// Taken from a lane: nobody else changed it.
    Taken,
    /// Merged by line (a language the node merge does not know, or one that did not
    /// parse).
    ByLine,
    /// Merged declaration by declaration.
    ByNode,
}

/// One file of a lane merge.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MergedFile {
    pub path: String,
    pub how: MergedHow,
    /// The lanes whose changes it holds.
    pub lanes: Vec<String>,
}

/// `lane merge --json`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LaneMergeReport {
    pub schema_version: Version,
    /// The preview staged on this work tree; `null` when the lanes hold nothing it
    /// does not.
    pub id: Option<String>,
    pub summary: String,
    /// The lanes merged, in order.
    pub lanes: Vec<String>,
    pub files: Vec<MergedFile>,
    pub file_count: usize,
    /// With `--verify`: the check of the merged preview in a worktree of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<super::verify::VerifyReport>,
    /// The merged changes, for the diff.
    #[serde(skip)]
    pub changes: crate::change::ChangeSet,
    /// Diff lines to render at most (0: no limit).
    #[serde(skip)]
    pub max_render: usize,
}

impl LaneMergeReport {
    /// 1 when nothing was staged or the verify command failed.
    pub fn exit(&self) -> crate::error::Exit {
        let failed = self.verify.as_ref().is_some_and(|v| !v.passed);
        if self.id.is_none() || failed {
            crate::error::Exit::NothingFound
        } else {
            crate::error::Exit::Ok
        }
    }
}
