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

mod keys;
mod rescue;
mod steps;
mod text;
mod unplaced;

use serde::Serialize;

use super::normalize::Level;
use super::parse::Chunk;
use super::Error;
use keys::Keys;
use steps::place;
use steps::resolve_one;
use steps::Placed;
use text::assemble;
use unplaced::ambiguous;

pub use text::Eol;
pub use text::Text;
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
