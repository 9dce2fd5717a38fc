//! Running the steps: each on the tree the steps before it left, in memory. The tree is
//! the work tree's files with the texts the steps changed laid over them; nothing is
//! written. A step that uses values an earlier step exported runs once per value (in
//! the order found), each run on the result of the last. The outcome is one change
//! set: the work tree's bytes before, the last step's text after.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use rayon::prelude::*;

use super::spec::label;
use super::spec::names;
use super::spec::substitute;
use super::spec::StepSpec;
use super::StepsError;
use crate::change::ChangeSet;
use crate::change::FileChange;
use crate::change::FileContent;
use crate::change::FileFlag;
use crate::change::FileMeta;
use crate::change::FileMode;
use crate::files::Candidate;
use crate::files::FileSet;
use crate::files::Loaded;
use crate::lang::Lang;
use crate::repo::Repo;
use crate::report::StepRow;
use crate::rewrite::imports::ImportFix;
use crate::rewrite::MatchText;
use crate::rewrite::Op;
use crate::rewrite::Query;
use crate::rewrite::Rewriter;
use crate::scan::export::Binding;
use crate::Error;

/// What the steps changed, and what each did.
pub struct Outcome {
    /// The work tree's bytes before, the steps' result after; sorted by path.
    pub changes: ChangeSet,
    /// Per change, in order: its path, changes (all steps') and flags.
    pub files: Vec<FileMeta>,
    pub rows: Vec<StepRow>,
    /// Steps that changed nothing, conflicts of a rule's edits, values not found.
    pub warnings: Vec<String>,
}

/// A file the steps changed.
struct Changed {
    text: String,
    /// The work tree's content.
    original: String,
    mode: FileMode,
    count: usize,
    flags: Vec<FileFlag>,
}

/// The work tree with the steps' texts laid over it.
struct Tree<'a> {
    workdir: &'a std::path::Path,
    files: &'a [Candidate],
    max_file_size: u64,
    changed: BTreeMap<String, Changed>,
}

/// A step compiled for one run.
enum Compiled {
    Ops {
        rewriters: BTreeMap<String, Rewriter>,
        /// Per language, each op's pattern, to read the captures `export` renders.
        queries: BTreeMap<String, Vec<Query>>,
        lang: Option<Lang>,
    },
    Rules(Box<crate::scan::RuleSet>),
}

/// One file after one run of a step.
struct FileRun {
    path: String,
    /// The new text (`None`: unchanged) and, when the file was read from the work tree
    /// for this run, what it holds there.
    after: Option<String>,
    read: Option<(String, FileMode)>,
    count: usize,
    flags: Vec<FileFlag>,
    bindings: Vec<Binding>,
    warnings: Vec<String>,
}

/// Runs `steps` in order over `set`'s files (see the module docs). A step is named by
/// its number in the config file (`numbers`, when only some of them run), else by its
/// place in `steps`.
pub fn run(
    repo: &Repo,
    set: &FileSet,
    steps: &[StepSpec],
    numbers: &[usize],
    max_file_size: u64,
    config: &str,
) -> Result<Outcome, Error> {
    let mut tree = Tree {
        workdir: &repo.workdir,
        files: &set.files,
        max_file_size,
        changed: BTreeMap::new(),
    };
    // Each exported name, with the step that exports it; each step's values.
    let mut exporter: BTreeMap<String, usize> = BTreeMap::new();
    let mut exported: Vec<Vec<Binding>> = Vec::new();
    let mut rows = Vec::new();
    let mut warnings = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let number = numbers.get(i).copied().unwrap_or(i + 1);
        let at = label(number, step.name.as_deref());
        let in_step = |e: Error| -> Error {
            StepsError::InStep {
                step: at.clone(),
                error: Box::new(e),
            }
            .into()
        };
        let values = values_for(step, &exporter, &exported);
        let mut row = StepRow {
            number,
            name: step.name.clone(),
            kind: if step.is_rules() { "rules" } else { "ops" }.to_string(),
            runs: values.len(),
            changes: 0,
            files: 0,
            exported: Vec::new(),
        };
        let mut bindings: Vec<Binding> = Vec::new();
        let mut touched = BTreeSet::new();
        for value in &values {
            let filled = step.filled(value);
            let compiled = compile(repo, &filled, &tree, config).map_err(in_step)?;
            let export: Vec<(String, String)> = step
                .export
                .iter()
                .map(|(n, t)| (n.clone(), substitute(t, value)))
                .collect();
            let runs = tree.run(&compiled, &export).map_err(in_step)?;
            for r in runs {
                warnings.extend(r.warnings.iter().map(|w| format!("{at}: {w}")));
                for b in &r.bindings {
                    if !bindings.contains(b) {
                        bindings.push(b.clone());
                    }
                }
                if r.after.is_some() {
                    row.changes += r.count;
                    touched.insert(r.path.clone());
                }
                tree.settle(r);
            }
        }
        row.files = touched.len();
        row.exported = bindings
            .iter()
            .map(|b| b.iter().cloned().collect())
            .collect();
        say_step(&at, step, &row, &values, &exporter, &mut warnings);
        for name in step.export.keys() {
            exporter.insert(name.clone(), i);
        }
        exported.push(bindings);
        rows.push(row);
    }
    Ok(tree.finish(rows, warnings))
}

