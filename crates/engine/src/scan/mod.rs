/*!
Codemod rules for pre-commit hooks and CI: ast-grep rules run over a file set, their
findings reported and their fixes turned into one [`ChangeSet`], which `txn` stages as
a preview like any `edit` — so an automated rewrite gets an id, a journal entry and an
undo.

* [`rules`] loads `astedit.toml`, ast-grep rule YAML and `sgconfig.yml` projects into
  ast-grep-config's own rule types, and explains a bad rule by file, id and field.
* [`engine`] runs the rules on one text: findings, and fixes through the shared
  nested-rewrite routine, each rule re-run until its output stops changing (bounded).
* [`source`] holds the inputs the engine is given (`ops::input` lists them: the work
  tree, the index for `--cached`, a commit's tree for `--baseline`), reads their
  blobs, and splits them into deterministic shards.
* [`merge`] checks and describes a merge of previews with disjoint paths (shards
  staged on CI machines); `ops::merge` reads and stages them.
* [`hook`] writes the git pre-commit hook.

Printing findings (text, GitHub annotations, SARIF) is `render::scan`'s business, and
staging and applying the fixes `ops::scan`'s.
*/

pub mod baseline;
pub mod cached;
mod captured;
pub mod engine;
pub mod export;
pub mod hook;
mod ledger;
pub mod merge;
mod need;
pub mod rules;
pub mod ruletest;
pub mod source;
pub mod suppress;
#[cfg(test)]
mod tests;

use crate::change::ChangeSet;
use crate::change::FileChange;
use crate::change::FileContent;
use crate::change::FileMeta;
use crate::change::PreviewMeta;
use crate::change::RuleCount;
use crate::error::Classify;
use crate::error::Exit;
use crate::files;
use crate::repo::Repo;
use crate::rewrite;
pub use engine::Finding;
pub use engine::FindingFix;
pub use rules::Rule;
pub use rules::RuleSet;
pub use rules::Severity;
pub use source::Shard;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no rules: neither astedit.toml nor sgconfig.yml is at the repository root")]
    NoConfig,
    #[error("config file {0} does not exist")]
    ConfigMissing(String),
    #[error("cannot read {file}")]
    ReadConfig {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("bad rule file {file}: {detail}")]
    BadConfigFile { file: String, detail: String },
    #[error(
        "bad rule file {file}{}: rule '{rule}', field '{field}': {detail}",
        .line.map(|l| format!(":{l}")).unwrap_or_default()
    )]
    BadRule {
        file: String,
        line: Option<usize>,
        rule: String,
        field: String,
        detail: String,
    },
    #[error("{file}: {error}")]
    CustomLanguage {
        file: String,
        error: crate::lang::LoadError,
    },
    #[error("the result cache's plan of the rules does not match the rules")]
    StalePlan,
    #[error("no rule has the id '{0}'")]
    UnknownRule(String),
    #[error("invalid shard '{0}': use I/N with 1 <= I <= N, e.g. 2/4")]
    BadShard(String),
    #[error(transparent)]
    Files(#[from] files::Error),
    #[error("cannot read the tree {tree}")]
    Tree {
        tree: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("rule '{rule}' failed on {path}")]
    Rewrite {
        rule: String,
        path: String,
        #[source]
        source: rewrite::Error,
    },
}

impl Classify for Error {
    fn code(&self) -> &'static str {
        match self {
            Error::NoConfig => "no-rules",
            Error::ConfigMissing(_) => "config-missing",
            Error::ReadConfig { source, .. } => {
                crate::error::input_error_code(source).map_or("io", |_| "bad-rule-file")
            }
            Error::BadConfigFile { .. } => "bad-rule-file",
            Error::BadRule { .. } => "bad-rule",
            Error::CustomLanguage { error, .. } => error.code(),
            Error::UnknownRule(_) => "unknown-rule",
            Error::StalePlan => "stale-cache",
            Error::BadShard(_) => "bad-shard",
            Error::Files(e) => e.code(),
            Error::Tree { .. } => "git",
            Error::Rewrite { source, .. } => source.code(),
        }
    }
    fn exit(&self) -> Exit {
        match self {
            // A rule file that is missing, a folder or not UTF-8 is bad input.
            Error::ReadConfig { source, .. }
                if crate::error::input_error_code(source).is_some() =>
            {
                Exit::BadInput
            }
            Error::ReadConfig { .. } | Error::Tree { .. } | Error::StalePlan => Exit::Internal,
            Error::Files(e) => e.exit(),
            Error::Rewrite { source, .. } => source.exit(),
            _ => Exit::BadInput,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            Error::NoConfig => Some(
                "write rules in astedit.toml (see fixtures/astedit.toml), or pass --config FILE"
                    .into(),
            ),
            Error::BadRule { field, .. } if field == "rule" => Some(
                "the rule schema is ast-grep's: https://ast-grep.github.io/reference/rule.html"
                    .into(),
            ),
            Error::StalePlan => {
                Some("delete the cache folder (git astedit gc), or run with --no-cache".into())
            }
            Error::Files(e) => e.hint(),
            Error::CustomLanguage { error, .. } => error.hint(),
            Error::Rewrite { source, .. } => source.hint(),
            _ => None,
        }
    }
}

