//! `git astedit scan`: run the rules; report findings, or check, stage or apply fixes.

use std::path::PathBuf;

use git_astedit::change::RuleCount;
use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::files;
use git_astedit::repo::Repo;
use git_astedit::report::FindingRow;
use git_astedit::report::FixedFile;
use git_astedit::report::ScanReport;
use git_astedit::report::ScanRule;
use git_astedit::report::Version;
use git_astedit::scan;
use git_astedit::scan::report;
use git_astedit::scan::Finding;
use git_astedit::scan::Mode;
use git_astedit::scan::ScanOutcome;
use git_astedit::txn;
use git_astedit::Error;

use super::common;
use super::interactive;
use super::Ctx;
use super::Out;
use super::OutputError;
use git_astedit::render::render_diffs;
use git_astedit::render::DiffFile;

/// Run the codemod rules of astedit.toml and ast-grep rule files
///
/// Without a mode flag, prints findings as `path:line:col: severity[rule-id]: message`
/// and exits 1 when one has severity error. `--check` prints the diff of every fix,
/// writes nothing, and exits 1 when a fix would change a file or an error finding would
/// remain. `--stage` stages all fixes as one preview. `--apply` stages and applies them
/// and exits 1 when files were changed (the pre-commit convention).
#[derive(Debug, clap::Args)]
pub struct ScanArgs {
    /// Git pathspecs or file names (relative to the current folder); default: the current folder
    #[arg(value_name = "PATHSPEC")]
    pub pathspecs: Vec<String>,

    /// Read rules from FILE: an astedit.toml, an sgconfig.yml or an ast-grep rule YAML
    /// file (can be repeated); default: astedit.toml and sgconfig.yml at the root
    #[arg(long, value_name = "FILE")]
    pub config: Vec<PathBuf>,

    /// Print the diff of every fix and exit 1 if any would change a file; write nothing
    #[arg(long, conflicts_with_all = ["stage", "apply"])]
    pub check: bool,

    /// Stage all fixes as one preview
    #[arg(long, conflicts_with = "apply")]
    pub stage: bool,

    /// Stage all fixes and apply them; exit 1 when files were changed
    #[arg(long)]
    pub apply: bool,

    /// Ask about each fix (y/n/a/d/q, one answer a line on stdin); stage (or with
    /// --apply, apply) only the accepted ones
    #[arg(short = 'i', long, conflicts_with = "check")]
    pub interactive: bool,

    /// Scan the staged content (the index) instead of the work tree
    #[arg(long)]
    pub cached: bool,

    /// Scan only shard I of N (1-based), split by path the same way on every machine
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,

    /// How to print findings
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Run only the rule with this id (can be repeated)
    #[arg(long = "rule", value_name = "ID")]
    pub rules: Vec<String>,

    /// Re-run a rule's fix at most N times per file (default: the config's max-passes, else 10)
    #[arg(long, value_name = "N")]
    pub max_passes: Option<usize>,

    /// Why these fixes are made (recorded in the preview and the journal)
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,

    /// Render at most N diff lines (0: no limit); the rest is summarized
    #[arg(long, value_name = "N", default_value_t = 2000)]
    pub max_render: usize,

    /// Skip files larger than BYTES
    #[arg(long, value_name = "BYTES", default_value_t = files::DEFAULT_MAX_FILE_SIZE)]
    pub max_filesize: u64,

    /// Number of worker threads (default: the number of cores)
    #[arg(short = 'j', long = "threads", value_name = "N")]
    pub threads: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// `path:line:col: severity[rule-id]: message`
    Text,
    /// GitHub Actions workflow commands (annotations)
    Github,
    /// A SARIF 2.1.0 log
    Sarif,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Report,
    Check,
    Stage,
    Apply,
}

impl Action {
    fn name(self) -> &'static str {
        match self {
            Action::Report => "report",
            Action::Check => "check",
            Action::Stage => "stage",
            Action::Apply => "apply",
        }
    }
}

