//! What upkeep returns: `gc` and `recover` (an interrupted run's status, its finish or
//! abandon, the lock files found).

use schemars::JsonSchema;
use serde::Serialize;

use super::UnreadableRef;
use super::Version;
use crate::error::Exit;
use crate::txn::RecoveryAction;
use crate::txn::TxnOp;

/// `gc --json`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GcReport {
    pub schema_version: Version,
    /// Pending previews whose refs were removed.
    pub expired_previews: Vec<String>,
    /// Journal entries dropped.
    pub pruned_events: usize,
    /// Journal entries kept.
    pub kept_events: usize,
    /// Refs under `refs/astedit/` that were not readable previews, removed (each
    /// journalled as `discarded`).
    pub removed_refs: Vec<UnreadableRef>,
    /// What was pruned from the result cache (`null` with `--no-cache`).
    pub cache: Option<CachePruned>,
}

/// The result cache's pruning by `gc`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CachePruned {
    /// Buckets and stale temporary files deleted.
    pub removed: usize,
    pub freed_bytes: u64,
    /// Buckets kept.
    pub kept: usize,
}

impl GcReport {
    pub fn exit(&self) -> Exit {
        Exit::Ok
    }
}

/// `recover --json` (`--status`, the default).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RecoverStatusReport {
    pub schema_version: Version,
    /// The interrupted run, `null` when there is none: `{id, op, phase, pid, running,
    /// files: [{path, state, what?, to_blob, from_blob}]}`.
    #[schemars(with = "Option<serde_json::Value>")]
    pub unfinished: Option<UnfinishedRun>,
    /// Lock files that block writers: an `index.lock` (ours, which the next command
    /// removes, or another's) and ref locks no run of ours explains.
    #[serde(default)]
    pub locks: Vec<LockStatus>,
    /// What to do about the paths left alone, when there are some (the text's hint).
    #[serde(skip)]
    pub hint: Option<&'static str>,
}

/// An interrupted apply or undo and where each of its paths stands. The fields are in
/// alphabetical order, the order the JSON has always had.
#[derive(Debug, Clone, Serialize)]
pub struct UnfinishedRun {
    pub files: Vec<RunPath>,
    pub id: String,
    pub op: TxnOp,
    /// `prepared` (will be rolled back) or `committed` (will be rolled forward).
    pub phase: crate::txn::Phase,
    pub pid: u32,
    /// The process that ran it still holds the lock (it is not interrupted, only busy).
    pub running: bool,
}

impl UnfinishedRun {
    /// Whether recovery will roll it back (it had not reached its point of no return).
    pub fn rolls_back(&self) -> bool {
        self.phase == crate::txn::Phase::Prepared
    }
}

/// One path of an interrupted run (fields in alphabetical order, as in the JSON).
#[derive(Debug, Clone, Serialize)]
pub struct RunPath {
    /// The blob it replaces (`null`: the path is new).
    pub from_blob: Option<String>,
    pub path: String,
    /// `done` (holds what the run writes), `waiting` (holds what it replaces: it will be
    /// written), `untouched` (the same, in a run that will be rolled back), `changed`
    /// (holds neither: left alone), `refused` (a folder on its way is a symlink or not a
    /// folder: left alone).
    pub state: crate::txn::PathState,
    /// The blob the run writes there (`null`: it removes the path).
    pub to_blob: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub what: Option<String>,
}

/// A lock file `recover --status` found.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LockStatus {
    pub path: String,
    /// Whose it is and what clears it.
    pub what: String,
}

/// `recover --finish --json`, `recover --abandon --json`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RecoverReport {
    pub schema_version: Version,
    pub id: String,
    /// `apply` or `undo`.
    #[schemars(with = "String")]
    pub op: TxnOp,
    /// `completed`, `rolled-back`, `partial` or `abandoned`.
    #[schemars(with = "String")]
    pub action: RecoveryAction,
    /// Paths left alone: `[{path, what}]`.
    #[schemars(with = "Vec<serde_json::Value>")]
    pub unresolved: Vec<UnresolvedPath>,
    pub notes: Vec<String>,
    pub message: String,
}

/// A path recovery left alone, and why.
#[derive(Debug, Clone, Serialize)]
pub struct UnresolvedPath {
    pub path: String,
    pub what: String,
}

/// `recover --json`: the status, or what `--finish`/`--abandon` did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RecoverOutput {
    Status(RecoverStatusReport),
    Done(RecoverReport),
}

impl RecoverOutput {
    /// A run still unfinished after `--finish` or `--abandon` is stale (3).
    pub fn exit(&self) -> Exit {
        match self {
            RecoverOutput::Done(r) if !r.unresolved.is_empty() => Exit::Stale,
            _ => Exit::Ok,
        }
    }
}