/// What to compute besides findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Findings only; fixes are not computed.
    Report,
    /// Compute fixes (for `--check`, `--stage`, `--apply`).
    Fix,
}

/// Options of one scan.
#[derive(Debug, Clone)]
pub struct Options {
    pub mode: Mode,
    /// Only these rule ids (all when empty).
    pub only_rules: Vec<String>,
    /// Report unused `ast-grep-ignore` comments, at this severity (`None`: not judged).
    pub unused_suppressions: Option<Severity>,
    pub max_file_size: u64,
    /// Overrides the config's bound on fix re-runs.
    pub max_passes: Option<usize>,
    /// Where to keep and find each file's result between runs (`None`: no cache).
    /// An interactive scan (`-i`) never uses it.
    pub cache: Option<crate::cache::Settings>,
    /// Checked between files: once cancelled, no further file is read (the caller
    /// checks it again before making anything visible).
    pub cancel: crate::cancel::Cancel,
    /// Keep each file's content id in the outcome ([`ScanOutcome::ids`]), for the
    /// base side of `--baseline` to compare its blobs with.
    pub name_contents: bool,
}

/// A fixed file: its change and what produced it.
#[derive(Debug, Clone)]
pub struct FixedFile {
    pub path: String,
    /// Fixes per rule id, in rule order.
    pub counts: Vec<(String, usize)>,
    pub introduces_parse_error: bool,
    /// Fixes that repeat text their node keeps past the pattern.
    pub repeated_kept_text: usize,
    /// `introduces-parse-errors`, `repeats-kept-text`, `leaves-empty-block`.
    pub flags: Vec<crate::change::FileFlag>,
}

/// A rule that still changed a file when the pass bound was hit.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Unconverged {
    pub path: String,
    pub rule: String,
    pub passes: usize,
}

/// Edits of captured nodes (a rule's `edits:`) that cannot all be made in a file,
/// which is then left out of the fixes.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EditConflict {
    pub path: String,
    pub rule: String,
    /// 1-based line of the node edited twice.
    pub line: usize,
    pub detail: String,
}

impl std::fmt::Display for EditConflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: rule '{}': {}; the file is left out of the fixes",
            self.path, self.line, self.rule, self.detail
        )
    }
}

/// Everything a scan found and fixed.
#[derive(Debug, Default)]
pub struct ScanOutcome {
    /// Findings in the input, in path order, then position.
    pub findings: Vec<Finding>,
    /// In fix mode: findings left in the fixed text (fixes don't remove them).
    pub remaining: Vec<Finding>,
    pub changes: ChangeSet,
    /// One per changed file, in path order (same order as `changes`).
    pub fixed: Vec<FixedFile>,
    pub unconverged: Vec<Unconverged>,
    /// Files left out for edits of captured nodes that clash, in path order.
    pub conflicts: Vec<EditConflict>,
    pub files_searched: usize,
    pub skipped: files::Skipped,
    pub parse_errors: Vec<String>,
    /// Files of the set left out by `--shard`.
    pub other_shards: usize,
    /// Scanning a tree: the files left out for having the same blob now (see
    /// [`source::Inputs::same`]), in path order.
    pub same: Vec<String>,
    /// With [`Options::name_contents`], when the scan went through the cache: each
    /// file it scanned, with the id of its content (the blob id its entry is keyed by: the index's by the stat data,
    /// or the bytes' hash), `None` for one skipped on reading.
    pub ids: Option<std::sync::Arc<source::Known>>,
}

