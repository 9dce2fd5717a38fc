//! `scan`: run the rules over the files; report the findings, or compute the fixes and
//! check, stage or apply them. The fixes are staged through the stager as one preview
//! with the scan recorded (so `refresh` can re-run it), and applied at once with
//! `--apply`.

use std::path::PathBuf;

use crate::change::RuleCount;
use crate::repo::Repo;
use crate::report::scan::Unconverged;
use crate::report::FindingRow;
use crate::report::FixedFile;
use crate::report::ScanMode;
use crate::report::ScanReport;
use crate::report::ScanRule;
use crate::report::Version;
use crate::scan;
use crate::scan::Finding;
use crate::select::Proposal;
use crate::select::Select;
use crate::txn;
use crate::Error;

/// One scan.
#[derive(Debug, Clone)]
pub struct ScanRequest {
    /// Git pathspecs or file names (relative to the current folder).
    pub pathspecs: Vec<String>,
    /// Rule files; empty: astedit.toml and sgconfig.yml at the root.
    pub configs: Vec<PathBuf>,
    pub mode: ScanMode,
    /// Scan the staged content (the index) instead of the work tree.
    pub cached: bool,
    /// Only shard `I/N` (1-based), as the user wrote it.
    pub shard: Option<String>,
    /// Only these rule ids (all when empty).
    pub only_rules: Vec<String>,
    /// Only rules whose id matches (`--filter`).
    pub filter: Option<regex::Regex>,
    /// Severities set on the command line (`--error[=ID,…]`, …, `--off`), in order:
    /// a later one wins.
    pub severities: Vec<SeverityOverride>,
    /// Report at most this many findings (the rest are counted in a notice).
    pub max_results: Option<usize>,
    /// Overrides the config's bound on fix re-runs.
    pub max_passes: Option<usize>,
    /// Why the fixes are made (recorded in the preview and the journal).
    pub reason: Option<String>,
    /// Diff lines to render at most (0: no limit).
    pub max_render: usize,
    pub max_file_size: u64,
    /// Rules given as YAML text (`--inline-rules`), instead of config files.
    pub inline_rules: Option<String>,
    /// Each finding carries its rule's `metadata` (`--include-metadata`).
    pub include_metadata: bool,
    /// With [`ScanMode::Apply`]: check the staged fixes in a worktree first and apply
    /// them only if the command passes (`scan --apply --verify`).
    pub verify: Option<super::apply::VerifyPlan>,
    /// The result cache to use.
    pub cache: super::cache::CacheChoice,
}

/// A severity a front end can ask for (the engine's levels, named here so that front
/// ends need not reach the engine).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
    Info,
    Hint,
}

impl From<Level> for scan::Severity {
    fn from(level: Level) -> scan::Severity {
        match level {
            Level::Error => scan::Severity::Error,
            Level::Warning => scan::Severity::Warning,
            Level::Info => scan::Severity::Info,
            Level::Hint => scan::Severity::Hint,
        }
    }
}

/// A severity given on the command line, as ast-grep's `--error[=RULE]` and kin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeverityOverride {
    /// `None`: turn the rule off.
    pub severity: Option<Level>,
    /// The rule ids; empty: every rule.
    pub rules: Vec<String>,
}

impl SeverityOverride {
    fn covers(&self, id: &str) -> bool {
        self.rules.is_empty() || self.rules.iter().any(|r| r == id)
    }
}

/// The severity `id` gets from the overrides (the last that names it or all rules),
/// `Some(None)` for off, `None` when none speaks of it.
fn override_for(overrides: &[SeverityOverride], id: &str) -> Option<Option<scan::Severity>> {
    overrides
        .iter()
        .rev()
        .find(|o| o.covers(id))
        .map(|o| o.severity.map(scan::Severity::from))
}

/// Where the findings of a streamed scan go, as they come (see [`run_streaming`]).
pub trait ScanSink {
    /// One file's findings (files in path order, findings in position order). `head`
    /// is the report before any finding: its mode, rules and the rules' notices, no
    /// findings and no counts.
    fn file(&mut self, head: &ScanReport, rows: &[FindingRow]) -> Result<(), Error>;
}

/// Runs the scan `req` asks for. With `select` (`scan -i`), only the fixes it accepts
/// are made, and the report says how many were offered.
pub fn run(
    repo: &Repo,
    req: &ScanRequest,
    select: Option<&mut dyn Select>,
) -> Result<ScanReport, Error> {
    run_with(repo, req, select, None)
}

/// Like [`run`], but in `report` mode each file's findings go to `sink` as the scan
/// reaches that file, in path order, and are not held: the report's `findings` are
/// empty and its [`streamed`](ScanReport::streamed) counts stand for them (issue 26).
/// The fix modes hold their findings (the fixes are held for staging anyway) and
/// `sink` is not called.
pub fn run_streaming(
    repo: &Repo,
    req: &ScanRequest,
    sink: &mut dyn ScanSink,
) -> Result<ScanReport, Error> {
    run_with(repo, req, None, Some(sink))
}

