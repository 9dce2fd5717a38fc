//! `edit` (and the `ast_edit` tool): run the rewrite ops over the files and stage the
//! result as one preview, then apply it at once when asked. Files stream from the
//! engine into the preview's objects as they are rewritten (nothing holds every
//! file's text).

pub mod recipe;

use super::recipe::Recorded;
use super::stage::settle;
use super::stage::Audience;
use super::stage::Staging;
use crate::cancel::Cancel;
use crate::edit::EditOutcome;
use crate::repo::Repo;
use crate::report::Diagnostics;
use crate::report::Dropped;
use crate::report::Replacement;
use crate::report::StageReport;
use crate::report::StagedFile;
use crate::rewrite::imports::ImportFix;
use crate::rewrite::Op;
use crate::select::Narrowed;
use crate::select::Select;
use crate::text::plural;
use crate::txn;
use crate::Error;

/// A structural rewrite to stage.
#[derive(Debug, Clone)]
pub struct EditRequest {
    /// The files to rewrite (made files here), and the language every file is parsed
    /// as.
    pub input: super::input::Input,
    /// (pattern, rewrite template) pairs, run in this order, each on the previous
    /// one's result.
    pub ops: Vec<(String, String)>,
    /// The node kind in each pattern that matches (`--selector`; needs a forced
    /// language).
    pub selector: Option<String>,
    /// The imports to add and remove in each file the ops change (`--add-import`).
    pub imports: ImportFix,
    pub staging: Staging,
    /// The result cache to use.
    pub cache: super::cache::CacheChoice,
    /// Warn about every language a pattern is not code in, not only those whose files
    /// hold its text (`-v`).
    pub verbose: bool,
    /// Run each rewritten file through the formatter `[fmt]` declares for its language,
    /// keeping the hunks over the rewrite (`--fmt`).
    pub fmt: bool,
    /// Formatter digests allowed for this run besides the recorded consents
    /// (`--allow-fmt=sha256:…`, checked).
    pub allow_fmt: Vec<String>,
}

/// How an edit runs.
pub struct EditOptions<'a> {
    /// Checked before each changed file is staged and before the preview is written,
    /// so a cancelled edit leaves no ref and no journal entry (the stager's objects
    /// are only in memory until then).
    pub cancel: &'a Cancel,
    /// Stage only the changes this accepts (`edit -i`); nothing is staged when it
    /// accepts none. Files are then read one at a time, in path order.
    pub select: Option<&'a mut dyn Select>,
}

