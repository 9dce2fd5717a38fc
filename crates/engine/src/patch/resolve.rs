/*!
Placing the chunks of one Update in one file.

Every chunk is placed at exactly one place or not at all. Comparisons go from strict to
tolerant ([`Level::LINE_LEVELS`]); the first level with any candidate decides, and
several candidates there is an error naming them. Only when no comparison finds the
chunk are two bounded rescues tried, for context that drifted since the patch was
written: the chunk's unchanged first and last lines with a short stretch between them,
then a window of the chunk's length sharing most of its lines. Both report the file
lines they overwrote that the patch did not name, so a reviewer can look at exactly
those. Before the rescues, a chunk whose new lines are already in place is recognised
as already applied instead of being "rescued" a second time.

The file keeps its bytes where the patch does not speak: each line its own ending, the
BOM, a missing final newline. Lines the patch adds take the file's dominant ending, and
context lines keep the file's text (a curly quote matched by a straight one stays
curly).
*/

use std::collections::HashMap;
use std::hash::Hash;
use std::hash::Hasher;

use serde::Serialize;

use super::normalize::is_significant;
use super::normalize::Level;
use super::parse::Chunk;
use super::parse::ChunkLine;
use super::Error;

/// A line ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eol {
    Lf,
    CrLf,
    Cr,
    /// The last line of a file without a final newline.
    None,
}

impl Eol {
    fn bytes(self) -> &'static str {
        match self {
            Eol::Lf => "\n",
            Eol::CrLf => "\r\n",
            Eol::Cr => "\r",
            Eol::None => "",
        }
    }
}

/// A text file split into lines, each with its own ending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text {
    pub bom: bool,
    pub lines: Vec<(String, Eol)>,
}

impl Text {
    /// Splits UTF-8 bytes; `None` when they are not UTF-8.
    pub fn parse(bytes: &[u8]) -> Option<Text> {
        let s = std::str::from_utf8(bytes).ok()?;
        let (bom, s) = match s.strip_prefix('\u{FEFF}') {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let mut lines = Vec::new();
        let b = s.as_bytes();
        let mut start = 0;
        let mut i = 0;
        while i < b.len() {
            let (eol, len) = match b[i] {
                b'\n' => (Eol::Lf, 1),
                b'\r' if b.get(i + 1) == Some(&b'\n') => (Eol::CrLf, 2),
                b'\r' => (Eol::Cr, 1),
                _ => {
                    i += 1;
                    continue;
                }
            };
            // Line breaks are ASCII, so these are char boundaries.
            lines.push((s[start..i].to_string(), eol));
            i += len;
            start = i;
        }
        if start < b.len() {
            lines.push((s[start..].to_string(), Eol::None));
        }
        Some(Text { bom, lines })
    }

    /// The bytes of the file.
    pub fn render(&self) -> Vec<u8> {
        let mut out = String::new();
        if self.bom {
            out.push('\u{FEFF}');
        }
        for (text, eol) in &self.lines {
            out.push_str(text);
            out.push_str(eol.bytes());
        }
        out.into_bytes()
    }

    /// The most common line ending; ties go to the one seen first, and a file without
    /// any line break gets LF.
    pub fn dominant_eol(&self) -> Eol {
        let mut counts: Vec<(Eol, usize)> = Vec::new();
        for (_, eol) in &self.lines {
            if *eol == Eol::None {
                continue;
            }
            match counts.iter_mut().find(|(e, _)| e == eol) {
                Some((_, n)) => *n += 1,
                None => counts.push((*eol, 1)),
            }
        }
        let mut best = (Eol::Lf, 0);
        for (e, n) in counts {
            if n > best.1 {
                best = (e, n);
            }
        }
        best.0
    }

    fn missing_final_newline(&self) -> bool {
        self.lines.last().is_some_and(|(_, e)| *e == Eol::None)
    }
}

/// How one chunk was placed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChunkReport {
    /// 1-based index of the chunk within its Update.
    pub chunk: usize,
    /// 1-based patch line where the chunk starts.
    pub patch_line: usize,
    pub level: Level,
    /// 1-based line of the file (as it was before this Update) where it was placed.
    pub line: usize,
    /// Lines removed from the file and added to it.
    pub removed: usize,
    pub added: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub anchors: Vec<AnchorReport>,
    /// File lines a rescue overwrote although the patch did not name them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drifted: Vec<DriftedLine>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Where an `@@` anchor was found (`line: None`: not used).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AnchorReport {
    pub text: String,
    pub line: Option<usize>,
    pub level: Option<Level>,
}

/// A file line that a rescue replaced without the patch naming it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DriftedLine {
    pub line: usize,
    pub text: String,
}

/// Which Update the chunks belong to, for error messages.
pub struct Ctx<'a> {
    pub path: &'a str,
    /// Also place a chunk whose lines match only with indentation ignored, re-indenting
    /// its added lines to the file's ([`Options::reindent`](super::Options)).
    pub reindent: bool,
}

/// The most chunk lines the LCS rescue looks at: it is quadratic per window, and a
/// large chunk that matches nowhere has more likely been mis-targeted than drifted.
const LCS_MAX_LINES: usize = 48;
/// The fewest significant lines for either rescue to have evidence worth acting on.
const LCS_MIN_SIGNIFICANT: usize = 3;
/// Bound on the LCS work per chunk (cells of the DP tables summed over windows).
const LCS_BUDGET: usize = 30_000_000;

