/*!
The editor server's operations (`git astedit lsp`): the project's rules, loaded once and
kept between requests ([`Workspace`]; as `scan` does, from the result cache's plan of
the config files when it has one, compiling a rule only when a document needs it), one in-memory document checked with them as
`scan` checks the file on disk ([`Workspace::check`]), the text its fixes make
([`Workspace::fix`]), and the workspace's fixes staged as one preview through the same
call `scan --stage` makes ([`stage_all`]), and the findings in the workspace's files as
`scan` reports them ([`workspace_findings`]).

A document is checked exactly as the scan's per-file step checks a file: its language
from the project's `languageGlobs` (then its extension), the rules whose language,
`files` and `ignores` take it (injected languages included), suppression comments, and
unused suppressions as hints. A document `scan` would not look at, one git ignores
(decided as the scan's file walk decides it) or one outside the repository, gets
nothing. Positions stay the engine's (1-based lines, columns in
characters); the server turns them into the protocol's UTF-16 columns.
*/

use std::collections::HashSet;
use std::path::Path;
use std::path::PathBuf;

use crate::cancel::Cancel;
use crate::repo::Repo;
use crate::report::FindingRow;
use crate::report::ScanMode;
use crate::report::ScanReport;
use crate::scan;
use crate::scan::engine;
use crate::scan::rules::Opened;
use crate::scan::rules::Rules;
use crate::scan::Finding;
use crate::scan::RuleSet;
use crate::Error;

/// The project's rules as the server holds them.
pub struct Workspace {
    /// Rule files given with `-c` (empty: astedit.toml and sgconfig.yml at the root).
    configs: Vec<PathBuf>,
    /// The rules that load; after a failed reload, the last set that loaded. When
    /// the result cache holds the plan of these very config files (a set that
    /// compiled before), nothing is compiled up front: see [`Workspace::compiled`].
    rules: Option<Rules>,
    /// At the start, when the cache holds no plan of the rules: the rules read, the
    /// first document's language's compiled alone, until [`Workspace::settle`].
    unsettled: Option<Unsettled>,
    /// The rule ids compiled alone for the first document's language.
    first: std::sync::OnceLock<HashSet<String>>,
    /// Why the last (re)load failed, if it did.
    broken: Option<Broken>,
    /// A document larger than this is not parsed (scan's `--max-filesize`).
    max_file_size: u64,
}

/// The rules before the cache has a plan of them (a project the server has not seen
/// with these rule files): the first document's language's rules are compiled alone,
/// so that its diagnostics do not wait for a whole collection; every rule is compiled
/// (which checks them all and stores the plan) when the server is idle.
struct Unsettled {
    /// The config files as read when the server started.
    read: scan::rules::Unplanned,
    /// The rules that may run on the first document's language, compiled.
    first: std::sync::OnceLock<(crate::lang::Lang, RuleSet)>,
    /// Every rule, when a document of another language came first (or that
    /// language's rules did not compile); why not, if they do not load.
    all: std::sync::OnceLock<Result<Rules, Broken>>,
}

/// The most diagnostics one document gets: past it, one more says how many were left
/// out (a generated file with a million findings would otherwise be hundreds of
/// megabytes of messages).
pub const MAX_DIAGNOSTICS: usize = 1000;

/// The rule id of the one diagnostic a document over the size bound gets, and of the
/// one that closes a list cut at [`MAX_DIAGNOSTICS`].
pub const TOO_LARGE: &str = "file-too-large";
pub const TOO_MANY: &str = "too-many-findings";

/// A rule file that does not load: where and why, for a diagnostic on that file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// The file, absolute, when the error names one.
    pub file: Option<PathBuf>,
    /// Its 1-based line, when known.
    pub line: Option<usize>,
    /// The error's code (`bad-rule`, `bad-rule-file`, `no-rules`, …).
    pub code: &'static str,
    pub message: String,
}

/// A finding of [`Workspace::check`] and its rule's labels there.
#[derive(Debug, Clone)]
pub struct Checked {
    pub row: FindingRow,
    /// The rule's `labels` with a message, at this match.
    pub labels: Vec<Label>,
}