/// What a step that changed nothing, or exported nothing, is worth a warning for.
fn say_step(
    at: &str,
    step: &StepSpec,
    row: &StepRow,
    values: &[BTreeMap<String, String>],
    exporter: &BTreeMap<String, usize>,
    warnings: &mut Vec<String>,
) {
    if values.is_empty() {
        let used: Vec<String> = step
            .mentioned()
            .into_iter()
            .filter(|n| exporter.contains_key(n))
            .map(|n| format!("${n}"))
            .collect();
        warnings.push(format!(
            "{at} did not run: the steps before it exported no value of {}",
            used.join(", ")
        ));
    } else if row.changes == 0 {
        warnings.push(format!("{at} changed nothing"));
    }
    if !step.export.is_empty() && row.exported.is_empty() {
        warnings.push(format!(
            "{at} exported no value: no match of it captured {}",
            step.export.values().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
}

/// The values a step runs with: one empty set when it uses no exported name; else
/// every combination of the values of the steps exporting the names it uses (each
/// step's values taken only over those names, without repeats).
fn values_for(
    step: &StepSpec,
    exporter: &BTreeMap<String, usize>,
    exported: &[Vec<Binding>],
) -> Vec<BTreeMap<String, String>> {
    let used: BTreeSet<String> = step
        .mentioned()
        .into_iter()
        .filter(|n| exporter.contains_key(n))
        .collect();
    let mut by_step: BTreeMap<usize, Vec<&String>> = BTreeMap::new();
    for name in &used {
        by_step.entry(exporter[name]).or_default().push(name);
    }
    let mut out = vec![BTreeMap::new()];
    for (from, names) in by_step {
        let mut values: Vec<BTreeMap<String, String>> = Vec::new();
        for binding in &exported[from] {
            let v: BTreeMap<String, String> = binding
                .iter()
                .filter(|(n, _)| names.contains(&n))
                .cloned()
                .collect();
            if !values.contains(&v) {
                values.push(v);
            }
        }
        out = out
            .iter()
            .flat_map(|base| {
                values.iter().map(move |v| {
                    let mut all = base.clone();
                    all.extend(v.clone());
                    all
                })
            })
            .collect();
    }
    out
}

/// Compiles a step (its variables filled in) for the languages of the tree's files.
fn compile(repo: &Repo, step: &StepSpec, tree: &Tree<'_>, config: &str) -> Result<Compiled, Error> {
    if step.is_rules() {
        let rules = crate::scan::rules::from_values(repo, step.rules.clone(), config)?;
        return Ok(Compiled::Rules(Box::new(rules)));
    }
    let lang = step
        .lang
        .as_deref()
        .map(crate::files::parse_language)
        .transpose()?;
    let ops: Vec<Op> = step
        .all_ops()
        .into_iter()
        .map(|o| Op {
            pattern: o.pattern,
            rewrite: o.rewrite,
            selector: step.selector.clone(),
        })
        .collect();
    let imports = ImportFix {
        add: step.add_import.clone(),
        remove: step.remove_import.clone(),
    };
    let langs: Vec<Lang> = tree
        .files
        .iter()
        .map(|f| f.lang)
        .filter(|l| lang.is_none_or(|only| only == *l))
        .collect();
    let what = ops
        .iter()
        .map(|op| op.pattern.as_str())
        .collect::<Vec<_>>()
        .join("', '");
    let per = crate::grep::compile_per_language(&what, langs.iter().copied(), |l| {
        Rewriter::for_language(&ops, l, None).map(|r| r.with_imports(&imports))
    })?;
    let mut queries = BTreeMap::new();
    if !step.export.is_empty() {
        for name in per.compiled.keys() {
            let l = crate::files::parse_language(name)?;
            let qs = ops
                .iter()
                .filter_map(|op| Query::new(&op.pattern, l).ok())
                .collect();
            queries.insert(name.clone(), qs);
        }
    }
    Ok(Compiled::Ops {
        rewriters: per.compiled,
        queries,
        lang,
    })
}

impl Tree<'_> {
    /// One run of a compiled step over every file, in parallel; results in path order.
    fn run(&self, step: &Compiled, export: &[(String, String)]) -> Result<Vec<FileRun>, Error> {
        self.files
            .par_iter()
            .map(|file| self.file(step, export, file))
            .filter_map(Result::transpose)
            .collect()
    }

    /// One file's run (`None`: the file is not text, or the step has nothing for it).
    fn file(
        &self,
        step: &Compiled,
        export: &[(String, String)],
        file: &Candidate,
    ) -> Result<Option<FileRun>, Error> {
        if let Compiled::Ops {
            rewriters, lang, ..
        } = step
        {
            if lang.is_some_and(|l| l != file.lang)
                || !rewriters.contains_key(&file.lang.to_string())
            {
                return Ok(None);
            }
        }
        let (text, read) = match self.changed.get(&file.path) {
            Some(c) => (c.text.clone(), None),
            None => match crate::files::load(self.workdir, &file.path, self.max_file_size) {
                Loaded::Text(t, mode) => (t.clone(), Some((t, mode))),
                Loaded::Skipped(_) => return Ok(None),
            },
        };
        let mut out = FileRun {
            path: file.path.clone(),
            after: None,
            read,
            count: 0,
            flags: Vec::new(),
            bindings: Vec::new(),
            warnings: Vec::new(),
        };
        match step {
            Compiled::Ops {
                rewriters, queries, ..
            } => {
                let key = file.lang.to_string();
                if let Some(qs) = queries.get(&key) {
                    out.bindings = op_bindings(qs, &text, export);
                }
                let all = &mut |_: usize, _: &crate::rewrite::Proposed<'_>| true;
                let rewritten = rewriters[&key]
                    .rewrite_file(Some(&file.path), &text, all)
                    .map_err(|source| crate::edit::Error::InFile {
                        path: file.path.clone(),
                        source,
                    })?;
                if let Some(why) = rewritten.as_ref().and_then(|rw| rw.import_conflict.clone()) {
                    out.warnings.push(format!(
                        "{}:{}: {} (adding it would bind the name twice); the file is left \
                         out of this step",
                        crate::text::escape_line(&file.path),
                        why.line,
                        why.detail
                    ));
                } else if let Some(rw) = rewritten.filter(|rw| rw.text != text) {
                    out.count = rw.replacements.len();
                    out.flags = rw.flags();
                    out.after = Some(rw.text);
                }
            }
            Compiled::Rules(rules) => rules_file(rules, file, &text, export, &mut out)?,
        }
        if out.after.is_none() {
            out.read = None;
        }
        Ok(Some(out))
    }

    /// Lays a run's result over the tree.
    fn settle(&mut self, r: FileRun) {
        let Some(after) = r.after else {
            return;
        };
        match self.changed.get_mut(&r.path) {
            Some(c) => {
                c.text = after;
                c.count += r.count;
                for f in r.flags {
                    if !c.flags.contains(&f) {
                        c.flags.push(f);
                    }
                }
            }
            None => {
                let (original, mode) = r.read.expect("a file changed first is read from the tree");
                self.changed.insert(
                    r.path,
                    Changed {
                        text: after,
                        original,
                        mode,
                        count: r.count,
                        flags: r.flags,
                    },
                );
            }
        }
    }

    /// The change set of the files whose text differs from the work tree's at the end.
    fn finish(self, rows: Vec<StepRow>, warnings: Vec<String>) -> Outcome {
        let mut changes = ChangeSet::default();
        let mut files = Vec::new();
        for (path, c) in self.changed {
            if c.text == c.original {
                continue;
            }
            files.push(FileMeta {
                path: path.clone(),
                count: c.count,
                flags: c.flags,
            });
            changes.changes.push(FileChange {
                path,
                before: Some(FileContent {
                    bytes: c.original.into_bytes(),
                    mode: c.mode,
                }),
                after: Some(FileContent {
                    bytes: c.text.into_bytes(),
                    mode: c.mode,
                }),
            });
        }
        Outcome {
            changes,
            files,
            rows,
            warnings,
        }
    }
}

/// A rule step's run on one file: its fixes, and the values its rules export.
fn rules_file(
    rules: &crate::scan::RuleSet,
    file: &Candidate,
    text: &str,
    export: &[(String, String)],
    out: &mut FileRun,
) -> Result<(), Error> {
    let lang = file.lang;
    let active: Vec<&crate::scan::Rule> = rules
        .rules
        .iter()
        .filter(|r| rules.runs_in(r, &file.path, lang))
        .collect();
    if active.is_empty() {
        return Ok(());
    }
    for rule in &active {
        let found = crate::scan::export::bindings(rule, text, lang, export).map_err(|source| {
            crate::edit::Error::InFile {
                path: file.path.clone(),
                source,
            }
        })?;
        for b in found {
            if !out.bindings.contains(&b) {
                out.bindings.push(b);
            }
        }
    }
    // A rule fixes only from a match, and none can match where its text need fails:
    // the file is not parsed then.
    if !active.iter().any(|r| r.may_match(text)) {
        return Ok(());
    }
    let res = crate::scan::engine::run_file_injected(
        &file.path,
        text,
        lang,
        crate::scan::engine::FileRules {
            rules: &active,
            injections: &rules.injections,
        },
        crate::scan::Mode::Fix,
        rules.max_passes.max(1),
        &mut |_| true,
    )?;
    for c in &res.conflicts {
        out.warnings.push(format!(
            "{}:{}: rule '{}': {}; the file is left out of this step",
            crate::text::escape_line(&c.path),
            c.line,
            c.rule,
            c.detail
        ));
    }
    if let Some(after) = res.after.as_ref().filter(|a| a.as_str() != text) {
        out.count = res.counts.iter().map(|(_, n)| n).sum();
        out.flags = res.flags();
        out.after = Some(after.clone());
    }
    Ok(())
}

/// The values the ops' matches in `text` export: each match that captures every name
/// a template uses renders them all.
fn op_bindings(queries: &[Query], text: &str, export: &[(String, String)]) -> Vec<Binding> {
    let mut out: Vec<Binding> = Vec::new();
    for q in queries {
        if !q.may_match(text) {
            continue;
        }
        for m in q
            .find_owned(text.to_string(), MatchText::WithCaptures)
            .matches
        {
            let captured: BTreeMap<String, String> = m
                .captures
                .iter()
                .filter(|c| !c.nodes.is_empty())
                .map(|c| {
                    let (first, last) = (&c.nodes[0], &c.nodes[c.nodes.len() - 1]);
                    let span = text
                        .get(first.start_byte..last.end_byte)
                        .unwrap_or(first.text.as_str());
                    (c.name.clone(), span.to_string())
                })
                .collect();
            let rendered: Option<Binding> = export
                .iter()
                .map(|(name, template)| {
                    // A match that does not capture every name the template uses
                    // exports nothing.
                    names(template)
                        .iter()
                        .all(|n| captured.contains_key(n))
                        .then(|| (name.clone(), substitute(template, &captured)))
                })
                .collect();
            if let Some(b) = rendered.filter(|b| !out.contains(b)) {
                out.push(b);
            }
        }
    }
    out
}
