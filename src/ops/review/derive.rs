/*!
Cutting one file of a preview into sites.

The preview's recipe is re-run on the file's before side (the blob the preview was
staged on, never the work tree): an edit's ops, a scan's rules (when the rule files
still hash as they did at staging). Each replacement it makes is located in the
before text by its byte range. When splicing them all into the before text gives the
stored after side, each replacement is a site, exactly. When it does not (a
formatter ran, an import was added, `-i` took some matches only, a hand edit), the
file's line diff is cut into regions, each widened to the replacements it touches,
and each region is either the replacements it holds (when they account for it), or
one site of its own: `differs` (the re-run makes another change there), `dependent`
(no replacement in it, in a file that has sites: an import, a formatter's hunk) or
`free` (a file the recipe does not touch, and every region of a preview with no
recipe to re-run: a patch, a command's changes).

Sites never overlap, so any subset of them spliced into the before text is a file:
that is how `apply` obeys decisions.
*/

use crate::ops::edit::recipe::EditOps;
use crate::ops::scan::recipe::ScanRules;

/// The ops compiled for each language met (`None`: they do not compile for it).
pub(super) type RewriterCache = std::sync::Mutex<
    std::collections::HashMap<crate::lang::Lang, Option<std::sync::Arc<crate::rewrite::Rewriter>>>,
>;

/// What a preview's sites are re-derived with.
pub(super) enum Recipe {
    /// The ops, their labels, and the ops compiled per language (once, not per file).
    Edit(EditOps, Vec<String>, RewriterCache),
    Scan(Box<ScanRules>),
    /// Nothing to re-run (why, for the notes).
    None(String),
}

impl Recipe {
    pub(super) fn of(repo: &crate::repo::Repo, preview: &crate::txn::Preview) -> Recipe {
        use crate::change::PreviewKind;
        use crate::ops::recipe::Recorded;
        // A recorded folder or config outside the repository (a forged preview) is not
        // read: no rules are loaded from there.
        if let Err(e) = crate::ops::trust::check_contained(repo, preview) {
            return Recipe::None(e.to_string());
        }
        let meta = &preview.meta;
        match meta.kind {
            PreviewKind::Edit => match EditOps::of(meta) {
                Some(ops) => Recipe::Edit(
                    ops,
                    meta.ops
                        .iter()
                        .map(|o| format!("{} => {}", o.pattern, o.rewrite))
                        .collect(),
                    RewriterCache::default(),
                ),
                None => Recipe::None("the preview recorded no ops to re-run".into()),
            },
            PreviewKind::Scan => {
                let recipe = crate::ops::scan::recipe::ScanRecipe::recorded(meta).map(|r| {
                    crate::ops::scan::recipe::ScanRecipe {
                        // Review re-runs every fix; which ones the preview holds is
                        // read from its after side.
                        selected: false,
                        ..r
                    }
                });
                match ScanRules::of(repo, recipe.as_ref()) {
                    Ok(rules) => Recipe::Scan(Box::new(rules)),
                    Err(why) => Recipe::None(format!(
                        "{why}: sites are the changed regions of each file, grouped by \
                         change"
                    )),
                }
            }
            kind => Recipe::None(format!(
                "a {} preview has no rule or op: sites are the changed regions of each \
                 file, grouped by change",
                kind.as_str()
            )),
        }
    }

    pub(super) fn reruns(&self) -> bool {
        !matches!(self, Recipe::None(_))
    }

    /// The replacements the recipe makes on `before`, located: (start, end, after,
    /// label), sorted by start, the outer one first where they nest.
    fn located(&self, path: &str, before: &str) -> Vec<Located> {
        let mut out: Vec<Located> = match self {
            Recipe::Edit(ops, labels, cache) => {
                // A file the ops were not run on as a whole (an embedding one) has no
                // language of its own here; the others share their language's compile.
                let rw = match crate::files::language_of(path) {
                    Some(lang) => {
                        let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
                        cache
                            .entry(lang)
                            .or_insert_with(|| ops.rewriter(path).map(std::sync::Arc::new))
                            .clone()
                    }
                    None => ops.rewriter(path).map(std::sync::Arc::new),
                };
                let Some(rw) = rw else {
                    return Vec::new();
                };
                // SAFETY: as in `edit`: every parse inside makes a parser of its own in
                // the arena (`rewrite::parse_doc`, `parse_owned_from`), and the trees are
                // dropped or pinned inside `replacements`, which hands out plain Rust
                // data; nothing here selects (no callback runs).
                let _arena = unsafe { crate::alloc::ParseArena::open() };
                let Ok(Some(result)) = rw.replacements(before) else {
                    return Vec::new();
                };
                result
                    .replacements
                    .into_iter()
                    .filter(|r| before.get(r.start..r.start + r.before.len()) == Some(&*r.before))
                    .map(|r| Located {
                        start: r.start,
                        end: r.start + r.before.len(),
                        after: r.after,
                        label: Label::Op(labels.get(r.op).cloned().unwrap_or_default()),
                    })
                    .collect()
            }
            Recipe::Scan(rules) => {
                let Some(fixes) = rules.fixes(path, before) else {
                    return Vec::new();
                };
                let mut columns = Columns::new(before);
                fixes
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
                    .collect()
            }
            Recipe::None(_) => Vec::new(),
        };
        out.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
        out
    }
}