/// One replacement in the file, in original line numbers.
struct Edit {
    start: usize,
    del: usize,
    /// New lines, each either copied from the file (`Some(index)`) or new text.
    lines: Vec<NewLine>,
}

enum NewLine {
    Keep(usize),
    Text(String),
}

/// Per-level comparison keys of the file's lines, computed on first use, with where
/// each key occurs: a chunk is then looked up by its rarest line instead of being
/// compared at every line below the cursor (which made placing N chunks cost N times
/// the file: 100,000 chunks took minutes).
struct Keys<'a> {
    text: &'a Text,
    cache: Vec<LevelKeys>,
}

struct LevelKeys {
    level: Level,
    keys: Vec<String>,
    /// Key hash → the lines with that key, ascending (collisions are checked).
    at: HashMap<u64, Vec<usize>>,
}

fn key_hash(key: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    h.finish()
}

impl<'a> Keys<'a> {
    fn new(text: &'a Text) -> Keys<'a> {
        Keys {
            text,
            cache: Vec::new(),
        }
    }
    fn level(&mut self, level: Level) -> &LevelKeys {
        let pos = match self.cache.iter().position(|l| l.level == level) {
            Some(p) => p,
            None => {
                let keys: Vec<String> = self.text.lines.iter().map(|(t, _)| level.key(t)).collect();
                let mut at: HashMap<u64, Vec<usize>> = HashMap::new();
                for (i, k) in keys.iter().enumerate() {
                    at.entry(key_hash(k)).or_default().push(i);
                }
                self.cache.push(LevelKeys { level, keys, at });
                self.cache.len() - 1
            }
        };
        &self.cache[pos]
    }
    fn get(&mut self, level: Level) -> &[String] {
        &self.level(level).keys
    }
    /// The lines at or after `from` whose key is `key`, ascending.
    fn lines_with(&mut self, level: Level, key: &str, from: usize) -> Vec<usize> {
        let l = self.level(level);
        let Some(lines) = l.at.get(&key_hash(key)) else {
            return Vec::new();
        };
        let first = lines.partition_point(|&i| i < from);
        lines[first..]
            .iter()
            .copied()
            .filter(|&i| l.keys[i] == key)
            .collect()
    }
    /// [`find_all`] over this level's keys, from the occurrences of `pat`'s rarest line.
    fn find_all(&mut self, level: Level, pat: &[String], from: usize) -> Vec<usize> {
        let l = self.level(level);
        if pat.is_empty() || pat.len() > l.keys.len() {
            return Vec::new();
        }
        let mut pivot: Option<(usize, &Vec<usize>)> = None;
        for (j, k) in pat.iter().enumerate() {
            let Some(lines) = l.at.get(&key_hash(k)) else {
                return Vec::new();
            };
            if pivot.is_none_or(|(_, p)| lines.len() < p.len()) {
                pivot = Some((j, lines));
            }
        }
        let Some((j, lines)) = pivot else {
            return Vec::new();
        };
        let last = l.keys.len() - pat.len();
        let first = lines.partition_point(|&i| i < from + j);
        lines[first..]
            .iter()
            .map(|&i| i - j)
            .take_while(|&start| start <= last)
            .filter(|&start| l.keys[start..start + pat.len()] == *pat)
            .collect()
    }
}

/// Every start in `[from, len - pat.len()]` where `pat` matches `hay`.
fn find_all(hay: &[String], pat: &[String], from: usize) -> Vec<usize> {
    if pat.is_empty() || pat.len() > hay.len() {
        return Vec::new();
    }
    (from..=hay.len() - pat.len())
        .filter(|&i| hay[i..i + pat.len()] == *pat)
        .collect()
}

fn keys_of(level: Level, lines: &[&str]) -> Vec<String> {
    lines.iter().map(|l| level.key(l)).collect()
}

/// Resolves every chunk of one Update against `text`: the new text and one report per
/// chunk.
pub fn resolve_chunks(
    ctx: &Ctx,
    text: &Text,
    chunks: &[Chunk],
) -> Result<(Text, Vec<ChunkReport>), Error> {
    let mut keys = Keys::new(text);
    let mut edits: Vec<Edit> = Vec::new();
    let mut reports = Vec::new();
    let mut cursor = 0usize;
    for (i, chunk) in chunks.iter().enumerate() {
        let n = i + 1;
        let (edit, report, next) = resolve_one(ctx, text, &mut keys, chunk, n, cursor, &edits)?;
        cursor = next;
        if let Some(e) = edit {
            edits.push(e);
        }
        reports.push(report);
    }
    // A chunk placed above an earlier one (out of order) must be applied in file order.
    edits.sort_by_key(|e| e.start);
    Ok((assemble(text, &edits), reports))
}

/// The region a chunk is searched in: from the cursor, narrowed by its anchors.
fn narrow(
    ctx: &Ctx,
    text: &Text,
    keys: &mut Keys,
    chunk: &Chunk,
    chunk_no: usize,
    cursor: usize,
    strict: bool,
) -> Result<(usize, Vec<AnchorReport>, Vec<String>), Error> {
    let mut start = cursor;
    let mut reports = Vec::new();
    let mut notes = Vec::new();
    let first_old = chunk.old_lines().first().map(|s| s.to_string());
    for anchor in &chunk.anchors {
        let mut found = None;
        let mut ambiguous = None;
        for level in Level::ANCHOR_LEVELS {
            let key = level.key(anchor);
            let cands = keys.lines_with(level, &key, start);
            match cands.len() {
                0 => continue,
                1 => found = Some((cands[0], level)),
                _ => ambiguous = Some(cands),
            }
            break;
        }
        match (found, ambiguous) {
            (Some((at, level)), _) => {
                reports.push(AnchorReport {
                    text: anchor.clone(),
                    line: Some(at + 1),
                    level: Some(level),
                });
                // An agent often repeats the anchor as the chunk's first context line;
                // the chunk may then start on the anchor itself.
                let repeats = first_old.as_deref().is_some_and(|f| {
                    Level::UnicodeTrailingWhitespace.key(f)
                        == Level::UnicodeTrailingWhitespace.key(&text.lines[at].0)
                });
                start = if repeats { at } else { at + 1 };
            }
            (None, Some(cands)) => {
                if strict {
                    return Err(Error::AnchorAmbiguous {
                        path: ctx.path.to_string(),
                        chunk: chunk_no,
                        line: chunk.line,
                        anchor: anchor.clone(),
                        candidates: cands.iter().map(|c| c + 1).collect(),
                    });
                }
                notes.push(format!(
                    "anchor `{anchor}` matches lines {}; it was not used",
                    join_numbers(&cands)
                ));
                reports.push(AnchorReport {
                    text: anchor.clone(),
                    line: None,
                    level: None,
                });
            }
            (None, None) => {
                // An anchor that is nowhere in the file means the patch was written
                // against another file or version: refuse (as Codex does), even when
                // the chunk's own lines would fit. One that is only above the cursor
                // (an earlier chunk passed it) is real, and the lines place the chunk.
                let anywhere = Level::ANCHOR_LEVELS.iter().any(|level| {
                    let key = level.key(anchor);
                    keys.lines_with(*level, &key, 0)
                        .first()
                        .is_some_and(|&at| at < start)
                });
                if strict || !anywhere {
                    return Err(Error::AnchorNotFound {
                        path: ctx.path.to_string(),
                        chunk: chunk_no,
                        line: chunk.line,
                        anchor: anchor.clone(),
                    });
                }
                notes.push(format!(
                    "anchor `{anchor}` is only above line {}, before this chunk's place; \
                     it was not used",
                    start + 1
                ));
                reports.push(AnchorReport {
                    text: anchor.clone(),
                    line: None,
                    level: None,
                });
            }
        }
    }
    Ok((start, reports, notes))
}

fn join_numbers(zero_based: &[usize]) -> String {
    const SHOWN: usize = 10;
    let mut s: Vec<String> = zero_based
        .iter()
        .take(SHOWN)
        .map(|i| (i + 1).to_string())
        .collect();
    if zero_based.len() > SHOWN {
        s.push(format!("… ({} in all)", zero_based.len()));
    }
    s.join(", ")
}

/// A placed chunk: its edit (none when already applied), its report and the cursor for
/// the next chunk.
type Placed = (Option<Edit>, ChunkReport, usize);

/// What every step of placing one chunk (after its anchors narrowed the search) reads.
struct Attempt<'a> {
    ctx: &'a Ctx<'a>,
    text: &'a Text,
    chunk: &'a Chunk,
    chunk_no: usize,
    old: Vec<&'a str>,
    new: Vec<&'a str>,
    /// Where the search starts: the cursor, or the anchors' line.
    start: usize,
}

