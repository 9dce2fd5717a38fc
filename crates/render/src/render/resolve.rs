//! `apply`, `undo`, `discard` (a [`ResolveReport`]), `refresh` and `pr` as text: a
//! summary line per fact, and for an undo what stays applied and the commands that
//! finish it.

use super::Printed;
use super::Style;
use super::TextReport;
use crate::report::Action;
use crate::report::How;
use crate::report::PrReport;
use crate::report::PreviewState;
use crate::report::RefreshReport;
use crate::report::RefreshState;
use crate::report::ResolveReport;
use crate::text::escape_line;
use crate::text::plural;

impl TextReport for ResolveReport {
    fn text(&self, _style: &Style) -> Printed {
        let mut printed = Printed::new();
        if let Some(r) = &self.refreshed {
            // `apply --refresh` applied the successor at once: no hint to apply it.
            printed.out(refresh_text(r, false));
        }
        if let Some(v) = &self.verified {
            printed.note(super::verify::verdict(v));
        }
        printed.out(resolve_text(self));
        printed
    }
}

impl TextReport for crate::report::SessionUndoReport {
    fn text(&self, style: &Style) -> Printed {
        let mut printed = Printed::new();
        if self.undone.is_empty() {
            printed.out(format!(
                "Nothing to undo: {} has no transaction still applied.\n",
                crate::text::escape_line(&self.session)
            ));
        }
        for r in &self.undone {
            printed.pieces.extend(r.text(style).pieces);
        }
        printed
    }
}

impl TextReport for RefreshReport {
    fn text(&self, _style: &Style) -> Printed {
        let mut printed = Printed::new();
        printed.out(refresh_text(self, true));
        printed
    }
}

impl TextReport for PrReport {
    fn text(&self, _style: &Style) -> Printed {
        let (url, branch, id) = (&self.url, &self.branch, &self.id);
        let mut printed = Printed::new();
        printed.out(if self.created {
            format!(
                "Opened {}pull request {url} for {id} (branch {branch}).\n",
                if self.draft { "draft " } else { "" },
            )
        } else {
            format!("A pull request for {id} already exists: {url} (branch {branch}, pushed).\n")
        });
        printed
    }
}

fn resolve_text(report: &ResolveReport) -> String {
    let files = |n: usize| plural(n, "file");
    let mut text = match report.action {
        Action::Discarded => {
            return format!(
                "Discarded {}: {}\n",
                report.id,
                escape_line(&report.summary)
            )
        }
        Action::Undone if report.state == PreviewState::Pending => format!(
            "Undid {}: {} written, {} deleted. The preview is pending again; it is applied \
             again only by its id.\n",
            report.id,
            files(report.written.len()),
            files(report.deleted.len())
        ),
        Action::Undone => format!(
            "Undid {}: {} written, {} deleted. It was an agent's own edit (agent-hook), \
             not a staged preview: nothing is pending.\n",
            report.id,
            files(report.written.len()),
            files(report.deleted.len())
        ),
        Action::Applied => format!(
            "Applied {}: {} written, {} deleted.\n",
            report.id,
            files(report.written.len()),
            files(report.deleted.len())
        ),
    };
    if let Some(r) = &report.review {
        text.push_str(&review_line(report, r));
    } else if let Some(s) = &report.split {
        text.push_str(&format!(
            "Split {} by the pathspecs: applied part {}; the remainder, {}, is pending as {} \
             (`git astedit apply {}`).\n",
            s.parent,
            s.selected,
            files(s.remainder_files.len()),
            s.remainder,
            s.remainder
        ));
    }
    if let Some(c) = &report.commit {
        text.push_str(&format!("Committed {c}.\n"));
    }
    for line in undo_notes(report) {
        text.push_str(&line);
        text.push('\n');
    }
    text
}