impl ScanOutcome {
    pub fn fixes(&self) -> usize {
        self.fixed
            .iter()
            .flat_map(|f| f.counts.iter().map(|(_, n)| n))
            .sum()
    }

    /// Error-severity findings in the input.
    pub fn errors(&self) -> usize {
        count_errors(&self.findings)
    }

    /// Error-severity findings left after fixing (fix mode).
    pub fn remaining_errors(&self) -> usize {
        count_errors(&self.remaining)
    }

    /// Fix counts per rule, in rule order, rules with no fix left out.
    pub fn rule_counts(&self, rules: &rules::Plan) -> Vec<RuleCount> {
        rules
            .rules
            .iter()
            .filter_map(|r| {
                let count: usize = self
                    .fixed
                    .iter()
                    .flat_map(|f| f.counts.iter())
                    .filter(|(id, _)| *id == r.id)
                    .map(|(_, n)| n)
                    .sum();
                (count > 0).then(|| RuleCount {
                    rule: r.id.clone(),
                    count,
                })
            })
            .collect()
    }

    /// `5 fixes in 2 files`.
    pub fn summary(&self) -> String {
        format!(
            "{} in {}",
            crate::text::plural(self.fixes(), "fix"),
            crate::text::plural(self.fixed.len(), "file")
        )
    }

    /// The preview metadata of the fixes, of a scan of the index (`cached`) or not,
    /// of one `shard` or all.
    pub fn meta(
        &self,
        rules: &rules::Plan,
        (cached, shard): (bool, Option<Shard>),
        reason: Option<String>,
    ) -> PreviewMeta {
        PreviewMeta {
            kind: crate::change::PreviewKind::Scan,
            summary: self.summary(),
            reason,
            rules: self.rule_counts(rules),
            files: self
                .fixed
                .iter()
                .map(|f| FileMeta {
                    path: f.path.clone(),
                    count: f.counts.iter().map(|(_, n)| n).sum(),
                    flags: f.flags.clone(),
                })
                .collect(),
            replacements: self.fixes(),
            tool_version: crate::VERSION.to_string(),
            details: serde_json::json!({
                "config": rules.sources,
                "cached": cached,
                "shard": shard.map(|s| s.to_string()),
                "unconverged": self.unconverged,
                "conflicts": self.conflicts,
            }),
            ..Default::default()
        }
    }
}

/// Runs `rules` over `inputs`.
pub fn scan(
    repo: &Repo,
    rules: &RuleSet,
    opts: &Options,
    inputs: &source::Inputs,
) -> Result<ScanOutcome, Error> {
    let plan = rules.plan();
    let compiled = Compiled::Ready(rules);
    scan_with(repo, &plan, compiled, opts, inputs, None, None)
}

