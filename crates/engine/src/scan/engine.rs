/*!
Running rules on one file's text: findings, and fixes until the text stops changing.

Fixes go through [`rewrite_nested_with`], the routine `edit` uses, so nested matches
of a rule are all fixed in one pass. Matches that overlap without nesting cannot all be
fixed at once: the first is, the others wait for the next pass (`edit` refuses them
instead; a scan must get the tree clean). One rule's fix can also create another's
match. So the rules run pass after pass, each on the text the ones before it left, until
a pass changes nothing. A later pass is not a blind re-run: a rule takes only the sites
it skipped for overlapping, matches on text another rule wrote since, and matches that
take in its own output with more around it; a match within its own output is never
fixed again (see [`super::ledger`]), so a fix whose output still matches the rule
(deleting the third argument of a call that has a fourth) is made once. The passes are
bounded by `max_passes`; when the bound is hit and another pass would still change the
text, that is reported, never silent. For rules whose fixes do not match their own
output (most), this gives the property CI relies on: after one `scan --apply`, `scan
--check` passes. A rule whose output still matches it reports those matches as findings
of the fixed text, and a second `scan --apply` would fix them again: that is what the
rule says.
*/

use crate::lang::Lang;
use ast_grep_core::matcher::MatcherExt;
use ast_grep_core::replacer::Replacer;
use ast_grep_core::tree_sitter::LanguageExt;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::AstGrep;

use super::captured;
use super::ledger;
use super::ledger::Gate;
use super::ledger::Gated;
use super::ledger::Ledger;
use super::rules::Injection;
use super::suppress::Suppressions;
use super::EditConflict;
use super::Error;
use super::Mode;
use super::Rule;
use super::Severity;
use super::Unconverged;
use crate::rewrite;
use crate::rewrite::imports;
use crate::rewrite::rewrite_nested_selecting;
use crate::rewrite::NestedOptions;
use crate::rewrite::Overlap;
use crate::select::Origin;
use crate::select::Proposal;

type Tree = AstGrep<StrDoc<Lang>>;

/// One match of a rule. Positions are 1-based, columns in characters.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    pub path: String,
    pub rule: String,
    pub severity: Severity,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    /// The matched text.
    pub text: String,
    /// Byte ranges in `text` of the comments inside the match: `--baseline` leaves
    /// them out of the key it matches findings by, so a comment added, edited or
    /// removed inside a match keeps the finding (not part of `--json`).
    #[serde(skip)]
    pub comments: Vec<(usize, usize)>,
    /// The rule has a fix (`scan --apply` would change this).
    pub fixable: bool,
    /// What the rule's fix does to the input at this finding (SARIF `fixes`); not
    /// part of `--json`, whose fix modes show the diff.
    #[serde(skip)]
    pub fix: Option<FindingFix>,
}

/// One finding's fix as a replacement of a region of the input text. Positions are
/// 1-based, columns in characters, the end exclusive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindingFix {
    pub start_line: usize,
    pub start_column: usize,
    pub end_line: usize,
    pub end_column: usize,
    pub inserted: String,
}

/// What running the rules on one file gave.
#[derive(Debug, Default)]
pub struct FileResult {
    /// Findings in the input text.
    pub findings: Vec<Finding>,
    /// In fix mode: findings in the fixed text (what fixing leaves to a person).
    pub remaining: Vec<Finding>,
    /// The fixed text, when fixes changed it.
    pub after: Option<String>,
    /// Fixes per rule id, in rule order (rules that fixed nothing left out).
    pub counts: Vec<(String, usize)>,
    pub unconverged: Vec<Unconverged>,
    pub had_parse_error: bool,
    pub introduces_parse_error: bool,
    /// Fixes that repeat text their matched node keeps past the rule's pattern (see
    /// [`crate::select::repeats_kept`]).
    pub repeated_kept_text: usize,
    /// A fix that deletes (writes nothing) left a block with no statement in it.
    pub leaves_empty_block: bool,
    /// `ast-grep-ignore` comments in the input that silenced no finding, as findings of
    /// rule `unused-suppression` (the caller reports them when every rule ran).
    pub unused_suppressions: Vec<Finding>,
    /// Edits of captured nodes that clash (rule `edits:`): the file is then left
    /// unfixed (`after` is `None`).
    pub conflicts: Vec<EditConflict>,
}

impl FileResult {
    /// What a reviewer should know about the fixed file (as [`rewrite::FileRewrite::flags`]).
    pub fn flags(&self) -> Vec<crate::change::FileFlag> {
        use crate::change::FileFlag;
        let mut flags = Vec::new();
        if self.introduces_parse_error {
            flags.push(FileFlag::IntroducesParseErrors);
        }
        if self.repeated_kept_text > 0 {
            flags.push(FileFlag::RepeatsKeptText);
        }
        if self.leaves_empty_block {
            flags.push(FileFlag::LeavesEmptyBlock);
        }
        flags
    }
}

/// Runs `rules` (all applicable to this file, in declaration order) on `text`. A rule
/// whose text need fails on a text is not run on it (it cannot match there).
pub fn run_file(
    path: &str,
    text: &str,
    lang: Lang,
    rules: &[&Rule],
    mode: Mode,
    max_passes: usize,
) -> Result<FileResult, Error> {
    run_file_selecting(path, text, lang, rules, mode, max_passes, &mut |_| true)
}

