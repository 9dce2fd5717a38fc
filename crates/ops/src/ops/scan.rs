//! `scan`: run the rules over the files; report the findings, or compute the fixes and
//! check, stage or apply them. The fixes are staged through the stager as one preview
//! with the scan recorded (so `refresh` can re-run it), and applied at once with
//! `--apply`.

use std::path::PathBuf;

mod frame;
mod memo;
pub mod recipe;
mod reporting;
mod sg;
mod staging;

use reporting::head_report;
use reporting::report;
use staging::stage;

use crate::repo::Repo;
use crate::report::FindingRow;
use crate::report::ScanMode;
use crate::report::ScanReport;
use crate::report::ScanRule;
use crate::scan;
use crate::scan::Finding;
use crate::select::Narrowed;
use crate::select::Proposal;
use crate::select::Select;
use crate::Error;

/// One scan.
#[derive(Debug, Clone)]
pub struct ScanRequest {
    /// The files to scan: pathspecs or file names (relative to the current folder),
    /// the size limit, `--cached` (the staged content, not the work tree's),
    /// `--changed` and `--changed-lines` (only findings on lines that differ from its
    /// revision; with `cached`, the lines being committed). The language globs and
    /// `noIgnore` are the rules' config's (see [`Listing`](super::input::Listing)).
    pub input: super::input::Input,
    /// Rule files; empty: astedit.toml and sgconfig.yml at the root.
    pub configs: Vec<PathBuf>,
    pub mode: ScanMode,
    /// Only shard `I/N` (1-based), as the user wrote it.
    pub shard: Option<String>,
    /// Only these rule ids (all when empty).
    pub only_rules: Vec<String>,
    /// Only rules whose id matches (`--filter`).
    pub filter: Option<regex::Regex>,
    /// Severities set on the command line (`--error[=ID,…]`, …, `--off`), in order:
    /// a later one wins.
    pub severities: Vec<SeverityOverride>,
    /// Rules below this severity (after `severities`) do not run (`--min-severity`):
    /// no findings, no fixes, and no unused-suppression hints below it.
    pub min_severity: Option<crate::levels::Severity>,
    /// Report at most this many findings (the rest are counted in a notice).
    pub max_results: Option<usize>,
    /// Overrides the config's bound on fix re-runs.
    pub max_passes: Option<usize>,
    /// Why the fixes are made (recorded in the preview and the journal).
    pub reason: Option<String>,
    /// Diff lines to render at most (0: no limit).
    pub max_render: usize,
    /// Colour the diff of the fixes (text output on a terminal).
    pub color: bool,
    /// Which findings get the source around them (their
    /// [`Frame`](crate::report::scan::Frame)), for a text report.
    pub frames: Frames,
    /// Rules given as YAML text (`--inline-rules`), instead of config files.
    pub inline_rules: Option<String>,
    /// Each finding carries its rule's `metadata` (`--include-metadata`).
    pub include_metadata: bool,
    /// With [`ScanMode::Apply`]: check the staged fixes in a worktree first and apply
    /// them only if the command passes (`scan --apply --verify`).
    pub verify: Option<super::apply::VerifyPlan>,
    /// The result cache to use.
    pub cache: super::cache::CacheChoice,
    /// Who stages the fixes (an editor's or agent's `name/version`), journalled.
    pub agent: Option<String>,
    /// Compare with what the same rules find at this revision (`--baseline REV`, or
    /// `auto`): each finding is `new` or `unchanged`, and only new ones count.
    pub baseline: Option<String>,
    /// With `baseline`: fix every finding, not only the new ones (`--fix-all`).
    pub fix_all: bool,
    /// Run each fixed file through the formatter `[fmt]` declares for its language,
    /// keeping the hunks over the fixes (`--fmt`).
    pub fmt: bool,
    /// Formatter digests allowed for this run besides the recorded consents
    /// (`--allow-fmt=sha256:…`, checked).
    pub allow_fmt: Vec<String>,
}