impl Attempt<'_> {
    fn ambiguous(&self, level: Level, cands: &[usize]) -> Error {
        ambiguous(self.ctx, self.chunk, self.chunk_no, level, cands)
    }

    /// Places the chunk over its old lines, found one for one at `at`.
    fn place_at(&self, chunk: &Chunk, report: ChunkReport, at: usize) -> Placed {
        let align: Vec<Option<usize>> = (at..at + self.old.len()).map(Some).collect();
        place(chunk, report, at, self.old.len(), &align, self.text)
    }
}

/// Places one chunk searching from `cursor`; `taken` are the edits of the chunks
/// placed before it. Returns its edit (none when already applied), its
/// report and the cursor for the next chunk.
///
/// The steps go from the surest to the loosest placement; the first that finds one
/// place decides, and more than one place at any step is an error (ambiguous).
fn resolve_one(
    ctx: &Ctx,
    text: &Text,
    keys: &mut Keys,
    chunk: &Chunk,
    chunk_no: usize,
    cursor: usize,
    taken: &[Edit],
) -> Result<Placed, Error> {
    let old = chunk.old_lines();
    let insertion = old.is_empty();
    // Anchors are required to place a pure insertion; for other chunks they only
    // narrow the search, and one that cannot be found is reported and skipped.
    let strict = insertion && !chunk.end_of_file;
    let (start, anchors, notes) = narrow(ctx, text, keys, chunk, chunk_no, cursor, strict)?;
    let mut report = ChunkReport {
        chunk: chunk_no,
        patch_line: chunk.line,
        level: Level::Exact,
        line: 0,
        removed: 0,
        added: 0,
        anchors,
        drifted: Vec::new(),
        notes,
    };
    let a = Attempt {
        ctx,
        text,
        chunk,
        chunk_no,
        old,
        new: chunk.new_lines(),
        start,
    };
    if insertion {
        return Ok(place_insertion(&a, keys, report));
    }
    // 1. Whole-line comparisons, strict to tolerant.
    if let Some((level, at)) = by_whole_lines(&a, keys)? {
        report.level = level;
        return Ok(a.place_at(chunk, report, at));
    }
    // 1b. Out of order: agents do not always write chunks top to bottom.
    if start == cursor && cursor > 0 {
        if let Some((level, at)) = above_the_cursor(&a, keys, taken)? {
            report.level = level;
            report
                .notes
                .push("placed above the previous chunk (the chunks are out of order)".into());
            let (edit, report, _) = a.place_at(chunk, report, at);
            return Ok((edit, report, cursor));
        }
    }
    // 1c. Only for a refresh: the chunk's lines with their indentation changed (a
    // formatter re-indented the block). Context lines keep the file's text; added lines
    // move by the indentation their neighbours moved by.
    if ctx.reindent {
        if let Some(at) = by_indentation(&a, keys)? {
            report.level = Level::Indentation;
            report.notes.push(
                "placed with indentation ignored (the file was re-indented); added lines \
                 were re-indented to match"
                    .into(),
            );
            return Ok(a.place_at(&reindented(chunk, text, at), report, at));
        }
    }
    // 2. Already applied, checked before the rescues, which would otherwise "rescue"
    // the chunk's new lines again.
    let applied_hint = match already_applied(&a, keys) {
        Applied::Yes(at) => {
            report.level = Level::AlreadyApplied;
            report.line = at + 1;
            report.notes.push(format!(
                "the chunk's old lines are not in the file and its new lines are \
                 (lines {}-{}); nothing to do",
                at + 1,
                at + a.new.len()
            ));
            return Ok((None, report, at + a.new.len()));
        }
        Applied::Maybe(at) => Some(at),
        Applied::No => None,
    };
    // 3. Rescues, which overwrite lines the patch did not name.
    if let Some((level, at, del, align)) = rescue(&a, keys)? {
        report.level = level;
        return Ok(place(chunk, report, at, del, &align, text));
    }
    Err(no_match(&a, keys, applied_hint))
}