/// [`run_file`] making only the fixes `select` accepts (`scan -i`). A declined fix is
/// remembered by its place, followed through the changes made around it, and not
/// offered again when its rule re-runs on the fixed text.
pub fn run_file_selecting(
    path: &str,
    text: &str,
    lang: Lang,
    rules: &[&Rule],
    mode: Mode,
    max_passes: usize,
    select: &mut dyn FnMut(&Proposal<'_>) -> bool,
) -> Result<FileResult, Error> {
    let fail = |rule: &Rule| {
        let rule = rule.id.clone();
        move |source| Error::Rewrite {
            rule,
            path: path.to_string(),
            source,
        }
    };
    let Some(first_rule) = rules.first() else {
        return Ok(FileResult::default());
    };
    // Whoever asked, the bound holds (the front ends refuse more, with a message).
    let max_passes = max_passes.clamp(1, super::rules::MAX_PASSES_CEILING);
    let mut doc = rewrite::parse_doc(text, lang).map_err(fail(first_rule))?;
    let input_tree = AstGrep::doc(doc.clone());
    let silenced = Suppressions::of(&input_tree);
    let mut result = FileResult {
        had_parse_error: rewrite::has_parse_error(&input_tree),
        findings: findings(
            path,
            &input_tree,
            &live_rules(rules, text),
            silenced.as_ref(),
        ),
        ..Default::default()
    };
    if let Some(silenced) = &silenced {
        result.unused_suppressions = silenced.unused().map(|d| unused(path, d)).collect();
    }
    if mode == Mode::Report {
        return Ok(result);
    }

    let mut fixes = Fixes {
        path,
        crlf: rewrite::uses_crlf(text),
        nested_opts: NestedOptions {
            overlap: Overlap::SkipLater,
            max_len: fixed_len_limit(text.len()),
            ..NestedOptions::default()
        },
        counts: vec![0; rules.len()],
        declined: Vec::new(),
        repeated_kept_text: 0,
        deleted: false,
        found: rules.iter().map(|_| imports::Found::default()).collect(),
        clashes: Vec::new(),
        ledger: Ledger::new(rules.len()),
    };
    let stuck = fixes.passes(rules, &mut doc, max_passes, select)?;
    result.repeated_kept_text = fixes.repeated_kept_text;
    if !fixes.clashes.is_empty() {
        // Two edits of one node, or an edit over a fix: none of the file's fixes stand.
        result.conflicts = fixes
            .clashes
            .into_iter()
            .map(|(rule, c)| EditConflict {
                path: path.to_string(),
                rule,
                line: c.line,
                detail: c.detail,
            })
            .collect();
        result.remaining = result.findings.clone();
        return Ok(result);
    }
    if let Some((rule, conflict)) = fixes.imports(rules, &mut doc)? {
        // An import that would bind a name twice: the file is left out, as for a clash.
        result.conflicts = vec![EditConflict {
            path: path.to_string(),
            rule,
            line: conflict.line,
            detail: format!("{} (adding it would bind the name twice)", conflict.detail),
        }];
        result.remaining = result.findings.clone();
        return Ok(result);
    }

    let final_tree = AstGrep::doc(doc.clone());
    result.remaining = findings(
        path,
        &final_tree,
        &live_rules(rules, &doc.src),
        Suppressions::of(&final_tree).as_ref(),
    );
    if doc.src != text {
        result.introduces_parse_error =
            !result.had_parse_error && rewrite::has_parse_error(&final_tree);
        // Only a deletion can empty a block.
        result.leaves_empty_block = fixes.deleted
            && rewrite::empty_blocks(&final_tree) > rewrite::empty_blocks(&input_tree);
        result.after = Some(doc.src);
    }
    result.counts = rules
        .iter()
        .zip(&fixes.counts)
        .filter(|(_, n)| **n > 0)
        .map(|(r, n)| (r.id.clone(), *n))
        .collect();
    result.unconverged = rules
        .iter()
        .zip(&stuck)
        .filter_map(|(r, s)| {
            s.map(|passes| Unconverged {
                path: path.to_string(),
                rule: r.id.clone(),
                passes,
            })
        })
        .collect();
    Ok(result)
}

/// The fixing of one file's text, rule by rule, pass after pass.
struct Fixes<'p> {
    path: &'p str,
    crlf: bool,
    nested_opts: NestedOptions,
    /// Fixes made, per rule.
    counts: Vec<usize>,
    /// Declined fixes: (rule index, edit range in the current text).
    declined: Vec<(usize, usize, usize)>,
    repeated_kept_text: usize,
    /// Whether a fix wrote nothing in place of its site (a deletion).
    deleted: bool,
    /// Per rule, the imports its matches filled in (`imports:` with metavariables).
    found: Vec<imports::Found>,
    /// Edits of captured nodes that clash: (rule, what clashes). The file is left out.
    clashes: Vec<(String, captured::Clash)>,
    /// What the runs so far wrote, skipped and edited (which matches a run may fix).
    ledger: Ledger,
}

/// The silenced sites of one run's input (`ast-grep-ignore` comments), looked up on
/// that text, where the comments are now.
struct Silenced<'t> {
    by: Option<Suppressions>,
    lines: Option<rewrite::LineIndex<'t>>,
}