impl ScanRequest {
    /// A scan in `mode` of the files under the current folder with the rules of
    /// `configs` (none: the project's), every other setting the command line's default:
    /// no shard, filter or severity given, every finding and diff line, the default
    /// result cache, no formatter, no baseline.
    pub fn new(mode: ScanMode, configs: Vec<PathBuf>) -> ScanRequest {
        ScanRequest {
            input: Default::default(),
            configs,
            mode,
            shard: None,
            only_rules: Vec::new(),
            filter: None,
            severities: Vec::new(),
            min_severity: None,
            max_results: None,
            max_passes: None,
            reason: None,
            max_render: 0,
            color: false,
            frames: Default::default(),
            inline_rules: None,
            include_metadata: false,
            verify: None,
            cache: Default::default(),
            agent: None,
            baseline: None,
            fix_all: false,
            fmt: false,
            allow_fmt: Vec::new(),
        }
    }
}

/// Which findings of a scan get their [`Frame`](crate::report::scan::Frame).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Frames {
    /// None (JSON and the CI formats).
    #[default]
    None,
    /// Those of rules with `labels`, whose primary labels place their one-line forms
    /// (ast-grep's medium and short reports).
    Labelled,
    /// Every one (ast-grep's rich report).
    All,
    /// None; instead every one gets its object of ast-grep's `scan --json=stream`.
    AstGrep,
}

/// A severity given on the command line, as ast-grep's `--error[=RULE]` and kin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeverityOverride {
    /// `None`: turn the rule off.
    pub severity: Option<crate::levels::Severity>,
    /// The rule ids; empty: every rule.
    pub rules: Vec<String>,
}

/// The severity `id` gets from the overrides, `Some(None)` for off, `None` when none
/// speaks of it: the last that names it, else the last for all rules (as ast-grep
/// 0.51.1: `--error=ID --off` runs ID as an error, `--off=ID --error` turns it off).
fn override_for(overrides: &[SeverityOverride], id: &str) -> Option<Option<scan::Severity>> {
    let named = overrides
        .iter()
        .rev()
        .find(|o| o.rules.iter().any(|r| r == id));
    named
        .or_else(|| overrides.iter().rev().find(|o| o.rules.is_empty()))
        .map(|o| o.severity)
}

/// Where the findings of a streamed scan go, as they come (see [`Consumer::Stream`]).
pub trait ScanSink {
    /// One file's findings (files in path order, findings in position order). `head`
    /// is the report before any finding: its mode, rules and the rules' notices, no
    /// findings and no counts.
    fn file(&mut self, head: &ScanReport, rows: &[FindingRow]) -> Result<(), Error>;
}

