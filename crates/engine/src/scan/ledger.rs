//! What a file's fix passes remember from one rule run to the next (issue 53 items 2
//! and 4): the text each rule wrote, the sites a rule skipped for overlapping another,
//! and the edits of captured nodes already made. Every range is kept in the
//! coordinates of the current text, followed through each change as it is made.
//!
//! A rule's first run fixes every match. A later run takes a match only when it
//! overlaps a site the rule skipped in its previous run (two of its matches overlapped:
//! one was fixed, the other waits), overlaps text another rule wrote since, or takes in
//! the text the rule's own previous run wrote with more around it (`(w)` once `((w))`
//! lost its inner parentheses). A match lying within the rule's own output is never
//! taken again: deleting the third argument of `f(1, 2, 3, 4)` writes `f(1, 2, 4)`, and
//! that call is not "a call with a third argument" to fix once more.

use ast_grep_config::Fixer;
use ast_grep_core::matcher::Matcher;
use ast_grep_core::replacer::Replacer;
use ast_grep_core::Doc;
use ast_grep_core::Node;
use ast_grep_core::NodeMatch;

use crate::rewrite::Nested;

/// One change of a text: the range `start..end` of the text before it became `len`
/// bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    pub start: usize,
    pub end: usize,
    pub len: usize,
}

impl Change {
    fn grown(&self) -> isize {
        self.len as isize - (self.end - self.start) as isize
    }
}

/// The changes a nested rewrite made, outermost only (an outer change's text holds
/// the ones nested in it), in the coordinates of its input.
pub fn outermost(nested: &Nested) -> Vec<Change> {
    let mut out: Vec<Change> = Vec::new();
    for c in &nested.changes {
        if out.last().is_some_and(|o| c.start < o.end) {
            continue;
        }
        out.push(Change {
            start: c.start,
            end: c.end,
            len: c.after.len(),
        });
    }
    out
}

/// Replacements (sorted, disjoint) as changes.
pub fn changes_of(edits: &[(usize, usize, String)]) -> Vec<Change> {
    edits
        .iter()
        .map(|(s, e, t)| Change {
            start: *s,
            end: *e,
            len: t.len(),
        })
        .collect()
}

/// Where the text each change wrote lies in the text after `changes` (sorted,
/// disjoint).
pub fn written(changes: &[Change]) -> Vec<(usize, usize)> {
    let mut shift = 0isize;
    changes
        .iter()
        .map(|c| {
            let start = c.start.saturating_add_signed(shift);
            shift += c.grown();
            (start, start + c.len)
        })
        .collect()
}

/// Where the range `a..b` of the text before `changes` (sorted, disjoint) lies after
/// them: a change inside it grows or shrinks it, one reaching over one of its ends cuts
/// it back to the part left, one replacing it all (or more) removes it (`None`). An
/// insertion at its start comes before it, one at its end after it.
pub fn follow((a, b): (usize, usize), changes: &[Change]) -> Option<(usize, usize)> {
    let (mut start, mut end) = (a as isize, b as isize);
    for c in changes.iter().rev() {
        let (s, e, grown) = (c.start as isize, c.end as isize, c.grown());
        let (a, b) = (start, end);
        if e <= a {
            start += grown;
            end += grown;
        } else if b <= s {
        } else if s <= a && b <= e {
            return None;
        } else if a <= s && e <= b {
            end += grown;
        } else if s < a {
            // Reaches over the start: the range begins where the change's text ends.
            start = s + c.len as isize;
            end += grown;
        } else {
            // Reaches over the end.
            end = s;
        }
    }
    Some((usize::try_from(start).ok()?, usize::try_from(end).ok()?))
}

/// Whether a match spanning `m` overlaps the range `r`; an empty `r` (text deleted
/// there) counts when the match holds it strictly inside.
fn overlaps(r: (usize, usize), m: (usize, usize)) -> bool {
    if r.0 == r.1 {
        m.0 < r.0 && r.0 < m.1
    } else {
        r.0 < m.1 && m.0 < r.1
    }
}

/// Text one rule wrote.
#[derive(Debug, Clone)]
struct Written {
    rule: usize,
    /// The run that wrote it (see [`Ledger::begin`]).
    run: usize,
    start: usize,
    end: usize,
}

/// An edit of a captured node (rule `edits:`) already made: the node's range now, its
/// text before the edit and the text the edit gave it then.
#[derive(Debug, Clone)]
pub struct Made {
    pub rule: String,
    pub start: usize,
    pub end: usize,
    pub before: String,
    pub after: String,
}

