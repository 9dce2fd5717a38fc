//! A preview's sites made ready to group: each site's template, id and shown diff
//! (its lines clipped around it), the record of sites read, the outliers marked.

use std::collections::HashMap;

use rayon::prelude::*;

use super::derive;
use super::derive::FileSites;
use super::derive::Label;
use super::derive::SpanKind;
use super::record;
use super::template;
use super::verified;
use super::GroupRec;
use super::SiteDiff;
use crate::repo::Repo;
use crate::txn::Preview;
use crate::Error;

/// One site of a file, ready to be grouped: worked out per file, in parallel.
pub(super) struct Prepared {
    pub(super) id: String,
    pub(super) label: Label,
    pub(super) tmpl: String,
    pub(super) why: Option<String>,
    pub(super) diff: SiteDiff,
    /// Index into the file's spans (`None`: the whole entry).
    pub(super) span: Option<usize>,
}

/// A file's sites with their templates and ids, and how many dependent changes it
/// has (`reported`: the lines of its after side `verify` runs reported on). A site's id hashes its path, label, lines and enclosing line, and how many
/// equal ones came before it in the file (no line number).
pub(super) fn prepare(
    entry: &crate::txn::StoredEntry,
    sites: &FileSites,
    reruns: bool,
    reported: Option<&std::collections::BTreeSet<usize>>,
) -> (Vec<Prepared>, usize) {
    let mut out = Vec::new();
    let mut dependents = 0;
    // Keyed by a digest of the id's text: a site's lines can be a megabyte each (a
    // minified line holding hundreds of sites), too much to keep once per site.
    let mut seen: HashMap<[u8; 32], usize> = HashMap::new();
    let mut site = |label: Label,
                    tmpl: String,
                    why: Option<String>,
                    (diff, shown): (SiteDiff, SiteDiff),
                    span: Option<usize>,
                    ctx: &str| {
        use sha2::Digest;
        let base = format!(
            "{}\0{}\0{}\0{}\0{ctx}",
            entry.path,
            label_text(&label),
            diff.before,
            diff.after
        );
        let n = seen.entry(sha2::Sha256::digest(&base).into()).or_insert(0);
        *n += 1;
        Prepared {
            id: short_hash(&[&base, &n.to_string()]),
            label,
            tmpl,
            why,
            diff: shown,
            span,
        }
    };
    match sites {
        FileSites::Whole => {
            let what = match (&entry.before, &entry.after) {
                (None, _) => "added file",
                (_, None) => "deleted file",
                _ => "changed file (not text)",
            };
            let diff = SiteDiff {
                path: entry.path.clone(),
                line: 1,
                before: String::new(),
                after: format!("({what})"),
            };
            out.push(site(
                Label::None,
                what.to_string(),
                None,
                (diff.clone(), diff),
                None,
                "",
            ));
        }
        FileSites::Text { before, spans } => {
            let added = added_lines(before, spans);
            let lines = derive::LineStarts::new(before);
            let hit = verified::spans_hit(before, spans, reported);
            for (si, s) in spans.iter().enumerate() {
                if s.kind == SpanKind::Dependent {
                    dependents += 1;
                    continue;
                }
                let why = match s.kind {
                    _ if hit[si] => Some(verified::WHY.to_string()),
                    SpanKind::Differs => Some(
                        "the recipe, re-run on the before side, changes this region otherwise"
                            .to_string(),
                    ),
                    SpanKind::Free if reruns => Some(
                        "no rule or op of the preview makes this change (re-run on the before \
                         side)"
                            .to_string(),
                    ),
                    _ => None,
                };
                let mut tmpl = template::template(
                    &before[s.start..s.end],
                    &s.after,
                    template::indent_at(before, s.start),
                );
                if let Some(added) = &added {
                    tmpl = format!("{tmpl} with {added}");
                }
                let diff = site_diff(&entry.path, before, &lines, s);
                // The enclosing line (no line number) tells equal sites apart.
                let ctx = enclosing(before, s.start);
                out.push(site(s.label.clone(), tmpl, why, diff, Some(si), &ctx));
            }
        }
    }
    (out, dependents)
}