pub fn run(repo: &Repo, req: &EditRequest, opts: EditOptions<'_>) -> Result<StageReport, Error> {
    // Through the result cache (not while a person selects), git's `status` may tell
    // what changed.
    let ask_git = opts.select.is_none() && req.cache.settings(repo).is_some();
    let files = req.input.files_asking(repo, ask_git)?;
    let cancel = opts.cancel;
    let ops: Vec<Op> = req
        .ops
        .iter()
        .map(|(pattern, rewrite)| Op {
            pattern: pattern.clone(),
            rewrite: rewrite.clone(),
            selector: req.selector.clone(),
        })
        .collect();
    let mut stager = txn::Stager::new(repo);
    let mut stage_error: Option<Error> = None;
    let fmts = match req.fmt {
        true => Some(super::fmt::Formatters::load(&repo.workdir)?),
        false => None,
    };
    if let Some(fmts) = fmts.as_ref().filter(|f| !f.is_empty()) {
        let lines = fmts.record().into_iter().map(|f| format!("formatter: {f}"));
        super::trust::allow_run(req.staging.allow_run, "fmt", lines.collect())?;
    }
    // Run at all (above), then run this very command: the user allowed it.
    if let Some(fmts) = &fmts {
        super::consent::require_fmt(repo, fmts, &req.allow_fmt)?;
    }
    let mut fmt_warnings = Vec::new();
    // `--cached`: the ops rewrite the staged bytes, and the preview's before-side is
    // what apply finds in the work tree; a file whose work tree holds other bytes is
    // named in a refusal instead.
    let mut unstaged: Vec<String> = Vec::new();
    // Where each replacement is, which `review` reads instead of re-running the ops.
    let mut sites = super::review::record::Writer::new();
    let add = |mut change: crate::change::FileChange, edit: &crate::edit::FileEdit| {
        if req.input.cached && !super::stage::work_tree_holds(repo, &change) {
            unstaged.push(change.path);
            return true;
        }
        if let Some(fmts) = &fmts {
            fmt_warnings.extend(super::fmt::format_change(&repo.workdir, fmts, &mut change));
        }
        if let Err(e) = cancel.test_delay() {
            stage_error = Some(e.into());
            return false;
        }
        sites.file(&change.path, &edit_sites(&change, edit, &ops));
        match stager.add(change) {
            Ok(()) => true,
            Err(e) => {
                stage_error = Some(e.into());
                false
            }
        }
    };
    // `--changed-lines` and `--cached` narrow what is offered (to a person with `-i`).
    let mut narrowing = Narrowing::new(repo, &files, req.input.cached);
    let mut narrowed;
    let select: Option<&mut dyn Select> = match (narrowing.needed(&opts.select), opts.select) {
        (true, inner) => {
            narrowed = Narrowed {
                keep: |p: &crate::select::Proposal<'_>| narrowing.keep(p),
                inner,
            };
            Some(&mut narrowed)
        }
        // A shorter-lived selector than the caller's: the wrapper's.
        (false, inner) => inner.map(|s| -> &mut dyn Select { s }),
    };
    let selecting = select.is_some();
    let engine = crate::edit::Options {
        imports: req.imports.clone(),
        cache: req.cache.settings(repo),
        forced_lang: files.lang,
        max_file_size: req.input.max_file_size,
        cancel,
        select,
    };
    let outcome = crate::edit::edit_each(repo, &files.set, &ops, engine, add)?;
    if let Some(e) = stage_error {
        return Err(e);
    }
    cancel.check()?;
    unstaged.extend(narrowing.staged.unstaged());
    super::stage::refuse(unstaged)?;
    let staging = &staged_from(req);
    let mut meta = outcome.meta(&ops, files.lang, staging.reason.clone());
    meta.agent = staging.agent.clone();
    meta.imports = req.imports.clone();
    recipe::EditRecipe {
        pathspecs: files.set.pathspecs.clone(),
        prefix: repo.prefix.clone().unwrap_or_default(),
        max_file_size: req.input.max_file_size,
        selected: selecting,
        cached: req.input.cached,
    }
    .record(&mut meta);
    if let Some(fmts) = &fmts {
        super::fmt::record(&mut meta, fmts);
    }
    let preview = if outcome.files.is_empty() {
        None
    } else {
        stager.record_sites(sites.finish());
        Some(stager.finish(&meta)?)
    };

    let staged = match staging.audience {
        Audience::Person => staged_files(repo, &outcome),
        Audience::Agent => meta
            .files
            .iter()
            .map(|f| StagedFile::of_meta(f, f.path.clone()))
            .collect(),
    };
    let mut report = StageReport {
        files_searched: Some(outcome.files_searched),
        repeated_kept_text: Some(
            outcome
                .files
                .iter()
                .flat_map(|f| &f.replacements)
                .filter(|r| r.repeated_kept.is_some())
                .count(),
        ),
        diagnostics: diagnostics(repo, &outcome, &ops, staging.audience),
        ..StageReport::of_meta(&meta, staged)
    };
    report.diagnostics.warnings.extend(fmt_warnings);
    report.text.apply_index = req.input.cached;
    report
        .diagnostics
        .say_languages(&super::notcode::worth_saying(
            &files.set,
            &outcome.skipped_languages,
            req.verbose,
        ));
    if let Some(d) = staging.diff {
        report.text.diff = Some(match &preview {
            Some(p) => super::preview::render_preview_diffs(repo, p, d.color, d.max_lines)?,
            None => String::new(),
        });
    }
    settle(repo, &mut report, preview.as_ref(), staging, cancel)?;
    report.diagnostics.warnings.extend(files.warnings);
    Ok(report)
}

/// A changed file's replacements as `review` takes them, when they make its staged
/// text exactly (no import added, no formatter's change); none otherwise.
fn edit_sites(
    change: &crate::change::FileChange,
    edit: &crate::edit::FileEdit,
    ops: &[Op],
) -> Vec<super::review::located::Located> {
    exact_sites(change, edit, ops).unwrap_or_default()
}

