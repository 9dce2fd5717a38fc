/*!
Replacements located in a file's before text, and the ways they make its after text.

A recipe's replacements (an edit's, a scan's fixes) are located by byte range in the
before text. Where some nest (a scan's later pass fixing text an outer fix kept) they
are folded into the outer one; the sites of a file whose after text they make exactly
are those replacements ([`exact`]). Both staging (which records them, see
[`super::record`]) and review's re-derivation ([`super::derive`]) cut a file so.
*/

use crate::scan::engine::FindingFix;

/// A scan's fixes on `before` (each with its rule's id), located: sorted by start, the
/// outer one first where they nest. A fix whose position is not in the text is left
/// out.
pub fn of_fixes(
    before: &str,
    fixes: impl IntoIterator<Item = (String, FindingFix)>,
) -> Vec<Located> {
    let mut columns = Columns::new(before);
    let mut out: Vec<Located> = fixes
        .into_iter()
        .filter_map(|(rule, fix)| {
            let start = columns.byte_of(fix.start_line, fix.start_column)?;
            let end = columns.byte_of(fix.end_line, fix.end_column)?;
            (start <= end).then_some(Located {
                start,
                end,
                after: fix.inserted,
                label: Label::Rule(rule),
            })
        })
        .collect();
    sort(&mut out);
    out
}

/// An edit's replacements on `before` (`labels`: each op's), located; one whose
/// before text is not where it says (a later op's, in the text an earlier one made) is
/// left out. Sorted as [`of_fixes`] sorts.
pub fn of_replacements(
    before: &str,
    replacements: impl IntoIterator<Item = crate::rewrite::Replacement>,
    labels: &[String],
) -> Vec<Located> {
    let mut out: Vec<Located> = replacements
        .into_iter()
        .filter(|r| before.get(r.start..r.start + r.before.len()) == Some(&*r.before))
        .map(|r| Located {
            start: r.start,
            end: r.start + r.before.len(),
            after: r.after,
            label: Label::Op(labels.get(r.op).cloned().unwrap_or_default()),
        })
        .collect();
    sort(&mut out);
    out
}

/// Sorts replacements by start, the outer one first where they nest.
pub(super) fn sort(located: &mut [Located]) {
    located.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
}

/// The two ways of taking `all` (sorted as [`sort`] sorts): the outermost
/// replacements, and (where some nest) the same with the nested ones folded in, as a
/// scan's later passes make them.
pub(super) fn ways(before: &str, all: &[Located]) -> Vec<Vec<Located>> {
    let mut ways = vec![outermost(all)];
    ways.extend(folded(before, all));
    ways
}

/// The way of taking `all` (sorted) that makes `after` from `before` exactly, if one
/// does: the file's sites, each one replacement.
pub fn exact(before: &str, after: &str, all: &[Located]) -> Option<Vec<Located>> {
    ways(before, all).into_iter().find(|located| {
        !located.is_empty()
            && splices_to(
                before,
                located.iter().map(|l| (l.start, l.end, &*l.after)),
                after,
            )
    })
}

/// Whether `text` with each `(start, end, with)` (sorted, not overlapping) replaced is
/// `target`, compared piece by piece (nothing is built).
pub fn splices_to<'a>(
    text: &str,
    parts: impl IntoIterator<Item = (usize, usize, &'a str)>,
    target: &str,
) -> bool {
    let (t, target) = (text.as_bytes(), target.as_bytes());
    let (mut at, mut out) = (0, 0);
    let piece = |bytes: &[u8], out: &mut usize| -> bool {
        let end = *out + bytes.len();
        let same = target.get(*out..end) == Some(bytes);
        *out = end;
        same
    };
    for (start, end, with) in parts {
        if start < at || end < start || end > t.len() {
            return false;
        }
        if !piece(&t[at..start], &mut out) || !piece(with.as_bytes(), &mut out) {
            return false;
        }
        at = end;
    }
    piece(&t[at..], &mut out) && out == target.len()
}

/// The outermost of `located` (sorted as [`Recipe::located`] sorts): where
/// replacements nest or overlap, the first.
pub(super) fn outermost(located: &[Located]) -> Vec<Located> {
    let mut kept: Vec<Located> = Vec::with_capacity(located.len());
    for l in located {
        match kept.last() {
            Some(k) if l.start < k.end || (l.start == k.start && l.start == l.end) => {}
            _ => kept.push(l.clone()),
        }
    }
    kept
}

