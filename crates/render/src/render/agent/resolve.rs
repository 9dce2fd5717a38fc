//! The server's text blocks of `resolve` (apply, discard), `undo` and `pr`: what was
//! done, and the tool call that takes it further or back.

use super::notes::push_notes;
use crate::report::Action;
use crate::report::PrReport;
use crate::report::ResolveReport;
use crate::text::plural;

/// `resolve`: an apply or a discard, then `notes` (what opening the repository
/// cleared or finished).
pub fn resolved(report: &ResolveReport, notes: &[String]) -> String {
    let mut text = match report.action {
        Action::Discarded => format!("Discarded {}: {}\n", report.id, report.summary),
        _ => applied(report),
    };
    push_notes(&mut text, notes, &[]);
    text
}

fn applied(report: &ResolveReport) -> String {
    let mut text = String::new();
    if let Some(r) = &report.refreshed {
        text.push_str(&format!(
            "Preview {} was stale: refreshed as {} with the same counts.\n",
            r.id,
            r.successor.as_deref().unwrap_or("?")
        ));
    }
    if let Some(s) = &report.split {
        text.push_str(&format!(
            "Split {}: the selected part is {}, the remainder ({}) stays pending as {}.\n",
            s.parent,
            s.selected,
            plural(s.remainder_files.len(), "file"),
            s.remainder
        ));
    }
    if let Some(v) = &report.verified {
        text.push_str(&format!("{}.\n", crate::render::verify::verdict(v)));
    }
    text.push_str(&format!(
        "Applied {} ({} written{}). Undo it with undo {{\"id\": \"{}\"}}.\n",
        report.id,
        plural(report.written.len(), "file"),
        if report.deleted.is_empty() {
            String::new()
        } else {
            format!(", {} deleted", report.deleted.len())
        },
        report.id
    ));
    if let Some(c) = &report.commit {
        text.push_str(&format!(
            "Committed {c} on HEAD with exactly the preview's changes (Astedit-* \
             trailers). undo restores the work tree but leaves the commit in history.\n"
        ));
    }
    text
}

/// `undo`: what was restored, what stays applied, and how to apply it again.
pub fn undone(report: &ResolveReport, notes: &[String]) -> String {
    let mut text = format!(
        "Undid {}: {} restored{}.\n",
        report.id,
        plural(report.written.len(), "file"),
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
    if report.state == crate::report::PreviewState::Pending {
        text.push_str(&format!(
            "Preview {id} is pending again (state: pending, undone). A resolve without an id never \
             picks it: apply it again only by naming it, resolve {{\"action\": \"apply\", \"id\": \"{id}\", \"reason\": …}}, \
             or drop it with action \"discard\".\n",
            id = report.id
        ));
    } else {
        text.push_str(
            "It was an agent's own edit (agent-hook), not a staged preview: nothing is pending.\n",
        );
    }
    push_notes(&mut text, notes, &[]);
    text
}

/// `pr`: the pull request opened or found.
pub fn pr(report: &PrReport, notes: &[String]) -> String {
    let (url, branch, id) = (&report.url, &report.branch, &report.id);
    let mut text = if report.created {
        format!(
            "Opened {}pull request {url} for {id} (branch {branch} at {}).\n",
            if report.draft { "draft " } else { "" },
            report.commit
        )
    } else {
        format!("A pull request for {id} already exists: {url} (branch {branch}, pushed again).\n")
    };
    push_notes(&mut text, notes, &[]);
    text
}