/// What an apply of a reviewed preview did with its decisions.
fn review_line(report: &ResolveReport, r: &crate::report::review::CutCounts) -> String {
    let sites = |n: usize| format!("{n} site{}", if n == 1 { "" } else { "s" });
    if !r.obeyed {
        return "The preview's review decisions were fetched, not made here nor signed by an \
                allowed signer: they were not obeyed, and the whole preview was applied.\n"
            .to_string();
    }
    let Some(s) = &report.split else {
        return String::new();
    };
    let mut line = format!(
        "Obeyed the review decisions on {}: applied {} accepted as {}",
        s.parent,
        sites(r.accepted),
        s.selected
    );
    if r.rejected > 0 {
        line.push_str(&format!("; dropped {} rejected", sites(r.rejected)));
    }
    if s.remainder.is_empty() {
        line.push_str("; nothing is left pending.\n");
    } else {
        line.push_str(&format!(
            "; left {} undecided, in {}, pending as {} (`git astedit review {}`). `apply \
             --all` applies a preview whole.\n",
            sites(r.undecided),
            plural(s.remainder_files.len(), "file"),
            s.remainder,
            s.remainder
        ));
    }
    line
}

/// What an undo left as applied (the index, a commit) and the commands that finish it.
fn undo_notes(report: &ResolveReport) -> Vec<String> {
    let mut out = Vec::new();
    if report.index_restored {
        out.push("Restored the index entries too.".to_string());
    }
    let paths: Vec<String> = report
        .index_left
        .iter()
        .map(|p| crate::text::shell_word(p))
        .collect();
    match &report.commit_kept {
        Some(c) => {
            let short = &c[..c.len().min(12)];
            out.push(format!(
                "Commit {short} made by `apply --commit` stays in history: undo restores the \
                 work tree{} and never rewrites commits.",
                if report.index_restored {
                    " and the index"
                } else {
                    " only"
                }
            ));
            out.push(format!(
                "To take it back in history, record the reversal as a commit: git commit -m \
                 'Revert {short}'{}",
                if report.index_restored || paths.is_empty() {
                    String::new()
                } else {
                    format!(" -- {}", paths.join(" "))
                }
            ));
            out.push(format!(
                "(Instead of undo, `git revert {short}` does the same from a clean tree.)"
            ));
        }
        None if !paths.is_empty() => {
            out.push(format!(
                "The index still holds the applied content of {}: undo restores the work tree \
                 only (`git astedit undo --index` restores both).",
                plural(paths.len(), "file")
            ));
            out.push(format!(
                "To unstage it: git restore --staged -- {}",
                paths.join(" ")
            ));
        }
        None => {}
    }
    out
}

/// The text of a refresh; `hint_apply` false under `apply --refresh`, which applied
/// the successor at once.
fn refresh_text(r: &RefreshReport, hint_apply: bool) -> String {
    let mut s = String::new();
    if r.state == RefreshState::Current {
        s.push_str(&format!(
            "Preview {} is current: every file still holds what it was computed from. \
             Nothing was staged.\n",
            r.id
        ));
        return s;
    }
    for f in r.files.iter().filter(|f| f.how != How::Kept) {
        let count = |n: Option<usize>| n.map_or("-".to_string(), |n| n.to_string());
        s.push_str(&format!(
            "{}: {} → {} ({}{})\n",
            escape_line(&f.shown),
            count(f.before),
            count(f.now),
            f.how.words(),
            f.why
                .as_deref()
                .map(|w| format!(": {w}"))
                .unwrap_or_default()
        ));
    }
    let kept = r.files.iter().filter(|f| f.how == How::Kept).count();
    if kept > 0 {
        s.push_str(&format!(
            "{} unchanged (same blobs).\n",
            plural(kept, "file")
        ));
    }
    for n in &r.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    if let Some(next) = &r.successor {
        s.push_str(&format!(
            "Refreshed {} as {next}: {} replacements before, {} now{}.",
            r.id,
            r.replacements_before,
            r.replacements_now,
            if r.same_counts {
                ", the same in every file"
            } else {
                ""
            }
        ));
        if hint_apply {
            s.push_str(&format!(" Apply with `git astedit apply {next}`."));
        }
        s.push('\n');
    }
    s
}
