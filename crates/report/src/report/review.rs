//! The shapes of a review (`review ID --json`, the MCP `review` tool, the page's
//! `/api/…`): a preview's sites grouped by what they do, outliers first, and the
//! decisions taken on them. Built by [`crate::ops::review`].

use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

use super::Version;

/// A decision on a site (or on every site of a group).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Accept,
    Reject,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Accept => "accept",
            Decision::Reject => "reject",
        }
    }
}

/// One site shown as a small diff: the whole lines it sits on, before and after,
/// without context lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SiteDiff {
    pub path: String,
    /// 1-based line of the site's first line in the preview's before side.
    pub line: usize,
    pub before: String,
    pub after: String,
}

/// One site: one match's replacement (or, where the recipe could not be re-run or
/// does not account for a change, one changed region of a file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Site {
    /// Stable id: a hash of the path, rule or op, before and after text and the
    /// enclosing line (no line numbers), so it survives a refresh.
    pub id: String,
    /// The group's key.
    pub group: String,
    #[serde(flatten)]
    pub diff: SiteDiff,
    /// Why the site stands out, when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outlier: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
}

/// Sites that make the same change: the same rule or op, the same change once the
/// text they keep (the metavariables' text) is abstracted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Group {
    /// Stable id: a hash of the rule or op and the change's template.
    pub key: String,
    /// The scan rule's id (scan previews).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The edit op, as `pattern => rewrite` (edit previews).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    /// The change with kept text abstracted (`…`), removed text after `-`, added text
    /// after `+`.
    pub template: String,
    pub count: usize,
    pub files: Vec<String>,
    pub representative: SiteDiff,
    /// Why this group stands out (its change differs from its rule's usual one, the
    /// recipe does not account for it, `verify` reported on it); outlier groups come
    /// first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outlier: Option<String>,
    /// The decision every site of the group has (`None`: undecided or mixed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    pub accepted: usize,
    pub rejected: usize,
}

/// Who took decisions on a preview, newest first, and whether `apply` obeys them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DecisionBatch {
    /// The commit under `refs/astedit-review/<id>` holding the batch.
    pub commit: String,
    /// Who decided (the page, the terminal, or the agent's name).
    pub by: String,
    pub time: String,
    pub accepted: usize,
    pub rejected: usize,
}

/// What was decided on a preview's review, as `list` and `show` say it: read from its
/// decision batches, without re-deriving its sites.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ReviewState {
    /// Sites accepted, rejected and left undecided, as the newest batch (made here or
    /// signed by an allowed signer) counted them; `null` when they are not known
    /// without re-deriving the sites (decisions inherited through a refresh or a
    /// split, a fetched newest batch, a batch of an older git-astedit: then
    /// `accepted` and `rejected` count the decisions shown, `undecided` is `null`).
    pub accepted: Option<usize>,
    pub rejected: Option<usize>,
    pub undecided: Option<usize>,
    /// Who decided, oldest first, each once; the author of a fetched batch not signed
    /// by an allowed signer is followed by ` (fetched, not obeyed)`.
    pub by: Vec<String>,
    /// Whether `apply` obeys every decision shown.
    pub obeyed: bool,
    /// The preview whose decisions this one inherits (refreshed or split from it),
    /// when it has none of its own yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inherited_from: Option<String>,
}

/// A preview's review: its groups, outliers first, and the decisions on them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Review {
    pub schema_version: Version,
    pub preview: String,
    pub kind: String,
    pub summary: String,
    /// How sites were found: `recorded` (from the record staging made, checked
    /// against the blobs; a note counts any file re-derived), `rerun` (the recipe
    /// re-run on the before side) or `diff` (changed regions: patches, commands, or a
    /// recipe that cannot re-run).
    pub derived: String,
    pub sites: usize,
    /// Sites in outlier groups.
    pub outliers: usize,
    /// Changes that depend on sites (an added import, an `edits:` target, a
    /// formatter's hunk): kept exactly when one of their sites is accepted (those
    /// inside the innermost syntax node holding the change and a site; an import's
    /// are every site of its file).
    pub dependents: usize,
    pub accepted: usize,
    pub rejected: usize,
    pub undecided: usize,
    /// Whether `apply` obeys the decisions: made here, or signed by an allowed signer.
    /// Fetched decisions are shown but not obeyed.
    pub obeyed: bool,
    pub batches: Vec<DecisionBatch>,
    pub notes: Vec<String>,
    pub groups: Vec<Group>,
}

/// A page of one group's sites (`review` sites, the page's `/api/sites`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SitePage {
    pub schema_version: Version,
    pub group: String,
    pub total: usize,
    pub offset: usize,
    pub sites: Vec<Site>,
}

/// What a batch of decisions did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Decided {
    pub schema_version: Version,
    pub preview: String,
    /// The commit holding the batch (`None`: nothing changed, no commit made).
    pub commit: Option<String>,
    pub by: String,
    /// Sites whose decision this batch set or changed.
    pub changed: usize,
    pub accepted: usize,
    pub rejected: usize,
    pub undecided: usize,
}

/// What a cut by decisions holds, in sites (`apply` of a reviewed preview).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CutCounts {
    /// Sites applied.
    pub accepted: usize,
    /// Sites dropped.
    pub rejected: usize,
    /// Sites left pending (in `split.remainder`).
    pub undecided: usize,
    /// Whether the decisions were obeyed: `false` when the preview has decisions but
    /// none made here or signed by an allowed signer (fetched ones), and the whole
    /// preview was applied.
    pub obeyed: bool,
}

/// One preview `review --split` staged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SplitPart {
    pub id: String,
    /// The group's key, or the pathspec.
    pub of: String,
    pub files: Vec<String>,
}

/// `review --split`: the previews that replace the preview, one per accepted group
/// or pathspec, and the one of the sites no part took.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SplitReport {
    pub schema_version: Version,
    /// The preview split (no longer pending).
    pub preview: String,
    pub parts: Vec<SplitPart>,
    /// The preview of the sites no part took (undecided, or accepted under no
    /// pathspec), `of` being `rest`; `null` when every site not rejected is in a part.
    pub remainder: Option<SplitPart>,
}

/// Every shape `review --json` prints: the review, a page of sites (`--sites`), a
/// batch of decisions (`--accept`/`--reject`/`--undecide`), or the split
/// (`--split`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ReviewOutput {
    Review(Box<Review>),
    Sites(SitePage),
    Decided(Decided),
    Split(SplitReport),
}
