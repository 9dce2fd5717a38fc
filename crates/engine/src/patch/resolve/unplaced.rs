//! The errors of a chunk that cannot be placed: nowhere (with the file window closest
//! to it, and where its new lines stand if they do) or at several places.

use super::super::normalize::Level;
use super::super::parse::Chunk;
use super::keys::find_all;
use super::keys::keys_of;
use super::keys::Keys;
use super::rescue::significant_matches;
use super::rescue::LCS_BUDGET;
use super::Attempt;
use super::Ctx;
use super::Error;
use super::Text;

/// The error for a chunk no step could place: what was expected, the closest window,
/// and where its new lines were seen if they were.
pub(super) fn no_match(a: &Attempt, keys: &mut Keys, applied_hint: Option<usize>) -> Error {
    let rescue_keys: Vec<String> = keys_of(Level::PrefixSuffix, &a.old);
    let hay: &[String] = keys.get(Level::PrefixSuffix);
    let (near, near_unique) = near_miss(a.text, &a.old);
    let mut detail = no_match_detail(a.text, hay, &rescue_keys, &a.old, a.start);
    if let Some(at) = applied_hint {
        detail.push_str(&format!(
            "\nthe chunk's new lines are at line {}: it may be applied already",
            at + 1
        ));
    }
    if let Some(n) = &near {
        detail.push_str(&format!(
            "\nfirst difference at line {}:\n  expected: {}\n  found:    {}\n{}",
            n.diverges_at,
            n.expected_line,
            n.found_line,
            n.diff.trim_end()
        ));
    }
    Error::NoMatch {
        path: a.ctx.path.to_string(),
        chunk: a.chunk_no,
        line: a.chunk.line,
        near_unique,
        detail,
        near,
    }
}

/// The file region closest to a chunk's old lines ([`crate::text::closest`]), and
/// whether its text occurs in the file once.
fn near_miss(text: &Text, old: &[&str]) -> (Option<Box<crate::text::closest::Near>>, bool) {
    let mut file = String::new();
    for (l, _) in &text.lines {
        file.push_str(l);
        file.push('\n');
    }
    let near = crate::text::closest::closest(&file, &old.join("\n"));
    let unique = near
        .as_ref()
        .is_some_and(|n| crate::text::closest::occurrences(&file, &n.text).len() == 1);
    (near.map(Box::new), unique)
}

pub(super) fn ambiguous(
    ctx: &Ctx,
    chunk: &Chunk,
    chunk_no: usize,
    level: Level,
    cands: &[usize],
) -> Error {
    Error::Ambiguous {
        path: ctx.path.to_string(),
        chunk: chunk_no,
        line: chunk.line,
        level,
        candidates: cands.iter().map(|c| c + 1).collect(),
    }
}

/// What the error for an unplaceable chunk shows: the chunk's old lines, and the file
/// window most like them.
fn no_match_detail(
    text: &Text,
    hay: &[String],
    old_keys: &[String],
    old: &[&str],
    from: usize,
) -> String {
    let mut out = String::from("expected lines:\n");
    for l in old.iter().take(12) {
        out.push_str(&format!("  {l}\n"));
    }
    if old.len() > 12 {
        out.push_str(&format!("  … ({} lines in all)\n", old.len()));
    }
    let n = old.len().min(hay.len());
    if n == 0 || from >= hay.len() {
        out.push_str(&format!(
            "the file has no lines after line {from} to search"
        ));
        return out;
    }
    let windows = hay.len().saturating_sub(n) + 1;
    let cheap = windows.saturating_mul(n * n) > LCS_BUDGET;
    // Ranked by shared lines, then by lines at the same offset, then first.
    let mut best: Option<(usize, (usize, usize))> = None;
    for at in 0..windows {
        let w = &hay[at..at + n];
        let positional = w.iter().zip(old_keys).filter(|(a, b)| a == b).count();
        let shared = if cheap {
            positional
        } else {
            significant_matches(&old_keys[..n], w)
        };
        let score = (shared, positional);
        if shared > 0 && best.is_none_or(|(_, b)| score > b) {
            best = Some((at, score));
        }
    }
    match best {
        Some((at, _)) => {
            out.push_str(&format!(
                "closest lines in the file ({}-{}):\n",
                at + 1,
                at + n
            ));
            for (k, (l, _)) in text.lines[at..at + n].iter().enumerate().take(12) {
                out.push_str(&format!("  {:>5} | {l}\n", at + k + 1));
            }
            if from > 0 {
                out.push_str(&format!(
                    "(the chunk was searched after line {from}, past the previous chunk and its anchors)\n"
                ));
            }
        }
        None => out.push_str("no line of the chunk occurs in the file\n"),
    }
    // Say so when only an indentation-blind comparison would have matched: that is
    // refused on purpose, and the user should know it was close.
    let level = Level::Indentation;
    let pat = keys_of(level, old);
    let flat: Vec<String> = text.lines.iter().map(|(t, _)| level.key(t)).collect();
    let cands = find_all(&flat, &pat, from);
    if let Some(at) = cands.first() {
        out.push_str(&format!(
            "lines {}-{} match only if indentation is ignored, which is never done for \
             lines a patch replaces\n",
            at + 1,
            at + old.len()
        ));
    }
    out.trim_end().to_string()
}
