//! Edits on nodes a rule captured outside its match (issue 37): `edits: [{target: $VAR,
//! fix: TEMPLATE}]` beside a rule's `fix`. A match that `inside`, `has`, `follows` or
//! `precedes` captured `$VAR` also rewrites that node, with the match's metavariables.
//!
//! An edit writes only the part of the node's text its template changes (the common
//! head and tail are left as they are), so `async $FN` is an insertion before the
//! function and leaves the rule's own fix inside the function alone. The same edit
//! reached by several matches is made once, and so is the same edit asked for again by
//! a later run or another rule (two rules that both make a function `async`); two
//! different edits of one node, or an edit that overlaps a fix, are a conflict.

use ast_grep_config::Fixer;
use ast_grep_core::matcher::MatchAll;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::NodeMatch;
use serde::Deserialize;
use serde_value::Value;

use super::ledger::Ledger;
use super::ledger::Made;
use crate::lang::Lang;
use crate::rewrite;
use crate::rewrite::Nested;

/// One entry of a rule's `edits:`.
pub struct CapturedEdit {
    /// The metavariable's name, without `$`.
    var: String,
    /// The template (with `expandStart`/`expandEnd`, when given), compiled with the rule.
    fixer: Fixer,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    target: String,
    fix: Value,
}

/// Reads `edits:`. `compile` turns an entry's `fix` (a template or ast-grep's fix
/// object) into a fixer the way the rule's own `fix` is compiled; `defined` are the
/// metavariables the rule captures.
pub fn parse(
    value: &Value,
    defined: &std::collections::HashSet<&str>,
    compile: impl Fn(&Value) -> Result<Fixer, String>,
) -> Result<Vec<CapturedEdit>, String> {
    let specs = Vec::<Spec>::deserialize(value.clone())
        .map_err(|e| format!("{e}: expected `edits: [{{target: $VAR, fix: TEMPLATE}}…]`"))?;
    let mut edits = Vec::with_capacity(specs.len());
    for spec in specs {
        let var = spec
            .target
            .strip_prefix('$')
            .filter(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .ok_or_else(|| {
                format!(
                    "target '{}' is not one metavariable such as $FN (a $$$ list cannot be a target)",
                    spec.target
                )
            })?;
        if !defined.contains(var) {
            return Err(format!(
                "target ${var} is not captured by the rule (capture it in the rule, e.g. \
                 `inside: {{kind: …, pattern: ${var}}}`)"
            ));
        }
        edits.push(CapturedEdit {
            var: var.to_string(),
            fixer: compile(&spec.fix)?,
        });
    }
    Ok(edits)
}

/// An edit of a captured node that one match asks for, in the pass's input text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Found {
    /// The target's range (widened by `expandStart`/`expandEnd`).
    start: usize,
    end: usize,
    /// Its whole new text.
    text: String,
    var: String,
}

impl Found {
    /// The target's range in the text it was found on.
    pub fn range(&self) -> (usize, usize) {
        (self.start, self.end)
    }

    /// The target's whole new text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Replaces the new text (a person's own, `e` in `scan -i`).
    pub fn set_text(&mut self, text: String) {
        self.text = text;
    }
}

/// The edits the match `m` asks for on the nodes it captured.
pub fn at_match(edits: &[CapturedEdit], m: &NodeMatch<'_, StrDoc<Lang>>, crlf: bool) -> Vec<Found> {
    let mut found = Vec::new();
    for e in edits {
        let Some(node) = m.get_env().get_match(&e.var) else {
            continue;
        };
        let target = NodeMatch::new(node.clone(), m.get_env().clone());
        let edit = target.make_edit(&MatchAll, &e.fixer);
        let mut inserted = rewrite::tab_indented(&target, edit.position, edit.inserted_text);
        if crlf {
            inserted = rewrite::lf_to_crlf(inserted);
        }
        found.push(Found {
            start: edit.position,
            end: edit.position + edit.deleted_length,
            text: String::from_utf8_lossy(&inserted).into_owned(),
            var: e.var.clone(),
        });
    }
    found
}

/// Two edits of one file that cannot both be made: where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clash {
    /// 1-based line of the node in the pass's input.
    pub line: usize,
    pub detail: String,
}

