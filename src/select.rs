/*!
Choosing changes one by one (`edit -i`, `scan -i`): the engines offer each change to a
[`Select`] just before making it, and make only the accepted ones, so the text staged
is exactly the input with the accepted changes (see
[`rewrite_nested_selecting`](crate::rewrite::rewrite_nested_selecting) for nesting).
Asking a person is the front end's business; the library only filters.
*/

/// What proposes a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin<'a> {
    /// The `edit` op with this index (0-based, in the order given).
    Op(usize),
    /// The `scan` rule with this id.
    Rule(&'a str),
}

/// One change about to be made: `text[start..end]` becomes `after`. `text` is the file
/// as it is at that moment (earlier ops' or rules' accepted changes made).
#[derive(Debug, Clone, Copy)]
pub struct Proposal<'a> {
    pub path: &'a str,
    pub origin: Origin<'a>,
    pub text: &'a str,
    pub start: usize,
    pub end: usize,
    pub after: &'a str,
}

impl Proposal<'_> {
    /// The text replaced.
    pub fn before(&self) -> &str {
        self.text.get(self.start..self.end).unwrap_or_default()
    }

    /// 1-based line and character column of the change's start in `text`.
    pub fn line_column(&self) -> (usize, usize) {
        crate::rewrite::LineIndex::new(self.text).line_col(self.start)
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
