//! `log`: the journal, or what one agent's session changed (`git astedit log`).

use git_astedit::ops::log::LogRequest;
use git_astedit::render::Style;
use git_astedit::render::TextReport;
use git_astedit::Error;
use schemars::JsonSchema;
use serde::Deserialize;

use super::count;
use super::Call;
use super::Done;

/// Input of `log`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogInput {
    /// Only what this session did: its name as the journal spells it (`agent` of an
    /// event: `claude-code/session:ID`, a client's `NAME/VERSION`), or a unique prefix
    /// of that or of the ID. With it, each change lists its files (lines added and
    /// removed) and the tool that made it.
    #[serde(default)]
    pub session: Option<String>,
    /// Only the events of this transaction's line (an id or unique prefix).
    #[serde(default)]
    pub id: Option<String>,
    /// Each change's diff too (default false).
    #[serde(default)]
    pub diff: bool,
    /// Without `id` or `session`: the events of every work tree (the main tree and the
    /// lanes), not only this server's (default false).
    #[serde(default)]
    pub all_worktrees: bool,
    /// At most this many events, newest first (default 50; 0: all).
    #[serde(default, deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = 50))]
    pub max_count: Option<usize>,
}

pub fn log(call: &Call, input: LogInput) -> Result<Done, Error> {
    let (repo, _notes) = call.open_read_only()?;
    let request = LogRequest {
        id: input.id,
        session: input.session,
        max_count: input.max_count.unwrap_or(50),
        patch: input.diff,
        all_worktrees: input.all_worktrees,
    };
    let report = git_astedit::ops::log::run(&repo, &request)?;
    let mut text = report.text(&Style::default()).stdout();
    if report.events.is_empty() {
        text.push_str("No journal events match.\n");
    }
    Done::new(text, &report)
}