/// The usual change of each rule or op is its largest group; its other groups stand
/// out.
pub(super) fn mark_outliers(groups: &mut [GroupRec]) {
    let mut largest: HashMap<Label, (usize, usize)> = HashMap::new();
    for (i, g) in groups.iter().enumerate() {
        if g.outlier.is_some() || g.label == Label::None {
            continue;
        }
        let e = largest.entry(g.label.clone()).or_insert((i, 0));
        if g.sites.len() > e.1 {
            *e = (i, g.sites.len());
        }
    }
    for (i, g) in groups.iter_mut().enumerate() {
        if g.outlier.is_some() || g.label == Label::None {
            continue;
        }
        if let Some(&(usual, n)) = largest.get(&g.label) {
            if usual != i {
                g.outlier = Some(format!(
                    "differs from the usual change of its {} ({n} site{})",
                    match g.label {
                        Label::Rule(_) => "rule",
                        _ => "op",
                    },
                    if n == 1 { "" } else { "s" }
                ));
            }
        }
    }
}

/// The lines a file's dependent changes add where nothing was (an import, mostly),
/// as templates (`+import…;`), when every site of the file has one rule or op: part of
/// those sites' change, so an import added in one file only stands apart from the same
/// change elsewhere. `None` when there are none, or the file's sites have several
/// rules or ops (an added line is not told whose it is).
fn added_lines(before: &str, spans: &[derive::Span]) -> Option<String> {
    let mut labels = spans
        .iter()
        .filter(|s| s.kind != SpanKind::Dependent)
        .map(|s| &s.label);
    let first = labels.next()?;
    if labels.any(|l| l != first) {
        return None;
    }
    let mut added: Vec<String> = spans
        .iter()
        .filter(|s| {
            s.kind == SpanKind::Dependent
                && before[s.start..s.end].trim().is_empty()
                && !s.after.trim().is_empty()
        })
        .map(|s| template::template("", &s.after, ""))
        .collect();
    added.sort_unstable();
    added.dedup();
    (!added.is_empty()).then(|| added.join(" "))
}

/// The sites of each text file as the preview's record of sites gives them
/// ([`record`]), `None` for a file it does not give (no record, the file not in it, or
/// its sites not making the file's after text), and a note when the record was refused
/// for some files.
#[allow(clippy::type_complexity)]
pub(super) fn recorded_sites(
    repo: &Repo,
    preview: &Preview,
    texts: &[Option<(String, String)>],
) -> (Vec<Option<Vec<derive::Span>>>, Vec<String>) {
    let Some(record) = record::read(repo, preview.commit) else {
        return (vec![None; texts.len()], Vec::new());
    };
    let recorded: Vec<Option<Vec<derive::Span>>> = texts
        .par_iter()
        .zip(&preview.entries)
        .map(|(t, e)| {
            let (before, after) = t.as_ref()?;
            let sites = record.sites(&e.path, before, after)?;
            Some(sites.into_iter().map(derive::Span::exact).collect())
        })
        .collect();
    // Files the record has whose sites do not make their after side (a forged or stale
    // record), and text files it does not have (their replacements did not make the
    // staged text: an import, a formatter, a scan's pass that moved text).
    let (mut refused, mut absent) = (0, 0);
    for ((t, e), r) in texts.iter().zip(&preview.entries).zip(&recorded) {
        if t.is_some() && r.is_none() {
            match record.has(&e.path) {
                true => refused += 1,
                false => absent += 1,
            }
        }
    }
    let files = |n: usize| format!("{n} file{}", if n == 1 { "" } else { "s" });
    let mut notes = Vec::new();
    if refused > 0 {
        notes.push(format!(
            "the record of sites staged with the preview does not make the after side of \
             {}: re-derived",
            files(refused)
        ));
    }
    if absent > 0 && recorded.iter().any(Option::is_some) {
        notes.push(format!(
            "{} not in the record of sites (staging's replacements did not make the \
             staged text): re-derived",
            files(absent)
        ));
    }
    (recorded, notes)
}

/// An entry's before and after text (`None`: added, deleted, a mode change, not
/// UTF-8: a site of its own, whole).
pub(super) fn texts_of(
    repo: &Repo,
    e: &crate::txn::StoredEntry,
) -> Result<Option<(String, String)>, Error> {
    let (Some((b, bm)), Some((a, am))) = (e.before, e.after) else {
        return Ok(None);
    };
    if bm != am {
        return Ok(None);
    }
    let (before, after) = (crate::txn::blob(repo, b)?, crate::txn::blob(repo, a)?);
    match (String::from_utf8(before), String::from_utf8(after)) {
        (Ok(before), Ok(after)) => Ok(Some((before, after))),
        _ => Ok(None),
    }
}