impl Made {
    /// Whether an edit asking for `after` on this node, whose text is `now`, is this
    /// edit again: the same template on the node it produced gives the text this
    /// edit's output would give with the node's old text replaced by `now`
    /// (`async $FN` on `async function f` is `async async function f`).
    pub fn repeated_by(&self, now: &str, after: &str) -> bool {
        !self.before.is_empty()
            && self.after.contains(&self.before)
            && self.after.replace(&self.before, now) == after
    }
}

/// Which matches a rule's run may fix (see the module's comment).
#[derive(Debug, Clone, Default)]
pub struct Gate {
    /// First run: every match.
    all: bool,
    own: Vec<(usize, usize)>,
    own_last: Vec<(usize, usize)>,
    others_since: Vec<(usize, usize)>,
    skipped: Vec<(usize, usize)>,
}

impl Gate {
    /// Whether the match whose edit spans `start..end` is fixed in this run.
    pub fn admits(&self, start: usize, end: usize) -> bool {
        if self.all {
            return true;
        }
        let m = (start, end);
        if self.own.iter().any(|w| w.0 <= start && end <= w.1) {
            return false;
        }
        let around_own = |w: &(usize, usize)| {
            m != *w && start <= w.0 && w.1 <= end && (w.0 < w.1 || overlaps(*w, m))
        };
        self.skipped.iter().any(|r| overlaps(*r, m))
            || self.others_since.iter().any(|r| overlaps(*r, m))
            || self.own_last.iter().any(around_own)
    }
}

/// The passes' memory of one file (see the module's comment).
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    runs: usize,
    /// Per rule, the number of its last run.
    last_run: Vec<Option<usize>>,
    written: Vec<Written>,
    /// Per rule, what is left of the sites its last run skipped for overlapping.
    skipped: Vec<Vec<(usize, usize)>>,
    made: Vec<Made>,
}

impl Ledger {
    pub fn new(rules: usize) -> Ledger {
        Ledger {
            last_run: vec![None; rules],
            skipped: vec![Vec::new(); rules],
            ..Ledger::default()
        }
    }

    /// Whether a run of `rule` could fix anything its previous runs did not: it never
    /// ran, or it skipped sites, or text was written since its last run began.
    pub fn pending(&self, rule: usize) -> bool {
        let Some(last) = self.last_run[rule] else {
            return true;
        };
        !self.skipped[rule].is_empty() || self.written.iter().any(|w| w.run >= last)
    }

    /// Starts a run of `rule`: which matches it may fix.
    pub fn begin(&mut self, rule: usize) -> Gate {
        let gate = match self.last_run[rule] {
            None => Gate {
                all: true,
                ..Gate::default()
            },
            Some(last) => {
                let mut gate = Gate {
                    skipped: std::mem::take(&mut self.skipped[rule]),
                    ..Gate::default()
                };
                for w in &self.written {
                    let range = (w.start, w.end);
                    if w.rule == rule {
                        gate.own.push(range);
                        if w.run == last {
                            gate.own_last.push(range);
                        }
                    } else if w.run > last {
                        gate.others_since.push(range);
                    }
                }
                gate
            }
        };
        self.last_run[rule] = Some(self.runs);
        self.runs += 1;
        gate
    }

    /// Follows every range through `changes` (sorted, disjoint, in the coordinates of
    /// the text before them).
    pub fn changed(&mut self, changes: &[Change]) {
        if changes.is_empty() {
            return;
        }
        self.written
            .retain_mut(|w| match follow((w.start, w.end), changes) {
                Some((s, e)) => {
                    (w.start, w.end) = (s, e);
                    true
                }
                None => false,
            });
        for list in &mut self.skipped {
            *list = list
                .iter()
                .filter_map(|r| follow(*r, changes))
                .filter(|r| r.0 < r.1)
                .collect();
        }
        self.made
            .retain_mut(|m| match follow((m.start, m.end), changes) {
                Some((s, e)) => {
                    (m.start, m.end) = (s, e);
                    true
                }
                None => false,
            });
    }

    /// Records the text `rule`'s current run wrote (ranges of the current text).
    pub fn wrote(&mut self, rule: usize, ranges: &[(usize, usize)]) {
        let run = self.last_run[rule].unwrap_or(self.runs);
        self.written
            .extend(ranges.iter().map(|&(start, end)| Written {
                rule,
                run,
                start,
                end,
            }));
    }

    /// Records the sites `rule`'s current run skipped for overlapping another (what is
    /// left of them, as ranges of the current text).
    pub fn skipped(&mut self, rule: usize, ranges: Vec<(usize, usize)>) {
        self.skipped[rule] = ranges.into_iter().filter(|r| r.0 < r.1).collect();
    }

    /// The edit of a captured node already made at exactly `start..end`, if any.
    pub fn made_at(&self, start: usize, end: usize) -> Option<&Made> {
        self.made.iter().find(|m| (m.start, m.end) == (start, end))
    }

