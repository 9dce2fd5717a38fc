//! `lane`: start, list, drop or merge lanes, one linked worktree per agent (`git
//! astedit lane`; the same `ops::lane` calls).

use git_astedit::error::UsageError;
use git_astedit::ops::lane;
use git_astedit::render::Style;
use git_astedit::render::TextReport;
use git_astedit::report::lane::LaneMergeReport;
use git_astedit::report::lane::LaneReport;
use git_astedit::Error;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

use super::count;
use super::non_empty;
use super::Call;
use super::Done;
use super::DEFAULT_MAX_DIFF_LINES;

/// What `lane` does.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LaneAction {
    /// List the lanes, what each changed and what of it is not merged here.
    #[default]
    List,
    /// Make lane `name` at HEAD; its folder is in the result (run the agent there).
    Start,
    /// Remove lane `name` (refused while it holds changes not merged here, unless
    /// `force`).
    Drop,
    /// Merge lanes `names` into one preview staged on this work tree, by syntax node.
    Merge,
}

/// Input of `lane`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaneInput {
    /// `list` (default), `start`, `drop` or `merge`.
    #[serde(default)]
    pub action: LaneAction,
    /// For `start` and `drop`: the lane's name (letters, digits, `.`, `_`, `-`).
    #[serde(default)]
    pub name: Option<String>,
    /// For `merge`: the lanes, merged in this order.
    #[serde(default)]
    pub names: Vec<String>,
    /// For `drop`: drop it even when its changes are not merged here (they are lost;
    /// the result names them).
    #[serde(default)]
    pub force: bool,
    /// For `merge`: why, recorded in the preview.
    #[serde(default)]
    pub reason: Option<String>,
    /// For `merge`: return at most this many diff lines (default 400; 0: no limit).
    #[serde(default, deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = DEFAULT_MAX_DIFF_LINES))]
    pub max_diff_lines: Option<usize>,
}

/// Output of `lane`: `lane list/start/drop --json`'s report, or `lane merge --json`'s.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum LaneOutput {
    Lanes(LaneReport),
    Merged(Box<LaneMergeReport>),
}

pub fn lane(call: &Call, input: LaneInput) -> Result<Done, Error> {
    let name = || {
        non_empty(input.name.clone()).ok_or_else(|| -> Error {
            UsageError("`name` is required for `start` and `drop`".into()).into()
        })
    };
    let report = match input.action {
        LaneAction::List => lane::list(&call.open_read_only()?.0)?,
        LaneAction::Start => lane::start(&call.open()?.0, &name()?)?,
        LaneAction::Drop => lane::drop(&call.open()?.0, &name()?, input.force)?,
        LaneAction::Merge => {
            if input.names.is_empty() {
                return Err(UsageError("`names` is empty: give the lanes to merge".into()).into());
            }
            let request = lane::MergeRequest {
                names: input.names,
                reason: non_empty(input.reason),
                verify: None,
                max_render: input.max_diff_lines.unwrap_or(DEFAULT_MAX_DIFF_LINES),
            };
            call.cancel.check()?;
            let report = lane::merge(&call.open()?.0, &request)?;
            let text = report.text(&Style::default()).stdout();
            return Done::new(text, &LaneOutput::Merged(Box::new(report)));
        }
    };
    let text = report.text(&Style::default()).stdout();
    Done::new(text, &LaneOutput::Lanes(report))
}
