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

use super::located;
pub(super) use super::located::splice;
pub(super) use super::located::Label;
pub(super) use super::located::LineStarts;
use super::located::Located;
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
                located::of_replacements(before, result.replacements, labels)
            }
            Recipe::Scan(rules) => match rules.fixes(path, before) {
                Some(fixes) => located::of_fixes(before, fixes),
                None => Vec::new(),
            },
            Recipe::None(_) => Vec::new(),
        };
        located::sort(&mut out);
        out
    }
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

impl Span {
    /// A replacement as a site of its own.
    pub(super) fn exact(l: Located) -> Span {
        Span {
            start: l.start,
            end: l.end,
            after: l.after,
            label: l.label,
            kind: SpanKind::Exact,
        }
    }
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
    if let Some(exact) = located::exact(before, after, &all) {
        return exact.into_iter().map(Span::exact).collect();
    }
    // Else the regions of the way that accounts for most of the file.
    let spans = located::ways(before, &all)
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
