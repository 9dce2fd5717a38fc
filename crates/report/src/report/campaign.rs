//! Campaigns (issue 27): the TOML spec a user writes, the per-repository state kept in
//! git (`refs/astedit-campaign/<name>`), and the `campaign … --json` reports.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

use super::Version;

/// A campaign spec (`campaign stage SPEC`), as TOML.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CampaignSpec {
    /// Names the state ref `refs/astedit-campaign/<name>` (letters, digits, `-`, `_`, `.`).
    pub name: String,
    pub change: ChangeSpec,
    /// The repositories, in order (the canary takes the first ones).
    #[serde(default)]
    pub repos: Vec<RepoSpec>,
    /// A file listing more repositories, one per line: `URL [BASE]`; `#` starts a
    /// comment. Relative to the spec's folder.
    #[serde(default)]
    pub repos_file: Option<String>,
    #[serde(default)]
    pub pr: PrSpec,
    /// How many repositories `stage`, `publish`, `refresh` and `status` work on at the
    /// same time (default 4; `--at-once N` overrides it). The state is recorded in the
    /// repositories' order whatever the number.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub at_once: Option<usize>,
    /// The forge of every repository (a repository's own `forge` wins): `github`
    /// (through `gh`, the default) or `gitlab` (through `glab`).
    #[serde(default)]
    pub forge: ForgeKind,
    /// Repositories found on the forge, resolved by `stage` into the state.
    #[serde(default)]
    pub targets: Option<TargetsSpec>,
    /// How `campaign merge` merges.
    #[serde(default)]
    pub merge: MergeSpec,
}

/// Where pull requests are opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ForgeKind {
    /// GitHub, through the GitHub CLI `gh`.
    #[default]
    Github,
    /// GitLab, through the GitLab CLI `glab` (merge requests).
    Gitlab,
}

impl ForgeKind {
    pub fn name(self) -> &'static str {
        match self {
            ForgeKind::Github => "github",
            ForgeKind::Gitlab => "gitlab",
        }
    }
}

/// Repositories found on the forge (`[targets]`): every non-archived, non-fork one of
/// `org`, or those a search `query` finds, kept when they have every topic of
/// `topics` and (when given) the `language`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TargetsSpec {
    /// An owner (organization, user or group) whose repositories to take.
    #[serde(default)]
    pub org: Option<String>,
    /// A repository search (as `gh search repos QUERY`).
    #[serde(default)]
    pub query: Option<String>,
    /// Keep only repositories with every one of these topics.
    #[serde(default)]
    pub topics: Vec<String>,
    /// Keep only repositories whose main language is this (case-insensitive).
    #[serde(default)]
    pub language: Option<String>,
    /// At most this many repositories from the forge (default 1000).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// How `campaign merge` merges (`[merge]`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeSpec {
    /// `squash` (the default), `merge` or `rebase`.
    #[serde(default)]
    pub method: MergeMethod,
    /// Delete the branch once merged (default true).
    #[serde(default = "yes")]
    pub delete_branch: bool,
    /// Merge only an approved pull request (default true).
    #[serde(default = "yes")]
    pub require_approval: bool,
    /// Merge only a pull request whose checks pass (default true; with false, one
    /// without checks or with pending ones merges too, never one whose checks fail).
    #[serde(default = "yes")]
    pub require_checks: bool,
    /// At most this many merges a minute (0: the `[pr]` rate).
    #[serde(default)]
    pub rate_per_minute: u32,
}

impl Default for MergeSpec {
    fn default() -> Self {
        MergeSpec {
            method: MergeMethod::default(),
            delete_branch: true,
            require_approval: true,
            require_checks: true,
            rate_per_minute: 0,
        }
    }
}

/// How a pull request is merged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MergeMethod {
    #[default]
    Squash,
    Merge,
    Rebase,
}

impl MergeMethod {
    pub fn name(self) -> &'static str {
        match self {
            MergeMethod::Squash => "squash",
            MergeMethod::Merge => "merge",
            MergeMethod::Rebase => "rebase",
        }
    }
}

/// The change: `ops` (as `edit`), `rules` (as `scan --config`), `patch` (as `patch`) or
/// `run` (as `run`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangeSpec {
    /// Rewrite ops, run in order, as `edit -p PATTERN -r TEMPLATE`.
    #[serde(default)]
    pub ops: Vec<OpSpec>,
    /// Parse every file as this language (`edit -l`).
    #[serde(default)]
    pub lang: Option<String>,
    /// A rule config (sgconfig.yml or a rule file), relative to the spec's folder.
    #[serde(default)]
    pub rules: Option<String>,
    /// A `*** Begin Patch` file, relative to the spec's folder.
    #[serde(default)]
    pub patch: Option<String>,
    /// A command run in each repository, as `git astedit run` runs it: a list is the
    /// program and its arguments (no shell); a string is a shell line (`sh -c`).
    /// `campaign refresh` runs it again.
    #[serde(default)]
    pub run: Option<RunSpec>,
    /// Recorded in each preview and the journal (default: the PR title).
    #[serde(default)]
    pub reason: Option<String>,
}