/// A labelled part of a match (ast-grep's `labels`): 1-based lines, 1-based columns
/// in characters, the end exclusive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    pub message: String,
}

/// What the server shows of a rule (hover).
#[derive(Debug, Clone)]
pub struct RuleInfo {
    pub id: String,
    /// The message as written (metavariables unexpanded).
    pub message: String,
    pub note: Option<String>,
    pub url: Option<String>,
    pub fixable: bool,
}

impl Workspace {
    /// Loads the rules of `configs` (or of the root's astedit.toml and sgconfig.yml).
    /// A project whose rules do not load still gives a workspace: with no rules, and
    /// the reason in [`Workspace::broken`].
    pub fn open(repo: &Repo, configs: &[PathBuf]) -> Workspace {
        let mut ws = Workspace {
            configs: configs.to_vec(),
            rules: None,
            unsettled: None,
            first: Default::default(),
            broken: None,
            max_file_size: crate::files::DEFAULT_MAX_FILE_SIZE,
        };
        let cache = super::cache::CacheChoice::Default.settings(repo);
        match scan::rules::open_lazily(repo, configs, cache.as_ref()) {
            Ok(Opened::Planned(rules)) => ws.rules = Some(*rules),
            Ok(Opened::Unplanned(read)) => {
                ws.unsettled = Some(Unsettled {
                    read: *read,
                    first: Default::default(),
                    all: Default::default(),
                })
            }
            Err(e) => ws.broken = Some(broken(repo, &e.into())),
        }
        ws
    }

    /// Whether some rules are not compiled yet, nor checked, for want of a plan:
    /// [`Workspace::settle`] compiles them.
    pub fn is_unsettled(&self) -> bool {
        self.unsettled.is_some()
    }

    /// Compiles every rule (and stores their plan in the cache) when only the first
    /// document's language's were. True when they do not load: the server says why
    /// and the open documents are checked again (with no rules, as at a start with
    /// rules that do not load).
    pub fn settle(&mut self, repo: &Repo) -> bool {
        let Some(Unsettled { read, all, .. }) = self.unsettled.take() else {
            return false;
        };
        let all = all
            .into_inner()
            .unwrap_or_else(|| read.compile_all().map_err(|e| broken(repo, &e.into())));
        match all {
            Ok(rules) => {
                self.rules = Some(rules);
                false
            }
            Err(why) => {
                self.broken = Some(why);
                true
            }
        }
    }

    /// Reads the rules again (a rule file changed). When they no longer load, the
    /// rules that loaded last keep serving and [`Workspace::broken`] says why.
    pub fn reload(&mut self, repo: &Repo) {
        self.unsettled = None;
        let cache = super::cache::CacheChoice::Default.settings(repo);
        match scan::rules::open(repo, &self.configs, cache.as_ref()) {
            Ok(rules) => {
                self.rules = Some(rules);
                self.first = Default::default();
                self.broken = None;
            }
            Err(e) => self.broken = Some(broken(repo, &e.into())),
        }
    }

    /// The rules with a plan: those that loaded, or every rule of an unsettled
    /// workspace once compiled.
    fn planned(&self) -> Option<&Rules> {
        match &self.unsettled {
            Some(u) => u.all.get()?.as_ref().ok(),
            None => self.rules.as_ref(),
        }
    }

    /// The rules compiled alone for the first document of an unsettled workspace.
    fn first_compiled(&self) -> Option<&RuleSet> {
        Some(&self.unsettled.as_ref()?.first.get()?.1)
    }

    /// Sets the size above which a document is not parsed, at most the ceiling `scan`
    /// has (64 MiB; the front end refuses a larger value with scan's error).
    pub fn set_max_file_size(&mut self, bytes: u64) {
        self.max_file_size = bytes.min(crate::files::MAX_FILE_SIZE_CEILING);
    }

    pub fn broken(&self) -> Option<&Broken> {
        self.broken.as_ref()
    }