fn line_at(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

/// The edits of `found` (on `before`, the run's input) that no earlier run or rule made
/// on their node, as `ledger` holds them; or, when one asks for something else of a
/// node already edited, the clash.
pub fn unmade(
    found: Vec<Found>,
    before: &str,
    ledger: &Ledger,
    rule: &str,
) -> Result<Vec<Found>, Clash> {
    let mut out = Vec::with_capacity(found.len());
    for f in found {
        let Some(made) = ledger.made_at(f.start, f.end) else {
            out.push(f);
            continue;
        };
        let now = before.get(f.start..f.end).unwrap_or_default();
        if now == f.text || made.repeated_by(now, &f.text) {
            continue;
        }
        let by = if made.rule == rule {
            "an earlier pass of this rule".to_string()
        } else {
            format!("rule '{}'", made.rule)
        };
        return Err(Clash {
            line: line_at(before, f.start),
            detail: format!(
                "two different edits of ${}: {by} made {:?} of it, this one asks {:?}",
                f.var,
                first_line(&made.after),
                first_line(&f.text)
            ),
        });
    }
    Ok(out)
}

/// What [`settle`] gives: the replacements to make, and the edits they make.
pub struct Settled {
    /// Replacements of the text after the fixes, sorted and disjoint.
    pub edits: Vec<(usize, usize, String)>,
    nodes: Vec<Asked>,
}

/// One edit asked for: what it was, the node's text before it and range in the text
/// after the fixes, and its replacement among [`Settled::edits`] (none when it changes
/// nothing).
struct Asked {
    found: Found,
    old: String,
    range: (usize, usize),
    own: Option<usize>,
}

impl Settled {
    /// The edits made, with each node's range once `edits` are made (for the ledger).
    pub fn made(self, rule: &str) -> Vec<Made> {
        let edits = &self.edits;
        self.nodes
            .into_iter()
            .filter(|n| n.own.is_some())
            .map(|n| {
                let (start, end) = node_after(n.range, n.own, edits);
                Made {
                    rule: rule.to_string(),
                    start,
                    end,
                    before: n.old,
                    after: n.found.text,
                }
            })
            .collect()
    }
}

/// The range of the node at `a..b` (text after the fixes) once `edits` (sorted,
/// disjoint) are made, `own` being the node's own edit among them: edits inside it
/// grow it, an insertion at its start that is not its own comes before it.
fn node_after(
    (a, b): (usize, usize),
    own: Option<usize>,
    edits: &[(usize, usize, String)],
) -> (usize, usize) {
    let (mut start, mut end) = (a as isize, b as isize);
    for (j, (s, e, text)) in edits.iter().enumerate() {
        let grown = text.len() as isize - (e - s) as isize;
        let at_edge = s == e && (*s == a || *s == b);
        if Some(j) == own || (a <= *s && *e <= b && !at_edge) {
            end += grown;
        } else if *e <= a {
            start += grown;
            end += grown;
        }
    }
    (start.max(0) as usize, end.max(0) as usize)
}

/// The edits `found` (asked for by the matches whose fixes were made) as replacements
/// of the pass's output text (`before` changed by `nested`), duplicates made once, in
/// document order; or what clashes.
pub fn settle(mut found: Vec<Found>, before: &str, nested: &Nested) -> Result<Settled, Clash> {
    let line = |at: usize| line_at(before, at);
    found.sort();
    found.dedup_by(|b, a| (a.start, a.end, &a.text) == (b.start, b.end, &b.text));
    for pair in found.windows(2) {
        if (pair[0].start, pair[0].end) == (pair[1].start, pair[1].end) {
            return Err(Clash {
                line: line(pair[0].start),
                detail: format!(
                    "two different edits of ${} ({:?} and {:?})",
                    pair[0].var,
                    first_line(&pair[0].text),
                    first_line(&pair[1].text)
                ),
            });
        }
    }
    // Each edit narrowed to what it changes (with the index of its `found`).
    let mut narrow: Vec<(usize, usize, String, &str, usize)> = Vec::new();
    for (k, f) in found.iter().enumerate() {
        let Some(old) = before.get(f.start..f.end) else {
            continue;
        };
        let new = keep_blank_lines(old, &f.text);
        let (s, e, text) = changed_part(old, &new);
        if s == e && text.is_empty() {
            continue;
        }
        narrow.push((f.start + s, f.start + e, text.to_string(), &f.var, k));
    }
    narrow.sort_by_key(|n| (n.0, n.1));
    for pair in narrow.windows(2) {
        if pair[1].0 < pair[0].1 || (pair[0].0, pair[0].1) == (pair[1].0, pair[1].1) {
            return Err(Clash {
                line: line(pair[1].0),
                detail: format!("the edits of ${} and ${} overlap", pair[0].3, pair[1].3),
            });
        }
    }
    let mut own: Vec<Option<usize>> = vec![None; found.len()];
    let mut out = Vec::with_capacity(narrow.len());
    for (s, e, text, var, k) in narrow {
        let overlaps = nested.changes.iter().any(|c| {
            let inside = |p: usize| c.start < p && p < c.end;
            if s == e {
                inside(s)
            } else {
                c.start < e && s < c.end || (c.start == c.end && s < c.start && c.start < e)
            }
        });
        let mapped = (!overlaps).then(|| nested.map_range(s, e)).flatten();
        let Some((s, e)) = mapped else {
            return Err(Clash {
                line: line(s),
                detail: format!("the edit of ${var} overlaps the rule's own fix"),
            });
        };
        own[k] = Some(out.len());
        out.push((s, e, text));
    }
    let nodes = found
        .into_iter()
        .zip(own)
        .filter_map(|(found, own)| {
            let old = before.get(found.start..found.end)?.to_string();
            let range = nested.map_range(found.start, found.end)?;
            Some(Asked {
                found,
                old,
                range,
                own,
            })
        })
        .collect();
    Ok(Settled { edits: out, nodes })
}

/// `text` with the replacements `edits` (sorted, disjoint) made.
pub fn apply(text: &str, edits: &[(usize, usize, String)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (s, e, new) in edits {
        out.push_str(&text[at..*s]);
        out.push_str(new);
        at = *e;
    }
    out.push_str(&text[at..]);
    out
}

/// The part of `old` that `new` changes: its range in `old` and what replaces it (the
/// head and tail both share left out, cut at character boundaries).
fn changed_part<'n>(old: &str, new: &'n str) -> (usize, usize, &'n str) {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let mut head = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    while !old.is_char_boundary(head) || !new.is_char_boundary(head) {
        head -= 1;
    }
    let max_tail = a.len().min(b.len()) - head;
    let mut tail = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(max_tail)
        .take_while(|(x, y)| x == y)
        .count();
    while !old.is_char_boundary(a.len() - tail) || !new.is_char_boundary(b.len() - tail) {
        tail -= 1;
    }
    (head, a.len() - tail, &new[head..b.len() - tail])
}