/// A pure insertion: after its anchor, or at the end of the file.
fn place_insertion(a: &Attempt, keys: &mut Keys, mut report: ChunkReport) -> Placed {
    let (chunk, new) = (a.chunk, &a.new);
    let at = if chunk.end_of_file || chunk.anchors.is_empty() {
        report.level = Level::EndOfFile;
        a.text.lines.len()
    } else {
        report.level = Level::Anchor;
        a.start
    };
    report.line = at + 1;
    // Re-sending an anchored insertion would duplicate it; the lines already
    // following the anchor are the tell.
    if report.level == Level::Anchor && new.iter().any(|l| is_significant(l)) {
        let level = Level::UnicodeTrailingWhitespace;
        let want = keys_of(level, new);
        let hay = keys.get(level);
        if hay.get(at..at + want.len()) == Some(&want[..]) {
            report.level = Level::AlreadyApplied;
            report
                .notes
                .push("the inserted lines already follow the anchor".into());
            return (None, report, at + want.len());
        }
    }
    report.added = new.len();
    let edit = Edit {
        start: at,
        del: 0,
        lines: new.iter().map(|l| NewLine::Text(l.to_string())).collect(),
    };
    (Some(edit), report, at)
}

/// The one place at or after the start where the old lines stand whole, at the first
/// level (strict to tolerant) that finds any. A chunk marked end-of-file takes the
/// candidate that ends the file.
fn by_whole_lines(a: &Attempt, keys: &mut Keys) -> Result<Option<(Level, usize)>, Error> {
    let len = a.text.lines.len();
    for level in Level::LINE_LEVELS {
        let pat = keys_of(level, &a.old);
        let mut cands = keys.find_all(level, &pat, a.start);
        if a.chunk.end_of_file && len >= pat.len() && cands.contains(&(len - pat.len())) {
            cands = vec![len - pat.len()];
        }
        match cands.len() {
            0 => continue,
            1 => return Ok(Some((level, cands[0]))),
            _ => return Err(a.ambiguous(level, &cands)),
        }
    }
    Ok(None)
}

/// Without an anchor to say otherwise, a chunk that fits nowhere below the previous
/// one may fit above it, if it fits there uniquely and touches no line already edited.
fn above_the_cursor(
    a: &Attempt,
    keys: &mut Keys,
    taken: &[Edit],
) -> Result<Option<(Level, usize)>, Error> {
    for level in Level::LINE_LEVELS {
        let pat = keys_of(level, &a.old);
        let cands = keys.find_all(level, &pat, 0);
        match cands.len() {
            0 => continue,
            1 => {
                let at = cands[0];
                let end = at + a.old.len();
                let clash = taken.iter().any(|e| {
                    let (s, d) = (e.start, e.del);
                    if d == 0 {
                        s > at && s < end
                    } else {
                        s < end && at < s + d
                    }
                });
                return Ok((!clash).then_some((level, at)));
            }
            _ => return Err(a.ambiguous(level, &cands)),
        }
    }
    Ok(None)
}

/// The one place of the old lines with indentation ignored.
fn by_indentation(a: &Attempt, keys: &mut Keys) -> Result<Option<usize>, Error> {
    let level = Level::Indentation;
    let pat = keys_of(level, &a.old);
    let cands = keys.find_all(level, &pat, a.start);
    match cands.len() {
        0 => Ok(None),
        1 => Ok(Some(cands[0])),
        _ => Err(a.ambiguous(level, &cands)),
    }
}