/// Who takes a scan's findings as the files are done: the one choice the callers
/// make (`ops::scan` makes it for both front ends).
pub enum Consume<'a> {
    /// Into the outcome's `findings`.
    Collect,
    /// Each file's findings to the sink as that file's turn comes (in path order),
    /// not into the outcome, whose `findings` stay empty: memory does not grow with
    /// the findings (issue 26). The sink returning `false` stops the scan (the
    /// outcome is then partial).
    Stream(&'a mut dyn FnMut(Vec<Finding>) -> bool),
    /// Into the outcome, making only the fixes the person accepts (`scan -i`, fix
    /// mode): files one at a time in path order; once the person is
    /// [finished](crate::select::Select::finished) the rest are not read.
    Ask(&'a mut dyn crate::select::Select),
}

/// Runs `rules` over `inputs` (the files `ops::input` lists), the findings going
/// where `consume` says. Rules not compiled yet are compiled only if some file's
/// result is not in the cache.
pub fn run(
    repo: &Repo,
    rules: &rules::Rules,
    opts: &Options,
    inputs: &source::Inputs,
    consume: Consume<'_>,
) -> Result<ScanOutcome, Error> {
    let mut sink = match consume {
        Consume::Ask(select) => {
            let compiled = Compiled::Ready(rules.compiled(repo)?);
            return scan_with(
                repo,
                &rules.plan,
                compiled,
                opts,
                inputs,
                Some(select),
                None,
            );
        }
        Consume::Collect => None,
        Consume::Stream(sink) => Some(sink),
    };
    // The files whose findings reached the sink: a second attempt (below) must not
    // send them again. Files arrive in path order, so these are the ones before the
    // file that stopped the first attempt.
    let mut sent: std::collections::HashSet<String> = Default::default();
    let streaming = sink.is_some();
    let first = {
        let mut record = |findings: Vec<Finding>| -> bool {
            if let Some(f) = findings.first() {
                sent.insert(f.path.clone());
            }
            sink.as_mut().is_none_or(|s| s(findings))
        };
        let tee: Option<&mut dyn FnMut(Vec<Finding>) -> bool> = match streaming {
            true => Some(&mut record),
            false => None,
        };
        scan_with(
            repo,
            &rules.plan,
            Compiled::Later(rules),
            opts,
            inputs,
            None,
            tee,
        )
    };
    match first {
        // A file changed (or an entry broke) between the look-up and its read: again,
        // compiled.
        Err(Error::StalePlan) if !rules.is_compiled() => {
            let compiled = rules.compiled(repo)?;
            let mut rest = |findings: Vec<Finding>| -> bool {
                if findings.first().is_some_and(|f| sent.contains(&f.path)) {
                    return true;
                }
                sink.as_mut().is_none_or(|s| s(findings))
            };
            let tee: Option<&mut dyn FnMut(Vec<Finding>) -> bool> = match streaming {
                true => Some(&mut rest),
                false => None,
            };
            let compiled = Compiled::Ready(compiled);
            scan_with(repo, &rules.plan, compiled, opts, inputs, None, tee)
        }
        other => other,
    }
}

/// The compiled rules of a scan, or where to get them.
#[derive(Clone, Copy)]
enum Compiled<'a> {
    Ready(&'a RuleSet),
    Later(&'a rules::Rules),
}

fn scan_with(
    repo: &Repo,
    plan: &rules::Plan,
    compiled: Compiled<'_>,
    opts: &Options,
    inputs: &source::Inputs,
    select: Option<&mut dyn crate::select::Select>,
    mut sink: Option<&mut dyn FnMut(Vec<Finding>) -> bool>,
) -> Result<ScanOutcome, Error> {
    for id in &opts.only_rules {
        if !plan.rules.iter().any(|r| r.id == *id) {
            return Err(Error::UnknownRule(id.clone()));
        }
    }
    let max_passes = opts
        .max_passes
        .unwrap_or(plan.max_passes)
        .clamp(1, rules::MAX_PASSES_CEILING);
    // A file's result depends on its bytes, its language, the rules that apply to it
    // (their texts, ids and severities), the mode, the pass bound and whether unused
    // suppressions are judged.
    let query_key = {
        let mut k = crate::cache::KeyBuilder::new("scan");
        // The size bound too: an entry then says that its content fit, so a blob's
        // entry is used without reading the blob.
        k.add(cached::FORMAT.as_bytes()).add(&plan.digest).add(
            format!(
                "{:?} {max_passes} {:?} {}",
                opts.mode, opts.unused_suppressions, opts.max_file_size
            )
            .as_bytes(),
        );
        k.finish()
    };
    // An interactive scan uses no cache (a person's answers are not cached).
    let cache = match (&opts.cache, &select) {
        (Some(settings), None) => Some(crate::worker::Cache::open(settings, query_key)),
        _ => None,
    };
    let tasks = tasks(plan, opts, inputs);
    // Blobs (`--cached`, `--baseline`'s side) are read by the workers, and only those
    // whose result the cache does not hold.
    let blobs = inputs
        .files
        .iter()
        .any(|c| c.blob.is_some())
        .then(|| source::Blobs::new(repo));
    let set = rules_needed(repo, plan, compiled, cache.as_ref(), &tasks)?;
    // Each plan rule's compiled rule, where there is one.
    let resolved: Vec<Option<&Rule>> = match set {
        Some(set) => {
            let by_id: std::collections::HashMap<&str, &Rule> =
                set.rules.iter().map(|r| (r.id.as_str(), r)).collect();
            plan.rules
                .iter()
                .map(|h| by_id.get(h.id.as_str()).copied())
                .collect()
        }
        None => Vec::new(),
    };
    let worker = FileScan {
        set,
        resolved,
        blobs: blobs.as_ref(),
        max_file_size: opts.max_file_size,
        mode: opts.mode,
        max_passes,
        // A suppression comment is unused only when every rule ran (one meant for a
        // rule left out is not), as ast-grep judges.
        judge_suppressions: opts.unused_suppressions.is_some(),
        tasks: std::marker::PhantomData,
    };
    let mut out = ScanOutcome {
        other_shards: inputs.other_shards,
        same: inputs.same.clone(),
        ..Default::default()
    };
    let through_cache = cache.is_some();
    let run = crate::worker::Run {
        repo,
        max_file_size: opts.max_file_size,
        cache,
        skipped: inputs.skipped.clone(),
        ids: opts.name_contents,
    };
    let drive = match select {
        // One file at a time, in path order: a person answers for each fix.
        Some(select) => crate::worker::Drive::Selecting(select),
        None => crate::worker::Drive::Parallel {
            order: crate::pipeline::Delivery::InOrder,
            cancel: &opts.cancel,
        },
    };
    let totals = crate::worker::run(&worker, &tasks, run, drive, |task, one| {
        let findings = out.add(task.cand, one, opts.unused_suppressions);
        match sink.as_mut() {
            Some(sink) if !findings.is_empty() => sink(findings),
            Some(_) => true,
            None => {
                out.findings.extend(findings);
                true
            }
        }
    })?;
    out.files_searched = totals.files_searched;
    out.skipped = totals.skipped;
    out.ids = (through_cache && opts.name_contents).then(|| {
        let ids = totals.ids.into_iter();
        std::sync::Arc::new(
            ids.map(|(i, id)| (tasks[i].cand.path.clone(), id))
                .collect(),
        )
    });
    Ok(out)
}

impl ScanOutcome {
    /// Adds one file's result but for its findings, which it returns (with the unused
    /// suppressions at `unused` severity, when they are judged).
    fn add(
        &mut self,
        cand: &source::Candidate,
        one: One,
        unused: Option<Severity>,
    ) -> Vec<Finding> {
        let One::Done(result, before) = one else {
            return Vec::new();
        };
        let result = *result;
        let flags = result.flags();
        if result.had_parse_error {
            self.parse_errors.push(cand.path.clone());
        }
        let mut findings = result.findings;
        if unused.is_some() && !result.unused_suppressions.is_empty() {
            let severity = unused.unwrap_or(Severity::Hint);
            findings.extend(
                result
                    .unused_suppressions
                    .into_iter()
                    .map(|f| Finding { severity, ..f }),
            );
            findings.sort_by_key(|f| (f.line, f.column));
        }
        self.remaining.extend(result.remaining);
        self.unconverged.extend(result.unconverged);
        self.conflicts.extend(result.conflicts);
        if let Some(after) = result.after {
            self.fixed.push(FixedFile {
                path: cand.path.clone(),
                counts: result.counts,
                introduces_parse_error: result.introduces_parse_error,
                repeated_kept_text: result.repeated_kept_text,
                flags,
            });
            self.changes.changes.push(FileChange {
                path: cand.path.clone(),
                after: Some(FileContent {
                    bytes: after.into_bytes(),
                    mode: before.mode,
                }),
                before: Some(before),
            });
        }
        findings
    }
}

/// One file of a scan: the candidate, and its rules (indices into the plan) and their
/// part of the cache key.
struct Task<'a> {
    cand: &'a source::Candidate,
    rules: std::sync::Arc<[usize]>,
    rules_key: crate::cache::Key,
    /// Its entry's key under the id git vouched for, once made.
    key: std::sync::OnceLock<crate::cache::Key>,
}

impl crate::worker::Task for Task<'_> {
    fn path(&self) -> &str {
        &self.cand.path
    }
    fn lang(&self) -> crate::lang::Lang {
        self.cand.lang
    }
    fn size_hint(&self) -> u64 {
        self.cand.size_hint
    }
    fn tracked(&self) -> Option<&crate::cache::IndexStat> {
        self.cand.tracked.as_ref()
    }
    fn key_part(&self) -> Option<&crate::cache::Key> {
        Some(&self.rules_key)
    }
    fn read_id(&self) -> Option<gix::ObjectId> {
        self.cand.blob.map(|(id, _)| id)
    }
    fn vouched_key(&self) -> Option<&std::sync::OnceLock<crate::cache::Key>> {
        Some(&self.key)
    }
}

