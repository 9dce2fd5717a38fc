/*!
Diff text (the base layer): unified diffs, stats and their colours. Never touches git;
callers hand in bytes.

Diffs follow `git diff`'s shape (`diff --git`, mode lines, `---`/`+++`, hunks with three
lines of context) so that they read like git's and `git apply` takes them.
*/

mod many;
pub use many::render_diffs;
pub use many::render_diffs_counted;
pub use many::DiffFile;
pub use many::LimitedDiff;

use std::fmt::Write;

use imara_diff::Algorithm;
use imara_diff::Diff;
use imara_diff::InternedInput;

use crate::change::FileMode;

/// The colours of text output, git's defaults (`color.diff.*`, `color.grep.*`).
pub mod style {
    use anstyle::AnsiColor;
    use anstyle::Style;

    /// Diff headers: `diff --git`, mode lines, `---`/`+++`.
    pub const META: Style = Style::new().bold();
    /// Hunk headers `@@ … @@`.
    pub const FRAG: Style = AnsiColor::Cyan.on_default();
    pub const OLD: Style = AnsiColor::Red.on_default();
    pub const NEW: Style = AnsiColor::Green.on_default();
    /// A path in `grep` output.
    pub const FILENAME: Style = AnsiColor::Magenta.on_default();
    /// A line number in `grep` output.
    pub const LINE_NUMBER: Style = AnsiColor::Green.on_default();
}
use style::FRAG;
use style::META;
use style::NEW;
use style::OLD;

/// One side of a file diff.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    pub bytes: &'a [u8],
    pub mode: FileMode,
}

/// Counts of a file diff, for `--stat` and summaries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct LineCounts {
    pub added: usize,
    pub removed: usize,
}

/// Appends `text` to `out`, in `style` when `color` is on. Each line is painted on its
/// own, as git does, so that a pager or a `grep` of the output never carries a colour
/// over a line break.
pub fn paint(out: &mut String, color: bool, style: anstyle::Style, text: &str) {
    if !color {
        out.push_str(text);
        return;
    }
    for line in text.split_inclusive('\n') {
        let (body, newline) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        if !body.is_empty() {
            let _ = write!(out, "{}{body}{}", style.render(), style.render_reset());
        }
        out.push_str(newline);
    }
}

/// Appends a git-style unified diff of one path to `out`; returns the line counts.
pub fn file_diff(
    out: &mut String,
    path: &str,
    before: Option<Side<'_>>,
    after: Option<Side<'_>>,
    color: bool,
) -> LineCounts {
    // Names with control characters, quotes or backslashes are quoted as git does
    // (non-ASCII stays raw, as with core.quotePath=false), so `git apply` reads them.
    let quoting = crate::text::Quoting { non_ascii: false };
    let a_path = quoting.quote_owned(format!("a/{path}"));
    let b_path = quoting.quote_owned(format!("b/{path}"));
    let mut header = format!("diff --git {a_path} {b_path}\n");
    match (before, after) {
        (None, Some(a)) => {
            let _ = writeln!(header, "new file mode {}", a.mode.git_mode());
        }
        (Some(b), None) => {
            let _ = writeln!(header, "deleted file mode {}", b.mode.git_mode());
        }
        (Some(b), Some(a)) if b.mode != a.mode => {
            let _ = writeln!(header, "old mode {}", b.mode.git_mode());
            let _ = writeln!(header, "new mode {}", a.mode.git_mode());
        }
        _ => {}
    }
    let old_bytes = before.map(|s| s.bytes).unwrap_or_default();
    let new_bytes = after.map(|s| s.bytes).unwrap_or_default();
    let a_name = if before.is_some() {
        a_path.clone()
    } else {
        "/dev/null".to_string()
    };
    let b_name = if after.is_some() {
        b_path.clone()
    } else {
        "/dev/null".to_string()
    };
    let (Ok(old), Ok(new)) = (
        std::str::from_utf8(old_bytes),
        std::str::from_utf8(new_bytes),
    ) else {
        paint(out, color, META, &header);
        let _ = writeln!(out, "Binary files {a_name} and {b_name} differ");
        return LineCounts::default();
    };
    if old == new {
        // A mode-only change has no hunks.
        paint(out, color, META, &header);
        return LineCounts::default();
    }
    let _ = writeln!(header, "--- {a_name}");
    let _ = writeln!(header, "+++ {b_name}");
    paint(out, color, META, &header);

    let lines = LineDiff::new(old, new);
    let mut counts = LineCounts::default();
    for group in lines.groups(CONTEXT) {
        let (old_range, new_range) = group.spans();
        let header = HunkHeader {
            old: old_range.clone(),
            new: new_range.clone(),
        };
        paint(out, color, FRAG, &header.to_string());
        out.push('\n');
        let mut old_at = old_range.start;
        for hunk in &group.hunks {
            for i in old_at..hunk.before.start {
                lines.push_line(out, ' ', None, Line::Old(i), color);
            }
            for i in hunk.before.clone() {
                counts.removed += 1;
                lines.push_line(out, '-', Some(OLD), Line::Old(i), color);
            }
            for i in hunk.after.clone() {
                counts.added += 1;
                lines.push_line(out, '+', Some(NEW), Line::New(i), color);
            }
            old_at = hunk.before.end;
        }
        for i in old_at..old_range.end {
            lines.push_line(out, ' ', None, Line::Old(i), color);
        }
    }
    counts
}