fn run_with(
    repo: &Repo,
    req: &ScanRequest,
    select: Option<&mut dyn Select>,
    sink: Option<&mut dyn ScanSink>,
) -> Result<ScanReport, Error> {
    let shard = req.shard.as_deref().map(scan::Shard::parse).transpose()?;
    let cache = req.cache.settings(repo);
    let mut rules = match &req.inline_rules {
        Some(text) => {
            scan::rules::from_text(text, scan::rules::TextFormat::Yaml, "--inline-rules")?.into()
        }
        // Interactive scans use no cache (a person's answers are not cached).
        None => scan::rules::open(
            repo,
            &req.configs,
            cache.as_ref().filter(|_| select.is_none()),
        )?,
    };
    // Severities from the command line; `off` rules leave the run.
    if !req.severities.is_empty() {
        rules.set_severities(|id| override_for(&req.severities, id));
    }
    let mut only_rules = req.only_rules.clone();
    if let Some(filter) = &req.filter {
        let matched: Vec<String> = rules
            .plan
            .rules
            .iter()
            .filter(|r| filter.is_match(&r.id))
            .filter(|r| only_rules.is_empty() || only_rules.contains(&r.id))
            .map(|r| r.id.clone())
            .collect();
        if matched.is_empty() {
            return Err(crate::error::UsageError(format!(
                "no rule id matches --filter {}",
                filter.as_str()
            ))
            .into());
        }
        only_rules = matched;
    }
    // Unused suppressions are judged only when every rule runs (a comment may be meant
    // for a rule left out), unless a severity for them is asked for.
    let every_rule = req.only_rules.is_empty() && req.filter.is_none();
    let unused_suppressions =
        match override_for(&req.severities, scan::suppress::UNUSED_SUPPRESSION_ID) {
            Some(severity) => severity,
            None => every_rule.then_some(scan::Severity::Hint),
        };
    let mut notices = rules.plan.warnings.clone();
    if rules.plan.rules.is_empty() {
        notices.push(format!(
            "no active rules in {}",
            rules.plan.sources.join(", ")
        ));
    }
    let opts = scan::Options {
        pathspecs: req.pathspecs.clone(),
        cached: req.cached,
        shard,
        mode: if req.mode.fixing() {
            scan::Mode::Fix
        } else {
            scan::Mode::Report
        },
        only_rules,
        unused_suppressions,
        max_file_size: req.max_file_size,
        max_passes: req.max_passes,
        cache,
    };
    // `--include-metadata`: each rule's metadata, as JSON, by id.
    let metadata: std::collections::HashMap<&str, serde_json::Value> = if req.include_metadata {
        rules
            .plan
            .rules
            .iter()
            .filter_map(|r| Some((r.id.as_str(), r.metadata.clone()?)))
            .collect()
    } else {
        Default::default()
    };
    let row = |f: &Finding| -> FindingRow {
        let mut row = FindingRow::of(f, repo.display_path(&f.path));
        row.metadata = metadata.get(f.rule.as_str()).cloned();
        row
    };
    let rows = |fs: &[Finding]| -> Vec<FindingRow> { fs.iter().map(row).collect() };
    let scan_rules: Vec<ScanRule> = rules
        .plan
        .rules
        .iter()
        .map(|r| ScanRule {
            id: r.id.clone(),
            language: r.lang.to_string(),
            severity: r.severity,
            fixable: r.fixable(),
            source: r.source.to_string(),
            message: r.message.clone(),
            note: r.note.clone(),
            url: r.url.clone(),
        })
        .collect();
    // Streamed: what went to the sink, counted.
    let mut streamed: Option<Streamed> = None;
    let (outcome, offered) = match (select, sink) {
        (None, Some(sink)) if !req.mode.fixing() => {
            let head = head_report(repo, req, scan_rules.clone(), notices.clone());
            let mut state = Streamed::default();
            let mut on_file = |findings: Vec<Finding>| -> bool {
                state.total += findings.len();
                state.errors += findings
                    .iter()
                    .filter(|f| f.severity == scan::Severity::Error)
                    .count();
                let room = req.max_results.map_or(usize::MAX, |max| max - state.shown);
                let shown = rows(&findings[..findings.len().min(room)]);
                if shown.is_empty() {
                    return true;
                }
                state.shown += shown.len();
                state.tally.add(&shown);
                match sink.file(&head, &shown) {
                    Ok(()) => true,
                    Err(e) => {
                        // The reader left (or the disk is full): stop scanning.
                        state.failed = Some(e);
                        false
                    }
                }
            };
            let outcome = scan::scan_streaming(repo, &rules, &opts, &mut on_file)?;
            if let Some(e) = state.failed.take() {
                return Err(e);
            }
            streamed = Some(state);
            (outcome, None)
        }
        (None, _) => (scan::scan_rules(repo, &rules, &opts)?, None),
        (Some(select), _) => {
            let mut counting = Counting {
                inner: select,
                offered: 0,
            };
            let outcome = scan::scan_selecting(repo, &rules, &opts, &mut counting)?;
            (outcome, Some(counting.offered))
        }
    };

    // Stage (and apply) before reporting, so that the id reported is real.
    let mut id = None;
    let mut written = None;
    let mut verified = None;
    if matches!(req.mode, ScanMode::Stage | ScanMode::Apply) && !outcome.changes.is_empty() {
        let mut meta = outcome.meta(&rules.plan, &opts, req.reason.clone());
        super::refresh::record_scan(&mut meta, repo, &rules.plan, &req.configs, &opts);
        if offered.is_some() {
            super::refresh::record_selection(&mut meta);
        }
        // The stager, file by file (the changes are held for the diff anyway).
        let preview = txn::stage(repo, &outcome.changes, &meta)?;
        if req.mode == ScanMode::Apply {
            let mut apply_opts = txn::ApplyOptions {
                reason: req.reason.clone(),
                ..Default::default()
            };
            if let Some(plan) = &req.verify {
                // A failed check leaves the fixes staged as a pending preview, unwritten.
                let (check, line) = super::apply::check(
                    repo,
                    Some(preview.id.clone()),
                    plan,
                    &None,
                    &crate::cancel::Cancel::never(),
                )?;
                apply_opts.verified = Some(line);
                verified = Some(Box::new(check));
            }
            let applied = txn::apply(repo, Some(&preview.id), &apply_opts)?;
            written = Some(applied.written.len() + applied.deleted.len());
        }
        id = Some(preview.id);
    }

    let fixing = req.mode.fixing();
    let diagnostics =
        crate::report::Diagnostics::of(&[], &outcome.parse_errors, &outcome.skipped, |p| {
            repo.display_path(p)
        });
    let diff = fixing.then(|| {
        crate::diff::render_diffs(
            &crate::diff::DiffFile::from_changes(&outcome.changes),
            false,
            req.max_render,
        )
    });
    Ok(ScanReport {
        schema_version: Version,
        mode: req.mode,
        rules: scan_rules,
        findings: match (&streamed, req.max_results) {
            (Some(s), Some(max)) if s.total > max => {
                notices.push(more_findings(s.total - max, max));
                Vec::new()
            }
            (Some(_), _) => Vec::new(),
            (None, Some(max)) if outcome.findings.len() > max => {
                notices.push(more_findings(outcome.findings.len() - max, max));
                rows(&outcome.findings[..max])
            }
            (None, _) => rows(&outcome.findings),
        },
        error_count: match &streamed {
            Some(s) => s.errors,
            None => outcome.errors(),
        },
        files_searched: outcome.files_searched,
        remaining: fixing.then(|| rows(&outcome.remaining)),
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
                    repeated_kept_text: f.repeated_kept_text,
                    flags: f.flags.clone(),
                    repo_path: f.path.clone(),
                })
                .collect()
        }),
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
        applied: fixing.then_some(written.is_some()),
        verified,
        id,
        diagnostics,
        notices,
        written: written.unwrap_or(0),
        offered,
        other_shards: outcome.other_shards,
        changes: outcome.changes,
        max_render: req.max_render,
        workdir: repo.workdir.clone(),
        streamed: streamed.map(|s| s.tally),
    })
}

