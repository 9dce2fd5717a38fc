//! Fixing one file's text: the rules run pass after pass, their fixes made through the
//! nested rewrite, until a pass changes nothing or the bound is reached; then the
//! imports of the rules that fixed something.

use crate::lang::Lang;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::AstGrep;

use crate::rewrite;
use crate::rewrite::imports;
use crate::rewrite::rewrite_nested_selecting;
use crate::rewrite::NestedOptions;
use crate::scan::captured;
use crate::scan::ledger;
use crate::scan::ledger::Gate;
use crate::scan::ledger::Gated;
use crate::scan::ledger::Ledger;
use crate::scan::suppress::Suppressions;
use crate::scan::Error;
use crate::scan::Rule;
use crate::select::Origin;
use crate::select::Proposal;

/// The fixing of one file's text, rule by rule, pass after pass.
pub(super) struct Fixes<'p> {
    pub(super) path: &'p str,
    pub(super) crlf: bool,
    pub(super) nested_opts: NestedOptions,
    /// Fixes made, per rule.
    pub(super) counts: Vec<usize>,
    /// Declined fixes: (rule index, edit range in the current text).
    pub(super) declined: Vec<(usize, usize, usize)>,
    pub(super) repeated_kept_text: usize,
    /// Whether a fix wrote nothing in place of its site (a deletion).
    pub(super) deleted: bool,
    /// Per rule, the imports its matches filled in (`imports:` with metavariables).
    pub(super) found: Vec<imports::Found>,
    /// Edits of captured nodes that clash: (rule, what clashes). The file is left out.
    pub(super) clashes: Vec<(String, captured::Clash)>,
    /// What the runs so far wrote, skipped and edited (which matches a run may fix).
    pub(super) ledger: Ledger,
}

/// The silenced sites of one run's input (`ast-grep-ignore` comments), looked up on
/// that text, where the comments are now.
struct Silenced<'t> {
    by: Option<Suppressions>,
    lines: Option<rewrite::LineIndex<'t>>,
}

impl<'t> Silenced<'t> {
    fn of(doc: &StrDoc<Lang>, before: &'t str) -> Silenced<'t> {
        let by = if before.contains(super::super::suppress::IGNORE_TEXT) {
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
    /// [`super::super::ledger`]). Returns, per rule, the passes after which it had not
    /// converged: when another pass would still change the text, the rules that would
    /// and those that changed it in the last pass.
    pub(super) fn passes(
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
    pub(super) fn imports(
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