/// Whether a chunk's changes are in the file already.
enum Applied {
    /// Its new lines stand once where its old ones should, with two or more
    /// significant lines to say so: nothing to do.
    Yes(usize),
    /// They do, but one significant line is weak evidence (it may simply occur
    /// elsewhere): the chunk is refused and the find only mentioned.
    Maybe(usize),
    No,
}

/// The old lines are gone and the new ones sit uniquely in the region (at the first
/// level that finds them at all).
fn already_applied(a: &Attempt, keys: &mut Keys) -> Applied {
    let evidence = a.new.iter().filter(|l| is_significant(l)).count();
    if !a.chunk.has_changes() || evidence == 0 {
        return Applied::No;
    }
    for level in Level::LINE_LEVELS {
        let pat = keys_of(level, &a.new);
        let cands = keys.find_all(level, &pat, a.start);
        return match cands.len() {
            0 => continue,
            1 if evidence >= 2 => Applied::Yes(cands[0]),
            1 => Applied::Maybe(cands[0]),
            _ => Applied::No,
        };
    }
    Applied::No
}

/// The rescues (prefix and suffix, then the longest common subsequence): a window of
/// the file to replace and how the old lines align in it. They overwrite lines the
/// patch did not name, which is only worth it for a chunk that removes lines itself:
/// one that only adds must not delete anything.
#[allow(clippy::type_complexity)]
fn rescue(
    a: &Attempt,
    keys: &mut Keys,
) -> Result<Option<(Level, usize, usize, Vec<Option<usize>>)>, Error> {
    let removes = a
        .chunk
        .lines
        .iter()
        .any(|l| matches!(l, ChunkLine::Remove(_)));
    if !removes {
        return Ok(None);
    }
    let rescue_keys: Vec<String> = keys_of(Level::PrefixSuffix, &a.old);
    let hay: &[String] = keys.get(Level::PrefixSuffix);
    for level in [Level::PrefixSuffix, Level::Lcs] {
        let found = if level == Level::PrefixSuffix {
            prefix_suffix(hay, &rescue_keys, &a.old, &a.new, a.start)
        } else {
            lcs_rescue(hay, &rescue_keys, a.start)
        };
        match found {
            Rescue::One(at, del) => {
                let align = align(&rescue_keys, &hay[at..at + del], at);
                return Ok(Some((level, at, del, align)));
            }
            Rescue::Many(cands) => return Err(a.ambiguous(level, &cands)),
            Rescue::None => {}
        }
    }
    Ok(None)
}

/// The error for a chunk no step could place: what was expected, the closest window,
/// and where its new lines were seen if they were.
fn no_match(a: &Attempt, keys: &mut Keys, applied_hint: Option<usize>) -> Error {
    let rescue_keys: Vec<String> = keys_of(Level::PrefixSuffix, &a.old);
    let hay: &[String] = keys.get(Level::PrefixSuffix);
    let (near, near_unique) = near_miss(a.text, &a.old);
    let mut detail = no_match_detail(a.text, hay, &rescue_keys, &a.old, a.start);
    if let Some(at) = applied_hint {
        detail.push_str(&format!(
            "\nthe chunk's new lines are at line {}: it may be applied already",
            at + 1
        ));
    }
    if let Some(n) = &near {
        detail.push_str(&format!(
            "\nfirst difference at line {}:\n  expected: {}\n  found:    {}\n{}",
            n.diverges_at,
            n.expected_line,
            n.found_line,
            n.diff.trim_end()
        ));
    }
    Error::NoMatch {
        path: a.ctx.path.to_string(),
        chunk: a.chunk_no,
        line: a.chunk.line,
        near_unique,
        detail,
        near,
    }
}

/// The file region closest to a chunk's old lines ([`crate::text::closest`]), and
/// whether its text occurs in the file once.
fn near_miss(text: &Text, old: &[&str]) -> (Option<Box<crate::text::closest::Near>>, bool) {
    let mut file = String::new();
    for (l, _) in &text.lines {
        file.push_str(l);
        file.push('\n');
    }
    let near = crate::text::closest::closest(&file, &old.join("\n"));
    let unique = near
        .as_ref()
        .is_some_and(|n| crate::text::closest::occurrences(&file, &n.text).len() == 1);
    (near.map(Box::new), unique)
}

fn leading(s: &str) -> &str {
    &s[..s.len() - s.trim_start().len()]
}

/// `chunk` with its added lines re-indented for a placement at file line `at` where its
/// old lines match with indentation ignored: each added line trades the indentation of
/// the nearest significant old line before it (else after it) for that file line's.
fn reindented(chunk: &Chunk, text: &Text, at: usize) -> Chunk {
    // (patch indentation, file indentation) of each significant old line, by position
    // in the chunk's lines.
    let mut pairs: Vec<(usize, String, String)> = Vec::new();
    let mut old_i = 0usize;
    for (k, l) in chunk.lines.iter().enumerate() {
        if let ChunkLine::Context(s) | ChunkLine::Remove(s) = l {
            if let Some((f, _)) = text.lines.get(at + old_i) {
                if is_significant(s) {
                    pairs.push((k, leading(s).to_string(), leading(f).to_string()));
                }
            }
            old_i += 1;
        }
    }
    let mut out = chunk.clone();
    for (k, l) in out.lines.iter_mut().enumerate() {
        let ChunkLine::Add(s) = l else { continue };
        if !is_significant(s) {
            continue;
        }
        let near = pairs
            .iter()
            .rev()
            .find(|(j, ..)| *j < k)
            .or_else(|| pairs.iter().find(|(j, ..)| *j > k));
        let Some((_, patch, file)) = near else {
            continue;
        };
        let lead = leading(s);
        if let Some(rest) = lead.strip_prefix(patch.as_str()) {
            *s = format!("{file}{rest}{}", s.trim_start());
        } else if let Some(cut) = patch.strip_prefix(lead) {
            // Less indented than its neighbour: drop as much from the file's.
            if let Some(kept) = file.strip_suffix(cut) {
                *s = format!("{kept}{}", s.trim_start());
            }
        }
    }
    out
}