    /// Notes about the rules that loaded (keys read but not honoured and the like).
    pub fn warnings(&self) -> &[String] {
        match (self.planned(), self.first_compiled()) {
            (Some(r), _) => &r.plan.warnings,
            (None, Some(set)) => &set.warnings,
            (None, None) => &[],
        }
    }

    /// How many rules run (of an unsettled workspace: how many are compiled).
    pub fn rule_count(&self) -> usize {
        match (self.planned(), self.first_compiled()) {
            (Some(r), _) => r.plan.rules.len(),
            (None, Some(set)) => set.rules.len(),
            (None, None) => 0,
        }
    }

    /// Whether a change of this file (absolute) may change the rules: the configs,
    /// or any YAML or TOML file (rule folders are read whole).
    pub fn may_define_rules(&self, path: &Path) -> bool {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        name == "sgconfig.yml"
            || name == "sgconfig.yaml"
            || name == "astedit.toml"
            || name.ends_with(".yml")
            || name.ends_with(".yaml")
            || self.configs.iter().any(|c| path.ends_with(c))
    }

    /// Whether `scan` looks at the repository path `path`: its file walk leaves out
    /// what git ignores (unless the project sets `noIgnore`), and so does the server.
    /// An index that cannot be read fails the scan: nothing to say then either.
    pub fn looks_at(&self, repo: &Repo, path: &str) -> bool {
        let no_ignore = match &self.unsettled {
            Some(u) => u.read.no_ignore,
            None => self.rules.as_ref().is_some_and(|r| r.plan.no_ignore),
        };
        no_ignore || !crate::files::is_ignored(repo, path).unwrap_or(true)
    }

    /// The rule `id`, when it runs (of an unsettled workspace: when it is compiled).
    pub fn rule(&self, id: &str) -> Option<RuleInfo> {
        let rule: &scan::rules::RuleHead = match (self.planned(), self.first_compiled()) {
            (Some(r), _) => r.plan.rules.iter().find(|r| r.id == id)?,
            (None, Some(set)) => &set.rules.iter().find(|r| r.id == id)?.head,
            (None, None) => return None,
        };
        Some(RuleInfo {
            id: rule.id.clone(),
            message: rule.message.clone(),
            note: rule.note.clone(),
            url: rule.url.clone(),
            fixable: rule.fixable(),
        })
    }

    /// The findings of the rules in `text`, the content of the repository path
    /// `path`, in position order: what `scan` reports for that file were `text` on
    /// disk. Each row carries its fix (what `scan --apply` makes of that one match)
    /// and the rule's `labels` at that match.
    ///
    /// A document larger than the size bound is not parsed, as `scan` skips such a
    /// file: it gets one finding saying so. At most [`MAX_DIAGNOSTICS`] findings are
    /// returned, then one saying how many more there were.
    pub fn check(&self, repo: &Repo, path: &str, text: &str) -> Result<Vec<Checked>, Error> {
        let Some((set, lang, rules)) = self.rules_for(repo, path, None) else {
            return Ok(Vec::new());
        };
        if text.len() as u64 > self.max_file_size {
            let message = format!(
                "not checked: {} bytes, over the {}-byte bound on a file's size (scan skips \
                 it too; see --max-filesize)",
                text.len(),
                self.max_file_size
            );
            return Ok(vec![notice(repo, path, TOO_LARGE, message)]);
        }
        let result = engine::run_file_injected(
            path,
            text,
            lang,
            engine::FileRules {
                rules: &rules,
                injections: &set.injections,
            },
            scan::Mode::Report,
            set.max_passes.max(1),
            &mut |_| true,
        )?;
        let mut findings: Vec<Finding> = result.findings;
        // As `scan` (every rule runs here): unused suppressions are hints.
        findings.extend(result.unused_suppressions.into_iter().map(|f| Finding {
            severity: scan::Severity::Hint,
            ..f
        }));
        findings.sort_by_key(|f| (f.line, f.column));
        let mut checked: Vec<Checked> = findings
            .iter()
            .map(|f| Checked {
                row: FindingRow::of(f, repo.display_path(&f.path)),
                labels: Vec::new(),
            })
            .collect();
        let more = checked.len().saturating_sub(MAX_DIAGNOSTICS);
        checked.truncate(MAX_DIAGNOSTICS);
        add_labels(&mut checked, text, lang, &rules);
        if more > 0 {
            checked.push(notice(repo, path, TOO_MANY, too_many(more)));
        }
        Ok(checked)
    }

