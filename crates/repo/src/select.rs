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
    /// For a change in an embedded region (a `<script>` block): the host file's text
    /// before and after the region, so that it is shown where it is in the file.
    pub around: Option<(&'a str, &'a str)>,
}

impl Proposal<'_> {
    /// The file as it will be just before this change is made (every change accepted
    /// before it made), and the byte range the change replaces in it: what to show.
    pub fn shown(&self) -> Shown<'_> {
        let (text, start, end) = self.change.shown();
        match self.around {
            None => Shown { text, start, end },
            Some((head, tail)) => Shown {
                text: std::borrow::Cow::Owned(format!("{head}{text}{tail}")),
                start: start + head.len(),
                end: end + head.len(),
            },
        }
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

/// Declines the proposals `keep` says no to and passes the others on: to a person
/// (`inner`, `-i`), or accepted. What `--changed-lines` (the changes on changed lines)
/// and `scan --baseline` (the fixes of new findings) put in front of a selection.
pub struct Narrowed<'s, F> {
    pub keep: F,
    pub inner: Option<&'s mut dyn Select>,
}

impl<F: FnMut(&Proposal<'_>) -> bool> Select for Narrowed<'_, F> {
    fn select(&mut self, proposal: &Proposal<'_>) -> bool {
        if !(self.keep)(proposal) {
            return false;
        }
        match self.inner.as_mut() {
            Some(inner) => inner.select(proposal),
            None => true,
        }
    }

    fn finished(&self) -> bool {
        self.inner.as_ref().is_some_and(|s| s.finished())
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
    /// The text after `end` that the matched node holds but the pattern does not cover
    /// (a trailing `, msg` of an `assert`): kept as it is, after `after`. Empty when
    /// the edit reaches the node's end.
    pub kept: &'a str,
    /// Set by a selection that accepts the change with a replacement of its own
    /// (`e` in `-i`: what the person saved in their editor): made instead of `after`.
    pub replaced: &'a std::cell::RefCell<Option<String>>,
}

impl Proposed<'_> {
    /// The kept text when `after` repeats it (see [`repeats_kept`]): the node would
    /// then hold the same tokens twice.
    pub fn repeated_kept(&self) -> Option<&str> {
        repeats_kept(self.kept, self.after).then_some(self.kept)
    }

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

/// Whether `after`, the replacement of a match, already holds the tokens of `kept`,
/// the text of the matched node past what the pattern covers, which stays after it:
/// `assert x == $C` → `assert x == $C, r.text` on `assert x == 200, r.text` keeps
/// `, r.text` and adds it again. Tokens are words and single other characters,
/// whitespace aside; the separators kept text starts or ends with (`,`, `)`) do not
/// count, and kept text without a word never does.
pub fn repeats_kept(kept: &str, after: &str) -> bool {
    let mut wanted = tokens(kept);
    let is_word = |t: &&str| t.chars().any(|c| c.is_alphanumeric());
    while wanted.first().is_some_and(|t| !is_word(t)) {
        wanted.remove(0);
    }
    while wanted.last().is_some_and(|t| !is_word(t)) {
        wanted.pop();
    }
    if wanted.is_empty() {
        return false;
    }
    let have = tokens(after);
    have.windows(wanted.len()).any(|w| w == wanted.as_slice())
}

/// Words (letters, digits, `_`, `$`) and single other characters, without whitespace.
fn tokens(text: &str) -> Vec<&str> {
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        if word(c) {
            start.get_or_insert(i);
            continue;
        }
        if let Some(s) = start.take() {
            out.push(&text[s..i]);
        }
        if !c.is_whitespace() {
            out.push(&text[i..i + c.len_utf8()]);
        }
    }
    if let Some(s) = start {
        out.push(&text[s..]);
    }
    out
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

#[cfg(test)]
mod tests {
    use super::repeats_kept;

    #[test]
    fn kept_text_the_replacement_repeats() {
        let after = "assert response.status_code == 200, response.text";
        assert!(repeats_kept(", response.text", after));
        assert!(repeats_kept(",\n    response . text)", after));
        assert!(!repeats_kept(", other.text", after));
        assert!(!repeats_kept(", response", "assert x == 200"));
        // Separators alone never count.
        assert!(!repeats_kept(";", "f(x);"));
        assert!(!repeats_kept("", after));
    }
}