impl<'t> Silenced<'t> {
    fn of(doc: &StrDoc<Lang>, before: &'t str) -> Silenced<'t> {
        let by = if before.contains(super::suppress::IGNORE_TEXT) {
            Suppressions::of(&AstGrep::doc(doc.clone()))
        } else {
            None
        };
        let lines = by.as_ref().map(|_| rewrite::LineIndex::new(before));
        Silenced { by, lines }
    }

    fn silences(&self, rule: &str, at: usize) -> bool {
        match (&self.by, &self.lines) {
            (Some(s), Some(index)) => s.silences(rule, index.line_col(at).0 - 1),
            _ => false,
        }
    }
}

impl Fixes<'_> {
    /// Runs the rules pass after pass until a pass changes nothing or `max_passes`
    /// passes ran; a rule runs again only while it has something left to fix (see
    /// [`super::ledger`]). Returns, per rule, the passes after which it had not
    /// converged: when another pass would still change the text, the rules that would
    /// and those that changed it in the last pass.
    fn passes(
        &mut self,
        rules: &[&Rule],
        doc: &mut StrDoc<Lang>,
        max_passes: usize,
        select: &mut dyn FnMut(&Proposal<'_>) -> bool,
    ) -> Result<Vec<Option<usize>>, Error> {
        let mut changed = vec![false; rules.len()];
        for _pass in 0..max_passes {
            for (i, rule) in rules.iter().enumerate() {
                changed[i] = self.ledger.pending(i) && self.rule(i, rule, doc, select)?;
            }
            if !changed.contains(&true) {
                return Ok(vec![None; rules.len()]);
            }
        }
        let mut stuck = vec![None; rules.len()];
        if !self.clashes.is_empty() {
            return Ok(stuck);
        }
        // One more run of each rule with something left, on copies: would it change?
        let mut would = false;
        for (i, rule) in rules.iter().enumerate() {
            if !self.ledger.pending(i) {
                continue;
            }
            let mut probe = self.probe();
            let mut text = doc.clone();
            if probe
                .rule(i, rule, &mut text, &mut |_| true)
                .unwrap_or(true)
            {
                stuck[i] = Some(max_passes);
                would = true;
            }
        }
        if would {
            for (i, c) in changed.iter().enumerate() {
                if *c {
                    stuck[i] = Some(max_passes);
                }
            }
        }
        Ok(stuck)
    }

    /// A copy to try a run on: what decides which matches are fixed, nothing counted.
    fn probe(&self) -> Fixes<'_> {
        Fixes {
            path: self.path,
            crlf: self.crlf,
            nested_opts: self.nested_opts,
            counts: self.counts.clone(),
            declined: self.declined.clone(),
            repeated_kept_text: 0,
            deleted: false,
            found: self
                .found
                .iter()
                .map(|_| imports::Found::default())
                .collect(),
            clashes: Vec::new(),
            ledger: self.ledger.clone(),
        }
    }