/// Who takes the findings, as a front end offers: the one place that decides whether
/// a scan streams, collects or asks a person.
pub enum Consumer<'a> {
    /// The report holds every finding.
    Collect,
    /// A printer that prints each file's findings as the scan reaches that file, in
    /// path order. In `report` mode the findings are then not held: the report's
    /// `findings` are empty and its [`streamed`](ScanReport::streamed) counts stand
    /// for them (issue 26). The fix modes hold their findings (the fixes are held for
    /// staging anyway) and the sink is not called.
    Stream(&'a mut dyn ScanSink),
    /// A person answers for each fix (`scan -i`): only the fixes accepted are made,
    /// and the report says how many were offered.
    Ask(&'a mut dyn Select),
}

/// Runs the scan `req` asks for, its findings going to `consumer`.
pub fn run(repo: &Repo, req: &ScanRequest, consumer: Consumer<'_>) -> Result<ScanReport, Error> {
    run_cancellable(repo, req, consumer, &crate::cancel::Cancel::never())
}

/// [`run`], stopped by `cancel`: no further file is read, and nothing is staged or
/// written once it is cancelled (the error is `cancelled`).
pub fn run_cancellable(
    repo: &Repo,
    req: &ScanRequest,
    consumer: Consumer<'_>,
    cancel: &crate::cancel::Cancel,
) -> Result<ScanReport, Error> {
    let ceiling = scan::rules::MAX_PASSES_CEILING;
    if req.max_passes.is_some_and(|n| !(1..=ceiling).contains(&n)) {
        let message = format!("--max-passes must be from 1 to {ceiling}");
        return Err(crate::error::UsageError(message).into());
    }
    let shard = req.shard.as_deref().map(scan::Shard::parse).transpose()?;
    // The formatters are allowed, or the scan refuses before it reads a file.
    let fmts = match req.fmt && req.mode.fixing() {
        true => Some(super::consent::allowed_formatters(repo, &req.allow_fmt)?),
        false => None,
    };
    let base = req
        .baseline
        .as_deref()
        .map(|rev| super::baseline::resolve(repo, rev))
        .transpose()?;
    let cache = req.cache.settings(repo);
    let asking = matches!(consumer, Consumer::Ask(_));
    // Interactive scans use no cache (a person's answers are not cached).
    let rules = load_rules(repo, req, cache.as_ref().filter(|_| !asking))?;
    let mut notices = rule_notices(repo, req, &rules.plan, cache.as_ref());
    let ask_git = cache.is_some() && !asking;
    let opts = scan_options(repo, req, &rules, cache, cancel)?;
    let rows = Rows::of(repo, req, &rules);
    let scan_rules = scan_rules(&rules);
    let changed = match req.input.changed_rev() {
        Some(rev) => Some(super::baseline::changed(repo, rev, req.input.cached)?),
        None => None,
    };
    let query = memo::Query {
        req,
        rules: &rules,
        opts: &opts,
        shard,
    };
    let mut remembered = memo::Run::start(repo, &query, ask_git);
    let listing = super::input::Listing {
        input: &req.input,
        rules: &rules.plan,
        only: changed.as_ref().map(|c| &c.files),
        shard,
        ask_git,
        asked: remembered.asked(),
    };
    let inputs = match remembered.inputs() {
        Some(inputs) => inputs,
        None => listing.files(repo)?,
    };
    let cached = req.input.cached;
    // The base side waits for the scan of now, whose content ids tell which files
    // are the same at the base.
    let pending = base.map(super::baseline::Pending::new);
    let scan_base = |base: &super::baseline::Base, now: &scan::ScanOutcome| {
        let tree = base_tree(base.tree, cached, now.ids.clone());
        let at_base = listing.tree(repo, &tree)?;
        super::baseline::scan_base(repo, &rules, &opts, &at_base, base.clone(), cached)
    };
    let lines = changed.as_ref().filter(|_| req.input.changed_lines);
    // Fixes only for new findings (unless `--fix-all`) and those on changed lines.
    let wanted = |found: &scan::ScanOutcome| -> Result<Vec<bool>, Error> {
        let states = match &pending {
            Some(p) => {
                let side = p.side(|base| scan_base(base, found))?;
                Some(side.classify(&found.findings)?.current)
            }
            None => None,
        };
        Ok(found
            .findings
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let new = states
                    .as_ref()
                    .is_none_or(|s| req.fix_all || s[i] == scan::baseline::State::New);
                new && lines.is_none_or(|c| c.touches(&f.path, f.line, f.end_line))
            })
            .collect())
    };
    let fix_new = (req.mode.fixing() && ((pending.is_some() && !req.fix_all) || lines.is_some()))
        .then_some(&wanted);
    let mut ran = Ran::default();
    let mut outcome = match consumer {
        // A comparison needs every finding before the first is shown.
        Consumer::Stream(sink) if !req.mode.fixing() && pending.is_none() && lines.is_none() => {
            let head = head_report(repo, req, scan_rules.clone(), notices.clone());
            let scanned = (&opts, &inputs);
            let source = remembered.source();
            let (outcome, streamed) =
                stream(repo, req, &rules, scanned, &rows, (&head, sink), source)?;
            ran.streamed = Some(streamed);
            outcome
        }
        Consumer::Collect | Consumer::Stream(_) => match (fix_new, remembered.answer()) {
            (Some(wanted), _) => {
                super::baseline::fix_wanted(repo, &rules, &opts, &inputs, None, wanted)?
            }
            (None, Some(answer)) => answer.outcome_with_findings(),
            (None, None) => scan::run(repo, &rules, &opts, &inputs, scan::Consume::Collect)?,
        },
        Consumer::Ask(select) => {
            let scanned = (&opts, &inputs);
            let wanted = fix_new.map(|w| -> &super::baseline::Wanted<'_> { w });
            ask(repo, &rules, scanned, (select, cached), wanted, &mut ran)?
        }
    };
    remembered.record(&inputs, &outcome, ran.streamed.is_some());
    // Compared before anything is staged or applied.
    let side = pending
        .map(|p| p.into_side(|base| scan_base(base, &outcome)))
        .transpose()?;
    for c in &outcome.conflicts {
        notices.push(c.to_string());
    }
    if let Some(fmts) = &fmts {
        for change in &mut outcome.changes.changes {
            notices.extend(super::fmt::format_change(&repo.workdir, fmts, change));
        }
    }
    cancel.check()?;
    // Stage (and apply) before reporting, so that the id reported is real.
    let staged = stage(repo, req, (&rules.plan, shard), &opts, &outcome, &mut ran)?;
    let compared = side
        .map(|side| Compared::of(side, &outcome, req.mode.fixing()))
        .transpose()?;
    let mut report = report(repo, req, outcome, scan_rules, notices, &rows, ran, staged);
    if let Some(compared) = compared {
        compared.mark(&mut report, &rows);
    }
    if let Some(lines) = lines {
        keep_changed_lines(&mut report, lines);
    }
    if req.frames != Frames::None {
        let framer = frame::Framer::new(repo, &rules, &inputs, req);
        match report.remaining.as_mut() {
            Some(rows) if req.mode.fixing() => framer.frame(rows),
            _ => framer.frame(&mut report.findings),
        }
    }
    Ok(report)
}