    /// The text `scan --apply` would write for `text` (the content of `path`), with
    /// every rule or only `rule`; `None` when no fix changes it.
    pub fn fix(
        &self,
        repo: &Repo,
        path: &str,
        text: &str,
        rule: Option<&str>,
    ) -> Result<Option<String>, Error> {
        let Some((set, lang, rules)) = self.rules_for(repo, path, rule) else {
            return Ok(None);
        };
        // Over the size bound: not parsed (its one finding says so).
        if text.len() as u64 > self.max_file_size {
            return Ok(None);
        }
        let result = engine::run_file_injected(
            path,
            text,
            lang,
            engine::FileRules {
                rules: &rules,
                injections: &set.injections,
            },
            scan::Mode::Fix,
            set.max_passes.max(1),
            &mut |_| true,
        )?;
        Ok(result.after.filter(|after| after != text))
    }

    /// The rule set, the file's language and the rules that run on it (only `only`
    /// when given); `None` when none does, or when `scan` would not look at the file
    /// (git ignores it and the project does not set `noIgnore`).
    fn rules_for(
        &self,
        repo: &Repo,
        path: &str,
        only: Option<&str>,
    ) -> Option<(&RuleSet, crate::lang::Lang, Vec<&scan::Rule>)> {
        if !self.looks_at(repo, path) {
            return None;
        }
        let (set, lang) = match &self.unsettled {
            Some(unsettled) => {
                let lang = unsettled.read.language_globs.language_of(path)?;
                (unsettled.compiled(repo, lang)?, lang)
            }
            None => {
                let plan = &self.rules.as_ref()?.plan;
                let lang = plan.language_globs.language_of(path)?;
                if !plan.rules.iter().any(|h| plan.runs_in(h, path, lang)) {
                    return None;
                }
                (self.compiled(repo, lang)?, lang)
            }
        };
        let rules: Vec<&scan::Rule> = set
            .rules
            .iter()
            .filter(|r| only.is_none_or(|id| r.id == id))
            .filter(|r| set.runs_in(r, path, lang))
            .collect();
        (!rules.is_empty()).then_some((set, lang, rules))
    }

    /// Compiled rules that hold every rule that may run on a file of `lang`. With a
    /// plan from the cache, the first language's rules are compiled alone (opening a
    /// project compiles the few rules of the document shown, not a whole collection);
    /// a document of another language compiles every rule. `None` when they do not
    /// compile (the config files changed since: the reload their change brings says
    /// why).
    fn compiled(&self, repo: &Repo, lang: crate::lang::Lang) -> Option<&RuleSet> {
        let rules = self.rules.as_ref()?;
        if rules.is_compiled() {
            return rules.compiled(repo).ok();
        }
        let wanted: HashSet<String> = rules
            .plan
            .rules
            .iter()
            .filter(|h| rules.plan.runs_on_language(h, lang))
            .map(|h| h.id.clone())
            .collect();
        let first = self.first.get_or_init(|| wanted.clone());
        if !wanted.is_subset(first) {
            return rules.compiled(repo).ok();
        }
        let ids: HashSet<&str> = first.iter().map(String::as_str).collect();
        rules.compiled_some(repo, &ids).ok()
    }
}