    /// Runs rule `i` once on `doc`, fixing the matches this run may fix; whether it
    /// changed the text.
    fn rule(
        &mut self,
        i: usize,
        rule: &Rule,
        doc: &mut StrDoc<Lang>,
        select: &mut dyn FnMut(&Proposal<'_>) -> bool,
    ) -> Result<bool, Error> {
        if !self.clashes.is_empty() {
            // The file is left out: no use fixing more of it.
            return Ok(false);
        }
        let gate = self.ledger.begin(i);
        // Fixes start from matches; none can be where the rule's need fails.
        if !rule.may_match(&doc.src) {
            return Ok(false);
        }
        let Some(fixer) = rule.config.fixer.first() else {
            if rule.edits.is_empty() {
                return Ok(false);
            }
            return self.edits_only(i, rule, &gate, doc, select);
        };
        let matcher = &rule.config.matcher;
        let before = doc.src.clone();
        let silenced = Silenced::of(doc, &before);
        let crlf = self.crlf;
        let declined = &self.declined;
        let path = self.path;
        let found = &mut self.found[i];
        // The sites an empty fix deletes, found on first need: a list element
        // deleted beside others takes the separator that keeps the list whole.
        let mut deleted: Option<Vec<std::ops::Range<usize>>> = None;
        // Edits of captured nodes, per site (its edit range in `before`): asked for
        // while the sites are collected on `before`, before any is offered.
        let collecting = std::cell::Cell::new(true);
        let mut asked: Vec<(usize, usize, Vec<captured::Found>)> = Vec::new();
        let gated = Gated {
            inner: matcher,
            fixer: Some(fixer),
            gate: &gate,
            active: &collecting,
        };
        // Overlapping matches: fix the first, leave the rest to the next pass.
        let nested = rewrite_nested_selecting(
            doc,
            &gated,
            None,
            self.nested_opts,
            |m| {
                if let Some(plan) = &rule.imports {
                    plan.collect(m, found);
                }
                let mut edit = m.make_edit(matcher, fixer);
                if edit.inserted_text.is_empty() {
                    let sites = deleted.get_or_insert_with(|| {
                        let top = m.get_node().root().root();
                        top.find_all(matcher).map(|s| s.range()).collect()
                    });
                    rewrite::list_aware(m, &mut edit, sites);
                }
                edit.inserted_text = rewrite::blank_lines_kept(m, edit.inserted_text);
                edit.inserted_text = rewrite::tab_indented(m, edit.position, edit.inserted_text);
                if crlf {
                    edit.inserted_text = rewrite::lf_to_crlf(edit.inserted_text);
                }
                if !rule.edits.is_empty() && collecting.get() {
                    let on_captured = captured::at_match(&rule.edits, m, crlf);
                    let end = edit.position + edit.deleted_length;
                    asked.push((edit.position, end, on_captured));
                }
                edit
            },
            &mut |p| {
                collecting.set(false);
                let site = (i, p.site_start, p.site_end);
                !silenced.silences(&rule.id, p.site_start)
                    && !declined.contains(&site)
                    && select(&Proposal {
                        path,
                        origin: Origin::Rule(&rule.id),
                        change: *p,
                        around: None,
                    })
            },
        )
        .map_err(|source| Error::Rewrite {
            rule: rule.id.clone(),
            path: path.to_string(),
            source,
        })?;
        // Sites left for overlapping another wait for the next run (followed through
        // this run's changes with the rest of the ledger).
        let skipped = nested.overlapped.iter().map(|s| (s.start, s.end)).collect();
        self.ledger.skipped(i, skipped);
        if doc.src == before {
            // Nothing accepted: declined places are where they were.
            for d in &nested.declined {
                if !self.declined.contains(&(i, d.start, d.end)) {
                    self.declined.push((i, d.start, d.end));
                }
            }
            return Ok(false);
        }
        let mut moved: Vec<(usize, usize, usize)> = self
            .declined
            .iter()
            .filter_map(|&(r, s, e)| nested.map_range(s, e).map(|(s, e)| (r, s, e)))
            .collect();
        for d in &nested.declined {
            if let Some((s, e)) = nested.map_range(d.start, d.end) {
                if !moved.contains(&(i, s, e)) {
                    moved.push((i, s, e));
                }
            }
        }
        self.declined = moved;
        self.counts[i] += nested.changes.len();
        self.repeated_kept_text += nested
            .changes
            .iter()
            .filter(|c| c.repeated_kept.is_some())
            .count();
        self.deleted |= nested.changes.iter().any(|c| c.after.trim().is_empty());
        let made: Vec<captured::Found> = asked
            .into_iter()
            .filter(|(s, e, _)| nested.changes.iter().any(|c| (c.start, c.end) == (*s, *e)))
            .flat_map(|(_, _, f)| f)
            .collect();
        self.captured(i, &rule.id, doc, &before, &nested, made)?;
        Ok(true)
    }

    /// A run of a rule with `edits:` and no `fix` (issue 53 item 7): its matches stay
    /// as they are and the nodes they captured are edited (an `await` in a function
    /// that is not `async` makes the function `async`). Each edit is offered to
    /// `select` once; a match whose edit is declined is remembered as declined.
    fn edits_only(
        &mut self,
        i: usize,
        rule: &Rule,
        gate: &Gate,
        doc: &mut StrDoc<Lang>,
        select: &mut dyn FnMut(&Proposal<'_>) -> bool,
    ) -> Result<bool, Error> {
        let before = doc.src.clone();
        let tree = AstGrep::doc(doc.clone());
        let silenced = Suppressions::of(&tree);
        let active = std::cell::Cell::new(true);
        let gated = Gated {
            inner: &rule.config.matcher,
            fixer: None,
            gate,
            active: &active,
        };
        let mut accepted: Vec<captured::Found> = Vec::new();
        // Edits declined here: another match asking for one is declined unasked.
        let mut refused: Vec<captured::Found> = Vec::new();
        let mut sites = 0;
        for m in tree.root().find_all(&gated) {
            let range = m.range();
            let line = m.start_pos().line();
            if silenced
                .as_ref()
                .is_some_and(|s| s.silences(&rule.id, line))
                || self.declined.contains(&(i, range.start, range.end))
            {
                continue;
            }
            let mut asked = captured::at_match(&rule.edits, &m, self.crlf);
            asked.retain(|f| !accepted.contains(f));
            let mut taken = !asked.iter().any(|f| refused.contains(f));
            for f in asked.iter_mut().filter(|_| taken) {
                let replaced = std::cell::RefCell::new(None);
                let (start, end) = f.range();
                let proposal = Proposal {
                    path: self.path,
                    origin: Origin::Rule(&rule.id),
                    change: crate::select::Proposed {
                        text: &before,
                        start,
                        end,
                        after: f.text(),
                        site_start: range.start,
                        site_end: range.end,
                        earlier: &[],
                        kept: "",
                        replaced: &replaced,
                    },
                    around: None,
                };
                if !select(&proposal) {
                    refused.push(f.clone());
                    taken = false;
                    break;
                }
                if let Some(own) = replaced.take() {
                    f.set_text(own);
                }
            }
            if !taken {
                self.declined.push((i, range.start, range.end));
                continue;
            }
            if let Some(plan) = &rule.imports {
                plan.collect(&m, &mut self.found[i]);
            }
            accepted.extend(asked);
            sites += 1;
        }
        drop(tree);
        if accepted.is_empty() {
            return Ok(false);
        }
        self.captured(
            i,
            &rule.id,
            doc,
            &before,
            &rewrite::Nested::default(),
            accepted,
        )?;
        if doc.src == before {
            return Ok(false);
        }
        self.counts[i] += sites;
        Ok(true)
    }

    /// Follows the ledger through the fixes of rule `i`'s run (in `nested`, made on
    /// `before`, the run's input), then makes the edits of captured nodes its sites
    /// asked for (`asked`, found on `before`): an edit an earlier run or rule made on
    /// the same node is not made again; a different edit of such a node, or edits that
    /// clash among themselves, leave the file out (recorded).
    fn captured(
        &mut self,
        i: usize,
        rule: &str,
        doc: &mut StrDoc<Lang>,
        before: &str,
        nested: &rewrite::Nested,
        asked: Vec<captured::Found>,
    ) -> Result<(), Error> {
        let settled = captured::unmade(asked, before, &self.ledger, rule)
            .and_then(|asked| captured::settle(asked, before, nested));
        let changes = ledger::outermost(nested);
        self.ledger.changed(&changes);
        self.ledger.wrote(i, &ledger::written(&changes));
        let settled = match settled {
            Err(clash) => {
                self.clashes.push((rule.to_string(), clash));
                return Ok(());
            }
            Ok(settled) if settled.edits.is_empty() => return Ok(()),
            Ok(settled) => settled,
        };
        let text = captured::apply(&doc.src, &settled.edits);
        let changes = ledger::changes_of(&settled.edits);
        self.ledger.changed(&changes);
        self.ledger.wrote(i, &ledger::written(&changes));
        for made in settled.made(rule) {
            self.ledger.made(made);
        }
        *doc = rewrite::parse_doc(&text, doc.lang).map_err(|source| Error::Rewrite {
            rule: rule.to_string(),
            path: self.path.to_string(),
            source,
        })?;
        Ok(())
    }
}

impl Fixes<'_> {
    /// Adds and removes the imports of each rule that fixed something in the file; the
    /// first import that would bind a name another import binds, as (rule, what).
    fn imports(
        &mut self,
        rules: &[&Rule],
        doc: &mut StrDoc<Lang>,
    ) -> Result<Option<(String, imports::ImportConflict)>, Error> {
        let lang = doc.lang;
        let mut text = doc.src.clone();
        let mut conflict = None;
        for (i, rule) in rules.iter().enumerate() {
            let Some(plan) = rule.imports.as_ref().filter(|_| self.counts[i] > 0) else {
                continue;
            };
            let applied = plan
                .apply(lang, text, &self.found[i], Some(self.path))
                .map_err(|source| Error::Rewrite {
                    rule: rule.id.clone(),
                    path: self.path.to_string(),
                    source,
                })?;
            text = applied.text;
            if let Some(detail) = applied.conflict {
                conflict.get_or_insert((rule.id.clone(), detail));
            }
        }
        if text != doc.src {
            *doc = rewrite::parse_doc(&text, lang).map_err(|source| Error::Rewrite {
                rule: String::new(),
                path: self.path.to_string(),
                source,
            })?;
        }
        Ok(conflict)
    }
}

/// Code of another language inside a host file: its language and byte range there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub lang: Lang,
    pub start: usize,
    pub end: usize,
}

