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

use similar::ChangeTag;
use similar::TextDiff;

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

    let diff = TextDiff::configure()
        .algorithm(similar::Algorithm::Myers)
        .diff_lines(old, new);
    let mut counts = LineCounts::default();
    let unified = diff.unified_diff();
    for hunk in unified.iter_hunks() {
        paint(out, color, FRAG, &format!("{}", hunk.header()));
        out.push('\n');
        for change in hunk.iter_changes() {
            let (sign, style) = match change.tag() {
                ChangeTag::Equal => (' ', None),
                ChangeTag::Delete => {
                    counts.removed += 1;
                    ('-', Some(OLD))
                }
                ChangeTag::Insert => {
                    counts.added += 1;
                    ('+', Some(NEW))
                }
            };
            let value = change.value();
            let line = value.strip_suffix('\n').unwrap_or(value);
            let text = format!("{sign}{line}");
            match style {
                None => out.push_str(&text),
                Some(style) => paint(out, color, style, &text),
            }
            out.push('\n');
            if change.missing_newline() {
                out.push_str("\\ No newline at end of file\n");
            }
        }
    }
    counts
}

/// Line counts of a change without rendering it.
pub fn line_counts(before: &[u8], after: &[u8]) -> LineCounts {
    let (Ok(old), Ok(new)) = (std::str::from_utf8(before), std::str::from_utf8(after)) else {
        return LineCounts::default();
    };
    let diff = TextDiff::configure()
        .algorithm(similar::Algorithm::Myers)
        .diff_lines(old, new);
    let mut counts = LineCounts::default();
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Delete => counts.removed += 1,
            ChangeTag::Insert => counts.added += 1,
            ChangeTag::Equal => {}
        }
    }
    counts
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
}