pub fn run(ctx: &mut Ctx, args: ScanArgs) -> Result<Exit, Error> {
    let json = ctx.json;
    if json && args.format != Format::Text {
        return Err(UsageError("--json and --format are exclusive".into()).into());
    }
    let shard = args.shard.as_deref().map(scan::Shard::parse).transpose()?;
    if args.max_passes == Some(0) {
        return Err(UsageError("--max-passes must be at least 1".into()).into());
    }
    if args.interactive {
        let refuse = |what: &str| -> Result<Exit, Error> {
            Err(UsageError(format!("-i/--interactive cannot be combined with {what}")).into())
        };
        if json {
            return refuse("--json");
        }
        if args.format != Format::Text {
            return refuse("--format");
        }
        if args.config.iter().any(|c| c.as_os_str() == "-") {
            // The answers come from stdin.
            return refuse("rules read from stdin (--config -)");
        }
    }
    let action = if args.check {
        Action::Check
    } else if args.stage || (args.interactive && !args.apply) {
        Action::Stage
    } else if args.apply {
        Action::Apply
    } else {
        Action::Report
    };
    if let Some(n) = args.threads {
        // Fails only when a pool already exists, which cannot happen this early.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build_global();
    }
    let (repo, out) = ctx.parts()?;
    let color = out.color();
    let rules = scan::rules::load(repo, &args.config)?;
    for warning in &rules.warnings {
        out.warn(warning);
    }
    if rules.rules.is_empty() {
        out.warn(&format!("no active rules in {}", rules.sources.join(", ")));
    }
    let opts = scan::Options {
        pathspecs: args.pathspecs.clone(),
        cached: args.cached,
        shard,
        mode: if action == Action::Report {
            Mode::Report
        } else {
            Mode::Fix
        },
        only_rules: args.rules.clone(),
        max_file_size: args.max_filesize,
        max_passes: args.max_passes,
    };
    let mut asked = None;
    let outcome = if args.interactive {
        let (outcome, session) = interactive::session(out, color, false, |prompter| {
            scan::scan_selecting(repo, &rules, &opts, prompter).map_err(Error::from)
        })?;
        asked = Some(session);
        outcome
    } else {
        scan::scan(repo, &rules, &opts)?
    };

    // Stage (and apply) before printing, so that the printed id is real.
    let mut staged: Option<txn::Preview> = None;
    let mut applied: Option<txn::ApplyReport> = None;
    if matches!(action, Action::Stage | Action::Apply) && !outcome.changes.is_empty() {
        let mut meta = outcome.meta(&rules, &opts, args.reason.clone());
        git_astedit::ops::refresh::record_scan(&mut meta, repo, &rules, &args.config, &opts);
        if args.interactive {
            git_astedit::ops::refresh::record_selection(&mut meta);
        }
        let preview = txn::stage(repo, &outcome.changes, &meta)?;
        if action == Action::Apply {
            let apply_opts = txn::ApplyOptions {
                reason: args.reason.clone(),
                ..Default::default()
            };
            applied = Some(txn::apply(repo, Some(&preview.id), &apply_opts)?);
        }
        staged = Some(preview);
    }

    let exit = match action {
        Action::Report if outcome.errors() > 0 => Exit::NothingFound,
        // `-i` that staged nothing: as `edit` does when nothing would change.
        Action::Stage if asked.is_some() && outcome.changes.is_empty() => Exit::NothingFound,
        Action::Report | Action::Stage => Exit::Ok,
        Action::Check | Action::Apply
            if !outcome.changes.is_empty() || outcome.remaining_errors() > 0 =>
        {
            Exit::NothingFound
        }
        Action::Check | Action::Apply => Exit::Ok,
    };

    if json {
        let value = json_result(
            repo,
            &rules,
            &outcome,
            action,
            &staged,
            &applied,
            args.max_render,
        );
        out.json(&value)?;
        return Ok(exit);
    }
    match args.format {
        Format::Sarif => {
            let value = report::sarif(&rules, &outcome.findings, Some(&repo.workdir));
            let text = serde_json::to_string_pretty(&value).map_err(OutputError::Encode)?;
            out.print(&text)?;
            out.print("\n")?;
        }
        Format::Github => {
            let mut text = String::new();
            if action != Action::Report && !outcome.changes.is_empty() {
                text.push_str(&render_diffs(
                    &DiffFile::from_changes(&outcome.changes),
                    false,
                    args.max_render,
                ));
            }
            text.push_str(&report::github(&outcome.findings));
            if action == Action::Check {
                for f in &outcome.fixed {
                    let rules: Vec<String> =
                        f.counts.iter().map(|(r, n)| format!("{r} ×{n}")).collect();
                    text.push_str(&report::github_file(
                        "error",
                        &f.path,
                        "git astedit scan",
                        &format!(
                            "`git astedit scan --apply` would change this file ({})",
                            rules.join(", ")
                        ),
                    ));
                }
            }
            out.print(&text)?;
        }
        Format::Text => {
            let quoting = repo.quoting();
            let shown = |p: &str| quoting.quote_owned(repo.display_path(p));
            let mut text = String::new();
            if action == Action::Report {
                text.push_str(&report::text(&outcome.findings, shown));
            } else {
                // After `-i` every accepted fix has been shown already.
                if !outcome.changes.is_empty() && asked.is_none() {
                    text.push_str(&render_diffs(
                        &DiffFile::from_changes(&outcome.changes),
                        color,
                        args.max_render,
                    ));
                    text.push('\n');
                }
                text.push_str(&report::text(&outcome.remaining, shown));
            }
            out.print(&text)?;
        }
    }
    status_lines(out, repo, &outcome, action, &staged, &applied, asked);
    Ok(exit)
}