fn exact_sites(
    change: &crate::change::FileChange,
    edit: &crate::edit::FileEdit,
    ops: &[Op],
) -> Option<Vec<super::review::located::Located>> {
    use super::review::located;
    let labels: Vec<String> = ops
        .iter()
        .map(|o| format!("{} => {}", o.pattern, o.rewrite))
        .collect();
    let (b, a) = (change.before.as_ref()?, change.after.as_ref()?);
    if b.mode != a.mode {
        return None;
    }
    let before = std::str::from_utf8(&b.bytes).ok()?;
    let after = std::str::from_utf8(&a.bytes).ok()?;
    let all = located::of_replacements(before, edit.replacements.iter().cloned(), &labels);
    located::exact(before, after, &all)
}

/// The request's staging; a preview of the staged content (`--cached`) is applied to
/// the index too, so that what is staged stays what the work tree holds.
fn staged_from(req: &EditRequest) -> super::stage::Staging {
    let mut staging = req.staging.clone();
    if let Some(apply) = &mut staging.apply {
        apply.index |= req.input.cached;
    }
    staging
}

/// What narrows the changes an edit makes or offers: `--changed-lines` declines those
/// off the changed lines; `--cached` those in a file whose work tree does not hold its
/// staged blob (see [`super::stage::StagedFiles`]), so that a person (`-i`) is never
/// asked about a change that cannot be staged.
struct Narrowing<'r> {
    lines: Option<&'r crate::text::LineRanges>,
    staged: super::stage::StagedFiles<'r>,
}

impl<'r> Narrowing<'r> {
    fn new(repo: &'r Repo, files: &'r super::input::Files, cached: bool) -> Narrowing<'r> {
        let read = (files.set.files.iter().chain(&files.set.hosts)).filter(|_| cached);
        Narrowing {
            lines: files.lines.as_ref(),
            staged: super::stage::StagedFiles::new(repo, read),
        }
    }

    /// Whether an edit selecting through `inner` needs narrowing: with changed lines,
    /// or a person asked about staged content. (An edit of staged content that asks
    /// no one is checked as each changed file is staged, in parallel.)
    fn needed(&self, inner: &Option<&mut dyn Select>) -> bool {
        self.lines.is_some() || (!self.staged.is_empty() && inner.is_some())
    }

    fn keep(&mut self, p: &crate::select::Proposal<'_>) -> bool {
        if let Some(lines) = self.lines {
            let (first, last) = proposal_lines(p);
            if !lines.touches(p.path, first, last) {
                return false;
            }
        }
        self.staged.keep(p.path)
    }
}

/// The lines (1-based, inclusive) a proposed change replaces, in the text its op
/// reads: the file itself for the first op (an embedded region counts its host's lines
/// above it).
fn proposal_lines(proposal: &crate::select::Proposal<'_>) -> (usize, usize) {
    // Counted afresh for each change (with memchr: a file of many matches stays cheap).
    let newlines = |s: &str| memchr::memchr_iter(b'\n', s.as_bytes()).count();
    let c = &proposal.change;
    let above = proposal.around.map_or(0, |(head, _)| newlines(head));
    let first = above + newlines(c.text.get(..c.start).unwrap_or_default()) + 1;
    (
        first,
        first + newlines(c.text.get(c.start..c.end).unwrap_or_default()),
    )
}

/// Each file with its replacements and the outer matches left alone.
fn staged_files(repo: &Repo, outcome: &EditOutcome) -> Vec<StagedFile> {
    outcome
        .files
        .iter()
        .map(|f| StagedFile {
            path: repo.display_path(&f.path),
            count: f.replacements.len(),
            flags: f.flags.clone(),
            changes: f
                .replacements
                .iter()
                .map(|r| Replacement {
                    op: r.op,
                    line: r.line,
                    column: r.column,
                    before: r.before.clone(),
                    after: r.after.clone(),
                    repeated_kept: r.repeated_kept.clone(),
                })
                .collect(),
            dropped: f
                .dropped
                .iter()
                .map(|d| Dropped {
                    op: d.op,
                    line: d.line,
                    column: d.column,
                    text: d.text.clone(),
                })
                .collect(),
        })
        .collect()
}

