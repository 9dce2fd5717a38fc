/*!
Where text an agent expected came closest to a file: the region most like it, the
first line where they part, and a small diff between the two.

A failed placement (`replace`'s `old_string`, a patch chunk's old lines) is only
useful to a model when it says what the file holds instead: a model that is told
"not found" guesses again, one that is shown the drifted line copies it. The
search votes: every expected line that occurs in the file (trimmed; the first and
last expected lines may be parts of a file line, as `old_string`s usually begin and
end mid-line) votes for the region start that would align it, so a region that
shifted or lost a line still wins. With no vote at all, a one-line expectation is
compared character by character with every line (a typo in a single line).
*/

use std::collections::HashMap;

/// Lines of a diff shown at most.
const MAX_DIFF_LINES: usize = 40;
/// Files longer than this are not compared character by character.
const MAX_FUZZY_LINES: usize = 20_000;
/// Candidates compared character by character after the vote.
const FINALISTS: usize = 8;

/// The region of a file closest to expected text.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Near {
    /// First and last line of the region (1-based, inclusive).
    pub start: usize,
    pub end: usize,
    /// The region's text, exactly as in the file (whole lines).
    pub text: String,
    /// The first file line where the expected text differs from the region.
    pub diverges_at: usize,
    /// That line as expected, and as the file has it.
    pub expected_line: String,
    pub found_line: String,
    /// A unified diff from the expected text to the region (at most 40 lines).
    pub diff: String,
}

/// The region of `file` closest to `expected`, or `None` when nothing of it is there.
pub fn closest(file: &str, expected: &str) -> Option<Near> {
    let lines: Vec<&str> = file.split_inclusive('\n').collect();
    let want: Vec<&str> = expected.trim_end_matches('\n').split('\n').collect();
    if lines.is_empty() || want.iter().all(|l| l.trim().is_empty()) {
        return None;
    }
    let n = want.len().min(lines.len());
    let last_start = lines.len() - n;
    let mut starts = voted_starts(&lines, &want, last_start);
    if starts.is_empty() && want.len() == 1 && lines.len() <= MAX_FUZZY_LINES {
        starts = (0..lines.len()).collect();
    }
    let region = |at: usize| lines[at..at + n].concat();
    let best = starts
        .into_iter()
        .map(|at| (at, similarity(expected, &region(at))))
        .filter(|(_, score)| *score > 0.3)
        // Highest score; on a tie, the first region.
        .fold(None::<(usize, f32)>, |best, (at, s)| match best {
            Some((_, b)) if b >= s => best,
            _ => Some((at, s)),
        })?
        .0;
    let text = region(best);
    let (k, expected_line, found_line) = divergence(&want, &lines[best..best + n]);
    Some(Near {
        start: best + 1,
        end: best + n,
        diverges_at: best + k + 1,
        expected_line,
        found_line,
        diff: small_diff(expected, &text, best + 1),
        text,
    })
}

/// Region starts (0-based, at most `last`) the expected lines vote for, the most
/// voted first, at most [`FINALISTS`] of them.
fn voted_starts(lines: &[&str], want: &[&str], last: usize) -> Vec<usize> {
    let mut at: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, l) in lines.iter().enumerate() {
        at.entry(l.trim()).or_default().push(i);
    }
    let mut votes: HashMap<usize, usize> = HashMap::new();
    let mut vote = |line: usize, k: usize| {
        if line >= k && line - k <= last {
            *votes.entry(line - k).or_default() += 1;
        }
    };
    for (k, w) in want.iter().enumerate() {
        let key = w.trim();
        // A line of only brackets or blanks says nothing about where it is.
        if !key.chars().any(char::is_alphanumeric) {
            continue;
        }
        let edge = k == 0 || k + 1 == want.len();
        if edge {
            for (i, l) in lines.iter().enumerate() {
                if l.contains(key) {
                    vote(i, k);
                }
            }
        } else if let Some(found) = at.get(key) {
            for &i in found {
                vote(i, k);
            }
        }
    }
    let mut ranked: Vec<(usize, usize)> = votes.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.into_iter().take(FINALISTS).map(|(s, _)| s).collect()
}

