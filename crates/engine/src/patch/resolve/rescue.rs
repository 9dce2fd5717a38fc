//! The rescues for context that drifted since the patch was written: the chunk's
//! unchanged first and last lines with a short stretch between them, then a window that
//! shares most of its lines (a bounded longest common subsequence).

use super::super::normalize::is_significant;
use super::super::normalize::Level;
use super::super::parse::ChunkLine;
use super::keys::find_all;
use super::keys::keys_of;
use super::keys::Keys;
use super::Attempt;
use super::Error;

/// The most chunk lines the LCS rescue looks at: it is quadratic per window, and a
/// large chunk that matches nowhere has more likely been mis-targeted than drifted.
const LCS_MAX_LINES: usize = 48;
/// The fewest significant lines for either rescue to have evidence worth acting on.
const LCS_MIN_SIGNIFICANT: usize = 3;
/// Bound on the LCS work per chunk (cells of the DP tables summed over windows).
pub(super) const LCS_BUDGET: usize = 30_000_000;

/// The rescues (prefix and suffix, then the longest common subsequence): a window of
/// the file to replace and how the old lines align in it. They overwrite lines the
/// patch did not name, which is only worth it for a chunk that removes lines itself:
/// one that only adds must not delete anything.
#[allow(clippy::type_complexity)]
pub(super) fn rescue(
    a: &Attempt,
    keys: &mut Keys,
) -> Result<Option<(Level, usize, usize, Vec<Option<usize>>)>, Error> {
    let removes = a
        .chunk
        .lines
        .iter()
        .any(|l| matches!(l, ChunkLine::Remove(_)));
    if !removes {
        return Ok(None);
    }
    let rescue_keys: Vec<String> = keys_of(Level::PrefixSuffix, &a.old);
    let hay: &[String] = keys.get(Level::PrefixSuffix);
    for level in [Level::PrefixSuffix, Level::Lcs] {
        let found = if level == Level::PrefixSuffix {
            prefix_suffix(hay, &rescue_keys, &a.old, &a.new, a.start)
        } else {
            lcs_rescue(hay, &rescue_keys, a.start)
        };
        match found {
            Rescue::One(at, del) => {
                let align = align(&rescue_keys, &hay[at..at + del], at);
                return Ok(Some((level, at, del, align)));
            }
            Rescue::Many(cands) => return Err(a.ambiguous(level, &cands)),
            Rescue::None => {}
        }
    }
    Ok(None)
}

enum Rescue {
    None,
    /// Start and length of the file window to replace.
    One(usize, usize),
    Many(Vec<usize>),
}

/// The chunk's unchanged leading and trailing lines, found with a short stretch of
/// other lines between them (one line up to twice the chunk's middle, plus two): what
/// lay between is replaced.
fn prefix_suffix(
    hay: &[String],
    old_keys: &[String],
    old: &[&str],
    new: &[&str],
    from: usize,
) -> Rescue {
    let p = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let max_s = old.len().min(new.len()) - p;
    let s = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(max_s)
        .take_while(|(a, b)| a == b)
        .count();
    if p == 0 || s == 0 {
        return Rescue::None;
    }
    let significant = old[..p]
        .iter()
        .chain(&old[old.len() - s..])
        .filter(|l| is_significant(l))
        .count();
    if significant < 2 {
        return Rescue::None;
    }
    let mid = old.len() - p - s;
    let max_gap = 2 * mid + 2;
    let pre = &old_keys[..p];
    let suf = &old_keys[old.len() - s..];
    let mut cands = Vec::new();
    let mut spans = Vec::new();
    for i in find_all(hay, pre, from) {
        let a = i + p;
        // At least one line between: a rescue replaces something that drifted.
        for g in 1..=max_gap {
            let j = a + g;
            if j + s > hay.len() {
                break;
            }
            if hay[j..j + s] == *suf {
                cands.push(i);
                spans.push((i, j + s - i));
            }
        }
    }
    match spans.len() {
        0 => Rescue::None,
        1 => Rescue::One(spans[0].0, spans[0].1),
        _ => Rescue::Many(cands),
    }
}

/// Weighted LCS table size guard and scorer: blank lines weigh 1, others 2, so that
/// runs of blank lines cannot make a window look similar.
fn lcs_table(a: &[String], b: &[String]) -> Vec<Vec<u32>> {
    let mut t = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            t[i][j] = if a[i] == b[j] {
                t[i + 1][j + 1] + if is_significant(&a[i]) { 2 } else { 1 }
            } else {
                t[i + 1][j].max(t[i][j + 1])
            };
        }
    }
    t
}

/// Aligns the chunk's old lines with a file window: for each old line, the file line
/// (absolute index) it matched.
pub(super) fn align(old: &[String], window: &[String], at: usize) -> Vec<Option<usize>> {
    let t = lcs_table(old, window);
    let mut out = vec![None; old.len()];
    let (mut i, mut j) = (0, 0);
    while i < old.len() && j < window.len() {
        if old[i] == window[j] {
            out[i] = Some(at + j);
            i += 1;
            j += 1;
        } else if t[i + 1][j] >= t[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// Significant lines matched by the best alignment of `old` with `window`.
pub(super) fn significant_matches(old: &[String], window: &[String]) -> usize {
    align(old, window, 0)
        .iter()
        .enumerate()
        .filter(|(i, m)| m.is_some() && is_significant(&old[*i]))
        .count()
}

/// A window of the chunk's length whose lines are mostly the chunk's: at least three
/// quarters of its significant lines, one of its edge lines in place, and no other
/// window as good.
fn lcs_rescue(hay: &[String], old: &[String], from: usize) -> Rescue {
    let n = old.len();
    let sig = old.iter().filter(|l| is_significant(l)).count();
    if n > LCS_MAX_LINES || sig < LCS_MIN_SIGNIFICANT || hay.len() < n || from + n > hay.len() {
        return Rescue::None;
    }
    let need = (3 * sig).div_ceil(4);
    let windows = hay.len() - n + 1 - from;
    if windows.saturating_mul(n * n) > LCS_BUDGET {
        return Rescue::None;
    }
    let set: std::collections::HashSet<&str> = old
        .iter()
        .filter(|l| is_significant(l))
        .map(String::as_str)
        .collect();
    let mut best = 0usize;
    let mut cands: Vec<usize> = Vec::new();
    for at in from..=hay.len() - n {
        let w = &hay[at..at + n];
        if w[0] != old[0] && w[n - 1] != old[n - 1] {
            continue;
        }
        // Cheap bound before the quadratic score.
        let bound = w.iter().filter(|l| set.contains(l.as_str())).count();
        if bound < need || bound < best {
            continue;
        }
        let score = significant_matches(old, w);
        if score < need {
            continue;
        }
        if score > best {
            best = score;
            cands.clear();
        }
        if score == best {
            cands.push(at);
        }
    }
    match cands.len() {
        0 => Rescue::None,
        1 => Rescue::One(cands[0], n),
        _ => Rescue::Many(cands),
    }
}