/// The closing summary and warnings, on stderr: stdout stays the result proper.
fn status_lines(
    out: &mut Out,
    repo: &Repo,
    outcome: &ScanOutcome,
    action: Action,
    staged: &Option<txn::Preview>,
    applied: &Option<txn::ApplyReport>,
    asked: Option<interactive::Asked>,
) {
    let quoting = repo.quoting();
    let diag = common::diagnostics(repo, &[], &outcome.parse_errors, &outcome.skipped);
    common::warn_all(out, &diag);
    for u in &outcome.unconverged {
        out.warn(&format!(
            "rule '{}' still changed {} after {} passes; the result may change again on the next run",
            u.rule,
            quoting.quote(&repo.display_path(&u.path)),
            u.passes
        ));
    }
    let flagged: Vec<String> = outcome
        .fixed
        .iter()
        .filter(|f| f.introduces_parse_error)
        .map(|f| quoting.quote_owned(repo.display_path(&f.path)))
        .collect();
    if !flagged.is_empty() {
        out.warn(&format!(
            "the fixes make {} parse with errors: {}",
            git_astedit::render::plural(flagged.len(), "file"),
            flagged.join(", ")
        ));
    }
    let findings = if action == Action::Report {
        &outcome.findings
    } else {
        &outcome.remaining
    };
    let mut lines = Vec::new();
    let searched = git_astedit::render::plural(outcome.files_searched, "file");
    match action {
        Action::Report => {
            let fixable = findings.iter().filter(|f| f.fixable).count();
            if findings.is_empty() {
                lines.push(format!("No findings in {searched}."));
            } else {
                lines.push(format!(
                    "{} ({}) in {searched}{}.",
                    git_astedit::render::plural(findings.len(), "finding"),
                    severity_counts(findings),
                    if fixable > 0 {
                        format!("; {fixable} fixable with `git astedit scan --apply`")
                    } else {
                        String::new()
                    }
                ));
            }
        }
        _ => {
            if outcome.changes.is_empty() && asked.is_some_and(|a| a.offered > 0) {
                lines.push(interactive::nothing_staged(asked));
            } else if outcome.changes.is_empty() {
                lines.push(format!("No fixes needed in {searched}."));
            } else {
                let summary = outcome.summary();
                lines.push(match (action, staged, applied) {
                    (Action::Check, _, _) => format!(
                        "{summary} would be made; run `git astedit scan --apply` to make them."
                    ),
                    (_, Some(p), Some(report)) => format!(
                        "{summary}: staged and applied {} ({} written). Undo with `git astedit undo {}`.",
                        p.id,
                        git_astedit::render::plural(report.written.len() + report.deleted.len(), "file"),
                        p.id
                    ),
                    (_, Some(p), None) => format!(
                        "{summary}: staged preview {}. Apply with `git astedit apply {}`, drop with `git astedit discard {}`.",
                        p.id, p.id, p.id
                    ),
                    _ => summary,
                });
            }
            if !findings.is_empty() {
                lines.push(format!(
                    "{} left for a person ({}).",
                    git_astedit::render::plural(findings.len(), "finding"),
                    severity_counts(findings)
                ));
            }
        }
    }
    if outcome.other_shards > 0 {
        lines.push(format!(
            "{} belong to other shards.",
            git_astedit::render::plural(outcome.other_shards, "file")
        ));
    }
    for line in lines {
        out.note(&line);
    }
}