/// How alike two texts are, 0 to 1, by characters.
fn similarity(a: &str, b: &str) -> f32 {
    similar::TextDiff::configure()
        .timeout(std::time::Duration::from_millis(50))
        .diff_chars(a, b)
        .ratio()
}

/// The index (in the region) of the first line that differs, and that line both ways.
/// The first and last expected lines may be parts of their file lines.
fn divergence(want: &[&str], region: &[&str]) -> (usize, String, String) {
    let last = want.len().saturating_sub(1);
    for (k, (w, l)) in want.iter().zip(region).enumerate() {
        let l = l.trim_end_matches(['\n', '\r']);
        let same = if k == 0 && k == last {
            l.contains(w)
        } else if k == 0 {
            l.ends_with(w)
        } else if k == last {
            l.starts_with(w)
        } else {
            l == *w
        };
        if !same {
            return (k, w.to_string(), l.to_string());
        }
    }
    // Every line agrees: the region is shorter than the expected text (the file ends).
    let k = region.len().min(last);
    (
        k,
        want.get(k).copied().unwrap_or("").to_string(),
        String::new(),
    )
}

/// A unified diff from `expected` to the file's `region` (which starts at line
/// `first`), cut at [`MAX_DIFF_LINES`].
fn small_diff(expected: &str, region: &str, first: usize) -> String {
    let mut want = expected.to_string();
    if !want.ends_with('\n') {
        want.push('\n');
    }
    let diff = similar::TextDiff::from_lines(want.as_str(), region);
    let mut out = format!(
        "--- expected\n+++ file, lines {first}-{}\n",
        first + region.lines().count().saturating_sub(1)
    );
    for (shown, change) in diff.iter_all_changes().enumerate() {
        if shown == MAX_DIFF_LINES {
            out.push_str("… (diff cut)\n");
            break;
        }
        let sign = match change.tag() {
            similar::ChangeTag::Equal => ' ',
            similar::ChangeTag::Delete => '-',
            similar::ChangeTag::Insert => '+',
        };
        out.push(sign);
        out.push_str(change.value().trim_end_matches(['\n', '\r']));
        out.push('\n');
    }
    out
}

/// Every place `needle` occurs in `hay` (byte offsets, not overlapping), and the
/// 1-based line each starts on.
pub fn occurrences(hay: &str, needle: &str) -> Vec<(usize, usize)> {
    if needle.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut line = 1;
    let mut counted = 0;
    for (at, _) in hay.match_indices(needle) {
        line += hay[counted..at].matches('\n').count();
        counted = at;
        out.push((at, line));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str =
        "fn a() {\n    let x = 1;\n    call(x);\n}\n\nfn b() {\n    let y = 2;\n    other(y);\n}\n";

    #[test]
    fn finds_the_drifted_region_and_where_it_parts() {
        let near = closest(FILE, "fn b() {\n    let y = 3;\n    other(y);").unwrap();
        assert_eq!((near.start, near.end), (6, 8));
        assert_eq!(near.diverges_at, 7);
        assert_eq!(near.expected_line, "    let y = 3;");
        assert_eq!(near.found_line, "    let y = 2;");
        assert!(
            near.diff.contains("-    let y = 3;\n+    let y = 2;\n"),
            "{}",
            near.diff
        );
        assert_eq!(near.text, "fn b() {\n    let y = 2;\n    other(y);\n");
    }

    #[test]
    fn a_one_line_typo_is_found_by_characters() {
        let near = closest(FILE, "othr(y);").unwrap();
        assert_eq!((near.start, near.diverges_at), (8, 8));
        assert_eq!(near.found_line, "    other(y);");
    }

    #[test]
    fn partial_edge_lines_count() {
        let near = closest(FILE, "x = 1;\n    call(z").unwrap();
        assert_eq!((near.start, near.end, near.diverges_at), (2, 3, 3));
    }

    #[test]
    fn nothing_alike_is_none() {
        assert!(closest(FILE, "zzzzzzzzzzzzzzzzzzzzzzzzzzzz\nqqqqqqqqqqqqqqqqqq").is_none());
        assert!(closest("", "a").is_none());
    }

    #[test]
    fn occurrences_have_lines() {
        assert_eq!(
            occurrences("a x\nb\nx x\n", "x"),
            vec![(2, 1), (6, 3), (8, 3)]
        );
    }
}
