/*!
The one routine that rewrites every match of one matcher, nested matches included.

ast-grep's `replace_all` keeps only the outermost of nested matches, so `foo($A)` →
`bar($A)` leaves `bar(foo(x))`. Here all sites found in the input are rewritten, the
inner ones first, and each outer site is then re-found in the re-parsed text at the
position its original match maps to, so it captures the already rewritten inner text.
Only sites of the input are ever rewritten: text a rewrite produces is never searched
again, so no rewrite can loop.

The routine is generic over the matcher and over how a match becomes an edit, so that
`edit` (a [`Pattern`](ast_grep_core::Pattern) and a template) and `scan` (a rule core and
its fixer) share it.
*/

use ast_grep_core::matcher::MatcherExt;
use ast_grep_core::source::Edit;
use ast_grep_core::tree_sitter::LanguageExt;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::AstGrep;
use ast_grep_core::Matcher;
use ast_grep_core::NodeMatch;

use super::parse_doc;
use super::parse_owned;
use super::parse_owned_from;
use super::Anchor;
use super::Error;
use super::LineIndex;
// The proposal offered to a selection, and how edits are made to a text, live with
// the selection interface (a layer below the engines).
use crate::select::apply_edits;
pub use crate::select::Proposed;

/// What to do with a site whose edit range overlaps an earlier one without nesting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlap {
    /// Refuse the whole rewrite with [`Error::OverlappingMatches`] (`edit`: the user
    /// must see a preview that does what the pattern says, or nothing).
    Error,
    /// Leave the later site alone and report it in [`Nested::overlapped`] (`scan`,
    /// which re-runs its rules until nothing changes).
    SkipLater,
}

/// How [`rewrite_nested_with`] treats the hard cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Sites whose edit ranges overlap without nesting.
    pub overlap: Overlap,
    /// The deepest nesting of sites rewritten; deeper is an
    /// [`Error::NestingTooDeep`]. Each level costs a re-parse of the file, and
    /// tree-sitter parses deeply nested text in worse than linear time, so generated
    /// `f(f(f(…)))` thousands deep would otherwise take minutes.
    pub max_depth: usize,
    /// Whether the caller uses the output's tree. When false, the last pass's edits
    /// are made to the text only and `doc.tree` is left as the tree of the text before
    /// that pass: the caller must not read it again (one incremental re-parse saved).
    pub tree_after: bool,
    /// The longest text (bytes) a rewrite may produce; longer is an
    /// [`Error::OutputTooLarge`], found while a pass's edits are collected, before the
    /// text is built. `scan` bounds it so that a fix which matches its own output
    /// cannot grow a file exponentially over its passes.
    pub max_len: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            overlap: Overlap::Error,
            max_depth: DEFAULT_MAX_DEPTH,
            tree_after: true,
            max_len: usize::MAX,
        }
    }
}

/// Real code nests one pattern's matches a handful of levels deep; 256 levels cost
/// well under a second.
pub const DEFAULT_MAX_DEPTH: usize = 256;

/// One site whose rewrite changed the text, in input coordinates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteChange {
    /// Byte range of the replaced text in the input.
    pub start: usize,
    pub end: usize,
    /// 1-based line and character column of `start` in the input.
    pub line: usize,
    pub column: usize,
    /// The input text of that range.
    pub before: String,
    /// What replaced it, inner rewrites included.
    pub after: String,
    /// The text past the edit that the matched node holds and the pattern does not
    /// cover, when `after` repeats it (see [`crate::select::repeats_kept`]).
    pub repeated_kept: Option<String>,
}

/// A site left alone, in input coordinates (see [`Nested::lost`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LostSite {
    pub start: usize,
    pub end: usize,
    /// 1-based line and character column of `start` in the input.
    pub line: usize,
    pub column: usize,
    /// The input text of the site.
    pub text: String,
}