    pub fn made(&mut self, made: Made) {
        self.made.push(made);
    }
}

/// A rule's matcher that leaves out the matches a [`Gate`] does not admit, while
/// `active` is set (the sites of a run are collected; re-finding an admitted outer site
/// after its inner ones changed must not be gated again, by then the text has moved).
/// A match is judged by the range its fix would replace (the node's, without a fix).
pub struct Gated<'a, M> {
    pub inner: &'a M,
    pub fixer: Option<&'a Fixer>,
    pub gate: &'a Gate,
    pub active: &'a std::cell::Cell<bool>,
}

impl<M: Matcher> Matcher for Gated<'_, M> {
    fn match_node_with_env<'tree, D: Doc>(
        &self,
        node: Node<'tree, D>,
        env: &mut std::borrow::Cow<ast_grep_core::meta_var::MetaVarEnv<'tree, D>>,
    ) -> Option<Node<'tree, D>> {
        let found = self.inner.match_node_with_env(node, env)?;
        if !self.active.get() || self.gate.all {
            return Some(found);
        }
        let range = match self.fixer {
            Some(fixer) => {
                let m = NodeMatch::new(found.clone(), env.clone().into_owned());
                fixer.get_replaced_range(&m, self.inner)
            }
            None => found.range(),
        };
        self.gate.admits(range.start, range.end).then_some(found)
    }

    fn potential_kinds(&self) -> Option<bit_set::BitSet> {
        self.inner.potential_kinds()
    }

    fn get_match_len<D: Doc>(&self, node: Node<'_, D>) -> Option<usize> {
        self.inner.get_match_len(node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ch(start: usize, end: usize, len: usize) -> Change {
        Change { start, end, len }
    }

    #[test]
    fn ranges_follow_changes_before_inside_and_over_them() {
        // Before: shifted; after: kept.
        assert_eq!(follow((10, 20), &[ch(0, 2, 5)]), Some((13, 23)));
        assert_eq!(follow((10, 20), &[ch(20, 22, 0)]), Some((10, 20)));
        // Inside: grows; an insertion at the start comes before, at the end after.
        assert_eq!(follow((10, 20), &[ch(12, 14, 6)]), Some((10, 24)));
        assert_eq!(follow((10, 20), &[ch(10, 10, 6)]), Some((16, 26)));
        assert_eq!(follow((10, 20), &[ch(20, 20, 6)]), Some((10, 20)));
        // Replaced whole: gone.
        assert_eq!(follow((10, 20), &[ch(8, 22, 1)]), None);
        assert_eq!(follow((10, 20), &[ch(10, 20, 3)]), None);
        // Over an end: cut back to what is left.
        assert_eq!(follow((10, 20), &[ch(5, 12, 2)]), Some((7, 15)));
        assert_eq!(follow((10, 20), &[ch(15, 25, 2)]), Some((10, 15)));
        // Several at once, back to front.
        assert_eq!(
            follow((10, 20), &[ch(0, 1, 0), ch(12, 13, 3), ch(30, 31, 9)]),
            Some((9, 21))
        );
    }

    #[test]
    fn a_later_run_takes_skipped_sites_others_output_and_more_than_its_own_output() {
        let mut ledger = Ledger::new(2);
        let first = ledger.begin(0);
        assert!(first.admits(0, 100));
        // Rule 0 wrote 10..20 and skipped 18..30 (what is left: 20..30).
        ledger.wrote(0, &[(10, 20)]);
        ledger.skipped(0, vec![(20, 30)]);
        let _ = ledger.begin(1);
        ledger.wrote(1, &[(50, 55)]);
        assert!(ledger.pending(0));
        let again = ledger.begin(0);
        // Its own output, or part of it: never again.
        assert!(!again.admits(10, 20));
        assert!(!again.admits(12, 18));
        // Its own output with more around it, the skipped site, the other's text.
        assert!(again.admits(9, 21));
        assert!(again.admits(19, 25));
        assert!(again.admits(54, 60));
        // Anything else: already had its chance.
        assert!(!again.admits(60, 70));
    }

    #[test]
    fn an_edit_repeated_on_its_own_output_is_recognised() {
        let made = Made {
            rule: "a".into(),
            start: 0,
            end: 0,
            before: "function f() {}".into(),
            after: "async function f() {}".into(),
        };
        assert!(made.repeated_by("async function f() {}", "async async function f() {}"));
        assert!(!made.repeated_by("async function f() {}", "// note\nasync function f() {}"));
        let ret = Made {
            before: "string".into(),
            after: "Promise<string>".into(),
            ..made
        };
        assert!(ret.repeated_by("Promise<string>", "Promise<Promise<string>>"));
    }
}