/// What a streamed scan handed out.
#[derive(Default)]
struct Streamed {
    /// Findings found, and of severity error (shown or not).
    total: usize,
    errors: usize,
    /// Findings handed out (up to `--max-results`), and their counts.
    shown: usize,
    tally: crate::report::scan::Tally,
    /// Why the sink stopped the scan.
    failed: Option<Error>,
}

/// The notice of findings `--max-results` left out.
fn more_findings(left_out: usize, max: usize) -> String {
    format!("{left_out} more findings not shown (--max-results {max})")
}

/// A `report`-mode report before any file is scanned: the rules and their notices.
fn head_report(
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
        changes: Default::default(),
        max_render: req.max_render,
        workdir: repo.workdir.clone(),
        streamed: Some(Default::default()),
    }
}

/// Passes proposals on to the person's selection, counting those offered while it
/// still answers (after `q`, the rest are declined without being offered).
struct Counting<'a> {
    inner: &'a mut dyn Select,
    offered: usize,
}

impl Select for Counting<'_> {
    fn select(&mut self, proposal: &Proposal<'_>) -> bool {
        if !self.inner.finished() {
            self.offered += 1;
        }
        self.inner.select(proposal)
    }
    fn finished(&self) -> bool {
        self.inner.finished()
    }
}