/// The embedded regions of `text` (a file of `lang`), in position order: HTML's
/// `<script>` (JavaScript, or the language its `lang` attribute names) and `<style>`
/// (CSS), found as ast-grep finds them. Regions of a language we do not know
/// (`scss`, `coffee`) are left out.
pub fn injected_regions(text: &str, lang: Lang, custom: &[Injection]) -> Vec<Region> {
    let custom: Vec<&Injection> = custom.iter().filter(|i| i.host == lang).collect();
    if lang.injectable_languages().is_none() && custom.is_empty() {
        return Vec::new();
    }
    let Ok(root) = rewrite::parse(text, lang) else {
        return Vec::new();
    };
    // A project's own injections: where the rule matches, its `$CONTENT` is code of
    // the language `$LANG` names (one of the candidates), else the one named.
    let mut declared: Vec<Region> = Vec::new();
    for injection in &custom {
        for m in root.root().find_all(&injection.matcher) {
            let env = m.get_env();
            let Some(content) = env.get_match("CONTENT") else {
                continue;
            };
            let named = env
                .get_match("LANG")
                .and_then(|n| crate::files::parse_language(&n.text()).ok())
                .filter(|l| injection.candidates.contains(l));
            let Some(guest) = named.or(injection.default) else {
                continue;
            };
            let range = content.range();
            declared.push(Region {
                lang: guest,
                start: range.start,
                end: range.end,
            });
        }
    }
    let mut out: Vec<Region> = lang
        .extract_injections(root.root())
        .into_iter()
        .filter_map(|(name, ranges)| {
            let guest = crate::files::parse_language(&name).ok()?;
            Some(ranges.into_iter().map(move |r| Region {
                lang: guest,
                start: r.start_byte,
                end: r.end_byte,
            }))
        })
        .flatten()
        .chain(declared)
        .filter(|r| r.start < r.end && text.get(r.start..r.end).is_some())
        .collect();
    out.sort_by_key(|r| (r.start, r.end));
    out.dedup_by(|b, a| b.start < a.end);
    out
}

/// Where a region starts in its host: 1-based line and column (characters), to move
/// positions found in the region's own text to the host's.
struct Base {
    line: usize,
    column: usize,
}

impl Base {
    fn of(text: &str, at: usize) -> Base {
        let before = &text[..at];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Base {
            line: memchr::memchr_iter(b'\n', before.as_bytes()).count() + 1,
            column: before[line_start..].chars().count() + 1,
        }
    }

    fn pos(&self, line: usize, column: usize) -> (usize, usize) {
        if line == 1 {
            (self.line, column + self.column - 1)
        } else {
            (line + self.line - 1, column)
        }
    }

    fn shift(&self, mut f: Finding) -> Finding {
        (f.line, f.column) = self.pos(f.line, f.column);
        (f.end_line, f.end_column) = self.pos(f.end_line, f.end_column);
        if let Some(fix) = &mut f.fix {
            (fix.start_line, fix.start_column) = self.pos(fix.start_line, fix.start_column);
            (fix.end_line, fix.end_column) = self.pos(fix.end_line, fix.end_column);
        }
        f
    }
}

/// The rules that run on one file, and the project's injections (where they look
/// inside it).
#[derive(Clone, Copy)]
pub struct FileRules<'a> {
    pub rules: &'a [&'a Rule],
    pub injections: &'a [Injection],
}