impl Unsettled {
    /// Compiled rules that hold every rule that may run on a file of `lang`: the
    /// first language's alone; for another language (or when they do not compile,
    /// to learn why) every rule. `None` when they do not load.
    fn compiled(&self, repo: &Repo, lang: crate::lang::Lang) -> Option<&RuleSet> {
        if let Some(all) = self.all.get() {
            return all.as_ref().ok()?.compiled(repo).ok();
        }
        match self.first.get() {
            Some((first, set)) if *first == lang => return Some(set),
            Some(_) => {}
            None => {
                if let Ok(set) = self.read.compile_for(lang) {
                    return Some(&self.first.get_or_init(|| (lang, set)).1);
                }
            }
        }
        let all = self.all.get_or_init(|| self.compile_all(repo));
        all.as_ref().ok()?.compiled(repo).ok()
    }

    /// Every rule of the texts read, or why they do not load.
    fn compile_all(&self, repo: &Repo) -> Result<Rules, Broken> {
        self.read.compile_all().map_err(|e| broken(repo, &e.into()))
    }
}

/// Where and why rules did not load.
fn broken(repo: &Repo, e: &Error) -> Broken {
    let at = |file: &str| Some(repo.cwd.join(file));
    let (file, line) = match e.downcast_ref::<scan::Error>() {
        Some(scan::Error::BadRule { file, line, .. }) => (at(file), *line),
        Some(scan::Error::BadConfigFile { file, .. })
        | Some(scan::Error::ReadConfig { file, .. })
        | Some(scan::Error::CustomLanguage { file, .. }) => (at(file), None),
        _ => (None, None),
    };
    let mut message = e.to_string();
    if let Some(hint) = e.hint() {
        message = format!("{message}\nhint: {hint}");
    }
    Broken {
        file,
        line,
        code: e.code(),
        message,
    }
}

/// Stages every fix of the rules in the files under the current folder as one
/// preview, as `scan --stage` does, journalled with `agent` (the editor's name).
/// Once `cancel` says so, no further file is read and nothing is staged (the error
/// is `cancelled`).
pub fn stage_all(
    repo: &Repo,
    configs: &[PathBuf],
    agent: Option<String>,
    cancel: &Cancel,
) -> Result<ScanReport, Error> {
    let mut request = scan_request(configs, ScanMode::Stage);
    request.reason = Some("fixes staged from the editor".into());
    request.agent = agent;
    super::scan::run_cancellable(repo, &request, super::scan::Consumer::Collect, cancel)
}

/// The findings in the files under the current folder, as `scan` reports them (the
/// same file selection, rules and result cache), by repository path in path order;
/// a file without findings is not listed.
pub fn workspace_findings(
    repo: &Repo,
    configs: &[PathBuf],
    cancel: &Cancel,
) -> Result<Vec<(String, Vec<FindingRow>)>, Error> {
    let request = scan_request(configs, ScanMode::Report);
    let report =
        super::scan::run_cancellable(repo, &request, super::scan::Consumer::Collect, cancel)?;
    let mut files: std::collections::BTreeMap<String, Vec<FindingRow>> = Default::default();
    for row in report.findings {
        files.entry(row.repo_path.clone()).or_default().push(row);
    }
    for (path, rows) in files.iter_mut() {
        rows.sort_by_key(|r| (r.line, r.column));
        let more = rows.len().saturating_sub(MAX_DIAGNOSTICS);
        if more > 0 {
            rows.truncate(MAX_DIAGNOSTICS);
            rows.push(notice(repo, path, TOO_MANY, too_many(more)).row);
        }
    }
    Ok(files.into_iter().collect())
}

fn too_many(more: usize) -> String {
    format!("{more} more findings in this file are not shown (at most {MAX_DIAGNOSTICS})")
}

/// A finding of no rule at the top of the document: what the server says about the
/// document itself.
fn notice(repo: &Repo, path: &str, rule: &str, message: String) -> Checked {
    let row = FindingRow {
        rule: rule.to_string(),
        severity: scan::Severity::Info,
        message,
        note: None,
        url: None,
        path: repo.display_path(path),
        line: 1,
        column: 1,
        end_line: 1,
        end_column: 1,
        text: String::new(),
        fixable: false,
        metadata: None,
        repo_path: path.to_string(),
        fix: None,
        comments: Vec::new(),
        baseline: None,
        frame: None,
        ast_grep: None,
    };
    Checked {
        row,
        labels: Vec::new(),
    }
}

