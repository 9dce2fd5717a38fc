/*!
Choosing changes one by one (`edit -i`, `scan -i`): the engines offer each change to a
[`Select`] just before making it, and make only the accepted ones, so the text staged
is exactly the input with the accepted changes (see
[`rewrite_nested_selecting`](crate::rewrite::rewrite_nested_selecting) for nesting).
Asking a person is the front end's business; the library only filters.

The proposal's own shape ([`Proposed`]: a range of a text, its replacement and the
earlier changes of its pass) lives here, below the engines that make proposals, so
that the interface is the engines' to call and not theirs to define.
*/

use ast_grep_core::source::Edit;

/// What proposes a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin<'a> {
    /// The `edit` op with this index (0-based, in the order given).
    Op(usize),
    /// The `scan` rule with this id.
    Rule(&'a str),
}

/// One change about to be made: `text[start..end]` becomes `after`.
#[derive(Debug, Clone, Copy)]
pub struct Proposal<'a> {
    pub path: &'a str,
    pub origin: Origin<'a>,
    /// The change in the engine's terms: its text is the file as the pass it belongs
    /// to found it.
    pub change: Proposed<'a>,
}

impl Proposal<'_> {
    /// The file as it will be just before this change is made (every change accepted
    /// before it made), and the byte range the change replaces in it: what to show.
    pub fn shown(&self) -> Shown<'_> {
        let (text, start, end) = self.change.shown();
        Shown { text, start, end }
    }

    /// What replaces the range.
    pub fn after(&self) -> &str {
        self.change.after
    }
}

/// See [`Proposal::shown`].
#[derive(Debug, Clone)]
pub struct Shown<'a> {
    pub text: std::borrow::Cow<'a, str>,
    pub start: usize,
    pub end: usize,
}

impl Shown<'_> {
    /// 1-based line and character column of the change's start.
    pub fn line_column(&self) -> (usize, usize) {
        let text: &str = &self.text;
        let before = text.get(..self.start).unwrap_or(text);
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let line = before.matches('\n').count() + 1;
        (line, before[line_start..].chars().count() + 1)
    }
}

/// Decides which changes are made.
pub trait Select {
    /// Whether to make this change.
    fn select(&mut self, proposal: &Proposal<'_>) -> bool;

    /// Whether no further change will be accepted (the person quit): the files not
    /// yet read are then left alone.
    fn finished(&self) -> bool {
        false
    }
}

/// One change an engine is about to make, offered to a [`Select`] (see
/// [`rewrite_nested_selecting`](crate::rewrite::rewrite_nested_selecting)).
///
/// Positions are byte offsets into `text`, the text as it is when the change is
/// offered: the input for sites with no changed site inside, else the input with the
/// accepted inner changes made, so that `after` is exactly what would be written.
#[derive(Debug, Clone, Copy)]
pub struct Proposed<'a> {
    pub text: &'a str,
    pub start: usize,
    pub end: usize,
    pub after: &'a str,
    /// The site's edit range in the input of the call (stable whatever was decided
    /// before it: callers that run again on the output use it to recognise a site).
    pub site_start: usize,
    pub site_end: usize,
    /// Changes accepted earlier in the same pass: they lie before `start` and are not
    /// in `text` yet (a pass makes its changes together). See [`Proposed::shown`].
    pub earlier: &'a [Edit<String>],
}

impl Proposed<'_> {
    /// The text as it will be when this change is made, with the change's range in
    /// it: `text` with [`Proposed::earlier`] made. For showing a person; O(text).
    pub fn shown(&self) -> (std::borrow::Cow<'_, str>, usize, usize) {
        if self.earlier.is_empty() {
            return (std::borrow::Cow::Borrowed(self.text), self.start, self.end);
        }
        let grown: isize = self
            .earlier
            .iter()
            .map(|e| e.inserted_text.len() as isize - e.deleted_length as isize)
            .sum();
        let text = apply_edits(self.text, self.earlier);
        let shift = |p: usize| p.saturating_add_signed(grown);
        (
            std::borrow::Cow::Owned(text),
            shift(self.start),
            shift(self.end),
        )
    }
}

/// Applies sorted, disjoint edits to `text` (how a proposal's earlier changes are
/// made; the rewrite engine makes its passes with it too).
pub fn apply_edits(text: &str, edits: &[Edit<String>]) -> String {
    let grown: usize = edits.iter().map(|e| e.inserted_text.len()).sum();
    let mut out: Vec<u8> = Vec::with_capacity(text.len() + grown);
    let bytes = text.as_bytes();
    let mut at = 0;
    for e in edits {
        out.extend_from_slice(&bytes[at..e.position]);
        out.extend_from_slice(&e.inserted_text);
        at = e.position + e.deleted_length;
    }
    out.extend_from_slice(&bytes[at..]);
    // Edits replace whole nodes with UTF-8 text, so the result stays UTF-8; the lossy
    // conversion only guards against a matcher reporting a range inside a character.
    match String::from_utf8(out) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}