/// The result of [`rewrite_nested`].
#[derive(Debug, Clone, Default)]
pub struct Nested {
    /// Every site whose own rewrite changed text, in document order (an outer site
    /// before the sites nested in it). Identity rewrites are left out.
    pub changes: Vec<SiteChange>,
    /// Outer sites that no longer matched once their inner sites were rewritten; they
    /// were left as the inner rewrites made them.
    pub lost: Vec<LostSite>,
    /// Sites skipped under [`Overlap::SkipLater`].
    pub overlapped: Vec<LostSite>,
    /// Sites whose change the `select` of [`rewrite_nested_selecting`] declined; they
    /// were left as they were (apart from accepted changes nested in them).
    pub declined: Vec<LostSite>,
}

impl Nested {
    /// Where the input range `start..end` of a site left alone (declined, say) is in
    /// the output, or `None` when a change replaced it or text around it.
    pub fn map_range(&self, start: usize, end: usize) -> Option<(usize, usize)> {
        let (mut to_start, mut to_end) = (0isize, 0isize);
        // `changes` are in document order, outer first: only the outermost count, since
        // an outer change's `after` already holds the changes nested in it.
        let mut outer_end = 0;
        for c in &self.changes {
            if c.start < outer_end {
                continue;
            }
            outer_end = c.end;
            let grown = c.after.len() as isize - (c.end - c.start) as isize;
            if c.end <= start && c.start < start {
                to_start += grown;
                to_end += grown;
            } else if c.start >= start && c.end <= end && (c.start, c.end) != (start, end) {
                to_end += grown;
            } else if c.start >= end && c.end > end {
                break;
            } else {
                return None;
            }
        }
        Some((
            start.checked_add_signed(to_start)?,
            end.checked_add_signed(to_end)?,
        ))
    }
}

/// A match site of the input: where its node is, what it replaces, how deep it nests.
struct Site {
    /// Node range, mapped into the current text pass after pass (used to re-find it).
    node_start: usize,
    node_end: usize,
    /// Edit range in the input (used for nesting, overlap and reporting).
    edit_start: usize,
    edit_end: usize,
    /// The edit computed on the input's parse; valid while no inner site changed text.
    edit: Option<Edit<String>>,
    /// 0 for a site with no site inside it, else 1 + the largest height inside.
    height: usize,
}