/// A scan of the files under the current folder with every rule of `configs`.
fn scan_request(configs: &[PathBuf], mode: ScanMode) -> super::scan::ScanRequest {
    super::scan::ScanRequest {
        max_render: 1,
        ..super::scan::ScanRequest::new(mode, configs.to_vec())
    }
}

/// Gives each finding of a rule with `labels` (in the file's own language) the
/// labels that have a message, found by matching that rule again on the text (the
/// scan's findings do not keep them).
fn add_labels(checked: &mut [Checked], text: &str, lang: crate::lang::Lang, rules: &[&scan::Rule]) {
    let labelled: Vec<&scan::Rule> = rules
        .iter()
        .copied()
        .filter(|r| r.lang == lang && r.config.labels.is_some())
        .filter(|r| checked.iter().any(|c| c.row.rule == r.id))
        .collect();
    if labelled.is_empty() {
        return;
    }
    let Ok(root) = crate::rewrite::parse(text, lang) else {
        return;
    };
    let index = crate::rewrite::LineIndex::new(text);
    for rule in labelled {
        for m in root.root().find_all(&rule.config.matcher) {
            let at = (m.start_pos().line() + 1, m.start_pos().column(&m) + 1);
            let Some(c) = checked
                .iter_mut()
                .find(|c| c.row.rule == rule.id && (c.row.line, c.row.column) == at)
            else {
                continue;
            };
            for label in rule.config.get_labels(&m) {
                let Some(message) = label.message else {
                    continue;
                };
                let range = label.range();
                let (line, column) = index.line_col(range.start);
                let (end_line, end_column) = index.line_col(range.end);
                c.labels.push(Label {
                    line,
                    column,
                    end_line,
                    end_column,
                    message: message.to_string(),
                });
            }
        }
    }
}

/// The editor's open documents that an apply of the pending preview `id` (or, with
/// `undo`, the undo of the applied transaction `id`; the newest when `None`) touches,
/// split by whether the editor holds the file's text on disk. `open` is each open
/// document's repository path and text.
#[derive(Debug, Default)]
pub struct Buffers {
    /// Documents whose text is the file's on disk (or already what the change
    /// writes), with that text: the editor is sent the change once it is written.
    pub follow: Vec<(String, String)>,
    /// Documents with unsaved edits (their text is not the file's): the change is
    /// refused before anything is written, as writing the disk behind them would
    /// clash with their next save.
    pub unsaved: Vec<String>,
}

pub fn buffers(
    repo: &Repo,
    id: Option<&str>,
    undo: bool,
    open: &[(String, &str)],
) -> Result<Buffers, Error> {
    use crate::txn::resolve::Want;
    let want = if undo { Want::Applied } else { Want::Pending };
    let target = crate::txn::resolve::resolve(repo, id, want)?;
    let preview = match target.preview {
        Some(p) => p,
        None => crate::txn::read_preview(repo, target.commit)?,
    };
    let mut out = Buffers::default();
    for entry in &preview.entries {
        let Some((_, text)) = open.iter().find(|(p, _)| *p == entry.path) else {
            continue;
        };
        // A file that is not there yet reads as empty (an unnamed new buffer).
        let abs = repo.workdir.join(&entry.path);
        let disk = match std::fs::read(&abs) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(crate::txn::Error::io("read", &abs)(e).into()),
        };
        // A buffer that already holds what the change writes (an editor that could
        // not take the last change, then undone) loses nothing either.
        let writes = if undo { &entry.before } else { &entry.after };
        let holds_result = match writes {
            Some((id, _)) => super::refresh::blob_id(repo, text.as_bytes())? == *id,
            None => false,
        };
        if disk == text.as_bytes() || holds_result {
            out.follow.push((entry.path.clone(), text.to_string()));
        } else {
            out.unsaved.push(entry.path.clone());
        }
    }
    Ok(out)
}