/// [`run_file_selecting`] for a file that may embed other languages: the rules of
/// its own language run on it, the others on each embedded region of theirs, as a
/// text of its own; findings are moved to the host's lines and columns, and fixed
/// regions are put back in place (the rest of the file is left as it is).
pub fn run_file_injected(
    path: &str,
    text: &str,
    lang: Lang,
    FileRules { rules, injections }: FileRules<'_>,
    mode: Mode,
    max_passes: usize,
    select: &mut dyn FnMut(&Proposal<'_>) -> bool,
) -> Result<FileResult, Error> {
    let (host, guests): (Vec<&Rule>, Vec<&Rule>) =
        rules.iter().copied().partition(|r| r.lang == lang);
    let mut result = run_file_selecting(path, text, lang, &host, mode, max_passes, select)?;
    if guests.is_empty() {
        return Ok(result);
    }
    let rules_of =
        |l: Lang| -> Vec<&Rule> { guests.iter().copied().filter(|r| r.lang == l).collect() };
    // Findings of the input.
    for region in injected_regions(text, lang, injections) {
        let rules = rules_of(region.lang);
        if rules.is_empty() {
            continue;
        }
        let part = run_file_selecting(
            path,
            &text[region.start..region.end],
            region.lang,
            &rules,
            Mode::Report,
            max_passes,
            &mut |_| true,
        )?;
        let at = Base::of(text, region.start);
        result
            .findings
            .extend(part.findings.into_iter().map(|f| at.shift(f)));
        result
            .unused_suppressions
            .extend(part.unused_suppressions.into_iter().map(|f| at.shift(f)));
        result.had_parse_error |= part.had_parse_error;
    }
    result.findings.sort_by_key(|f| (f.line, f.column));
    if mode == Mode::Report {
        return Ok(result);
    }
    // Fixes, region by region of the text the host's rules left, the last first, so
    // that the regions before keep their places.
    let mut current = result.after.clone().unwrap_or_else(|| text.to_string());
    let mut changed = false;
    let mut remaining = Vec::new();
    let mut regions = injected_regions(&current, lang, injections);
    regions.reverse();
    for region in regions {
        let rules = rules_of(region.lang);
        if rules.is_empty() {
            continue;
        }
        // Offered in the host's terms: shown with the file around the region, at its
        // place in the file (lines, context).
        let around = (&current[..region.start], &current[region.end..]);
        let mut in_host = |p: &Proposal<'_>| {
            select(&Proposal {
                around: Some(around),
                ..*p
            })
        };
        let part = run_file_selecting(
            path,
            &current[region.start..region.end],
            region.lang,
            &rules,
            mode,
            max_passes,
            &mut in_host,
        )?;
        let at = Base::of(&current, region.start);
        remaining.extend(part.remaining.into_iter().map(|f| at.shift(f)));
        result.unconverged.extend(part.unconverged);
        for (id, n) in part.counts {
            match result.counts.iter_mut().find(|(r, _)| *r == id) {
                Some((_, total)) => *total += n,
                None => result.counts.push((id, n)),
            }
        }
        if let Some(after) = part.after {
            current.replace_range(region.start..region.end, &after);
            result.introduces_parse_error |= part.introduces_parse_error;
            changed = true;
        }
    }
    if changed {
        // The host's own findings, where the fixed regions moved them.
        result.remaining = run_file_selecting(
            path,
            &current,
            lang,
            &host,
            Mode::Report,
            max_passes,
            &mut |_| true,
        )?
        .findings;
        result.after = Some(current);
    }
    result.remaining.extend(remaining);
    result.remaining.sort_by_key(|f| (f.line, f.column));
    Ok(result)
}

/// The longest a file's fixes may make it: 8 times its length (at most 256 MiB), and
/// never less than 1 MiB more than it is. A fix that matches its own output (`kind:
/// identifier` fixed to `log($$$)`) multiplies the text at every pass: 60 s and 8 GB by
/// pass 5 on a one-line file, had it no bound. Real codemods stay far below.
pub const fn fixed_len_limit(len: usize) -> usize {
    const CAP: usize = 256 << 20;
    const SLACK: usize = 1 << 20;
    let factor = len.saturating_mul(8);
    let capped = if factor < CAP { factor } else { CAP };
    let least = len.saturating_add(SLACK);
    if capped > least {
        capped
    } else {
        least
    }
}

/// Every match of every rule in `root`, in position order (rule order on ties, then
/// traversal order), from one pre-order traversal: each node is tried only against the
/// rules whose potential kinds hold its kind (ast-grep's `CombinedScan` dispatch).
/// The same matches, in the same order, as running `find_all` once per rule.
fn findings(
    path: &str,
    root: &Tree,
    rules: &[&Rule],
    silenced: Option<&Suppressions>,
) -> Vec<Finding> {
    let dispatch = Dispatch::new(rules);
    if dispatch.is_empty() {
        return Vec::new();
    }
    let lines = FixContext::new(root.source());
    let mut hits: Vec<(usize, Finding)> = Vec::new();
    for node in root.root().dfs() {
        for &i in dispatch.rules_for(node.kind_id()) {
            let rule = rules[i];
            if let Some(m) = rule.config.matcher.match_node(node.clone()) {
                if silenced.is_some_and(|s| s.silences(&rule.id, m.start_pos().line())) {
                    continue;
                }
                hits.push((i, finding(path, rule, &m, &lines)));
            }
        }
    }
    // Stable: traversal order stays for one rule's findings at the same position.
    hits.sort_by_key(|(i, f)| (f.line, f.column, *i));
    hits.into_iter().map(|(_, f)| f).collect()
}

/// What a fix's position and text need from the file.
struct FixContext<'a> {
    crlf: bool,
    index: rewrite::LineIndex<'a>,
    len: usize,
}

impl<'a> FixContext<'a> {
    fn new(src: &'a str) -> Self {
        FixContext {
            crlf: rewrite::uses_crlf(src),
            index: rewrite::LineIndex::new(src),
            len: src.len(),
        }
    }
}

