//! Placing one chunk: the steps from the surest placement to the loosest (whole lines,
//! above the cursor, indentation ignored, already applied, the rescues), and the edit a
//! placement makes.

use super::super::normalize::is_significant;
use super::super::normalize::Level;
use super::super::parse::Chunk;
use super::super::parse::ChunkLine;
use super::keys::keys_of;
use super::keys::Keys;
use super::narrow;
use super::rescue::rescue;
use super::unplaced::no_match;
use super::Attempt;
use super::ChunkReport;
use super::Ctx;
use super::DriftedLine;
use super::Edit;
use super::Error;
use super::NewLine;
use super::Text;

/// A placed chunk: its edit (none when already applied), its report and the cursor for
/// the next chunk.
pub(super) type Placed = (Option<Edit>, ChunkReport, usize);

/// Places one chunk searching from `cursor`; `taken` are the edits of the chunks
/// placed before it. Returns its edit (none when already applied), its
/// report and the cursor for the next chunk.
///
/// The steps go from the surest to the loosest placement; the first that finds one
/// place decides, and more than one place at any step is an error (ambiguous).
pub(super) fn resolve_one(
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

pub(super) fn leading(s: &str) -> &str {
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

/// Builds the edit for a chunk placed over file lines `[at, at + del)`, with `align`
/// mapping each old line of the chunk to the file line it matched (if any).
pub(super) fn place(
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