/// Rewrites every match of `matcher` in `doc`, nested matches included, in place.
///
/// `doc` must be parsed (`StrDoc::try_new`); on return its text is the rewritten text
/// and its tree is that text's tree, re-parsed incrementally, so the caller can run the
/// next matcher or check for parse errors without parsing again.
///
/// `edit_for` turns a match into its edit; for a pattern and a template that is
/// `|m| m.make_edit(&pattern, &template)`, for a rule `|m| m.make_edit(&rule, &fixer)`.
/// Sites are the matches of the input, compared by their edit ranges: a site inside
/// another is rewritten first and the outer one then captures its result; sites whose
/// edit ranges overlap without nesting are an [`Error::OverlappingMatches`] (and `doc`
/// is left as it was).
///
/// Cost: one match pass over the given tree and one incremental re-parse when no site
/// nests in a changed one; otherwise one more of each per nesting level.
pub fn rewrite_nested<L, M, F>(
    doc: &mut StrDoc<L>,
    matcher: &M,
    edit_for: F,
) -> Result<Nested, Error>
where
    L: LanguageExt,
    M: Matcher,
    F: FnMut(&NodeMatch<'_, StrDoc<L>>) -> Edit<String>,
{
    rewrite_nested_with(doc, matcher, Options::default(), edit_for)
}

/// [`rewrite_nested`] with a choice of how overlaps and deep nesting are treated.
pub fn rewrite_nested_with<L, M, F>(
    doc: &mut StrDoc<L>,
    matcher: &M,
    options: Options,
    edit_for: F,
) -> Result<Nested, Error>
where
    L: LanguageExt,
    M: Matcher,
    F: FnMut(&NodeMatch<'_, StrDoc<L>>) -> Edit<String>,
{
    rewrite_nested_selecting(doc, matcher, None, options, edit_for, &mut |_| true)
}

/// [`rewrite_nested_with`] making only the changes `select` accepts (`edit -i`), and
/// finding the first matches from `anchor`'s occurrences (see [`Anchor`]) when the
/// matcher's pattern has one.
///
/// Each change is offered just before it would be made. Inner sites are offered before
/// the sites they nest in (one nesting level per pass, document order within a level),
/// so an outer site is offered with the inner decisions already made: a declined inner
/// site stays as it was inside the outer one's result, a declined outer site keeps
/// its accepted inner changes. Declined sites are reported in [`Nested::declined`].
pub fn rewrite_nested_selecting<L, M, F>(
    doc: &mut StrDoc<L>,
    matcher: &M,
    anchor: Option<&Anchor>,
    options: Options,
    mut edit_for: F,
    select: &mut dyn FnMut(&Proposed<'_>) -> bool,
) -> Result<Nested, Error>
where
    L: LanguageExt,
    M: Matcher,
    F: FnMut(&NodeMatch<'_, StrDoc<L>>) -> Edit<String>,
{
    // `Root` owns its document and gives no way back to it, so it gets a copy (the
    // tree is reference counted; the text copy is cheap next to parsing).
    let mut sites = {
        let root = AstGrep::doc(doc.clone());
        collect_sites(&root, matcher, anchor, &mut edit_for)
    };
    if sites.is_empty() {
        return Ok(Nested::default());
    }
    let src = doc.src.clone();
    let index = LineIndex::new(&src);
    let mut nested = Nested::default();
    let max_height = nest_sites(&src, &index, &mut sites, &options, &mut nested)?;
    let mut outcomes: Vec<Outcome> = sites.iter().map(|_| Outcome::default()).collect();
    // Whether an earlier pass changed the text: then the edits computed on the input's
    // tree are stale and every site must be re-found in the current tree.
    let mut changed = false;
    // One pass per nesting level, innermost first, so that an outer site's edit sees
    // its inner sites' results.
    for height in 0..=max_height {
        let pass = pass_edits(doc, &mut sites, height, changed, matcher, &mut edit_for);
        let pass = pass
            .into_iter()
            .filter_map(|(i, edit)| match edit {
                Some(edit) => Some((i, edit)),
                None => {
                    outcomes[i].lost = true;
                    None
                }
            })
            .collect();
        let applied = offer_pass(doc, &sites, pass, select, &options, &mut outcomes)?;
        if applied.is_empty() {
            continue;
        }
        // Pending (taller) sites now live at shifted positions.
        let shifts = Shifts::new(&applied);
        for site in sites.iter_mut().filter(|s| s.height > height) {
            site.node_start = shifts.map(site.node_start);
            site.node_end = shifts.map(site.node_end);
        }
        if height == max_height && !options.tree_after {
            doc.src = apply_edits(&doc.src, &applied);
            break;
        }
        apply_and_reparse(doc, applied)?;
        changed = true;
    }
    report_sites(&src, &index, &sites, outcomes, &mut nested);
    Ok(nested)
}

/// What became of one site.
#[derive(Default)]
struct Outcome {
    /// Its new text, when it changed.
    after: Option<String>,
    /// The kept text its new text repeats ([`Proposed::repeated_kept`]).
    repeated: Option<String>,
    /// It could not be found again after an inner change (or grew into a neighbour).
    lost: bool,
    /// `select` declined it.
    declined: bool,
}

/// Gives the sites their nesting heights and returns the largest: an error when it is
/// deeper than `options` allow; sites that overlap without nesting, when `options`
/// skip them, are dropped from `sites` and reported in `nested.overlapped`.
fn nest_sites(
    src: &str,
    index: &LineIndex<'_>,
    sites: &mut Vec<Site>,
    options: &Options,
    nested: &mut Nested,
) -> Result<usize, Error> {
    let (max_height, skipped) = assign_heights(src, sites, options.overlap)?;
    if max_height >= options.max_depth {
        // Report the outermost site of the deepest nest: the one the user would look at.
        let site = sites.iter().find(|s| s.height == max_height);
        let (line, column) = site.map_or((1, 1), |s| index.line_col(s.edit_start));
        return Err(Error::NestingTooDeep {
            line,
            column,
            depth: max_height + 1,
            limit: options.max_depth,
        });
    }
    if !skipped.is_empty() {
        let mut keep = vec![true; sites.len()];
        for &i in &skipped {
            keep[i] = false;
            nested.overlapped.push(lost_site(src, index, &sites[i]));
        }
        let mut flags = keep.into_iter();
        sites.retain(|_| flags.next().unwrap_or(true));
    }
    Ok(max_height)
}

/// The edits of the sites at `height`, in document order: computed on the input's tree
/// while nothing changed, else re-found in the current one (`None`: not found again).
fn pass_edits<L, M, F>(
    doc: &StrDoc<L>,
    sites: &mut [Site],
    height: usize,
    changed: bool,
    matcher: &M,
    edit_for: &mut F,
) -> Vec<(usize, Option<Edit<String>>)>
where
    L: LanguageExt,
    M: Matcher,
    F: FnMut(&NodeMatch<'_, StrDoc<L>>) -> Edit<String>,
{
    let root = changed.then(|| AstGrep::doc(doc.clone()));
    let mut pass = Vec::new();
    for (i, site) in sites.iter_mut().enumerate() {
        if site.height != height {
            continue;
        }
        let edit = match &root {
            None => site.edit.take(),
            Some(tree) => {
                refind(tree, matcher, site.node_start, site.node_end).map(|m| edit_for(&m))
            }
        };
        pass.push((i, edit));
    }
    pass
}

/// Offers one pass's changes to `select` in document order and returns those to make.
/// Changes that make no difference are left out silently; a re-found match that runs
/// into the previous one is lost; the text may not grow past `options.max_len`.
fn offer_pass(
    doc: &StrDoc<impl LanguageExt>,
    sites: &[Site],
    pass: Vec<(usize, Edit<String>)>,
    select: &mut dyn FnMut(&Proposed<'_>) -> bool,
    options: &Options,
    outcomes: &mut [Outcome],
) -> Result<Vec<Edit<String>>, Error> {
    let mut applied: Vec<Edit<String>> = Vec::with_capacity(pass.len());
    // The length of the text once `applied` is made.
    let mut len = doc.src.len();
    for (i, mut edit) in pass {
        let end = edit.position + edit.deleted_length;
        let Some(current) = doc.src.get(edit.position..end) else {
            outcomes[i].lost = true;
            continue;
        };
        if let Some(prev) = applied.last() {
            if prev.position + prev.deleted_length > edit.position {
                // Same-height sites are disjoint in the input; a re-found match that
                // grew into its neighbour is a change in parse shape: leave it.
                outcomes[i].lost = true;
                continue;
            }
        }
        if current.as_bytes() == edit.inserted_text.as_slice() {
            continue;
        }
        let mut inserted = String::from_utf8_lossy(&edit.inserted_text).into_owned();
        // The node's text past the edit stays: what the pattern did not cover.
        let kept = doc.src.get(end..sites[i].node_end).unwrap_or_default();
        let replaced = std::cell::RefCell::new(None);
        let proposed = Proposed {
            text: &doc.src,
            start: edit.position,
            end,
            after: &inserted,
            site_start: sites[i].edit_start,
            site_end: sites[i].edit_end,
            earlier: &applied,
            kept,
            replaced: &replaced,
        };
        if !select(&proposed) {
            outcomes[i].declined = true;
            continue;
        }
        outcomes[i].repeated = proposed.repeated_kept().map(str::to_string);
        if let Some(own) = replaced.take() {
            // The person's own replacement for this site.
            edit.inserted_text = own.as_bytes().to_vec();
            inserted = own;
        }
        len = len
            .saturating_sub(edit.deleted_length)
            .saturating_add(edit.inserted_text.len());
        if len > options.max_len {
            return Err(Error::OutputTooLarge {
                limit: options.max_len,
            });
        }
        outcomes[i].after = Some(inserted);
        applied.push(edit);
    }
    Ok(applied)
}

/// Reports each site that changed, was declined or was lost, in document order.
fn report_sites(
    src: &str,
    index: &LineIndex<'_>,
    sites: &[Site],
    outcomes: Vec<Outcome>,
    nested: &mut Nested,
) {
    for (site, outcome) in sites.iter().zip(outcomes) {
        if !outcome.lost && !outcome.declined && outcome.after.is_none() {
            continue;
        }
        let site_report = lost_site(src, index, site);
        if outcome.declined {
            nested.declined.push(site_report);
            continue;
        }
        if let Some(after) = outcome.after {
            nested.changes.push(SiteChange {
                start: site_report.start,
                end: site_report.end,
                line: site_report.line,
                column: site_report.column,
                before: site_report.text.clone(),
                after,
                repeated_kept: outcome.repeated,
            });
        }
        if outcome.lost {
            nested.lost.push(site_report);
        }
    }
}

/// The matches of the input as sites, sorted outer-before-inner, duplicates dropped.
fn collect_sites<L, M, F>(
    root: &AstGrep<StrDoc<L>>,
    matcher: &M,
    anchor: Option<&Anchor>,
    edit_for: &mut F,
) -> Vec<Site>
where
    L: LanguageExt,
    M: Matcher,
    F: FnMut(&NodeMatch<'_, StrDoc<L>>) -> Edit<String>,
{
    let top = root.root();
    let found: Box<dyn Iterator<Item = _>> = match anchor {
        Some(anchor) => Box::new(anchor.find_all(root, matcher).into_iter()),
        None => Box::new(top.find_all(matcher)),
    };
    let mut sites: Vec<Site> = found
        .map(|m| {
            let range = m.range();
            let edit = edit_for(&m);
            Site {
                node_start: range.start,
                node_end: range.end,
                edit_start: edit.position,
                edit_end: edit.position + edit.deleted_length,
                edit: Some(edit),
                height: 0,
            }
        })
        .collect();
    // Pre-order already puts outer first; the sort is for matchers that report another
    // node than the one visited. Stable, so the outer of two equal ranges stays first.
    sites.sort_by(|a, b| {
        a.edit_start
            .cmp(&b.edit_start)
            .then(b.edit_end.cmp(&a.edit_end))
    });
    sites.dedup_by(|b, a| a.edit_start == b.edit_start && a.edit_end == b.edit_end);
    sites
}

/// A site as reported when it is left alone.
fn lost_site(src: &str, index: &LineIndex<'_>, site: &Site) -> LostSite {
    let (line, column) = index.line_col(site.edit_start);
    LostSite {
        start: site.edit_start,
        end: site.edit_end,
        line,
        column,
        text: src
            .get(site.edit_start..site.edit_end)
            .unwrap_or_default()
            .to_string(),
    }
}

/// Builds the nesting forest of the sorted sites, sets each site's height and returns
/// the largest, with the sites skipped for overlapping (see [`Overlap`]).
fn assign_heights(
    src: &str,
    sites: &mut [Site],
    overlap: Overlap,
) -> Result<(usize, Vec<usize>), Error> {
    let mut parent: Vec<Option<usize>> = vec![None; sites.len()];
    let mut stack: Vec<usize> = Vec::new();
    let mut skipped = Vec::new();
    for i in 0..sites.len() {
        while let Some(&top) = stack.last() {
            if sites[top].edit_end <= sites[i].edit_start {
                stack.pop();
            } else {
                break;
            }
        }
        if let Some(&top) = stack.last() {
            if sites[i].edit_end > sites[top].edit_end {
                if overlap == Overlap::SkipLater {
                    // Never on the stack, so never anyone's parent; no one's child.
                    skipped.push(i);
                    continue;
                }
                let index = LineIndex::new(src);
                let (first_line, first_column) = index.line_col(sites[top].edit_start);
                let (second_line, second_column) = index.line_col(sites[i].edit_start);
                return Err(Error::OverlappingMatches {
                    first_line,
                    first_column,
                    second_line,
                    second_column,
                });
            }
            parent[i] = Some(top);
        }
        stack.push(i);
    }
    // Children come after their parent in sorted order, so a reverse sweep sees every
    // child before its parent.
    let mut max = 0;
    for i in (0..sites.len()).rev() {
        let h = sites[i].height;
        max = max.max(h);
        if let Some(p) = parent[i] {
            sites[p].height = sites[p].height.max(h + 1);
        }
    }
    Ok((max, skipped))
}

/// The match whose node spans exactly `start..end` in `tree`, if the matcher still
/// matches there.
fn refind<'t, L, M>(
    tree: &'t AstGrep<StrDoc<L>>,
    matcher: &M,
    start: usize,
    end: usize,
) -> Option<NodeMatch<'t, StrDoc<L>>>
where
    L: LanguageExt,
    M: Matcher,
{
    if end <= start {
        return None;
    }
    // Walk down from the root rather than asking tree-sitter for the node at `start`:
    // wrapping a raw tree-sitter node (`adopt`) re-walks its ancestors in debug builds,
    // which made deep nesting quadratic per pass. The nodes starting at `start` that
    // fit in the site are the candidates, outermost first.
    let mut candidates = Vec::new();
    let mut node = Some(tree.root());
    while let Some(n) = node {
        let range = n.range();
        if range.start == start && range.end <= end {
            candidates.push(n.clone());
        }
        node = n.children().find(|c| {
            let r = c.range();
            r.start <= start && start < r.end
        });
    }
    candidates
        .into_iter()
        .rev()
        .find_map(|n| matcher.match_node(n).filter(|m| m.range() == (start..end)))
}

/// Above this many text bytes × edits a fresh parse is cheaper: ast-grep's
/// `perform_edit` scans the text from its start three times per edit. Measured: a full
/// parse runs at roughly 1–2 MB/s, that scan at hundreds of MB/s, so the break-even is
/// near 2^27; below 2^26 the incremental path always wins (a 2.5 MB file with two
/// edits: milliseconds instead of a second and a half).
const INCREMENTAL_LIMIT: usize = 1 << 26;

/// Applies sorted, disjoint `edits` to `doc` and re-parses it, incrementally when the
/// edits are few.
fn apply_and_reparse<L: LanguageExt>(
    doc: &mut StrDoc<L>,
    edits: Vec<Edit<String>>,
) -> Result<(), Error> {
    // `perform_edit` splices bytes into the `String` unchecked: an edit that is not
    // UTF-8 on character boundaries must go through the checked path.
    let well_formed = edits.iter().all(|e| {
        doc.src.is_char_boundary(e.position)
            && doc.src.is_char_boundary(e.position + e.deleted_length)
            && std::str::from_utf8(&e.inserted_text).is_ok()
    });
    if !well_formed || edits.len().saturating_mul(doc.src.len()) > INCREMENTAL_LIMIT {
        let text = apply_edits(&doc.src, &edits);
        let lang = doc.lang.clone();
        // Drop the old tree before building the new one: a large file's two trees at
        // once would double the peak memory.
        *doc = parse_doc("", lang.clone())?;
        *doc = parse_owned(text, lang)?;
        return Ok(());
    }
    if edits.is_empty() {
        return Ok(());
    }
    // The tree records every edit, then the text is rebuilt in one pass and re-parsed
    // once. ast-grep's `perform_edit` would scan the text from its start and splice it
    // for every edit (quadratic in a file with many sites). Back to front, each edit's
    // positions are those of the input text, as `Tree::edit` wants them in turn.
    let lines = LineStarts::new(&doc.src);
    for e in edits.iter().rev() {
        // The tree is told only of the bytes that change: an edit replaces a whole
        // match (`$A.unwrap()` → `$A.expect(…)`), and the text it keeps at either end
        // (the receiver `$A`) is then re-used by the re-parse instead of read again.
        let old = &doc.src.as_bytes()[e.position..e.position + e.deleted_length];
        let (kept_start, kept_end) = kept_ends(&doc.src, e.position, old, &e.inserted_text);
        let start_byte = e.position + kept_start;
        let inserted = &e.inserted_text[kept_start..e.inserted_text.len() - kept_end];
        let start_position = lines.point(start_byte);
        let old_end_position = lines.point(e.position + e.deleted_length - kept_end);
        let new_end_position = advance(start_position, inserted);
        doc.tree.edit(&tree_sitter::InputEdit {
            start_byte,
            old_end_byte: e.position + e.deleted_length - kept_end,
            new_end_byte: start_byte + inserted.len(),
            start_position,
            old_end_position,
            new_end_position,
        });
    }
    let text = apply_edits(&doc.src, &edits);
    let lang = doc.lang.clone();
    *doc = parse_owned_from(text, lang, Some(&doc.tree))?;
    Ok(())
}

/// How many bytes at the start and at the end of `old` (the text at `position` of
/// `src` that an edit replaces) `new` keeps as they are: the common prefix and the
/// common suffix after it, each ending on a character boundary of `src`.
fn kept_ends(src: &str, position: usize, old: &[u8], new: &[u8]) -> (usize, usize) {
    let mut start = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    while !src.is_char_boundary(position + start) {
        start -= 1;
    }
    let (old_rest, new_rest) = (&old[start..], &new[start..]);
    let mut end = old_rest
        .iter()
        .rev()
        .zip(new_rest.iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    while !src.is_char_boundary(position + old.len() - end) {
        end -= 1;
    }
    (start, end)
}

/// Byte offset → tree-sitter point (0-based row, column in bytes) in one text.
struct LineStarts {
    starts: Vec<usize>,
}

impl LineStarts {
    fn new(text: &str) -> LineStarts {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        LineStarts { starts }
    }

    fn point(&self, byte: usize) -> tree_sitter::Point {
        let row = self.starts.partition_point(|&s| s <= byte).max(1) - 1;
        tree_sitter::Point::new(row, byte - self.starts[row])
    }
}

/// The point after `text` when it is inserted at `at`.
fn advance(at: tree_sitter::Point, text: &[u8]) -> tree_sitter::Point {
    match memchr::memrchr(b'\n', text) {
        Some(nl) => tree_sitter::Point::new(
            at.row + memchr::memchr_iter(b'\n', text).count(),
            text.len() - nl - 1,
        ),
        None => tree_sitter::Point::new(at.row, at.column + text.len()),
    }
}

/// Maps positions of the text before a pass to the text after it.
struct Shifts {
    /// Edit start positions, sorted.
    starts: Vec<usize>,
    /// Total length change of all edits up to and including index i.
    cumulative: Vec<isize>,
}

impl Shifts {
    fn new(edits: &[Edit<String>]) -> Shifts {
        let mut total = 0isize;
        let mut starts = Vec::with_capacity(edits.len());
        let mut cumulative = Vec::with_capacity(edits.len());
        for e in edits {
            total += e.inserted_text.len() as isize - e.deleted_length as isize;
            starts.push(e.position);
            cumulative.push(total);
        }
        Shifts { starts, cumulative }
    }

    /// Every edit starting before `p` lies wholly before it or inside the site `p`
    /// bounds (sites nest or are disjoint), so either way it shifts `p`.
    fn map(&self, p: usize) -> usize {
        let n = self.starts.partition_point(|&s| s < p);
        if n == 0 {
            return p;
        }
        p.saturating_add_signed(self.cumulative[n - 1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(src: &str, start: usize, end: usize, new: &str) -> (usize, usize) {
        kept_ends(src, start, &src.as_bytes()[start..end], new.as_bytes())
    }

    #[test]
    fn an_edit_keeps_its_common_ends_on_character_boundaries() {
        let src = "let a = x.unwrap();";
        // `x.` before, `)` after.
        assert_eq!(kept(src, 8, 18, "x.expect(\"bench\")"), (2, 1));
        assert_eq!(kept(src, 8, 18, "y"), (0, 0));
        // Prefix and suffix do not overlap when the new text repeats the old.
        assert_eq!(kept("aaa", 0, 3, "aaaa"), (3, 0));
        assert_eq!(kept("aaa", 0, 3, "a"), (1, 0));
        // `é` and `è` share their first byte, `ü` and `ö` theirs too: not kept.
        assert_eq!(kept("fé", 0, 3, "fè"), (1, 0));
        assert_eq!(kept("üx", 0, 3, "öx"), (0, 1));
    }
}