/// The outermost of `located` (sorted as [`Recipe::located`] sorts): where
/// replacements nest or overlap, the first.
fn outermost(located: &[Located]) -> Vec<Located> {
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
fn folded(before: &str, located: &[Located]) -> Option<Vec<Located>> {
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
pub(super) enum Label {
    Op(String),
    Rule(String),
    None,
}

/// A replacement of the re-run recipe, in the before text's bytes.
#[derive(Debug, Clone)]
struct Located {
    start: usize,
    end: usize,
    after: String,
    label: Label,
}

/// How a site relates to the recipe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum SpanKind {
    /// One replacement of the re-run recipe, as stored.
    Exact,
    /// A region the re-run recipe changes otherwise.
    Differs,
    /// A region no replacement touches, in a file that has sites.
    Dependent,
    /// A region no replacement touches, in a file that has none (or a preview with no
    /// recipe).
    Free,
}

/// One site (or dependent change) of a text file: bytes `start..end` of the before
/// text become `after`.
#[derive(Debug, Clone)]
pub(super) struct Span {
    pub start: usize,
    pub end: usize,
    pub after: String,
    pub label: Label,
    pub kind: SpanKind,
}

/// The sites of one file: its text ones, or the whole entry (added, deleted,
/// binary, a mode change).
pub(super) enum FileSites {
    Text { before: String, spans: Vec<Span> },
    Whole,
}

/// Cuts one modified text file into sites.
pub(super) fn file_sites(recipe: &Recipe, path: &str, before: &str, after: &str) -> Vec<Span> {
    let all = recipe.located(path, before);
    // The outermost replacements, and (where some nest) the same with the nested ones
    // folded in, as a scan's later passes make them: whichever the preview holds.
    let mut ways = vec![outermost(&all)];
    ways.extend(folded(before, &all));
    let exact = |l: Located| Span {
        start: l.start,
        end: l.end,
        after: l.after,
        label: l.label,
        kind: SpanKind::Exact,
    };
    for located in &ways {
        if !located.is_empty()
            && splice(before, located.iter().map(|l| (l.start, l.end, &*l.after))) == after
        {
            return located.iter().cloned().map(exact).collect();
        }
    }
    // Else the regions of the way that accounts for most of the file.
    let spans = ways
        .into_iter()
        .map(|located| by_regions(before, after, located))
        .min_by_key(|spans| spans.iter().filter(|s| s.kind == SpanKind::Differs).count())
        .unwrap_or_default();
    if splice(before, spans.iter().map(|s| (s.start, s.end, &*s.after))) == after {
        return spans;
    }
    // Never expected: the regions always rebuild the file. One site, then.
    vec![Span {
        start: 0,
        end: before.len(),
        after: after.to_string(),
        label: Label::None,
        kind: SpanKind::Free,
    }]
}

/// The regions where the stored after side differs from the before side with every
/// replacement made (widened to whole replacements): each one site (`differs` when
/// it holds a replacement, else a dependent change or a free one); every replacement
/// outside them is a site as it is.
fn by_regions(before: &str, after: &str, located: Vec<Located>) -> Vec<Span> {
    // The spliced text, as segments: (spliced start, spliced end, before start,
    // before end, which replacement).
    let mut spliced = String::with_capacity(before.len());
    let mut segs: Vec<(usize, usize, usize, usize, Option<usize>)> = Vec::new();
    let mut at = 0;
    for (i, l) in located.iter().enumerate() {
        let s0 = spliced.len();
        spliced.push_str(&before[at..l.start]);
        segs.push((s0, spliced.len(), at, l.start, None));
        let s1 = spliced.len();
        spliced.push_str(&l.after);
        segs.push((s1, spliced.len(), l.start, l.end, Some(i)));
        at = l.end;
    }
    let s0 = spliced.len();
    spliced.push_str(&before[at..]);
    segs.push((s0, spliced.len(), at, before.len(), None));
    let (sl, al) = (LineStarts::new(&spliced), LineStarts::new(after));
    let s_lines: Vec<&str> = spliced.split_inclusive('\n').collect();
    let a_lines: Vec<&str> = after.split_inclusive('\n').collect();
    let mut regions = line_regions(&s_lines, &a_lines);
    // Widen each region to the lines of the replacement outputs it cuts into (the
    // lines around a region are equal on both sides, so both widen alike).
    for _ in 0..8 {
        let mut changed = false;
        for r in regions.iter_mut() {
            let (rs, re) = (sl.start(r.b0, &spliced), sl.start(r.b1, &spliced));
            for &(os, oe, _, _, which) in &segs {
                if which.is_none() {
                    continue;
                }
                let cuts = if rs == re {
                    os < rs && rs < oe
                } else if os == oe {
                    rs < os && os < re
                } else {
                    os < re && rs < oe && (os < rs || oe > re)
                };
                if !cuts {
                    continue;
                }
                let lo = sl.line_of(os.min(rs));
                let hi = (sl.line_of(oe.max(re).saturating_sub(1).max(os.min(rs))) + 1).max(r.b1);
                if lo < r.b0 || hi > r.b1 {
                    r.a0 -= r.b0 - lo.min(r.b0);
                    r.a1 += hi - r.b1;
                    r.b0 = lo.min(r.b0);
                    r.b1 = hi;
                    changed = true;
                }
            }
        }
        regions = merge_regions(regions);
        if !changed {
            break;
        }
    }
    // Spliced bytes to before bytes. A region's ends never fall inside a replacement;
    // one that starts (ends) where a deletion is, starts after (ends before) it.
    let s_len = spliced.len();
    let to_before = |pos: usize, end: bool| -> usize {
        for &(ss, se, bs, be, which) in &segs {
            match which {
                None if (!end && ss <= pos && pos < se) || (end && ss < pos && pos <= se) => {
                    return bs + (pos - ss)
                }
                Some(_) if ss == se && pos == ss => return if end { bs } else { be },
                Some(_) if ss != se && !end && pos == ss => return bs,
                Some(_) if ss != se && end && pos == se => return be,
                _ => {}
            }
        }
        if pos >= s_len {
            before.len()
        } else {
            0
        }
    };
    let mut in_region = vec![false; located.len()];
    let mut spans = Vec::new();
    for r in &regions {
        let (ss, se) = (sl.start(r.b0, &spliced), sl.start(r.b1, &spliced));
        let bs = to_before(ss, false);
        let be = to_before(se, true).max(bs);
        let (as_, ae) = (al.start(r.a0, after), al.start(r.a1, after));
        let mut labels: Vec<&Label> = Vec::new();
        for &(os, oe, _, _, which) in &segs {
            let Some(i) = which else { continue };
            let inside = if os == oe {
                ss < os && os < se
            } else {
                ss <= os && oe <= se
            };
            if inside {
                in_region[i] = true;
                labels.push(&located[i].label);
            }
        }
        labels.dedup();
        if before[bs..be] == after[as_..ae] {
            // The recipe would change this region and the preview does not (a match
            // `-i` declined, a site a review rejected): no site.
            continue;
        }
        let (label, kind) = match labels.as_slice() {
            [] => (Label::None, SpanKind::Dependent),
            [one] => ((*one).clone(), SpanKind::Differs),
            _ => (Label::None, SpanKind::Differs),
        };
        spans.push(Span {
            start: bs,
            end: be,
            after: after[as_..ae].to_string(),
            label,
            kind,
        });
    }
    for (l, inside) in located.into_iter().zip(in_region) {
        if !inside {
            spans.push(Span {
                start: l.start,
                end: l.end,
                after: l.after,
                label: l.label,
                kind: SpanKind::Exact,
            });
        }
    }
    spans.sort_by_key(|s| (s.start, s.end));
    // A file with no replacement at all has no sites: its regions are free, not
    // dependents of nothing.
    if spans.iter().all(|s| s.kind == SpanKind::Dependent) {
        for s in &mut spans {
            s.kind = SpanKind::Free;
        }
    }
    spans
}

/// A changed region in line numbers (0-based, end exclusive) of both sides.
#[derive(Debug, Clone, Copy)]
struct Region {
    b0: usize,
    b1: usize,
    a0: usize,
    a1: usize,
}

fn line_regions(b: &[&str], a: &[&str]) -> Vec<Region> {
    use similar::DiffOp;
    let ops = similar::capture_diff_slices(similar::Algorithm::Myers, b, a);
    let mut out: Vec<Region> = Vec::new();
    for op in ops {
        let (b0, b1, a0, a1) = match op {
            DiffOp::Equal { .. } => continue,
            DiffOp::Delete {
                old_index,
                old_len,
                new_index,
            } => (old_index, old_index + old_len, new_index, new_index),
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => (old_index, old_index, new_index, new_index + new_len),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => (
                old_index,
                old_index + old_len,
                new_index,
                new_index + new_len,
            ),
        };
        match out.last_mut() {
            Some(last) if last.b1 == b0 && last.a1 == a0 => {
                last.b1 = b1;
                last.a1 = a1;
            }
            _ => out.push(Region { b0, b1, a0, a1 }),
        }
    }
    out
}

/// Merges regions that overlap (after widening); the lines between two merged
/// regions are equal on both sides.
fn merge_regions(mut regions: Vec<Region>) -> Vec<Region> {
    regions.sort_by_key(|r| (r.b0, r.a0));
    let mut out: Vec<Region> = Vec::with_capacity(regions.len());
    for r in regions {
        match out.last_mut() {
            Some(last) if r.b0 < last.b1 || (r.b0 == last.b1 && r.a0 < last.a1) => {
                last.b1 = last.b1.max(r.b1);
                last.a1 = last.a1.max(r.a1);
                last.a0 = last.a0.min(r.a0);
            }
            _ => out.push(r),
        }
    }
    out
}

/// `text` with each `(start, end, with)` (sorted, not overlapping) replaced.
pub(super) fn splice<'a>(
    text: &str,
    parts: impl IntoIterator<Item = (usize, usize, &'a str)>,
) -> String {
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
pub(super) struct LineStarts(Vec<usize>);

impl LineStarts {
    pub(super) fn new(text: &str) -> LineStarts {
        let mut v = vec![0];
        v.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        LineStarts(v)
    }

    /// The 0-based line holding byte `at`.
    pub(super) fn line_of(&self, at: usize) -> usize {
        match self.0.binary_search(&at) {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }

    /// The byte where 0-based line `line` starts (the text's end past the last).
    fn start(&self, line: usize, text: &str) -> usize {
        self.0
            .get(line)
            .copied()
            .unwrap_or(text.len())
            .min(text.len())
    }

    /// The byte of 1-based `line` and character `column`.
    fn byte_of(&self, text: &str, line: usize, column: usize) -> Option<usize> {
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

    fn span(s: &Span) -> (usize, usize, &str, &SpanKind) {
        (s.start, s.end, s.after.as_str(), &s.kind)
    }

    #[test]
    fn adjacent_lines_without_a_recipe_are_one_region_an_unchanged_line_cuts_them() {
        let before = "a\nb\nc\nd\n";
        let after = "A\nB\nc\nD\n";
        let spans = file_sites(&Recipe::None(String::new()), "x.txt", before, after);
        let got: Vec<_> = spans.iter().map(span).collect();
        assert_eq!(
            got,
            vec![
                (0, 4, "A\nB\n", &SpanKind::Free),
                (6, 8, "D\n", &SpanKind::Free)
            ]
        );
    }

    #[test]
    fn replacements_account_for_a_region_or_make_it_one_site() {
        let before = "x = f(1)\ny = f(2)\n";
        let after = "import g\nx = g(1)\ny = g( 2)\n";
        let located = vec![
            Located {
                start: 4,
                end: 5,
                after: "g".into(),
                label: Label::Op("f => g".into()),
            },
            Located {
                start: 13,
                end: 17,
                after: "g(2)".into(),
                label: Label::Op("f => g".into()),
            },
        ];
        let spans = by_regions(before, after, located);
        let got: Vec<_> = spans.iter().map(span).collect();
        assert_eq!(
            got,
            vec![
                (0, 0, "import g\n", &SpanKind::Dependent),
                (4, 5, "g", &SpanKind::Exact),
                (9, 18, "y = g( 2)\n", &SpanKind::Differs),
            ]
        );
        assert_eq!(
            splice(before, spans.iter().map(|s| (s.start, s.end, &*s.after))),
            after
        );
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