/// What the report says of the rules before any finding: their warnings (see
/// [`said_before`]), the form of their files, and that none is active.
fn rule_notices(
    repo: &Repo,
    req: &ScanRequest,
    plan: &scan::rules::Plan,
    cache: Option<&crate::cache::Settings>,
) -> Vec<String> {
    let mut notices = match req.input.caller {
        super::input::Caller::Person => said_before(plan, cache),
        super::input::Caller::Agent => plan.warnings.clone(),
    };
    notices.extend(super::rule_form::notices(
        repo,
        &plan.top_level_form,
        &plan.sources,
    ));
    if plan.rules.is_empty() {
        notices.push(format!("no active rules in {}", plan.sources.join(", ")));
    }
    notices
}

/// The warnings about the rule files, or one line for them when the last scan through
/// the same cache said the same of the same rules: a third-party rule project's ten
/// lint warnings, repeated on every run, hide the result. `--no-cache` lists them again
/// (no cache, no memory of them); so does any change to a rule file.
fn said_before(plan: &scan::rules::Plan, cache: Option<&crate::cache::Settings>) -> Vec<String> {
    let warnings = &plan.warnings;
    let Some(cache) = cache.filter(|_| warnings.len() > 1) else {
        return warnings.clone();
    };
    let digest: String = plan.digest.iter().map(|b| format!("{b:02x}")).collect();
    let marker = cache.dir.join(format!("rule-warnings-{}", &digest[..16]));
    let text = warnings.join("\n");
    if std::fs::read_to_string(&marker).is_ok_and(|said| said == text) {
        return vec![format!(
            "{} warnings about the rule files, as on the last scan; `git astedit scan --no-cache` lists them",
            warnings.len()
        )];
    }
    // Only a memory: a cache that cannot be written says them all next time too.
    let _ = std::fs::create_dir_all(&cache.dir).and_then(|()| std::fs::write(&marker, &text));
    warnings.clone()
}

