//! ast-grep's `--inspect nothing|summary|entity` (issue 51 item 4): how many files
//! a search or a scan reads and skips and why, which rules it runs, in ast-grep
//! 0.51.1's lines (`sg: LEVEL|TYPE[|ENTITY]: key=value,…`, on stderr).
//!
//! The lines are worked out from the same file walk, pattern and rules the search or
//! scan then uses, before it starts; a file is read once more for them (only when
//! asked). Values differ from ast-grep's where git-astedit reads other files: the
//! files are git's, and a pattern that is no code in a language skips its files.

use std::path::Path;

use crate::error::UsageError;
use crate::files::Candidate;
use crate::files::Loaded;
use crate::files::SkipReason;
use crate::lang::Lang;
use crate::repo::Repo;
use crate::Error;

/// How much `--inspect` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Granularity {
    /// Nothing (ast-grep's default).
    Nothing,
    /// The project, and the counts of files (and rules).
    Summary,
    /// Also one line per file and per rule.
    Entity,
}

impl Granularity {
    pub fn parse(value: &str) -> Result<Granularity, UsageError> {
        match value {
            "nothing" => Ok(Granularity::Nothing),
            "summary" => Ok(Granularity::Summary),
            "entity" => Ok(Granularity::Entity),
            other => Err(UsageError(format!(
                "--inspect takes nothing, summary or entity, not '{other}'"
            ))),
        }
    }
}

/// The lines of one run's inspection, in the order ast-grep prints them.
struct Lines {
    level: Granularity,
    out: Vec<String>,
}

impl Lines {
    fn new(level: Granularity) -> Lines {
        Lines {
            level,
            out: Vec::new(),
        }
    }

    fn summary(&mut self, what: &str, values: String) {
        if self.level >= Granularity::Summary {
            self.out.push(format!("sg: summary|{what}: {values}"));
        }
    }

    fn entity(&mut self, what: &str, name: &str, values: String) {
        if self.level >= Granularity::Entity {
            self.out.push(format!("sg: entity|{what}|{name}: {values}"));
        }
    }

    /// `isProject=…`: the folder of the `sgconfig.yml` read (`config`, else the
    /// root's), as an absolute path.
    fn project(&mut self, repo: &Repo, config: Option<&Path>) {
        let file = match config {
            Some(c) => repo.cwd.join(c),
            None => repo.workdir.join("sgconfig.yml"),
        };
        let values = match (file.is_file(), file.parent()) {
            (true, Some(dir)) => {
                let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
                format!("isProject=true,projectDir={}", dir.display())
            }
            _ => "isProject=false".to_string(),
        };
        self.summary("project", values);
    }
}

/// Why ast-grep 0.51.1 would name a file skipped, in its words where it has them.
fn reason(reason: SkipReason) -> &'static str {
    match reason {
        SkipReason::TooLarge => "fileTooLarge",
        SkipReason::NonUtf8 => "invalidUtf8",
        SkipReason::Binary => "binary",
        _ => "ioError",
    }
}

/// What reading `file` gives: `None` when it is text to search.
fn skipped(repo: &Repo, file: &Candidate, max_file_size: u64) -> Option<&'static str> {
    match crate::files::load(&repo.workdir, &file.path, max_file_size) {
        Loaded::Text(..) => None,
        Loaded::Skipped(r) => Some(reason(r)),
    }
}

/// Files the walk met that have no language (ast-grep counts them as scanned).
fn walked_without_language(skipped: &crate::files::Skipped) -> usize {
    [SkipReason::NoLanguage, SkipReason::NonUtf8Path]
        .iter()
        .filter_map(|r| skipped.counts.get(r))
        .sum()
}