/// The outermost replacements with the ones nested in each folded into its output,
/// as a later pass of a scan makes them: a rule whose fix keeps a metavariable's text
/// (`var $A = $B` → `let $A = $B`) leaves the matches inside that text to the next
/// pass, which fixes them in the kept copy. A nested replacement is folded where its
/// before text occurs in the outer one's output, after the one before it (innermost
/// first); one that cannot be placed so is left out. `None` when nothing nests.
pub(super) fn folded(before: &str, located: &[Located]) -> Option<Vec<Located>> {
    // Each replacement's parent: the nearest one before it in the order that holds
    // it strictly (an equal range or an insertion is no child).
    let mut parent: Vec<Option<usize>> = vec![None; located.len()];
    let mut open: Vec<usize> = Vec::new();
    let mut nests = false;
    for (i, l) in located.iter().enumerate() {
        while let Some(&o) = open.last() {
            if located[o].end <= l.start && !(located[o].start == l.start && l.start == l.end) {
                open.pop();
            } else {
                break;
            }
        }
        if let Some(&o) = open.last() {
            let outer = &located[o];
            if l.start < l.end
                && outer.start <= l.start
                && l.end <= outer.end
                && (outer.start, outer.end) != (l.start, l.end)
            {
                parent[i] = Some(o);
                nests = true;
                open.push(i);
            }
            continue;
        }
        open.push(i);
    }
    if !nests {
        return None;
    }
    // Innermost first: a child comes after its parent in the order, so going
    // backwards every child is folded before its parent is.
    let mut after: Vec<String> = located.iter().map(|l| l.after.clone()).collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); located.len()];
    for (i, p) in parent.iter().enumerate() {
        if let Some(p) = p {
            children[*p].push(i);
        }
    }
    for i in (0..located.len()).rev() {
        if children[i].is_empty() {
            continue;
        }
        // In order: the kept text keeps its order, so each nested one is looked for
        // after the one before it (the same statement may occur twice).
        let mut parts: Vec<(usize, usize, usize)> = Vec::new();
        let mut from = 0;
        for &c in &children[i] {
            let text = &before[located[c].start..located[c].end];
            if let Some(at) = after[i].get(from..).and_then(|rest| rest.find(text)) {
                parts.push((from + at, from + at + text.len(), c));
                from += at + text.len();
            }
        }
        let folded = splice(
            &after[i],
            parts.iter().map(|&(s, e, c)| (s, e, after[c].as_str())),
        );
        after[i] = folded;
    }
    Some(
        located
            .iter()
            .zip(after)
            .zip(&parent)
            .filter(|(_, p)| p.is_none())
            .map(|((l, after), _)| Located { after, ..l.clone() })
            .collect::<Vec<_>>(),
    )
    .map(|v| outermost(&v))
}

/// What made a site.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Label {
    Op(String),
    Rule(String),
    None,
}

/// A replacement of the re-run recipe, in the before text's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub start: usize,
    pub end: usize,
    pub after: String,
    pub label: Label,
}