/// The engine's options of the scan `req` asks for with `rules`.
fn scan_options(
    repo: &Repo,
    req: &ScanRequest,
    rules: &scan::rules::Rules,
    cache: Option<crate::cache::Settings>,
    cancel: &crate::cancel::Cancel,
) -> Result<scan::Options, Error> {
    Ok(scan::Options {
        mode: if req.mode.fixing() {
            scan::Mode::Fix
        } else {
            scan::Mode::Report
        },
        only_rules: only_rules(req, rules)?,
        unused_suppressions: unused_suppressions(repo, req),
        max_file_size: req.input.max_file_size,
        max_passes: req.max_passes,
        cache,
        cancel: cancel.clone(),
        name_contents: req.baseline.is_some(),
    })
}

/// A base commit's tree (`--baseline`) to scan but for the files whose blob is the
/// same now: in the index with `cached`, else in the work tree; `known`: the content
/// ids the scan of now gave its files, which tell most of them without a look.
fn base_tree(
    id: gix::ObjectId,
    cached: bool,
    known: Option<std::sync::Arc<scan::source::Known>>,
) -> super::input::stored::Tree {
    use super::input::stored::Now;
    super::input::stored::Tree {
        id,
        skip_same: Some(if cached { Now::Index } else { Now::WorkTree }),
        known,
    }
}

/// `--changed-lines`: the report keeps the findings on changed lines, and its counts
/// count only them.
fn keep_changed_lines(report: &mut ScanReport, lines: &super::baseline::Changed) {
    let on = |f: &FindingRow| lines.touches(&f.repo_path, f.line, f.end_line);
    report.findings.retain(on);
    if let Some(rows) = report.remaining.as_mut() {
        rows.retain(on);
    }
    let new = |f: &&FindingRow| f.baseline != Some(scan::baseline::State::Unchanged);
    report.error_count = report
        .findings
        .iter()
        .filter(new)
        .filter(|f| f.severity == scan::Severity::Error)
        .count();
    if let Some(b) = report.baseline.as_mut() {
        b.new = report.findings.iter().filter(new).count();
        b.unchanged = report.findings.len() - b.new;
    }
}

/// The findings of a scan compared with those the same rules find at a base commit.
struct Compared {
    base: super::baseline::Base,
    findings: scan::baseline::Matched,
    /// In the fix modes: the findings the fixes leave, compared the same way.
    remaining: Option<scan::baseline::Matched>,
    /// The base's findings, and so the absent ones.
    base_findings: Vec<Finding>,
    /// Error findings among the new ones.
    new_errors: usize,
}

impl Compared {
    fn of(
        side: super::baseline::BaseSide<'_>,
        outcome: &scan::ScanOutcome,
        fixing: bool,
    ) -> Result<Compared, super::baseline::BaselineError> {
        let findings = side.classify(&outcome.findings)?;
        let remaining = match fixing {
            true => Some(side.classify_fixed(&outcome.remaining, &outcome.findings)?),
            false => None,
        };
        let new_errors = outcome
            .findings
            .iter()
            .zip(&findings.current)
            .filter(|(f, s)| {
                **s == scan::baseline::State::New && f.severity == scan::Severity::Error
            })
            .count();
        Ok(Compared {
            base: side.base,
            findings,
            remaining,
            base_findings: side.findings,
            new_errors,
        })
    }
}

impl Compared {
    /// Marks the report's findings new or unchanged, counts the errors among the new
    /// ones only, and adds the comparison and the absent findings.
    fn mark(self, report: &mut ScanReport, rows: &Rows<'_>) {
        for (row, state) in report.findings.iter_mut().zip(&self.findings.current) {
            row.baseline = Some(*state);
        }
        if let (Some(rows), Some(matched)) = (report.remaining.as_mut(), &self.remaining) {
            for (row, state) in rows.iter_mut().zip(&matched.current) {
                row.baseline = Some(*state);
            }
        }
        report.error_count = self.new_errors;
        let absent: Vec<FindingRow> = self
            .findings
            .absent
            .iter()
            .map(|&i| {
                let mut row = rows.row(&self.base_findings[i]);
                row.baseline = Some(scan::baseline::State::Absent);
                row
            })
            .collect();
        report.baseline = Some(crate::report::scan::Baseline {
            rev: self.base.rev,
            commit: self.base.commit.to_string(),
            new: self.findings.new_count(),
            unchanged: self.findings.unchanged_count(),
            absent: absent.len(),
        });
        report.absent = Some(absent);
    }
}