/// Lines of context around each change, as git's default `-U3`.
const CONTEXT: u32 = 3;

/// A line diff of two texts: git's Myers with its cost heuristics (through imara-diff),
/// so that tens of thousands of scattered changes in one file take milliseconds rather
/// than the minutes a strict O(ND) Myers takes, then git's indent heuristic for where an
/// ambiguous hunk sits.
struct LineDiff<'a> {
    input: InternedInput<&'a str>,
    hunks: Vec<imara_diff::Hunk>,
}

#[derive(Clone, Copy)]
enum Line {
    Old(u32),
    New(u32),
}

/// Changes close enough to share their context, printed as one `@@` hunk.
struct HunkGroup {
    hunks: Vec<imara_diff::Hunk>,
    old_len: u32,
    new_len: u32,
    context: u32,
}

impl HunkGroup {
    /// The old and new line ranges the group prints, context included.
    fn spans(&self) -> (std::ops::Range<u32>, std::ops::Range<u32>) {
        let (Some(first), Some(last)) = (self.hunks.first(), self.hunks.last()) else {
            return (0..0, 0..0);
        };
        let lead = self.context.min(first.before.start);
        let trail = self
            .context
            .min(self.old_len - last.before.end)
            .min(self.new_len - last.after.end);
        (
            first.before.start - lead..last.before.end + trail,
            first.after.start - lead..last.after.end + trail,
        )
    }
}

impl<'a> LineDiff<'a> {
    fn new(old: &'a str, new: &'a str) -> LineDiff<'a> {
        let input = InternedInput::new(old, new);
        let mut diff = Diff::compute(Algorithm::Myers, &input);
        diff.postprocess_lines(&input);
        let hunks = diff.hunks().collect();
        LineDiff { input, hunks }
    }

    fn counts(&self) -> LineCounts {
        let mut counts = LineCounts::default();
        for hunk in &self.hunks {
            counts.removed += hunk.before.len();
            counts.added += hunk.after.len();
        }
        counts
    }

    /// Hunks grouped as `git diff` groups them: two changes share one `@@` when at most
    /// twice the context lies between them.
    fn groups(&self, context: u32) -> Vec<HunkGroup> {
        let old_len = self.input.before.len() as u32;
        let new_len = self.input.after.len() as u32;
        let mut groups: Vec<HunkGroup> = Vec::new();
        for hunk in &self.hunks {
            if let Some(group) = groups.last_mut() {
                let gap = group
                    .hunks
                    .last()
                    .map_or(u32::MAX, |prev| hunk.before.start - prev.before.end);
                if gap <= 2 * context {
                    group.hunks.push(hunk.clone());
                    continue;
                }
            }
            groups.push(HunkGroup {
                hunks: vec![hunk.clone()],
                old_len,
                new_len,
                context,
            });
        }
        groups
    }

    fn push_line(
        &self,
        out: &mut String,
        sign: char,
        style: Option<anstyle::Style>,
        line: Line,
        color: bool,
    ) {
        let (token, is_last) = match line {
            Line::Old(i) => (
                self.input.before[i as usize],
                i as usize + 1 == self.input.before.len(),
            ),
            Line::New(i) => (
                self.input.after[i as usize],
                i as usize + 1 == self.input.after.len(),
            ),
        };
        let value: &str = self.input.interner[token];
        let (body, missing_newline) = match value.strip_suffix('\n') {
            Some(body) => (body, false),
            None => (value, is_last),
        };
        match style {
            None => {
                out.push(sign);
                out.push_str(body);
            }
            Some(style) => paint(out, color, style, &format!("{sign}{body}")),
        }
        out.push('\n');
        if missing_newline {
            out.push_str("\\ No newline at end of file\n");
        }
    }
}