fn finding(
    path: &str,
    rule: &Rule,
    m: &ast_grep_core::NodeMatch<'_, StrDoc<Lang>>,
    lines: &FixContext<'_>,
) -> Finding {
    let fix = rule.config.fixer.first().map(|fixer| {
        let mut edit = m.make_edit(&rule.config.matcher, fixer);
        edit.inserted_text = rewrite::tab_indented(m, edit.position, edit.inserted_text);
        let end = (edit.position + edit.deleted_length).min(lines.len);
        let (start_line, start_column) = lines.index.line_col(edit.position);
        let (end_line, end_column) = lines.index.line_col(end);
        let inserted = if lines.crlf {
            rewrite::lf_to_crlf(edit.inserted_text)
        } else {
            edit.inserted_text
        };
        FindingFix {
            start_line,
            start_column,
            end_line,
            end_column,
            inserted: String::from_utf8_lossy(&inserted).into_owned(),
        }
    });
    let start = m.start_pos();
    let end = m.end_pos();
    let message = rule.message_template.generate_replacement(m);
    Finding {
        path: path.to_string(),
        rule: rule.id.clone(),
        severity: rule.severity,
        message: String::from_utf8_lossy(&message).into_owned(),
        note: rule.note.clone(),
        url: rule.url.clone(),
        line: start.line() + 1,
        column: start.column(m) + 1,
        end_line: end.line() + 1,
        end_column: end.column(m) + 1,
        text: m.text().into_owned(),
        comments: comments_in(m),
        fixable: rule.fixable(),
        fix,
    }
}

/// The byte ranges, within a match's text, of the comment nodes inside it (the
/// grammar's extras that name a comment, such as `comment`, `line_comment` or
/// `block_comment`), outermost only; a match that is itself a comment keeps its text.
fn comments_in(m: &ast_grep_core::NodeMatch<'_, StrDoc<Lang>>) -> Vec<(usize, usize)> {
    let start = m.range().start;
    let mut out: Vec<(usize, usize)> = Vec::new();
    for node in m.dfs().skip(1) {
        if !node.is_extra() || !node.kind().contains("comment") {
            continue;
        }
        let r = node.range();
        let (a, b) = (r.start - start, r.end - start);
        // A comment's own parts (a doc comment's marker) lie inside the last one.
        if out.last().is_some_and(|&(_, end)| a < end) {
            continue;
        }
        out.push((a, b));
    }
    out
}

/// An unused suppression comment as a finding (a hint; not fixed here, where
/// ast-grep's `-U` would delete the comment).
fn unused(path: &str, d: &super::suppress::Directive) -> Finding {
    Finding {
        path: path.to_string(),
        rule: super::suppress::UNUSED_SUPPRESSION_ID.to_string(),
        severity: Severity::Hint,
        message: super::suppress::UNUSED_SUPPRESSION_MESSAGE.to_string(),
        note: None,
        url: None,
        line: d.line + 1,
        column: d.column + 1,
        end_line: d.end_line + 1,
        end_column: d.end_column + 1,
        text: d.text.clone(),
        comments: Vec::new(),
        fixable: false,
        fix: None,
    }
}

/// Rule indices by node kind id, each list in rule order.
struct Dispatch {
    by_kind: Vec<Vec<usize>>,
    /// Rules without known kinds (tried on every node); merged into `by_kind` lists
    /// when both exist, so order stays rule order.
    any_kind: Vec<usize>,
}

impl Dispatch {
    fn new(rules: &[&Rule]) -> Dispatch {
        let mut by_kind: Vec<Vec<usize>> = Vec::new();
        let mut any_kind = Vec::new();
        for (i, rule) in rules.iter().enumerate() {
            match &rule.kinds {
                Some(kinds) => {
                    for &k in kinds {
                        let k = usize::from(k);
                        if by_kind.len() <= k {
                            by_kind.resize_with(k + 1, Vec::new);
                        }
                        by_kind[k].push(i);
                    }
                }
                None => any_kind.push(i),
            }
        }
        if !any_kind.is_empty() {
            for list in &mut by_kind {
                list.extend(&any_kind);
                list.sort_unstable();
                list.dedup();
            }
        }
        Dispatch { by_kind, any_kind }
    }

    fn is_empty(&self) -> bool {
        self.any_kind.is_empty() && self.by_kind.iter().all(Vec::is_empty)
    }

    fn rules_for(&self, kind: u16) -> &[usize] {
        self.by_kind
            .get(usize::from(kind))
            .map_or(&self.any_kind[..], Vec::as_slice)
    }
}

/// The rules of `rules` that may match in `text` (see [`Rule::may_match`]), in order.
pub fn live_rules<'r>(rules: &[&'r Rule], text: &str) -> Vec<&'r Rule> {
    rules
        .iter()
        .copied()
        .filter(|r| r.may_match(text))
        .collect()
}

#[cfg(test)]
mod tests {
    use ast_grep_core::matcher::Matcher;

    use super::*;
    use crate::scan::rules::from_text;
    use crate::scan::rules::TextFormat;