/// The rules `req` names, with the severities set on the command line (`off` rules
/// leave the run).
pub(super) fn load_rules(
    repo: &Repo,
    req: &ScanRequest,
    cache: Option<&crate::cache::Settings>,
) -> Result<scan::rules::Rules, Error> {
    let mut rules = match &req.inline_rules {
        Some(text) => scan::rules::from_inline(repo, text)?.into(),
        None => scan::rules::open(repo, &req.configs, cache)?,
    };
    if !req.severities.is_empty() {
        rules.set_severities(|id| override_for(&req.severities, id));
    }
    if let Some(min) = req.min_severity {
        let below: Vec<String> = rules
            .plan
            .rules
            .iter()
            .filter(|r| r.severity < min)
            .map(|r| r.id.clone())
            .collect();
        if !below.is_empty() {
            rules.set_severities(|id| below.iter().any(|b| b == id).then_some(None));
        }
    }
    Ok(rules)
}

/// The rule ids to run (all when empty): `--rule-id`, narrowed by `--filter`.
pub(super) fn only_rules(
    req: &ScanRequest,
    rules: &scan::rules::Rules,
) -> Result<Vec<String>, Error> {
    let only_rules = req.only_rules.clone();
    let Some(filter) = &req.filter else {
        return Ok(only_rules);
    };
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
    Ok(matched)
}

/// The severity of unused suppressions: judged only when every rule of the project
/// runs (a comment may be meant for a rule left out; `--inline-rules` and rule files
/// alone run none of them, and ast-grep 0.51.1 reports none there), unless a severity
/// for them is asked for.
fn unused_suppressions(repo: &Repo, req: &ScanRequest) -> Option<scan::Severity> {
    let every_rule = req.only_rules.is_empty()
        && req.filter.is_none()
        && req.inline_rules.is_none()
        && !scan::rules::rule_files_only(repo, &req.configs);
    let severity = match override_for(&req.severities, scan::suppress::UNUSED_SUPPRESSION_ID) {
        Some(severity) => severity,
        None => every_rule.then_some(scan::Severity::Hint),
    };
    severity.filter(|s| req.min_severity.is_none_or(|min| *s >= min))
}

/// Findings as report rows: paths as the front end shows them, and with
/// `--include-metadata` each rule's metadata, as JSON, by id.
struct Rows<'a> {
    repo: &'a Repo,
    metadata: std::collections::HashMap<String, serde_json::Value>,
}

