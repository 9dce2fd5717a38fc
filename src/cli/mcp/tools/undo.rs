//! `undo`: undo an applied transaction.

use git_astedit::render;
use git_astedit::txn;
use git_astedit::Error;
use schemars::JsonSchema;
use serde::Deserialize;

use super::non_empty;

use super::push_notes;
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
    let reason = non_empty(input.reason);
    let request = git_astedit::ops::apply::UndoRequest {
        id: input.id,
        options: txn::UndoOptions {
            reason,
            agent: call.agent.clone(),
            index: false,
        },
    };
    call.cancel.check()?;
    let report = git_astedit::ops::apply::undo(&repo, &request)?;
    let mut text = format!(
        "Undid {}: {} restored{}.\n",
        report.id,
        render::plural(report.written.len(), "file"),
        if report.deleted.is_empty() {
            String::new()
        } else {
            format!(", {} removed", report.deleted.len())
        }
    );
    // Undo restores the work tree only: say what stays applied.
    if let Some(c) = &report.commit_kept {
        text.push_str(&format!(
            "The commit {c} made by apply --commit stays in history; record the reversal \
             with `git commit -m 'Revert …' -- <files>`.\n"
        ));
    } else if !report.index_left.is_empty() {
        text.push_str(&format!(
            "The index still holds the applied content of: {}.\n",
            report.index_left.join(", ")
        ));
    }
    text.push_str(&format!(
        "Preview {id} is pending again (state: pending, undone). A resolve without an id never \
         picks it: apply it again only by naming it, resolve {{\"action\": \"apply\", \"id\": \"{id}\", \"reason\": …}}, \
         or drop it with action \"discard\".\n",
        id = report.id
    ));
    push_notes(&mut text, &notes, &[]);
    Done::new(text, &report)
}