/// The files with rules to run, each with its rules (none is read here: the workers
/// read what the cache does not answer).
fn tasks<'a>(plan: &rules::Plan, opts: &Options, inputs: &'a source::Inputs) -> Vec<Task<'a>> {
    let active: Vec<usize> = (0..plan.rules.len())
        .filter(|&k| opts.only_rules.is_empty() || opts.only_rules.contains(&plan.rules[k].id))
        .collect();
    // Files mostly share their rules: each distinct list is keyed once.
    let mut lists: std::collections::HashMap<
        Vec<usize>,
        (std::sync::Arc<[usize]>, crate::cache::Key),
    > = Default::default();
    let mut tasks = Vec::new();
    let mut keyed = |file_rules: Vec<usize>| {
        lists
            .entry(file_rules)
            .or_insert_with_key(|list| {
                let mut k = crate::cache::KeyBuilder::new("rules");
                for &r in list {
                    k.add(plan.rules[r].id.as_bytes())
                        .add(plan.rules[r].severity.as_str().as_bytes());
                }
                (list.clone().into(), k.finish())
            })
            .clone()
    };
    // The rules that may run on a language's files; when none has path globs, every
    // file of the language gets them all (listed and keyed once: `Some`).
    type Listed = (
        Vec<usize>,
        Option<Option<(std::sync::Arc<[usize]>, crate::cache::Key)>>,
    );
    let mut by_lang: std::collections::HashMap<crate::lang::Lang, Listed> = Default::default();
    for cand in &inputs.files {
        let (candidates, all) = by_lang.entry(cand.lang).or_insert_with(|| {
            let list: Vec<usize> = active
                .iter()
                .copied()
                .filter(|&k| plan.runs_on_language(&plan.rules[k], cand.lang))
                .collect();
            let path_free = list.iter().all(|&k| !plan.rules[k].has_globs());
            let all = path_free.then(|| (!list.is_empty()).then(|| keyed(list.clone())));
            (list, all)
        });
        let (rules, rules_key) = match all {
            Some(Some(all)) => all.clone(),
            Some(None) => continue,
            None => {
                let file_rules: Vec<usize> = candidates
                    .iter()
                    .copied()
                    .filter(|&k| plan.runs_in(&plan.rules[k], &cand.path, cand.lang))
                    .collect();
                if file_rules.is_empty() {
                    continue;
                }
                keyed(file_rules)
            }
        };
        tasks.push(Task {
            cand,
            rules,
            rules_key,
            key: Default::default(),
        });
    }
    tasks
}