/// `text` with each `(start, end, with)` (sorted, not overlapping) replaced.
pub fn splice<'a>(text: &str, parts: impl IntoIterator<Item = (usize, usize, &'a str)>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end, with) in parts {
        out.push_str(&text[at..start]);
        out.push_str(with);
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

/// The byte offset of each line's start.
pub struct LineStarts(Vec<usize>);

impl LineStarts {
    pub fn new(text: &str) -> LineStarts {
        let mut v = vec![0];
        v.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        LineStarts(v)
    }

    /// The 0-based line holding byte `at`.
    pub fn line_of(&self, at: usize) -> usize {
        match self.0.binary_search(&at) {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }

    /// The byte where 0-based line `line` starts (the text's end past the last).
    pub(super) fn start(&self, line: usize, text: &str) -> usize {
        self.0
            .get(line)
            .copied()
            .unwrap_or(text.len())
            .min(text.len())
    }

    /// The byte of 1-based `line` and character `column`.
    pub(super) fn byte_of(&self, text: &str, line: usize, column: usize) -> Option<usize> {
        let start = *self.0.get(line.checked_sub(1)?)?;
        let rest = text.get(start..)?;
        let col = column.checked_sub(1)?;
        if col == 0 {
            return Some(start);
        }
        rest.char_indices()
            .map(|(i, _)| i)
            .chain(std::iter::once(rest.len()))
            .nth(col)
            .map(|i| start + i)
    }
}

/// Characters between two marks of [`Columns`].
const COLUMN_STEP: usize = 256;

/// Bytes of (line, character column) positions. A column is found from the nearest
/// mark of its line (the byte of every [`COLUMN_STEP`]th character, worked out once
/// per long line), not by counting from the line's start: a minified bundle is one
/// line of megabytes holding thousands of fixes.
struct Columns<'t> {
    text: &'t str,
    lines: LineStarts,
    /// Per line (0-based) that needed them: the byte of characters 0, STEP, 2·STEP, …
    /// of the text from the line's start to its end (its line break included).
    marks: std::collections::HashMap<usize, Vec<usize>>,
}

impl<'t> Columns<'t> {
    fn new(text: &'t str) -> Columns<'t> {
        Columns {
            text,
            lines: LineStarts::new(text),
            marks: std::collections::HashMap::new(),
        }
    }

    /// As [`LineStarts::byte_of`].
    fn byte_of(&mut self, line: usize, column: usize) -> Option<usize> {
        let l = line.checked_sub(1)?;
        let start = *self.lines.0.get(l)?;
        let col = column.checked_sub(1)?;
        if col < 2 * COLUMN_STEP {
            return self.lines.byte_of(self.text, line, column);
        }
        let text = self.text;
        let end = self.lines.0.get(l + 1).copied().unwrap_or(text.len());
        let marks = self.marks.entry(l).or_insert_with(|| {
            text[start..end]
                .char_indices()
                .step_by(COLUMN_STEP)
                .map(|(i, _)| i)
                .collect()
        });
        let Some(&from) = marks.get(col / COLUMN_STEP) else {
            // Past the line's end (into the next lines): counted as before.
            return self.lines.byte_of(text, line, column);
        };
        let rest = &text[start + from..];
        rest.char_indices()
            .map(|(i, _)| i)
            .chain(std::iter::once(rest.len()))
            .nth(col % COLUMN_STEP)
            .map(|i| start + from + i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_on_a_long_line_are_the_bytes_counting_finds() {
        // A long line of one-, two- and three-byte characters, and lines after it.
        let line: String = (0..5000)
            .map(|i| match i % 7 {
                0 => 'é',
                3 => '€',
                _ => 'a',
            })
            .collect();
        let text = format!("x\n{line}\nshort\n\n{line}");
        let lines = LineStarts::new(&text);
        let mut columns = Columns::new(&text);
        for l in 1..=6 {
            for c in (0..5010)
                .step_by(37)
                .chain([1, 255, 256, 257, 512, 513, 5000, 5001, 5002])
            {
                assert_eq!(
                    columns.byte_of(l, c),
                    lines.byte_of(&text, l, c),
                    "line {l} column {c}"
                );
            }
        }
    }

    fn loc(start: usize, end: usize, after: &str) -> Located {
        Located {
            start,
            end,
            after: after.into(),
            label: Label::Rule("r".into()),
        }
    }

    #[test]
    fn nested_replacements_are_folded_into_the_kept_text_of_the_outer_one() {
        // `var $A = $B` → `let $A = $B` over a var holding a var holding a var.
        let before = "var a = f(() => { var b = g(() => { var c = 1; }); });\nvar d = 2;\n";
        let at = |t: &str| before.find(t).expect("in before");
        let (a, b, c, d) = (at("var a"), at("var b"), at("var c"), at("var d"));
        let all = vec![
            loc(
                a,
                at("\nvar d"),
                "let a = f(() => { var b = g(() => { var c = 1; }); })",
            ),
            loc(b, at(" });\n"), "let b = g(() => { var c = 1; })"),
            loc(c, at(" }); });"), "let c = 1"),
            loc(d, before.len() - 1, "let d = 2"),
        ];
        assert!(folded(before, &outermost(&all)).is_none(), "nothing nests");
        let got = folded(before, &all).expect("nests");
        assert_eq!(got.len(), 2);
        assert_eq!(
            splice(before, got.iter().map(|l| (l.start, l.end, &*l.after))),
            "let a = f(() => { let b = g(() => { let c = 1 }) })\nlet d = 2\n"
        );
        // The same nested statement twice: each in its place.
        let before = "var o = {\n  f() { var x = 1; },\n  g() { var x = 1; },\n};\n";
        let first = before.find("var x").expect("first");
        let second = before.rfind("var x").expect("second");
        let twice = vec![
            loc(
                0,
                before.len() - 1,
                &before[..before.len() - 2].replacen("var o", "let o", 1),
            ),
            loc(first, first + 10, "let x = 1"),
            loc(second, second + 10, "let x = 1"),
        ];
        let got = folded(before, &twice).expect("nests");
        assert_eq!(
            splice(before, got.iter().map(|l| (l.start, l.end, &*l.after))),
            "let o = {\n  f() { let x = 1 },\n  g() { let x = 1 },\n}\n"
        );
        // A nested one whose text the outer output does not keep is left out.
        let dropped = vec![loc(a, at("\nvar d"), "x"), all[1].clone()];
        let got = folded(before, &dropped).expect("nests");
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].after, "x");
    }

    #[test]
    fn a_character_column_is_found_past_multibyte_text() {
        let text = "é = 1\nab\n";
        let l = LineStarts::new(text);
        assert_eq!(l.byte_of(text, 1, 2), Some(2));
        assert_eq!(l.byte_of(text, 2, 3), Some(9));
        assert_eq!(l.line_of(8), 1);
    }
}
