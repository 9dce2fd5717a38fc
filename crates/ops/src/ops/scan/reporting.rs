//! The report of a scan: after it ran, and before any file is scanned (a stream's head).

use super::staging::Staged;
use super::Ran;
use super::Rows;
use super::ScanRequest;
use crate::change::RuleCount;
use crate::repo::Repo;
use crate::report::scan::Unconverged;
use crate::report::FixedFile;
use crate::report::ScanReport;
use crate::report::ScanRule;
use crate::report::Version;
use crate::scan;
use crate::scan::Finding;

/// The report of a scan that ran.
#[allow(clippy::too_many_arguments)]
pub(super) fn report(
    repo: &Repo,
    req: &ScanRequest,
    outcome: scan::ScanOutcome,
    rules: Vec<ScanRule>,
    mut notices: Vec<String>,
    rows: &Rows<'_>,
    ran: Ran,
    staged: Staged,
) -> ScanReport {
    let fixing = req.mode.fixing();
    let diagnostics =
        crate::report::Diagnostics::of(&[], &outcome.parse_errors, &outcome.skipped, |p| {
            repo.display_path(p)
        });
    // Rendered once, as the front end shows it (after `-i` every accepted fix has
    // been shown already).
    let diff = (fixing && ran.offered.is_none()).then(|| {
        crate::diff::render_diffs(
            &crate::diff::DiffFile::from_changes(&outcome.changes),
            req.color,
            req.max_render,
        )
    });
    let streamed = ran.streamed;
    ScanReport {
        schema_version: Version,
        mode: req.mode,
        rules,
        findings: match (&streamed, req.max_results) {
            (Some(s), Some(max)) if s.total > max => {
                notices.push(more_findings(s.total - max, max));
                Vec::new()
            }
            (Some(_), _) => Vec::new(),
            (None, Some(max)) if outcome.findings.len() > max => {
                notices.push(more_findings(outcome.findings.len() - max, max));
                rows.rows(&outcome.findings[..max])
            }
            (None, _) => rows.rows(&outcome.findings),
        },
        error_count: match &streamed {
            Some(s) => s.errors,
            None => outcome.errors(),
        },
        files_searched: outcome.files_searched,
        baseline: None,
        absent: None,
        remaining: fixing.then(|| {
            // Applied, the files hold the fixed text the positions are in; else they
            // still hold the input, where a person looks for them.
            match staged.written {
                Some(_) => rows.rows(&outcome.remaining),
                None => rows.rows(&in_input(&outcome)),
            }
        }),
        summary: fixing.then(|| outcome.summary()),
        fixes: fixing.then(|| outcome.fixes()),
        files: fixing.then(|| fixed_files(repo, &outcome)),
        diff,
        unconverged: fixing.then(|| {
            outcome
                .unconverged
                .iter()
                .map(|u| Unconverged {
                    path: u.path.clone(),
                    rule: u.rule.clone(),
                    passes: u.passes,
                    shown: repo.display_path(&u.path),
                })
                .collect()
        }),
        applied: fixing.then_some(staged.written.is_some()),
        verified: staged.verified,
        id: staged.id,
        diagnostics,
        notices,
        written: staged.written.unwrap_or(0),
        offered: ran.offered,
        other_shards: outcome.other_shards,
        apply_index: req.input.cached,
        fix_command: fix_command(req),
        workdir: repo.workdir.clone(),
        streamed: streamed.map(|s| s.tally),
    }
}

/// The findings the fixes leave, at their lines in the input (the file on disk, or
/// in the index with `--cached`) rather than in the fixed text: a fix that added an
/// import moves every line after it by one.
fn in_input(outcome: &scan::ScanOutcome) -> Vec<Finding> {
    let maps: std::collections::HashMap<&str, crate::diff::LineMap> = outcome
        .changes
        .changes
        .iter()
        .filter_map(|c| {
            let (before, after) = (c.before.as_ref()?, c.after.as_ref()?);
            Some((
                c.path.as_str(),
                crate::diff::LineMap::new(&before.bytes, &after.bytes),
            ))
        })
        .collect();
    outcome
        .remaining
        .iter()
        .map(|f| {
            let mut f = f.clone();
            if let Some(map) = maps.get(f.path.as_str()) {
                f.line = map.old_line(f.line);
                f.end_line = map.old_line(f.end_line).max(f.line);
            }
            f
        })
        .collect()
}

/// What `--check` says to run to make its fixes: the same selection with `--apply`,
/// so the fixes are those shown and no others (a hook's check of the lines being
/// committed must not send a person to fix the whole repository). The pathspecs are
/// named when they are few, as the pre-commit framework passes every file.
fn fix_command(req: &ScanRequest) -> String {
    let input = &req.input;
    let mut words = vec!["git astedit scan --apply".to_string()];
    if input.cached {
        words.push("--cached".into());
    }
    match &input.changed {
        Some(rev) if !(input.changed_lines && rev == "HEAD") => {
            words.push(format!("--changed={}", crate::text::shell_word(rev)));
        }
        _ => {}
    }
    if input.changed_lines {
        words.push("--changed-lines".into());
    }
    if let Some(rev) = &req.baseline {
        words.push(format!("--baseline {}", crate::text::shell_word(rev)));
        if req.fix_all {
            words.push("--fix-all".into());
        }
    }
    for rule in &req.only_rules {
        words.push(format!("--rule-id {}", crate::text::shell_word(rule)));
    }
    if !input.pathspecs.is_empty() && input.pathspecs.len() <= 8 {
        words.push("--".into());
        words.extend(input.pathspecs.iter().map(|p| crate::text::shell_word(p)));
    }
    words.join(" ")
}

/// The fixed files as the report lists them.
fn fixed_files(repo: &Repo, outcome: &scan::ScanOutcome) -> Vec<FixedFile> {
    outcome
        .fixed
        .iter()
        .map(|f| FixedFile {
            path: repo.display_path(&f.path),
            count: f.counts.iter().map(|(_, n)| n).sum::<usize>(),
            rules: f
                .counts
                .iter()
                .map(|(r, n)| RuleCount {
                    rule: r.clone(),
                    count: *n,
                })
                .collect(),
            introduces_parse_errors: f.introduces_parse_error,
            repeated_kept_text: f.repeated_kept_text,
            flags: f.flags.clone(),
            repo_path: f.path.clone(),
        })
        .collect()
}

/// The notice of findings `--max-results` left out.
fn more_findings(left_out: usize, max: usize) -> String {
    format!("{left_out} more findings not shown (--max-results {max})")
}

/// A `report`-mode report before any file is scanned: the rules and their notices.
pub(super) fn head_report(
    repo: &Repo,
    req: &ScanRequest,
    rules: Vec<ScanRule>,
    notices: Vec<String>,
) -> ScanReport {
    ScanReport {
        schema_version: Version,
        mode: req.mode,
        rules,
        findings: Vec::new(),
        error_count: 0,
        files_searched: 0,
        baseline: None,
        absent: None,
        remaining: None,
        summary: None,
        fixes: None,
        files: None,
        diff: None,
        unconverged: None,
        id: None,
        applied: None,
        verified: None,
        diagnostics: Default::default(),
        notices,
        written: 0,
        offered: None,
        other_shards: 0,
        apply_index: req.input.cached,
        fix_command: fix_command(req),
        workdir: repo.workdir.clone(),
        streamed: Some(Default::default()),
    }
}