/// A campaign's command: argv, or a shell line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum RunSpec {
    /// The program and its arguments, run as they are.
    Argv(Vec<String>),
    /// A shell command line, run by `sh -c`.
    Shell(String),
}

impl RunSpec {
    /// The argument vector to run.
    pub fn argv(&self) -> Vec<String> {
        match self {
            RunSpec::Argv(argv) => argv.clone(),
            RunSpec::Shell(line) => vec!["sh".into(), "-c".into(), line.clone()],
        }
    }
}

/// One rewrite op.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpSpec {
    pub pattern: String,
    pub rewrite: String,
}

/// One repository: a URL git can clone (staged in a clone in the workspace) or the
/// path of a local checkout (staged in place; `campaign apply --local` applies there).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RepoSpec {
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub path: Option<String>,
    /// The branch to change (default: the remote's default branch; a local
    /// checkout's current HEAD).
    #[serde(default)]
    pub base: Option<String>,
    /// Git pathspecs limiting the files (default: all).
    #[serde(default)]
    pub pathspecs: Vec<String>,
    /// The key in the state (default: from the URL's or path's last component).
    #[serde(default)]
    pub name: Option<String>,
    /// This repository's forge (default: the spec's).
    #[serde(default)]
    pub forge: Option<ForgeKind>,
}

/// How previews become pull requests.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrSpec {
    /// The branch pushed in each repository (default `astedit/<name>`).
    #[serde(default)]
    pub branch: Option<String>,
    /// Title template; `{name}`, `{repo}`, `{base}`, `{files}`, `{replacements}`,
    /// `{preview}` are replaced.
    #[serde(default)]
    pub title: Option<String>,
    /// Body template (same placeholders), above the generated audit trail.
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default = "yes")]
    pub draft: bool,
    #[serde(default)]
    pub labels: Vec<String>,
    #[serde(default)]
    pub reviewers: Vec<String>,
    /// Publish this many first and wait until they are merged (or `--continue`).
    #[serde(default)]
    pub canary: usize,
    /// At most this many writes to the forge per minute — pull requests opened, or
    /// found and described again — however many repositories are worked on at once
    /// (0: no limit).
    #[serde(default)]
    pub rate_per_minute: u32,
    /// At most this many published pull requests open at the same time (0: no limit).
    #[serde(default)]
    pub max_open: usize,
}

fn yes() -> bool {
    true
}

impl Default for PrSpec {
    fn default() -> Self {
        PrSpec {
            branch: None,
            title: None,
            body: None,
            draft: true,
            labels: Vec::new(),
            reviewers: Vec::new(),
            canary: 0,
            rate_per_minute: 0,
            max_open: 0,
        }
    }
}

/// Where a repository is in the campaign.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum RepoStatus {
    /// Nothing matched: nothing to change.
    NoChange,
    /// A preview is staged in the checkout.
    Staged,
    /// The base moved and the refresh conflicted (or the preview could not be
    /// re-derived): `reason` says where.
    Stale,
    /// Pushed, pull request open.
    Published,
    /// The pull request branch holds commits we did not push: left alone.
    Diverged,
    Merged,
    Closed,
    /// Applied to a local checkout (`campaign apply --local`).
    Applied,
    /// Applied, then undone (`campaign undo`): the checkout is as before and the
    /// preview still staged (`campaign apply --local` applies it again).
    Undone,
    /// Could not clone, parse, stage or publish: `reason` says why.
    Failed,
}

impl RepoStatus {
    pub const ALL: [RepoStatus; 10] = [
        RepoStatus::NoChange,
        RepoStatus::Staged,
        RepoStatus::Stale,
        RepoStatus::Published,
        RepoStatus::Diverged,
        RepoStatus::Merged,
        RepoStatus::Closed,
        RepoStatus::Applied,
        RepoStatus::Undone,
        RepoStatus::Failed,
    ];
    pub fn name(self) -> &'static str {
        match self {
            RepoStatus::NoChange => "no-change",
            RepoStatus::Staged => "staged",
            RepoStatus::Stale => "stale",
            RepoStatus::Published => "published",
            RepoStatus::Diverged => "diverged",
            RepoStatus::Merged => "merged",
            RepoStatus::Closed => "closed",
            RepoStatus::Applied => "applied",
            RepoStatus::Undone => "undone",
            RepoStatus::Failed => "failed",
        }
    }
    /// A pull request exists for it.
    pub fn published(self) -> bool {
        matches!(
            self,
            RepoStatus::Published | RepoStatus::Diverged | RepoStatus::Merged | RepoStatus::Closed
        )
    }
}