impl<'a> Rows<'a> {
    fn of(repo: &'a Repo, req: &ScanRequest, rules: &scan::rules::Rules) -> Rows<'a> {
        let metadata = match req.include_metadata {
            true => rules
                .plan
                .rules
                .iter()
                .filter_map(|r| Some((r.id.clone(), r.metadata.clone()?)))
                .collect(),
            false => Default::default(),
        };
        Rows { repo, metadata }
    }

    fn row(&self, f: &Finding) -> FindingRow {
        let mut row = FindingRow::of(f, self.repo.display_path(&f.path));
        row.metadata = self.metadata.get(f.rule.as_str()).cloned();
        row
    }

    fn rows(&self, fs: &[Finding]) -> Vec<FindingRow> {
        fs.iter().map(|f| self.row(f)).collect()
    }
}

/// The rules as the report lists them.
fn scan_rules(rules: &scan::rules::Rules) -> Vec<ScanRule> {
    rules
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
        .collect()
}

/// Where a report's findings come from: the scan (keeping them for a memo, when
/// given a place), or a memo's answer (see [`memo`]).
enum Source<'a> {
    Scan(Option<&'a mut Vec<Finding>>),
    Replay(&'a memo::Answer),
}

/// A `report`-mode scan whose findings go to `sink` as each file's come, counted
/// and not held (up to `--max-results` of them).
fn stream(
    repo: &Repo,
    req: &ScanRequest,
    rules: &scan::rules::Rules,
    (opts, inputs): (&scan::Options, &scan::source::Inputs),
    rows: &Rows<'_>,
    (head, sink): (&ScanReport, &mut dyn ScanSink),
    source: Source<'_>,
) -> Result<(scan::ScanOutcome, Streamed), Error> {
    let mut state = Streamed::default();
    let framer = (req.frames != Frames::None).then(|| frame::Framer::new(repo, rules, inputs, req));
    let mut on_file = |findings: Vec<Finding>| -> bool {
        state.total += findings.len();
        state.errors += findings
            .iter()
            .filter(|f| f.severity == scan::Severity::Error)
            .count();
        let room = req.max_results.map_or(usize::MAX, |max| max - state.shown);
        let mut shown = rows.rows(&findings[..findings.len().min(room)]);
        if shown.is_empty() {
            return true;
        }
        if let Some(framer) = &framer {
            framer.frame(&mut shown);
        }
        state.shown += shown.len();
        state.tally.add(&shown);
        match sink.file(head, &shown) {
            Ok(()) => true,
            Err(e) => {
                // The reader left (or the disk is full): stop scanning.
                state.failed = Some(e);
                false
            }
        }
    };
    let outcome = match source {
        Source::Replay(answer) => {
            let findings = answer.findings();
            for file in findings.chunk_by(|a, b| a.path == b.path) {
                if !on_file(file.to_vec()) {
                    break;
                }
            }
            answer.outcome()
        }
        Source::Scan(mut record) => {
            let mut tee = |findings: Vec<Finding>| -> bool {
                if let Some(record) = record.as_mut() {
                    record.extend(findings.iter().cloned());
                }
                on_file(findings)
            };
            scan::run(repo, rules, opts, inputs, scan::Consume::Stream(&mut tee))?
        }
    };
    if let Some(e) = state.failed.take() {
        return Err(e);
    }
    Ok((outcome, state))
}

/// How the findings went: streamed (counted), or offered to a person (how many).
#[derive(Default)]
struct Ran {
    streamed: Option<Streamed>,
    offered: Option<usize>,
    /// `--cached -i`: the files whose fixes were not offered, their work tree not
    /// holding the staged blob (named in the refusal).
    unstaged: Vec<String>,
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

/// Offers the fixes to a person (`select`), only those `wanted` picks when given; with
/// `cached`, not those in a file whose work tree does not hold its staged blob (they
/// could not be staged; the files go to `ran.unstaged` for the refusal, as `edit
/// --cached -i`'s). Counts the fixes offered in `ran`.
fn ask(
    repo: &Repo,
    rules: &scan::rules::Rules,
    (opts, inputs): (&scan::Options, &scan::source::Inputs),
    (select, cached): (&mut dyn Select, bool),
    wanted: Option<&super::baseline::Wanted<'_>>,
    ran: &mut Ran,
) -> Result<scan::ScanOutcome, Error> {
    let mut counting = Counting {
        inner: select,
        offered: 0,
    };
    let mut staged = super::stage::StagedFiles::new(repo, inputs.files.iter().filter(|_| cached));
    let mut narrowed = Narrowed {
        keep: |p: &Proposal<'_>| staged.keep(p.path),
        inner: Some(&mut counting),
    };
    let outcome = match wanted {
        Some(wanted) => {
            super::baseline::fix_wanted(repo, rules, opts, inputs, Some(&mut narrowed), wanted)?
        }
        None => scan::run(repo, rules, opts, inputs, scan::Consume::Ask(&mut narrowed))?,
    };
    ran.unstaged = staged.unstaged();
    ran.offered = Some(counting.offered);
    Ok(outcome)
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
