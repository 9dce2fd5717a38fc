/*!
Sites a `verify` run reported on: outliers, shown first.

`verify` (and `apply --verify`) journals how each run on a preview ended and the end
of its output ([`crate::txn::record_verify`]). An output line that names one of the
preview's paths with a line number — `src/a.ts:12:5: error …` as compilers, linters
and test runners print it, or `src/a.ts(12,5)` as `tsc` does — reports on that line
of the preview's after side (the worktree the command ran in held it); a site whose
after text holds the line was reported on.
*/

use std::collections::BTreeSet;
use std::collections::HashMap;

use super::derive::LineStarts;
use super::derive::Span;
use crate::repo::Repo;
use crate::txn::Preview;
use crate::Error;

/// Why a site a `verify` run reported on stands out.
pub(super) const WHY: &str = "a `verify` run reported on it (`git astedit log` shows its output)";

/// The lines (1-based, of the after side) the `verify` runs on `preview` reported on,
/// by path.
pub(super) fn reported(
    repo: &Repo,
    preview: &Preview,
) -> Result<HashMap<String, BTreeSet<usize>>, Error> {
    let mut out: HashMap<String, BTreeSet<usize>> = HashMap::new();
    let events = crate::txn::log(repo)?;
    let outputs = events
        .iter()
        .filter(|e| e.event == crate::txn::EventKind::Verified && e.id == preview.id)
        .flat_map(|e| e.notes.iter())
        .filter_map(|n| n.strip_prefix("output: "));
    for line in outputs {
        for e in &preview.entries {
            for n in lines_named(line, &e.path) {
                out.entry(e.path.clone()).or_default().insert(n);
            }
        }
    }
    Ok(out)
}

/// The line numbers `text` gives after `path` (`path:N`, `path(N`), where `path` is
/// not the tail of a longer name.
fn lines_named(text: &str, path: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices(path) {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '.') {
            continue;
        }
        let rest = &text[at + path.len()..];
        let Some(rest) = rest.strip_prefix(':').or_else(|| rest.strip_prefix('(')) else {
            continue;
        };
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(n) = digits.parse::<usize>() {
            out.push(n);
        }
    }
    out
}

/// For each span of a file (sorted, as derived), whether its after text holds one of
/// `lines` (1-based, of the after side).
pub(super) fn spans_hit(
    before: &str,
    spans: &[Span],
    lines: Option<&BTreeSet<usize>>,
) -> Vec<bool> {
    let Some(lines) = lines.filter(|l| !l.is_empty()) else {
        return vec![false; spans.len()];
    };
    let starts = LineStarts::new(before);
    let newlines = |s: &str| s.bytes().filter(|b| *b == b'\n').count() as isize;
    // How many lines the spans so far added (or removed).
    let mut shift: isize = 0;
    spans
        .iter()
        .map(|s| {
            let first = starts.line_of(s.start) as isize + 1 + shift;
            let last = first + newlines(s.after.trim_end_matches('\n'));
            shift += newlines(&s.after) - newlines(&before[s.start..s.end]);
            let (first, last) = (first.max(1) as usize, last.max(1) as usize);
            lines.range(first..=last).next().is_some()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_read_after_the_path_as_compilers_print_it() {
        assert_eq!(
            lines_named("src/a.ts:12:5: error TS2304", "src/a.ts"),
            vec![12]
        );
        assert_eq!(lines_named("src/a.ts(3,1): error", "src/a.ts"), vec![3]);
        assert_eq!(lines_named("/tmp/wt/src/a.ts:7 x", "src/a.ts"), vec![7]);
        assert!(lines_named("xsrc/a.ts:7", "src/a.ts").is_empty());
        assert!(lines_named("src/a.tsx:7", "src/a.ts").is_empty());
        assert!(lines_named("src/a.ts: no line", "src/a.ts").is_empty());
    }
}