/// The inspection of the search `req` (`run -p`, `grep`), as lines for stderr.
pub fn search(
    repo: &Repo,
    req: &super::grep::GrepRequest,
    level: Granularity,
) -> Result<Vec<String>, Error> {
    let mut lines = Lines::new(level);
    if level == Granularity::Nothing {
        return Ok(lines.out);
    }
    lines.project(repo, req.input.config.as_deref());
    if req.stdin.is_some() {
        lines.summary("file", "scannedFileCount=0,skippedFileCount=0".into());
        return Ok(lines.out);
    }
    let files = req.input.files(repo)?;
    let candidates = files.set.with_hosts(files.lang.is_some());
    let query = crate::rewrite::QueryOptions {
        selector: req.selector.clone(),
        strictness: req.strictness,
        rewrite: req.rewrite.clone(),
    };
    let compiled = crate::grep::compile_per_language(
        &req.pattern,
        candidates.iter().map(|c| c.lang).chain(files.lang),
        |lang| crate::rewrite::Query::with_options(&req.pattern, lang, files.lang, &query),
    )?;
    let not_code = |lang: Lang| {
        let name = lang.to_string();
        compiled.skipped.iter().any(|(n, _)| *n == name)
    };
    let mut scanned = candidates.len();
    if files.lang.is_none() {
        scanned += walked_without_language(&files.set.skipped);
    }
    let mut skipped_files = 0;
    for file in candidates.iter() {
        let why = match not_code(file.lang) {
            true => Some("error"),
            false => skipped(repo, file, req.input.max_file_size),
        };
        let shown = repo.display_path(&file.path);
        match why {
            Some(why) => {
                skipped_files += 1;
                lines.entity("file", &shown, format!("skipped={why}"));
            }
            None => lines.entity("file", &shown, format!("language={}", file.lang)),
        }
    }
    lines.summary(
        "file",
        format!("scannedFileCount={scanned},skippedFileCount={skipped_files}"),
    );
    Ok(lines.out)
}

/// ast-grep's name of a severity (`finalSeverity=`).
fn severity(s: crate::levels::Severity) -> &'static str {
    match s {
        crate::levels::Severity::Hint => "Hint",
        crate::levels::Severity::Info => "Info",
        crate::levels::Severity::Warning => "Warning",
        crate::levels::Severity::Error => "Error",
    }
}

/// The inspection of the scan `req`, as lines for stderr: the rules it runs (after
/// the severities given and `--rule-id`/`--filter`), and the files of their
/// languages with how many rules apply to each.
pub fn scan(
    repo: &Repo,
    req: &super::scan::ScanRequest,
    level: Granularity,
) -> Result<Vec<String>, Error> {
    let mut lines = Lines::new(level);
    if level == Granularity::Nothing {
        return Ok(lines.out);
    }
    let config = match (&req.inline_rules, req.configs.as_slice()) {
        (None, [one]) if one.extension().is_some_and(|e| e == "yml" || e == "yaml") => {
            Some(one.as_path())
        }
        _ => None,
    };
    lines.project(repo, config);
    let rules = super::scan::load_rules(repo, req, None)?;
    let only = super::scan::only_rules(req, &rules)?;
    let plan = &rules.plan;
    let effective: Vec<&crate::scan::rules::RuleHead> = plan
        .rules
        .iter()
        .filter(|r| only.is_empty() || only.contains(&r.id))
        .collect();
    for rule in &effective {
        lines.entity(
            "rule",
            &rule.id,
            format!("finalSeverity={}", severity(rule.severity)),
        );
    }
    let listing = super::input::Listing {
        input: &req.input,
        rules: plan,
        only: None,
        shard: None,
        ask_git: false,
        asked: None,
    };
    let inputs = listing.files(repo)?;
    let (mut scanned, mut skipped_files) = (0, 0);
    for file in &inputs.files {
        // ast-grep walks the files of the rules' languages only.
        if !effective
            .iter()
            .any(|r| plan.runs_on_language(r, file.lang))
        {
            continue;
        }
        scanned += 1;
        let shown = repo.display_path(&file.path);
        if let Some(why) = skipped(repo, file, req.input.max_file_size) {
            skipped_files += 1;
            lines.entity("file", &shown, format!("skipped={why}"));
            continue;
        }
        let applied = effective
            .iter()
            .filter(|r| plan.runs_in(r, &file.path, file.lang))
            .count();
        let values = format!("language={},appliedRuleCount={applied}", file.lang);
        lines.entity("file", &shown, values);
    }
    lines.summary(
        "file",
        format!("scannedFileCount={scanned},skippedFileCount={skipped_files}"),
    );
    let skipped_rules = plan.disabled.len() + plan.rules.len() - effective.len();
    lines.summary(
        "rule",
        format!(
            "effectiveRuleCount={},skippedRuleCount={skipped_rules}",
            effective.len()
        ),
    );
    Ok(lines.out)
}