/// How much of the line around a site its shown diff keeps on each side (in
/// characters): minified code puts hundreds of sites on one line of megabytes.
const CONTEXT_CHARS: usize = 160;
/// Where each side of a site's shown diff stops (a site can be a whole bundle), as
/// the HTML file's diffs stop.
const SIDE_BYTES: usize = 32 * 1024;

/// The whole lines a span sits on, before and after (no trailing line break), and
/// the same as shown: at most [`CONTEXT_CHARS`] of the line on either side of the
/// span, each side at most [`SIDE_BYTES`], saying what it left out. A site's id is
/// of the whole lines. `lines` are `before`'s line starts.
fn site_diff(
    path: &str,
    before: &str,
    lines: &derive::LineStarts,
    s: &derive::Span,
) -> (SiteDiff, SiteDiff) {
    let whole = whole_lines(path, before, lines, s);
    let head = s.start - before[..s.start].rfind('\n').map_or(0, |i| i + 1);
    let shown = SiteDiff {
        before: clip(&whole.before, head, s.end.max(s.start) - s.start),
        after: clip(&whole.after, head, s.after.len()),
        ..whole.clone()
    };
    (whole, shown)
}

/// `text` (a site's lines, the site at bytes `head..head + len`) with at most
/// [`CONTEXT_CHARS`] characters kept on either side of the site, and at most
/// [`SIDE_BYTES`] bytes in all, a note included; `…` where it cut.
fn clip(text: &str, head: usize, len: usize) -> String {
    let head = head.min(text.len());
    let stop = (head + len).min(text.len());
    let (pre, post) = (&text[..head], &text[stop..]);
    let mut out = String::new();
    match pre.char_indices().rev().nth(CONTEXT_CHARS - 1) {
        Some((i, _)) if i > 0 => {
            out.push('…');
            out.push_str(&pre[i..]);
        }
        _ => out.push_str(pre),
    }
    out.push_str(&text[head..stop]);
    match post.char_indices().nth(CONTEXT_CHARS) {
        Some((i, _)) => {
            out.push_str(&post[..i]);
            out.push('…');
        }
        None => out.push_str(post),
    }
    if out.len() > SIDE_BYTES {
        let mut cut = SIDE_BYTES - 64;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        let left = out.len() - cut;
        out.truncate(cut);
        out.push_str(&format!("\n… ({left} more bytes left out)"));
    }
    out
}

/// The whole lines a span sits on, before and after (no trailing line break);
/// `lines` are `before`'s line starts.
fn whole_lines(path: &str, before: &str, lines: &derive::LineStarts, s: &derive::Span) -> SiteDiff {
    let line_start = before[..s.start].rfind('\n').map_or(0, |i| i + 1);
    let end = s.end.max(s.start);
    let line_end = if end > s.start && before[..end].ends_with('\n') {
        end
    } else {
        before[end..].find('\n').map_or(before.len(), |i| end + i)
    };
    let before_lines = &before[line_start..line_end];
    let after_lines = format!(
        "{}{}{}",
        &before[line_start..s.start],
        s.after,
        &before[end..line_end]
    );
    SiteDiff {
        path: path.to_string(),
        line: lines.line_of(s.start) + 1,
        before: before_lines.trim_end_matches('\n').to_string(),
        after: after_lines.trim_end_matches('\n').to_string(),
    }
}

/// The nearest line above `at` indented less than `at`'s line (its enclosing
/// declaration, mostly), trimmed: part of a site's id, so that equal changes in
/// different functions have different ids, and none holds a line number.
fn enclosing(text: &str, at: usize) -> String {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let indent = |l: &str| l.len() - l.trim_start().len();
    let own = indent(&text[line_start..]);
    if own == 0 {
        return String::new();
    }
    text[..line_start]
        .lines()
        .rev()
        .take(500)
        .find(|l| !l.trim().is_empty() && indent(l) < own)
        .map(|l| l.trim().chars().take(80).collect())
        .unwrap_or_default()
}

pub(super) fn label_text(l: &Label) -> String {
    match l {
        Label::Op(o) => format!("op:{o}"),
        Label::Rule(r) => format!("rule:{r}"),
        Label::None => String::new(),
    }
}

/// The first 16 hex digits of SHA-256 over `parts` (each length-prefixed).
pub(super) fn short_hash(parts: &[&str]) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    let d = h.finalize();
    d.iter().take(8).map(|b| format!("{b:02x}")).collect()
}
