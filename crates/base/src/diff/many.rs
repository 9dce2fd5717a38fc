//! Diffs of many files, cut after a number of lines with a note of what was left out.

use super::Side;

/// One file to render: bytes and modes of both sides.
pub struct DiffFile<'a> {
    pub path: &'a str,
    pub before: Option<Side<'a>>,
    pub after: Option<Side<'a>>,
}

impl<'a> DiffFile<'a> {
    pub fn from_changes(set: &'a crate::change::ChangeSet) -> Vec<DiffFile<'a>> {
        set.changes
            .iter()
            .map(|c| DiffFile {
                path: &c.path,
                before: c.before.as_ref().map(|b| Side {
                    bytes: &b.bytes,
                    mode: b.mode,
                }),
                after: c.after.as_ref().map(|a| Side {
                    bytes: &a.bytes,
                    mode: a.mode,
                }),
            })
            .collect()
    }
}

/// Renders diffs of `files`, stopping after about `max_lines` lines (0: no limit) and
/// saying what it left out. Returns the text.
pub fn render_diffs(files: &[DiffFile<'_>], color: bool, max_lines: usize) -> String {
    render_diffs_counted(files, color, max_lines).0
}

/// [`render_diffs`], and how many files' diffs were left out.
pub fn render_diffs_counted(
    files: &[DiffFile<'_>],
    color: bool,
    max_lines: usize,
) -> (String, usize) {
    let mut diff = LimitedDiff::new(max_lines);
    for file in files {
        if diff.is_full() {
            diff.omit();
            continue;
        }
        diff.add(|out| {
            super::file_diff(out, file.path, file.before, file.after, color);
        });
    }
    let omitted = diff.omitted;
    (diff.finish(), omitted)
}

/// Diff text up to about a number of lines, and how many files were left out after that.
pub struct LimitedDiff {
    out: String,
    lines: usize,
    max_lines: usize,
    omitted: usize,
}

impl LimitedDiff {
    pub fn new(max_lines: usize) -> LimitedDiff {
        LimitedDiff {
            out: String::new(),
            lines: 0,
            max_lines,
            omitted: 0,
        }
    }

    pub fn is_full(&self) -> bool {
        self.max_lines > 0 && self.lines >= self.max_lines
    }

    pub fn add(&mut self, render: impl FnOnce(&mut String)) {
        let start = self.out.len();
        render(&mut self.out);
        self.lines += self.out[start..].lines().count();
    }

    /// The text so far, leaving the buffer empty (the line count stays).
    pub fn take(&mut self) -> String {
        std::mem::take(&mut self.out)
    }

    /// Counts a file left out. Its path is not listed: a cut diff of a large change
    /// would end in one line of hundreds of paths; the note says where to see them.
    pub fn omit(&mut self) {
        self.omitted += 1;
    }

    pub fn finish(mut self) -> String {
        if self.omitted > 0 {
            self.out.push_str(&format!(
                "… diff of {} not shown (--max-render {}): `git astedit show --stat` lists \
                 a preview's files, `--max-render 0` shows every diff\n",
                crate::text::plural(self.omitted, "more file"),
                self.max_lines,
            ));
        }
        self.out
    }
}