/// Skip counts, parse errors and skipped languages, kept text a template repeats and
/// blocks a deletion emptied; for a person, also the files the rewrite makes parse
/// with errors and the outer matches left alone, in words.
fn diagnostics(repo: &Repo, outcome: &EditOutcome, ops: &[Op], audience: Audience) -> Diagnostics {
    let paths = audience.paths();
    let mut diag = Diagnostics::of(
        &outcome.skipped_languages,
        &outcome.parse_errors,
        &outcome.skipped,
        |p| paths.show(repo, p),
    );
    diag.warnings
        .extend(repeated_kept_warnings(outcome, ops, |p| {
            paths.show(repo, p)
        }));
    for (path, why) in &outcome.import_conflicts {
        diag.warnings.push(format!(
            "left out {}: {why} (adding it would bind the name twice)",
            paths.show(repo, path)
        ));
    }
    let emptied: Vec<String> = outcome
        .files
        .iter()
        .filter(|f| f.flags.contains(&crate::change::FileFlag::LeavesEmptyBlock))
        .map(|f| paths.show(repo, &f.path))
        .collect();
    if !emptied.is_empty() {
        diag.warnings.push(format!(
            "a deletion leaves an empty block (flag leaves-empty-block) in {}: {}",
            plural(emptied.len(), "file"),
            emptied.join(", ")
        ));
    }
    if audience == Audience::Agent {
        return diag;
    }
    let quoting = repo.quoting();
    let flagged: Vec<String> = outcome
        .files
        .iter()
        .filter(|f| f.introduces_parse_error)
        .map(|f| quoting.quote_owned(repo.display_path(&f.path)))
        .collect();
    if !flagged.is_empty() {
        diag.warnings.push(format!(
            "the rewrite makes {} parse with errors: {}",
            plural(flagged.len(), "file"),
            flagged.join(", ")
        ));
    }
    let dropped: Vec<String> = outcome
        .files
        .iter()
        .flat_map(|f| {
            let path = quoting.quote_owned(repo.display_path(&f.path));
            f.dropped
                .iter()
                .map(move |d| format!("{path}:{}:{}", d.line, d.column))
        })
        .collect();
    if !dropped.is_empty() {
        diag.warnings.push(format!(
            "{} no longer matched once the matches inside were rewritten, and were left as \
             those made them: {}",
            plural(dropped.len(), "outer match"),
            dropped.join(", ")
        ));
    }
    diag
}

/// The sites shown by name in a warning; the rest are counted.
const SITES_NAMED: usize = 5;

/// One warning per op whose template repeats text its matches keep past the pattern:
/// the result holds that text twice (`assert x == 200, r.text, r.text`), which the
/// parser may well accept.
fn repeated_kept_warnings(
    outcome: &EditOutcome,
    ops: &[Op],
    show: impl Fn(&str) -> String,
) -> Vec<String> {
    let mut warnings = Vec::new();
    for (index, op) in ops.iter().enumerate() {
        let mut sites: Vec<(String, &crate::rewrite::Replacement)> = Vec::new();
        for f in &outcome.files {
            for r in &f.replacements {
                if r.op == index && r.repeated_kept.is_some() {
                    sites.push((format!("{}:{}:{}", show(&f.path), r.line, r.column), r));
                }
            }
        }
        let Some((_, first)) = sites.first() else {
            continue;
        };
        let named: Vec<&str> = sites
            .iter()
            .take(SITES_NAMED)
            .map(|(s, _)| s.as_str())
            .collect();
        let more = sites.len().saturating_sub(SITES_NAMED);
        warnings.push(format!(
            "{}'{}' matches more than it replaces, and its rewrite repeats the text kept after \
             the match (`{}`), so the result holds it twice, at {}: {}{} (flag \
             repeats-kept-text); cover that text in the pattern too, or leave it out of the \
             rewrite",
            if ops.len() > 1 {
                format!("op {} ", index + 1)
            } else {
                String::new()
            },
            crate::text::escape_line(&op.pattern),
            crate::text::escape_line(first.repeated_kept.as_deref().unwrap_or_default().trim()),
            plural(sites.len(), "site"),
            named.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    }
    warnings
}