fn ambiguous(ctx: &Ctx, chunk: &Chunk, chunk_no: usize, level: Level, cands: &[usize]) -> Error {
    Error::Ambiguous {
        path: ctx.path.to_string(),
        chunk: chunk_no,
        line: chunk.line,
        level,
        candidates: cands.iter().map(|c| c + 1).collect(),
    }
}

/// Builds the edit for a chunk placed over file lines `[at, at + del)`, with `align`
/// mapping each old line of the chunk to the file line it matched (if any).
fn place(
    chunk: &Chunk,
    mut report: ChunkReport,
    at: usize,
    del: usize,
    align: &[Option<usize>],
    text: &Text,
) -> (Option<Edit>, ChunkReport, usize) {
    let mut lines = Vec::new();
    let mut old_i = 0usize;
    let mut used = vec![false; del];
    let mut added = 0usize;
    for l in &chunk.lines {
        match l {
            ChunkLine::Context(s) => {
                match align.get(old_i).copied().flatten() {
                    Some(f) => {
                        if let Some(u) = f.checked_sub(at).and_then(|k| used.get_mut(k)) {
                            *u = true;
                        }
                        lines.push(NewLine::Keep(f));
                    }
                    None => {
                        lines.push(NewLine::Text(s.clone()));
                        added += 1;
                    }
                }
                old_i += 1;
            }
            ChunkLine::Remove(_) => {
                if let Some(f) = align.get(old_i).copied().flatten() {
                    if let Some(u) = f.checked_sub(at).and_then(|k| used.get_mut(k)) {
                        *u = true;
                    }
                }
                old_i += 1;
            }
            ChunkLine::Add(s) => {
                lines.push(NewLine::Text(s.clone()));
                added += 1;
            }
        }
    }
    let kept = lines
        .iter()
        .filter(|l| matches!(l, NewLine::Keep(_)))
        .count();
    report.line = at + 1;
    report.removed = del.saturating_sub(kept);
    report.added = added;
    if report.level.is_rescue() {
        for (k, u) in used.iter().enumerate() {
            if !u {
                report.drifted.push(DriftedLine {
                    line: at + k + 1,
                    text: text.lines[at + k].0.clone(),
                });
            }
        }
    }
    let edit = Edit {
        start: at,
        del,
        lines,
    };
    (Some(edit), report, at + del)
}

enum Rescue {
    None,
    /// Start and length of the file window to replace.
    One(usize, usize),
    Many(Vec<usize>),
}

/// The chunk's unchanged leading and trailing lines, found with a short stretch of
/// other lines between them (one line up to twice the chunk's middle, plus two): what
/// lay between is replaced.
fn prefix_suffix(
    hay: &[String],
    old_keys: &[String],
    old: &[&str],
    new: &[&str],
    from: usize,
) -> Rescue {
    let p = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let max_s = old.len().min(new.len()) - p;
    let s = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(max_s)
        .take_while(|(a, b)| a == b)
        .count();
    if p == 0 || s == 0 {
        return Rescue::None;
    }
    let significant = old[..p]
        .iter()
        .chain(&old[old.len() - s..])
        .filter(|l| is_significant(l))
        .count();
    if significant < 2 {
        return Rescue::None;
    }
    let mid = old.len() - p - s;
    let max_gap = 2 * mid + 2;
    let pre = &old_keys[..p];
    let suf = &old_keys[old.len() - s..];
    let mut cands = Vec::new();
    let mut spans = Vec::new();
    for i in find_all(hay, pre, from) {
        let a = i + p;
        // At least one line between: a rescue replaces something that drifted.
        for g in 1..=max_gap {
            let j = a + g;
            if j + s > hay.len() {
                break;
            }
            if hay[j..j + s] == *suf {
                cands.push(i);
                spans.push((i, j + s - i));
            }
        }
    }
    match spans.len() {
        0 => Rescue::None,
        1 => Rescue::One(spans[0].0, spans[0].1),
        _ => Rescue::Many(cands),
    }
}

/// Weighted LCS table size guard and scorer: blank lines weigh 1, others 2, so that
/// runs of blank lines cannot make a window look similar.
fn lcs_table(a: &[String], b: &[String]) -> Vec<Vec<u32>> {
    let mut t = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            t[i][j] = if a[i] == b[j] {
                t[i + 1][j + 1] + if is_significant(&a[i]) { 2 } else { 1 }
            } else {
                t[i + 1][j].max(t[i][j + 1])
            };
        }
    }
    t
}