/// One repository's entry in the state tree (a JSON blob named by its key).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RepoState {
    pub key: String,
    /// Its place in the spec (the canary takes the lowest).
    pub order: usize,
    /// The URL or local path, as the spec gives it.
    pub source: String,
    /// A local checkout (staged in place, no clone).
    pub local: bool,
    /// The work tree holding the preview (the clone in the workspace, or the checkout).
    pub checkout: Option<String>,
    pub base: Option<String>,
    /// The base commit the preview was staged on.
    pub base_commit: Option<String>,
    /// The preview's id (`refs/astedit/<id>` in the checkout).
    pub preview: Option<String>,
    pub files: Vec<String>,
    pub file_count: usize,
    pub replacements: usize,
    pub status: RepoStatus,
    /// Why it failed, is stale or diverged, or what a step noted.
    pub reason: Option<String>,
    pub branch: Option<String>,
    /// The commit we pushed to `branch` (the lease of a later refresh).
    pub pushed_commit: Option<String>,
    pub pr_url: Option<String>,
    pub pr_number: Option<u64>,
    /// The open pull request's checks as last seen: `passing`, `failing`, `pending`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<String>,
    /// Its review decision as last seen (`APPROVED`, `CHANGES_REQUESTED`,
    /// `REVIEW_REQUIRED`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<String>,
    /// Published as one of the canaries.
    #[serde(default)]
    pub canary: bool,
    /// Its forge, when not GitHub.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forge: Option<ForgeKind>,
    /// How `campaign merge` merged it (`squash`, `merge`, `rebase`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_by: Option<String>,
    /// When this entry last changed (RFC 3339 UTC).
    pub updated: String,
}

/// Counts by status.
pub type Totals = BTreeMap<RepoStatus, usize>;

/// One point of the burndown: the totals after one state commit.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BurndownPoint {
    pub commit: String,
    pub time: String,
    /// The state commit's subject.
    pub what: String,
    pub totals: Totals,
}

/// What a campaign command did to one repository this run.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RepoOutcome {
    pub key: String,
    /// `staged`, `no-change`, `failed`, `published`, `found`, `skipped`, `waiting`,
    /// `refreshed`, `current`, `diverged`, `conflict`, `applied`, `undone`, `merged`,
    /// `closed`, `moved`.
    pub action: String,
    pub status: RepoStatus,
    pub note: Option<String>,
}

/// `campaign stage|publish|refresh|apply|undo|collect --json`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CampaignReport {
    pub schema_version: Version,
    pub name: String,
    /// `stage`, `publish`, `refresh`, `apply`, `undo`, `collect`.
    pub command: String,
    /// The state commit after this run (none when nothing was recorded).
    pub state_commit: Option<String>,
    pub outcomes: Vec<RepoOutcome>,
    pub totals: Totals,
    /// Said once for the run: a canary waiting, the rate limit, a shard.
    pub notes: Vec<String>,
}

/// `campaign status --json`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CampaignStatusReport {
    pub schema_version: Version,
    pub name: String,
    pub state_ref: String,
    pub state_commit: Option<String>,
    pub repos: Vec<RepoState>,
    pub totals: Totals,
    /// Oldest first: one point per state commit.
    pub burndown: Vec<BurndownPoint>,
    pub notes: Vec<String>,
    /// The review of each repository's pending preview, by key, when asked for
    /// (`status --html` writes them as pages of their own and links them).
    #[serde(skip)]
    #[schemars(skip)]
    pub reviews: BTreeMap<String, crate::report::review::Review>,
}

/// `campaign matrix --json`: the shards as CI matrices.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CampaignMatrixReport {
    pub schema_version: Version,
    pub name: String,
    pub jobs: usize,
    /// `I/N` for each job.
    pub shards: Vec<String>,
    /// The repositories each shard stages (keys), in shard order.
    pub repos: Vec<Vec<String>>,
    /// `strategy.matrix` for GitHub Actions: `{"include": [{"shard": "1/4"}, …]}`.
    pub github: serde_json::Value,
    /// `parallel.matrix` for GitLab CI: `[{"SHARD": ["1/4", …]}]`.
    pub gitlab: serde_json::Value,
}

impl CampaignReport {
    /// 0 when every repository is fine; 1 when one failed, is stale or diverged.
    pub fn exit(&self) -> crate::error::Exit {
        let bad = self.outcomes.iter().any(|o| {
            matches!(
                o.status,
                RepoStatus::Failed | RepoStatus::Stale | RepoStatus::Diverged
            )
        });
        if bad {
            crate::error::Exit::NothingFound
        } else {
            crate::error::Exit::Ok
        }
    }
}

/// `campaign stage --dry-run --json`: the repositories a stage would work on, the
/// spec's and those its `[targets]` find on the forge now.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CampaignTargetsReport {
    pub schema_version: Version,
    pub name: String,
    pub repos: Vec<TargetRepo>,
}

/// One repository a stage would work on.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TargetRepo {
    pub key: String,
    /// What is cloned (or the local checkout's path).
    pub source: String,
    pub base: Option<String>,
    /// Where it comes from: `spec`, or the target (`org acme`, `query …`).
    pub from: String,
}
