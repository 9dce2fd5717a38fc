/*!
Choosing changes one by one (`edit -i`, `scan -i`): the engines offer each change to a
[`Select`] just before making it, and make only the accepted ones, so the text staged
is exactly the input with the accepted changes (see
[`rewrite_nested_selecting`](crate::rewrite::rewrite_nested_selecting) for nesting).
Asking a person is the front end's business; the library only filters.
*/

use crate::rewrite::Proposed;

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
        crate::rewrite::LineIndex::new(&self.text).line_col(self.start)
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