/// The compiled rules, or only those the files whose results are not cached (by the
/// index's stat data) need: the others' entries are read without them. A file whose
/// entry turns out missing after all stops the run (`StalePlan`), which
/// `scan_rules` runs again with every rule compiled. `None`: no rule is needed.
fn rules_needed<'r>(
    repo: &Repo,
    plan: &rules::Plan,
    compiled: Compiled<'r>,
    cache: Option<&crate::worker::Cache>,
    tasks: &[Task<'_>],
) -> Result<Option<&'r RuleSet>, Error> {
    let rules = match (compiled, cache) {
        (Compiled::Ready(set), _) => return Ok(Some(set)),
        (Compiled::Later(rules), _) if rules.is_compiled() => {
            return Ok(Some(rules.compiled(repo)?))
        }
        (Compiled::Later(rules), None) => return Ok(Some(rules.compiled(repo)?)),
        (Compiled::Later(rules), Some(_)) => rules,
    };
    let cache = cache.expect("matched above");
    // On every core (the keys made here are kept for the run).
    let held: Vec<bool> = {
        use rayon::prelude::*;
        let workdir = repo.workdir.as_path();
        tasks
            .par_iter()
            .map(|task| cache.holds(workdir, task))
            .collect()
    };
    let mut needed: std::collections::HashSet<&str> = Default::default();
    for (task, _) in tasks.iter().zip(held).filter(|(_, held)| !held) {
        needed.extend(task.rules.iter().map(|&r| plan.rules[r].id.as_str()));
    }
    if needed.is_empty() {
        Ok(None)
    } else {
        Ok(Some(rules.compiled_some(repo, &needed)?))
    }
}

