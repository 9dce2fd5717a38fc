//! `undo`: undo an applied transaction.

use git_astedit::ops::undo::UndoRequest;
use git_astedit::render::agent;
use git_astedit::Error;
use schemars::JsonSchema;
use serde::Deserialize;

use super::non_empty;
use super::Call;
use super::Done;

/// Input of `undo`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UndoInput {
    /// The applied transaction's id or unique prefix (default: the newest applied
    /// one not yet undone).
    #[serde(default)]
    pub id: Option<String>,
    /// Why; recorded in the journal.
    #[serde(default)]
    pub reason: Option<String>,
}

pub fn undo(call: &Call, input: UndoInput) -> Result<Done, Error> {
    let (repo, notes) = call.open()?;
    let request = UndoRequest {
        id: input.id,
        reason: non_empty(input.reason),
        agent: call.agent.clone(),
        index: false,
    };
    call.cancel.check()?;
    let report = git_astedit::ops::undo::run(&repo, &request)?;
    Done::new(agent::resolve::undone(&report, &notes), &report)
}