    /// Rules of every shape the dispatch must serve alike: kind only, several kinds
    /// (`any`), `all`/`not`, `inside`/`has`, `follows`/`precedes`, `nthChild`, local
    /// utils through `matches`, constraints, a regex, two rules matching the same node,
    /// a rule on every node kind a pattern can root at, and one with `severity: off`.
    const RULES: &str = r#"
id: kind-only
language: javascript
rule: { kind: string }
---
id: any-kinds
language: javascript
rule:
  any:
    - kind: number
    - pattern: console.log($A)
---
id: all-not
language: javascript
rule:
  all:
    - kind: call_expression
    - not: { pattern: console.log($$$) }
---
id: inside-has
language: javascript
rule:
  kind: identifier
  inside: { kind: arguments, stopBy: end }
  not: { has: { kind: string } }
---
id: follows-precedes
language: javascript
rule:
  kind: expression_statement
  follows: { kind: lexical_declaration, stopBy: end }
  precedes: { kind: expression_statement }
---
id: nth-child
language: javascript
rule:
  kind: number
  nthChild: 2
---
id: util-matches
language: javascript
utils:
  logged:
    kind: call_expression
    has: { kind: member_expression, regex: ^console }
rule:
  kind: expression_statement
  has: { matches: logged }
---
id: constrained
language: javascript
message: $A plus $B
rule: { pattern: $A + $B }
constraints:
  B: { kind: number }
---
id: same-node-as-kind-only
language: javascript
rule: { kind: string, regex: "^'a" }
---
id: disabled
language: javascript
severity: off
rule: { kind: identifier }
"#;

    const SOURCES: &[&str] = &[
        "const a = 'a';\nconsole.log(a, 1 + 2, 'b');\nfoo(x, y)(z);\nconsole.log(x);\n",
        "let q = [1, 2, 3];\nq.push(4 + 5);\nbar(q, 'abc', baz(q));\n{ let r = 1; r + 1; r; }\n",
        "function f(x) { return x + 1 + 2; }\nf(f(f(1)));\nconsole.error('a' + 'b');\n",
    ];

    /// The old way: one `find_all` per rule, concatenated in rule order, then a stable
    /// sort by start.
    fn per_rule(path: &str, root: &Tree, rules: &[&Rule]) -> Vec<Finding> {
        let mut out = Vec::new();
        let lines = FixContext::new(root.source());
        for rule in rules {
            for m in root.root().find_all(&rule.config.matcher) {
                out.push(finding(path, rule, &m, &lines));
            }
        }
        out.sort_by_key(|f| (f.line, f.column));
        out
    }

    #[test]
    fn one_traversal_finds_what_one_traversal_per_rule_finds() {
        let set = from_text(RULES, TextFormat::Yaml, "rules.yml").expect("rules load");
        assert_eq!(set.disabled, vec!["disabled".to_string()]);
        let rules: Vec<&Rule> = set.rules.iter().collect();
        assert!(rules.iter().all(|r| r.kinds.is_some()));
        for (n, text) in SOURCES.iter().enumerate() {
            let doc = rewrite::parse_doc(text, Lang::JavaScript).expect("parse");
            let tree = AstGrep::doc(doc);
            let expected = per_rule("a.js", &tree, &rules);
            let got = findings("a.js", &tree, &rules, None);
            assert_eq!(got, expected, "source #{n}");
            // Every rule of the set found something somewhere, so each shape is tested.
            if n == 0 {
                for id in [
                    "kind-only",
                    "any-kinds",
                    "all-not",
                    "inside-has",
                    "constrained",
                ] {
                    assert!(got.iter().any(|f| f.rule == id), "{id} found nothing");
                }
            }
        }
        let all: Vec<Finding> = SOURCES
            .iter()
            .flat_map(|t| {
                let tree = AstGrep::doc(rewrite::parse_doc(t, Lang::JavaScript).unwrap());
                findings("a.js", &tree, &rules, None)
            })
            .collect();
        for rule in &rules {
            assert!(
                all.iter().any(|f| f.rule == rule.id),
                "{} found nothing",
                rule.id
            );
        }
    }

    #[test]
    fn a_rule_whose_kinds_are_unknown_is_tried_on_every_node_in_rule_order() {
        let set = from_text(RULES, TextFormat::Yaml, "rules.yml").expect("rules load");
        let mut unknown = from_text(RULES, TextFormat::Yaml, "rules.yml").expect("rules load");
        for rule in &mut unknown.rules {
            if rule.id == "kind-only" || rule.id == "constrained" {
                rule.kinds = None;
            }
        }
        let refs: Vec<&Rule> = unknown.rules.iter().collect();
        for text in SOURCES {
            let tree = AstGrep::doc(rewrite::parse_doc(text, Lang::JavaScript).unwrap());
            assert_eq!(
                findings("a.js", &tree, &refs, None),
                per_rule("a.js", &tree, &refs)
            );
        }
        // The kinds computed at load are the matcher's own.
        for r in &set.rules {
            let kinds: Option<Vec<u16>> = r
                .config
                .matcher
                .potential_kinds()
                .map(|s| s.iter().map(|k| k as u16).collect());
            assert_eq!(r.kinds, kinds);
        }
    }

    #[test]
    fn rules_whose_text_need_fails_are_not_run_and_fixes_still_chain() {
        // `b-to-c` cannot match the input (no `b(`), but `a-to-b`'s fix creates its match.
        let set = from_text(
            "id: a-to-b\nlanguage: javascript\nrule: { pattern: a($X) }\nfix: b($X)\n---\n\
             id: b-to-c\nlanguage: javascript\nrule: { pattern: b($X) }\nfix: c($X)\n",
            TextFormat::Yaml,
            "rules.yml",
        )
        .expect("rules load");
        let rules: Vec<&Rule> = set.rules.iter().collect();
        let text = "a(1);\n";
        assert_eq!(live_rules(&rules, text).len(), 1);
        let result = run_file("x.js", text, Lang::JavaScript, &rules, Mode::Fix, 10).expect("runs");
        assert_eq!(result.findings.len(), 1);
        assert_eq!(result.after.as_deref(), Some("c(1);\n"));
        assert!(result.remaining.is_empty());
        assert_eq!(
            result.counts,
            vec![("a-to-b".to_string(), 1), ("b-to-c".to_string(), 1)]
        );
    }
}