/// A scan's work on one file. Each file is read, parsed and gone again before much
/// else piles up: the text of a file that needs no fix is dropped as soon as its
/// findings are in, and large files are parsed one at a time (see
/// `pipeline::Schedule`).
struct FileScan<'a, 't> {
    /// The compiled rules (`None`: none was needed, every result is cached).
    set: Option<&'a RuleSet>,
    /// Each plan rule's compiled rule, where there is one.
    resolved: Vec<Option<&'a Rule>>,
    /// Where the blob tasks are read from.
    blobs: Option<&'a source::Blobs>,
    max_file_size: u64,
    mode: Mode,
    max_passes: usize,
    judge_suppressions: bool,
    tasks: std::marker::PhantomData<Task<'t>>,
}

impl<'t> crate::worker::Worker for FileScan<'_, 't> {
    type Task = Task<'t>;
    type Output = One;
    type Item = One;
    type Error = Error;

    fn plan(&self, _task: &Task<'_>) -> crate::worker::Plan {
        crate::worker::Plan::Cached
    }

    fn read(&self, task: &Task<'_>) -> Option<Result<files::Loaded, Error>> {
        let blobs = self.blobs?;
        task.cand
            .blob
            .map(|(id, mode)| Ok(blobs.load(&task.cand.path, id, mode, self.max_file_size)?))
    }

    fn compute(
        &self,
        task: &Task<'_>,
        text: String,
        mode: crate::change::FileMode,
        offer: &mut crate::worker::Offer<'_>,
    ) -> Result<One, Error> {
        let Some(set) = self.set else {
            return Err(Error::StalePlan);
        };
        let Some(file_rules) = task
            .rules
            .iter()
            .map(|&r| self.resolved.get(r).copied().flatten())
            .collect::<Option<Vec<&Rule>>>()
        else {
            return Err(Error::StalePlan);
        };
        // Fixes only ever start from a match, so a file no rule can match in stays
        // as it is: no findings, nothing to fix, no parse needed.
        // (Unless it holds a suppression comment whose use is to be judged.)
        let judged = self.judge_suppressions && text.contains(suppress::IGNORE_TEXT);
        if !judged && !file_rules.iter().any(|r| r.may_match(&text)) {
            return Ok(One::NoMatch);
        }
        let result = engine::run_file_injected(
            &task.cand.path,
            &text,
            task.cand.lang,
            engine::FileRules {
                rules: &file_rules,
                injections: &set.injections,
            },
            self.mode,
            self.max_passes,
            offer,
        )?;
        Ok(One::Done(
            Box::new(result),
            FileContent {
                bytes: text.into_bytes(),
                mode,
            },
        ))
    }

    fn decode(
        &self,
        task: &Task<'_>,
        payload: &[u8],
        text: &mut dyn FnMut() -> Option<(String, crate::change::FileMode)>,
    ) -> Option<One> {
        cached_one(payload, &task.cand.path, text)
    }

    fn encode(&self, one: &One, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        let entry = match one {
            One::Done(result, _) => cached::Entry(Some(cached::Result::of(result))),
            _ => cached::Entry(None),
        };
        serde_json::to_writer(w, &entry).map_err(std::io::Error::from)
    }

    fn item(&self, _task: &Task<'_>, one: One) -> One {
        one
    }

    fn found(&self, one: &One) -> usize {
        match one {
            One::Done(r, _) => r.findings.len(),
            _ => 0,
        }
    }
}

/// A file's result from a cache entry, or `None` when the entry does not decode or
/// its fix needs the file's text and `text` cannot give the text the entry is of.
fn cached_one(
    payload: &[u8],
    path: &str,
    text: &mut dyn FnMut() -> Option<(String, crate::change::FileMode)>,
) -> Option<One> {
    // Most files' entry: no rule can match (what `Entry(None)` encodes to).
    if payload == b"null" {
        return Some(One::NoMatch);
    }
    let cached::Entry(result) = serde_json::from_slice(payload).ok()?;
    let Some(result) = result else {
        return Some(One::NoMatch);
    };
    let before = if result.changes_text() {
        let (t, mode) = text()?;
        FileContent {
            bytes: t.into_bytes(),
            mode,
        }
    } else {
        FileContent {
            bytes: Vec::new(),
            mode: crate::change::FileMode::Regular,
        }
    };
    Some(One::Done(Box::new(result.into_file_result(path)), before))
}

/// What became of one file of a scan.
enum One {
    Done(Box<engine::FileResult>, FileContent),
    /// No rule can match: read, not parsed.
    NoMatch,
}

fn count_errors(findings: &[Finding]) -> usize {
    findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count()
}