/// `new` with each blank line that stands where `old` has a blank line written as in
/// `old`. A multi-line capture re-indented into a template (`async $FN` of a method)
/// gets the indentation on its empty lines too; without this, the edit of the
/// function would reach over its whole body, and so over the rule's own fix inside it.
fn keep_blank_lines(old: &str, new: &str) -> String {
    use similar::DiffTag;
    let diff = similar::TextDiff::from_lines(old, new);
    let (was, now) = (diff.old_slices(), diff.new_slices());
    let blank = |l: &str| l.trim().is_empty();
    let mut out = String::with_capacity(new.len());
    for op in diff.ops() {
        let (o, n) = (op.old_range(), op.new_range());
        match op.tag() {
            DiffTag::Replace if o.len() == n.len() => {
                for (a, b) in was[o].iter().zip(&now[n]) {
                    // The line's own ending is the new one's (the last line may have none).
                    let ending = &b[b.trim_end_matches(['\n', '\r']).len()..];
                    if blank(a) && blank(b) {
                        out.push_str(a.trim_end_matches(['\n', '\r']));
                        out.push_str(ending);
                    } else {
                        out.push_str(b);
                    }
                }
            }
            _ => out.extend(now[n].iter().copied()),
        }
    }
    out
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::changed_part;

    #[test]
    fn blank_lines_keep_their_old_whitespace() {
        let old = "def run(self):\n    a()\n\n    b()\n";
        let new = "async def run(self):\n    a()\n    \n    b()\n";
        assert_eq!(
            super::keep_blank_lines(old, new),
            "async def run(self):\n    a()\n\n    b()\n"
        );
        // A blank line the template adds stays as written.
        assert_eq!(super::keep_blank_lines("f()", "  \nf()"), "  \nf()");
    }

    #[test]
    fn the_changed_part_leaves_the_shared_head_and_tail() {
        assert_eq!(
            changed_part("function f() {}", "async function f() {}"),
            (0, 0, "async ")
        );
        assert_eq!(changed_part("f(a)", "f(a, b)"), (3, 3, ", b"));
        assert_eq!(changed_part("same", "same"), (4, 4, ""));
        assert_eq!(changed_part("aé", "aè"), (1, 3, "è"));
    }
}