/// `2 errors, 1 warning`.
fn severity_counts(findings: &[Finding]) -> String {
    use git_astedit::scan::Severity;
    let mut parts = Vec::new();
    for (sev, word) in [
        (Severity::Error, "error"),
        (Severity::Warning, "warning"),
        (Severity::Info, "info"),
        (Severity::Hint, "hint"),
    ] {
        let n = findings.iter().filter(|f| f.severity == sev).count();
        if n > 0 {
            parts.push(if matches!(sev, Severity::Info | Severity::Hint) {
                format!("{n} {word}")
            } else {
                git_astedit::render::plural(n, word)
            });
        }
    }
    parts.join(", ")
}

/// The `--json` shape of a scan (documented in the README).
fn json_result(
    repo: &Repo,
    rules: &scan::RuleSet,
    outcome: &ScanOutcome,
    action: Action,
    staged: &Option<txn::Preview>,
    applied: &Option<txn::ApplyReport>,
    max_render: usize,
) -> ScanReport {
    let list = |fs: &[Finding]| -> Vec<FindingRow> {
        fs.iter()
            .map(|f| FindingRow::of(f, repo.display_path(&f.path)))
            .collect()
    };
    let fixing = action != Action::Report;
    ScanReport {
        schema_version: Version,
        mode: action.name().to_string(),
        rules: rules
            .rules
            .iter()
            .map(|r| ScanRule {
                id: r.id.clone(),
                language: r.lang.to_string(),
                severity: serde_json::to_value(r.severity)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                fixable: r.fixable(),
                source: r.source.to_string(),
            })
            .collect(),
        findings: list(&outcome.findings),
        error_count: outcome.errors(),
        files_searched: outcome.files_searched,
        remaining: fixing.then(|| list(&outcome.remaining)),
        summary: fixing.then(|| outcome.summary()),
        fixes: fixing.then(|| outcome.fixes()),
        files: fixing.then(|| {
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
                })
                .collect()
        }),
        diff: fixing
            .then(|| render_diffs(&DiffFile::from_changes(&outcome.changes), false, max_render)),
        unconverged: fixing.then(|| serde_json::to_value(&outcome.unconverged).unwrap_or_default()),
        id: fixing
            .then(|| staged.as_ref().map(|p| p.id.clone()))
            .flatten(),
        applied: fixing.then_some(applied.is_some()),
        diagnostics: common::diagnostics(repo, &[], &outcome.parse_errors, &outcome.skipped),
    }
}
