//! What reading the store returns: `list`, `show` and `log` (previews, their files and
//! signatures, journal events).

use schemars::JsonSchema;
use serde::Serialize;

use super::review;
use super::rfc3339;
use super::trust;
use super::CappedDiff;
use super::Version;
use crate::error::Exit;
use crate::txn::EventKind;
use crate::txn::RecoveryAction;
use crate::txn::TxnOp;

/// A stored preview in a list.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PreviewRow {
    pub id: String,
    /// The preview commit.
    pub commit: String,
    /// When it was staged.
    pub time: String,
    pub kind: crate::change::PreviewKind,
    pub summary: String,
    pub reason: Option<String>,
    /// The agent (MCP client name/version) that staged it.
    pub agent: Option<String>,
    /// Paths it touches.
    pub files: Vec<String>,
    pub file_count: usize,
    /// The preview commit's signature as git verified it (`list`, `show`, the
    /// `previews` tool; absent where a preview is only named, as in an error's details).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<SignatureRow>,
    /// Whether its origin is trusted here (`made-here`, `trusted`, `signed`,
    /// `untrusted`), who vouches for it, and why not.
    #[serde(flatten)]
    pub origin: trust::Origin,
    /// What refreshing it would run (a command preview's argv and folder, recorded
    /// formatters); empty when nothing.
    pub runs: trust::Runs,
    /// What was decided on its review (`list`, `show`; absent when nothing was).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<review::ReviewState>,
}

impl PreviewRow {
    /// The row of `p`, whose origin `ops::trust` decided and whose runs it read.
    pub fn of(p: &crate::txn::Preview, origin: trust::Origin, runs: trust::Runs) -> PreviewRow {
        let files: Vec<String> = p.entries.iter().map(|e| e.path.clone()).collect();
        PreviewRow {
            id: p.id.clone(),
            commit: p.commit.to_string(),
            time: rfc3339(p.time),
            kind: p.meta.kind,
            summary: p.meta.summary.clone(),
            reason: p.meta.reason.clone(),
            agent: p.meta.agent.clone(),
            file_count: files.len(),
            files,
            origin,
            runs,
            signature: None,
            review: None,
        }
    }
}

/// A commit's signature, as git verified it (`git verify-commit`, `%G?`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SignatureRow {
    /// `good`, `bad`, `unknown-key`, `expired-key`, `revoked-key`, `not-allowed`,
    /// `unsigned` or `error`.
    pub status: crate::txn::sign::SigStatus,
    /// Who signed: the allowed signers' principal (ssh) or the key's user id (OpenPGP).
    pub signer: Option<String>,
    /// The key: `SHA256:…` (ssh) or the OpenPGP fingerprint.
    pub key: Option<String>,
    /// A good signature by a signer git's configuration allows, valid at the commit's
    /// time and not revoked (`status` is `good`).
    pub trusted: bool,
}

impl SignatureRow {
    pub fn of(check: &crate::txn::sign::SignatureCheck) -> SignatureRow {
        SignatureRow {
            status: check.status,
            signer: check.signer.clone(),
            key: check.key.clone(),
            trusted: check.trusted(),
        }
    }

    /// Whether the commit carries a signature at all (good or not).
    pub fn is_signed(&self) -> bool {
        self.check().is_signed()
    }

    /// One line for a person: `signed by NAME (ssh key SHA256:…): good`.
    pub fn describe(&self) -> String {
        self.check().describe()
    }

    fn check(&self) -> crate::txn::sign::SignatureCheck {
        crate::txn::sign::SignatureCheck {
            status: self.status,
            signer: self.signer.clone(),
            key: self.key.clone(),
        }
    }
}

impl EventRow {
    pub fn of(e: &crate::txn::Event) -> EventRow {
        EventRow {
            event: e.event,
            id: e.id.clone(),
            commit: e.commit.clone(),
            time: rfc3339(e.time),
            who: e.who.clone(),
            agent: e.agent.clone(),
            reason: e.reason.clone(),
            kind: e.kind,
            file_count: e.files.len(),
            files: e.files.clone(),
            children: e.children.clone(),
            successor: e.successor.clone(),
            op: e.op,
            action: e.action,
            made_commit: e.made_commit.clone(),
            notes: e.notes.clone(),
            tool: None,
            changes: Vec::new(),
            diff: None,
            worktree: e.worktree.clone(),
        }
    }
}