/// `@@ -a,b +c,d @@` as git writes it: a count of one is left out, and an empty side
/// names the line before it.
struct HunkHeader {
    old: std::ops::Range<u32>,
    new: std::ops::Range<u32>,
}

impl std::fmt::Display for HunkHeader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        fn side(f: &mut std::fmt::Formatter<'_>, range: &std::ops::Range<u32>) -> std::fmt::Result {
            let len = range.end - range.start;
            match len {
                0 => write!(f, "{},0", range.start),
                1 => write!(f, "{}", range.start + 1),
                _ => write!(f, "{},{}", range.start + 1, len),
            }
        }
        f.write_str("@@ -")?;
        side(f, &self.old)?;
        f.write_str(" +")?;
        side(f, &self.new)?;
        f.write_str(" @@")
    }
}

/// Where the lines of a changed text were before the change: a line outside the
/// changes is where it was, a line a change wrote is on the lines that change replaced
/// (its first one when it wrote more lines than it took away, the line it went in
/// front of when it took none).
pub struct LineMap {
    /// Each change's lines before and after, 0-based, in order.
    hunks: Vec<(std::ops::Range<u32>, std::ops::Range<u32>)>,
    old_len: u32,
}

impl LineMap {
    /// The map from `after`'s lines to `before`'s; texts that are not UTF-8 map each
    /// line to itself.
    pub fn new(before: &[u8], after: &[u8]) -> LineMap {
        let (Ok(old), Ok(new)) = (std::str::from_utf8(before), std::str::from_utf8(after)) else {
            return LineMap {
                hunks: Vec::new(),
                old_len: u32::MAX,
            };
        };
        let diff = LineDiff::new(old, new);
        LineMap {
            hunks: diff
                .hunks
                .iter()
                .map(|h| (h.before.clone(), h.after.clone()))
                .collect(),
            old_len: diff.input.before.len() as u32,
        }
    }

    /// The 1-based line of `before` that `after`'s 1-based `line` stands for.
    pub fn old_line(&self, line: usize) -> usize {
        let new = u32::try_from(line.saturating_sub(1)).unwrap_or(u32::MAX);
        // Lines before a change are shifted by what the changes before it did.
        let mut shift: i64 = 0;
        for (before, after) in &self.hunks {
            if new < after.start {
                break;
            }
            if new < after.end {
                let k = (new - after.start).min(before.len().saturating_sub(1) as u32);
                return (before.start + k).min(self.old_len.saturating_sub(1)) as usize + 1;
            }
            shift = i64::from(after.end) - i64::from(before.end);
        }
        let old = (i64::from(new) - shift).clamp(0, i64::from(self.old_len.saturating_sub(1)));
        old as usize + 1
    }
}

/// Line counts of a change without rendering it.
pub fn line_counts(before: &[u8], after: &[u8]) -> LineCounts {
    let (Ok(old), Ok(new)) = (std::str::from_utf8(before), std::str::from_utf8(after)) else {
        return LineCounts::default();
    };
    LineDiff::new(old, new).counts()
}

