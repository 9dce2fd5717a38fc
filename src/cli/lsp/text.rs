//! Open documents and positions: the protocol counts columns in UTF-16 code units, the
//! engine in characters (1-based); incremental changes come as UTF-16 ranges.

use lsp_types::Position;
use lsp_types::Range;
use lsp_types::TextDocumentContentChangeEvent;

/// An open document: its text as the editor holds it.
pub struct Doc {
    pub text: String,
    pub version: i32,
}

impl Doc {
    /// Applies the changes of one `didChange`, in order (a change without a range
    /// replaces the whole text).
    pub fn change(&mut self, version: i32, changes: Vec<TextDocumentContentChangeEvent>) {
        for change in changes {
            match change.range {
                None => self.text = change.text,
                Some(range) => {
                    let index = Lines::new(&self.text);
                    let start = index.offset(&self.text, range.start);
                    let end = index.offset(&self.text, range.end).max(start);
                    self.text.replace_range(start..end, &change.text);
                }
            }
        }
        self.version = version;
    }
}

/// Where each line starts (byte offsets).
pub struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    pub fn new(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        Lines { starts }
    }

    /// The text of 0-based line `line`, without its line break (empty past the end).
    fn line<'t>(&self, text: &'t str, line: usize) -> &'t str {
        let Some(&start) = self.starts.get(line) else {
            return "";
        };
        let end = self.starts.get(line + 1).map_or(text.len(), |&e| e - 1);
        &text[start..end.max(start)]
    }

    /// The byte offset of a protocol position; one past a line's end (or the text's)
    /// is clamped to it, as the protocol asks.
    pub fn offset(&self, text: &str, pos: Position) -> usize {
        let line = pos.line as usize;
        let Some(&start) = self.starts.get(line) else {
            return text.len();
        };
        let content = self.line(text, line);
        let content = content.strip_suffix('\r').unwrap_or(content);
        let mut units = 0usize;
        for (i, c) in content.char_indices() {
            if units >= pos.character as usize {
                return start + i;
            }
            units += c.len_utf16();
        }
        start + content.len()
    }

    /// The protocol position of an engine position: 1-based line, 1-based column in
    /// characters.
    pub fn position(&self, text: &str, line: usize, column: usize) -> Position {
        let l = line.saturating_sub(1);
        let units: usize = self
            .line(text, l)
            .chars()
            .take(column.saturating_sub(1))
            .map(char::len_utf16)
            .sum();
        Position::new(l as u32, units as u32)
    }

    pub fn range(&self, text: &str, start: (usize, usize), end: (usize, usize)) -> Range {
        Range::new(
            self.position(text, start.0, start.1),
            self.position(text, end.0, end.1),
        )
    }

    /// The position of a byte offset.
    pub fn position_of(&self, text: &str, offset: usize) -> Position {
        let line = self
            .starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        let units: usize = text[self.starts[line]..offset]
            .chars()
            .map(char::len_utf16)
            .sum();
        Position::new(line as u32, units as u32)
    }
}

/// One edit that turns `before` into `after`: the part between their common prefix
/// and suffix (on character boundaries), as a range of `before` and its new text. An
/// editor keeps its cursor and folds outside it.
pub fn minimal_edit(before: &str, after: &str) -> (Range, String) {
    let mut prefix = before
        .bytes()
        .zip(after.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !before.is_char_boundary(prefix) || !after.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let room = before.len().min(after.len()) - prefix;
    let mut suffix = before
        .bytes()
        .rev()
        .zip(after.bytes().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    while !before.is_char_boundary(before.len() - suffix)
        || !after.is_char_boundary(after.len() - suffix)
    {
        suffix -= 1;
    }
    let lines = Lines::new(before);
    let range = Range::new(
        lines.position_of(before, prefix),
        lines.position_of(before, before.len() - suffix),
    );
    (range, after[prefix..after.len() - suffix].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_utf16_units_of_characters() {
        // 😀 is one character and two UTF-16 units; 漢 one and one.
        let text = "a😀漢 = x;\nb";
        let lines = Lines::new(text);
        // Column 5 (characters, 1-based) is after "a😀漢 ".
        assert_eq!(lines.position(text, 1, 5), Position::new(0, 5));
        assert_eq!(lines.offset(text, Position::new(0, 5)), "a😀漢 ".len());
        assert_eq!(lines.position(text, 2, 2), Position::new(1, 1));
        assert_eq!(lines.position_of(text, "a😀".len()), Position::new(0, 3));
    }

    #[test]
    fn incremental_changes_apply_in_order() {
        let mut doc = Doc {
            text: "let 😀 = 1;\nfoo()\n".into(),
            version: 1,
        };
        let change = |l1, c1, l2, c2, text: &str| TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(l1, c1), Position::new(l2, c2))),
            range_length: None,
            text: text.into(),
        };
        doc.change(2, vec![change(0, 4, 0, 6, "x"), change(1, 0, 1, 3, "bar")]);
        assert_eq!(doc.text, "let x = 1;\nbar()\n");
        assert_eq!(doc.version, 2);
        // Past the end of a line or of the text: clamped.
        doc.change(3, vec![change(0, 99, 9, 0, "")]);
        assert_eq!(doc.text, "let x = 1;");
    }

    #[test]
    fn minimal_edit_keeps_what_both_share() {
        let (range, text) = minimal_edit("a = 1;\nb = 2;\n", "a = 1;\nb = 3;\n");
        assert_eq!(range, Range::new(Position::new(1, 4), Position::new(1, 5)));
        assert_eq!(text, "3");
        let (range, text) = minimal_edit("x😀y", "x😁y");
        assert_eq!(range, Range::new(Position::new(0, 1), Position::new(0, 3)));
        assert_eq!(text, "😁");
    }
}