/// `list --json` and the `previews` tool's `list`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListReport {
    pub schema_version: Version,
    /// Pending previews, newest first.
    pub previews: Vec<PreviewRow>,
    /// Refs under `refs/astedit/` that are not readable previews (skipped).
    pub unreadable_refs: Vec<UnreadableRef>,
    /// The warning lines of stderr, as text.
    pub warnings: Vec<String>,
    /// Pending previews in all (`previews` may be a page of them).
    #[serde(skip)]
    pub total: usize,
    /// Where the page starts among them.
    #[serde(skip)]
    pub offset: usize,
}

impl ListReport {
    pub fn exit(&self) -> Exit {
        Exit::Ok
    }
}

/// A ref that is not a readable preview: skipped by every command, removed by
/// `discard ID` or `gc`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UnreadableRef {
    #[serde(rename = "ref")]
    pub name: String,
    pub why: String,
}

/// One file of a shown preview.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ShownFile {
    pub path: String,
    /// `modified`, `added` or `deleted`.
    pub status: FileStatus,
    pub before: Option<BlobRef>,
    pub after: Option<BlobRef>,
    pub added_lines: usize,
    pub removed_lines: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FileStatus {
    Modified,
    Added,
    Deleted,
}

/// A blob and its mode.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BlobRef {
    pub blob: String,
    pub mode: crate::change::FileMode,
}

impl BlobRef {
    pub fn of(side: Option<(gix::ObjectId, crate::change::FileMode)>) -> Option<BlobRef> {
        side.map(|(id, mode)| BlobRef {
            blob: id.to_string(),
            mode,
        })
    }
}

/// `show --json` and the `previews` tool's `show`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ShowReport {
    pub schema_version: Version,
    pub preview: PreviewRow,
    /// Everything the preview records about itself.
    pub meta: crate::change::PreviewMeta,
    pub files: Vec<ShownFile>,
    /// The diff (not with `--stat`).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub diff: Option<CappedDiff>,
    /// The diff was streamed as text (`files` and `diff` are empty): the text of this
    /// report is the header above it.
    #[serde(skip)]
    pub streamed: bool,
}

impl ShowReport {
    pub fn exit(&self) -> Exit {
        Exit::Ok
    }
}

/// One journal event (newline-free: a text field that held one is shown escaped).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EventRow {
    /// `staged`, `applied`, `discarded`, `undone`, `recovered`, `expired`, …
    #[schemars(with = "String")]
    pub event: EventKind,
    pub id: String,
    /// The preview commit.
    pub commit: String,
    pub time: String,
    /// The git identity, `Name <email>`.
    pub who: String,
    pub agent: Option<String>,
    pub reason: Option<String>,
    #[schemars(with = "Option<String>")]
    pub kind: Option<crate::change::PreviewKind>,
    /// Paths touched.
    pub files: Vec<String>,
    pub file_count: usize,
    /// `split`: the previews that replaced this one, the selected part first, then
    /// the remainder.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<String>,
    /// `refreshed`: the preview that replaced this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub successor: Option<String>,
    /// `recovered`: the interrupted operation (`apply`, `undo`).
    #[schemars(with = "Option<String>")]
    pub op: Option<TxnOp>,
    /// `recovered`: `completed` or `rolled-back`.
    #[schemars(with = "Option<String>")]
    pub action: Option<RecoveryAction>,
    /// `applied` with `--commit`: the commit made.
    pub made_commit: Option<String>,
    /// What else happened (e.g. `lock-broken: …`, files kept by recovery).
    pub notes: Vec<String>,
    /// With `--session` or `--patch`: the tool that made the change (an agent's own
    /// tool, `Bash`, or the preview's kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// With `--session` or `--patch`: each file with the lines added and removed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<ShownFile>,
    /// With `--patch`: the change's diff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// The linked work tree it was made in (a lane's name); absent: the main tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
}

/// `log --json`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LogReport {
    pub schema_version: Version,
    /// Newest first.
    pub events: Vec<EventRow>,
    /// Older events exist that `--max-count` (default 200) left out.
    pub capped: bool,
    /// The `--max-count` asked for (0: no limit), for the text's note on `capped`.
    #[serde(skip)]
    pub max_count: usize,
}