/// One `--stat` line: ` path | 3 ++-`.
pub fn stat_line(out: &mut String, path: &str, width: usize, counts: LineCounts, color: bool) {
    let total = counts.added + counts.removed;
    let _ = write!(out, " {path:<width$} | {total:>4} ");
    // Scale bars to at most 40 characters.
    let scale = if total > 40 { 40.0 / total as f64 } else { 1.0 };
    let plus = (counts.added as f64 * scale).ceil() as usize;
    let minus = (counts.removed as f64 * scale).ceil() as usize;
    paint(out, color, NEW, &"+".repeat(plus));
    paint(out, color, OLD, &"-".repeat(minus));
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(bytes: &[u8]) -> Option<Side<'_>> {
        Some(Side {
            bytes,
            mode: FileMode::Regular,
        })
    }

    #[test]
    fn a_line_map_takes_lines_back_past_the_changes() {
        // An import added at the top, a line rewritten further down.
        let before = b"a\nb\nc\nd\n";
        let after = b"import x\na\nb\nC\nd\n";
        let map = LineMap::new(before, after);
        let old: Vec<usize> = (1..=5).map(|l| map.old_line(l)).collect();
        assert_eq!(old, [1, 1, 2, 3, 4]);
        // Two lines in place of one: both on it.
        let map = LineMap::new(b"a\nb\nc\n", b"a\nb1\nb2\nc\n");
        let old: Vec<usize> = (1..=4).map(|l| map.old_line(l)).collect();
        assert_eq!(old, [1, 2, 2, 3]);
    }

    #[test]
    fn diff_of_modified_file_has_git_headers() {
        let mut out = String::new();
        let c = file_diff(
            &mut out,
            "a.ts",
            side(b"x\nfoo(1)\ny\n"),
            side(b"x\nbar(1)\ny\n"),
            false,
        );
        assert_eq!(
            c,
            LineCounts {
                added: 1,
                removed: 1
            }
        );
        assert_eq!(
            out,
            "diff --git a/a.ts b/a.ts\n--- a/a.ts\n+++ b/a.ts\n@@ -1,3 +1,3 @@\n x\n-foo(1)\n+bar(1)\n y\n"
        );
    }

    #[test]
    fn diff_marks_missing_final_newline_and_new_files() {
        let mut out = String::new();
        file_diff(&mut out, "n.py", None, side(b"print(1)"), false);
        assert!(out.contains("new file mode 100644\n--- /dev/null\n+++ b/n.py\n"));
        assert!(out.ends_with("+print(1)\n\\ No newline at end of file\n"));
    }

    fn numbered(lines: u32, changed: impl Fn(u32) -> bool) -> (String, String) {
        let (mut old, mut new) = (String::new(), String::new());
        for i in 0..lines {
            let _ = writeln!(old, "line {i}");
            if changed(i) {
                let _ = writeln!(new, "LINE {i}");
            } else {
                let _ = writeln!(new, "line {i}");
            }
        }
        (old, new)
    }

    fn headers(old: &str, new: &str) -> Vec<String> {
        let mut out = String::new();
        file_diff(
            &mut out,
            "f",
            side(old.as_bytes()),
            side(new.as_bytes()),
            false,
        );
        out.lines()
            .filter(|l| l.starts_with("@@"))
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn changes_six_lines_apart_share_a_hunk_and_seven_apart_do_not() {
        // git merges two changes when at most twice the context lies between them.
        let (old, new) = numbered(30, |i| i == 10 || i == 17);
        assert_eq!(headers(&old, &new), ["@@ -8,14 +8,14 @@"]);
        let (old, new) = numbered(30, |i| i == 10 || i == 18);
        assert_eq!(
            headers(&old, &new),
            ["@@ -8,7 +8,7 @@", "@@ -16,7 +16,7 @@"]
        );
    }

    #[test]
    fn hunks_at_the_edges_and_pure_insertions_number_as_git_does() {
        assert_eq!(headers("a\n", "b\n"), ["@@ -1 +1 @@"]);
        assert_eq!(headers("a\nb\n", "a\nx\nb\n"), ["@@ -1,2 +1,3 @@"]);
        assert_eq!(headers("", "a\n"), ["@@ -0,0 +1 @@"]);
        assert_eq!(headers("a\n", ""), ["@@ -1 +0,0 @@"]);
    }

    #[test]
    fn tens_of_thousands_of_scattered_changes_diff_exactly() {
        // A strict O(ND) Myers took minutes on this shape (issue 21's leftover); the
        // diff must still be exact: every ninth line changed, one hunk each.
        let (old, new) = numbered(100_000, |i| i % 9 == 0);
        let counts = line_counts(old.as_bytes(), new.as_bytes());
        assert_eq!(
            counts,
            LineCounts {
                added: 11_112,
                removed: 11_112
            }
        );
        let hunks = headers(&old, &new);
        assert_eq!(hunks.len(), 11_112);
        assert_eq!(hunks[0], "@@ -1,4 +1,4 @@");
        assert_eq!(hunks[1], "@@ -7,7 +7,7 @@");
    }
}