/// Aligns the chunk's old lines with a file window: for each old line, the file line
/// (absolute index) it matched.
fn align(old: &[String], window: &[String], at: usize) -> Vec<Option<usize>> {
    let t = lcs_table(old, window);
    let mut out = vec![None; old.len()];
    let (mut i, mut j) = (0, 0);
    while i < old.len() && j < window.len() {
        if old[i] == window[j] {
            out[i] = Some(at + j);
            i += 1;
            j += 1;
        } else if t[i + 1][j] >= t[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// Significant lines matched by the best alignment of `old` with `window`.
fn significant_matches(old: &[String], window: &[String]) -> usize {
    align(old, window, 0)
        .iter()
        .enumerate()
        .filter(|(i, m)| m.is_some() && is_significant(&old[*i]))
        .count()
}

/// A window of the chunk's length whose lines are mostly the chunk's: at least three
/// quarters of its significant lines, one of its edge lines in place, and no other
/// window as good.
fn lcs_rescue(hay: &[String], old: &[String], from: usize) -> Rescue {
    let n = old.len();
    let sig = old.iter().filter(|l| is_significant(l)).count();
    if n > LCS_MAX_LINES || sig < LCS_MIN_SIGNIFICANT || hay.len() < n || from + n > hay.len() {
        return Rescue::None;
    }
    let need = (3 * sig).div_ceil(4);
    let windows = hay.len() - n + 1 - from;
    if windows.saturating_mul(n * n) > LCS_BUDGET {
        return Rescue::None;
    }
    let set: std::collections::HashSet<&str> = old
        .iter()
        .filter(|l| is_significant(l))
        .map(String::as_str)
        .collect();
    let mut best = 0usize;
    let mut cands: Vec<usize> = Vec::new();
    for at in from..=hay.len() - n {
        let w = &hay[at..at + n];
        if w[0] != old[0] && w[n - 1] != old[n - 1] {
            continue;
        }
        // Cheap bound before the quadratic score.
        let bound = w.iter().filter(|l| set.contains(l.as_str())).count();
        if bound < need || bound < best {
            continue;
        }
        let score = significant_matches(old, w);
        if score < need {
            continue;
        }
        if score > best {
            best = score;
            cands.clear();
        }
        if score == best {
            cands.push(at);
        }
    }
    match cands.len() {
        0 => Rescue::None,
        1 => Rescue::One(cands[0], n),
        _ => Rescue::Many(cands),
    }
}

/// What the error for an unplaceable chunk shows: the chunk's old lines, and the file
/// window most like them.
fn no_match_detail(
    text: &Text,
    hay: &[String],
    old_keys: &[String],
    old: &[&str],
    from: usize,
) -> String {
    let mut out = String::from("expected lines:\n");
    for l in old.iter().take(12) {
        out.push_str(&format!("  {l}\n"));
    }
    if old.len() > 12 {
        out.push_str(&format!("  … ({} lines in all)\n", old.len()));
    }
    let n = old.len().min(hay.len());
    if n == 0 || from >= hay.len() {
        out.push_str(&format!(
            "the file has no lines after line {from} to search"
        ));
        return out;
    }
    let windows = hay.len().saturating_sub(n) + 1;
    let cheap = windows.saturating_mul(n * n) > LCS_BUDGET;
    // Ranked by shared lines, then by lines at the same offset, then first.
    let mut best: Option<(usize, (usize, usize))> = None;
    for at in 0..windows {
        let w = &hay[at..at + n];
        let positional = w.iter().zip(old_keys).filter(|(a, b)| a == b).count();
        let shared = if cheap {
            positional
        } else {
            significant_matches(&old_keys[..n], w)
        };
        let score = (shared, positional);
        if shared > 0 && best.is_none_or(|(_, b)| score > b) {
            best = Some((at, score));
        }
    }
    match best {
        Some((at, _)) => {
            out.push_str(&format!(
                "closest lines in the file ({}-{}):\n",
                at + 1,
                at + n
            ));
            for (k, (l, _)) in text.lines[at..at + n].iter().enumerate().take(12) {
                out.push_str(&format!("  {:>5} | {l}\n", at + k + 1));
            }
            if from > 0 {
                out.push_str(&format!(
                    "(the chunk was searched after line {from}, past the previous chunk and its anchors)\n"
                ));
            }
        }
        None => out.push_str("no line of the chunk occurs in the file\n"),
    }
    // Say so when only an indentation-blind comparison would have matched: that is
    // refused on purpose, and the user should know it was close.
    let level = Level::Indentation;
    let pat = keys_of(level, old);
    let flat: Vec<String> = text.lines.iter().map(|(t, _)| level.key(t)).collect();
    let cands = find_all(&flat, &pat, from);
    if let Some(at) = cands.first() {
        out.push_str(&format!(
            "lines {}-{} match only if indentation is ignored, which is never done for \
             lines a patch replaces\n",
            at + 1,
            at + old.len()
        ));
    }
    out.trim_end().to_string()
}

/// Applies the edits (sorted, non-overlapping) and settles line endings: kept lines
/// keep theirs, new lines take the dominant one, and the last line ends the way the
/// original last line did.
fn assemble(text: &Text, edits: &[Edit]) -> Text {
    let eol = text.dominant_eol();
    let mut out: Vec<(String, Eol)> = Vec::with_capacity(text.lines.len());
    let mut i = 0usize;
    let keep = |out: &mut Vec<(String, Eol)>, k: usize| {
        if let Some(l) = text.lines.get(k) {
            out.push(l.clone());
        }
    };
    for e in edits {
        while i < e.start && i < text.lines.len() {
            keep(&mut out, i);
            i += 1;
        }
        for l in &e.lines {
            match l {
                NewLine::Keep(k) => keep(&mut out, *k),
                NewLine::Text(s) => out.push((s.clone(), eol)),
            }
        }
        i = i.max(e.start + e.del);
    }
    while i < text.lines.len() {
        keep(&mut out, i);
        i += 1;
    }
    let last = out.len().saturating_sub(1);
    let missing_final = text.missing_final_newline();
    for (k, (_, e)) in out.iter_mut().enumerate() {
        if k == last && missing_final {
            *e = Eol::None;
        } else if *e == Eol::None {
            *e = eol;
        }
    }
    Text {
        bom: text.bom,
        lines: out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::parse::parse;
    use crate::patch::parse::Op;

    fn run(file: &str, patch_body: &str) -> Result<(String, Vec<ChunkReport>), Error> {
        let patch = format!("*** Begin Patch\n*** Update File: f\n{patch_body}*** End Patch\n");
        let p = parse(&patch)?;
        let Op::Update { chunks, .. } = &p.ops[0] else {
            panic!("update expected");
        };
        let text = Text::parse(file.as_bytes()).unwrap();
        let (out, reports) = resolve_chunks(
            &Ctx {
                path: "f",
                reindent: false,
            },
            &text,
            chunks,
        )?;
        Ok((String::from_utf8(out.render()).unwrap(), reports))
    }

    #[test]
    fn splits_every_ending() {
        let t = Text::parse(b"\xEF\xBB\xBFa\r\nb\rc\nd").unwrap();
        assert!(t.bom);
        assert_eq!(
            t.lines,
            vec![
                ("a".into(), Eol::CrLf),
                ("b".into(), Eol::Cr),
                ("c".into(), Eol::Lf),
                ("d".into(), Eol::None)
            ]
        );
        assert_eq!(t.render(), b"\xEF\xBB\xBFa\r\nb\rc\nd");
    }

    #[test]
    fn context_keeps_file_text() {
        let (out, r) = run(
            "say \u{201C}hi\u{201D}  \nold\n",
            "@@\n say \"hi\"\n-old\n+new\n",
        )
        .unwrap();
        assert_eq!(out, "say \u{201C}hi\u{201D}  \nnew\n");
        assert_eq!(r[0].level, Level::UnicodeTrailingWhitespace);
    }

    #[test]
    fn ambiguity_lists_lines() {
        let err = run("x\na\nx\na\n", "@@\n-a\n+b\n").unwrap_err();
        match err {
            Error::Ambiguous { candidates, .. } => assert_eq!(candidates, vec![2, 4]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn stacked_anchors_narrow() {
        let file = "class A\n  def f\n    x = 1\nclass B\n  def f\n    x = 1\n";
        let (out, r) = run(file, "@@ class B\n@@   def f\n-    x = 1\n+    x = 2\n").unwrap();
        assert_eq!(
            out,
            "class A\n  def f\n    x = 1\nclass B\n  def f\n    x = 2\n"
        );
        assert_eq!(r[0].anchors[1].line, Some(5));
    }

    #[test]
    fn already_applied_is_detected() {
        let (out, r) = run("a\nnew\nc\n", "@@\n a\n-old\n+new\n c\n").unwrap();
        assert_eq!(out, "a\nnew\nc\n");
        assert_eq!(r[0].level, Level::AlreadyApplied);
    }

    #[test]
    fn one_line_is_too_weak_to_claim_already_applied() {
        let err = run("x\nbar();\ny\n", "@@\n-foo();\n+bar();\n").unwrap_err();
        assert!(err.to_string().contains("may be applied already"), "{err}");
    }

    #[test]
    fn lcs_reports_drift() {
        let (out, r) = run(
            "top\nA\nB-stale\nC\nD\nE\nbottom\n",
            "@@ top\n A\n-B\n-C\n-D\n-E\n+B\n+C\n+D\n+X\n",
        )
        .unwrap();
        assert_eq!(out, "top\nA\nB\nC\nD\nX\nbottom\n");
        assert_eq!(r[0].level, Level::Lcs);
        assert_eq!(
            r[0].drifted,
            vec![DriftedLine {
                line: 3,
                text: "B-stale".into()
            }]
        );
    }

    #[test]
    fn new_lines_take_dominant_ending_and_final_newline_is_kept() {
        let (out, _) = run("a\r\nb\r\nc", "@@\n a\n+x\n b\n-c\n+d\n+e\n").unwrap();
        assert_eq!(out, "a\r\nx\r\nb\r\nd\r\ne");
    }

    #[test]
    fn out_of_order_chunks_are_placed_when_unique() {
        let (out, r) = run("a\nb\nc\nd\n", "@@\n-c\n+C\n@@\n-a\n+A\n").unwrap();
        assert_eq!(out, "A\nb\nC\nd\n");
        assert_eq!(r[1].line, 1);
        assert!(r[1].notes[0].contains("out of order"));
        // Not when the earlier place was already edited.
        assert!(run("a\nb\n", "@@\n-a\n+x\n@@\n-a\n+y\n").is_err());
    }

    #[test]
    fn rescues_never_delete_for_an_insert_only_chunk() {
        let err = run(
            "fn a() {\n    one();\n    drifted();\n}\n",
            "@@\n fn a() {\n     one();\n+    two();\n }\n",
        )
        .unwrap_err();
        assert!(matches!(err, Error::NoMatch { .. }), "{err}");
    }

    #[test]
    fn no_match_shows_closest_lines() {
        let err = run("one\ntwo\nthree\n", "@@\n one\n-tw0\n+2\n").unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("closest lines in the file (1-2)"), "{msg}");
    }
}
