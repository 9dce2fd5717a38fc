/*!
The `*** Begin Patch` grammar, read leniently.

Models write this format by hand, token by token, and the mistakes they make are
predictable: markers padded with blanks, CRLF from a Windows clipboard, the first chunk
without its `@@`, empty context lines that lost their leading space, the whole patch
wrapped in a shell heredoc or a Markdown fence. Those are accepted because their meaning
is not in doubt. Anything else is refused with the patch line number and what was
expected there, because guessing at structure is how a patch edits the wrong thing.

```text
patch   := "*** Begin Patch" op+ "*** End Patch"
op      := "*** Add File: " path ("+" line)*
         | "*** Delete File: " path
         | "*** Update File: " path ["*** Move to: " path] chunk*
chunk   := ("@@" [anchor])* (" " line | "-" line | "+" line)+ ["*** End of File"]
```
*/

use super::Error;

/// A parsed patch: its file operations in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    pub ops: Vec<Op>,
}

/// One file operation. `line` is the 1-based patch line of its header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Add {
        path: String,
        lines: Vec<String>,
        line: usize,
    },
    Delete {
        path: String,
        line: usize,
    },
    Update {
        path: String,
        move_to: Option<String>,
        chunks: Vec<Chunk>,
        line: usize,
    },
}

impl Op {
    /// The path the operation names first.
    pub fn path(&self) -> &str {
        match self {
            Op::Add { path, .. } | Op::Delete { path, .. } | Op::Update { path, .. } => path,
        }
    }
    /// The patch line of its header.
    pub fn line(&self) -> usize {
        match self {
            Op::Add { line, .. } | Op::Delete { line, .. } | Op::Update { line, .. } => *line,
        }
    }
}

/// One line of a chunk body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkLine {
    Context(String),
    Remove(String),
    Add(String),
}

/// One `@@` chunk of an Update.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Chunk {
    /// The `@@ text` anchors in order; each narrows the search to after itself.
    pub anchors: Vec<String>,
    pub lines: Vec<ChunkLine>,
    /// The chunk ended with `*** End of File`: it must sit at the end of the file.
    pub end_of_file: bool,
    /// 1-based patch line where the chunk starts (its first `@@`, or first body line).
    pub line: usize,
}

impl Chunk {
    /// The lines the chunk expects in the file: context and removed lines.
    pub fn old_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                ChunkLine::Context(s) | ChunkLine::Remove(s) => Some(s.as_str()),
                ChunkLine::Add(_) => None,
            })
            .collect()
    }
    /// The lines the chunk leaves in their place: context and added lines.
    pub fn new_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                ChunkLine::Context(s) | ChunkLine::Add(s) => Some(s.as_str()),
                ChunkLine::Remove(_) => None,
            })
            .collect()
    }
    /// Whether the chunk changes anything at all.
    pub fn has_changes(&self) -> bool {
        self.lines
            .iter()
            .any(|l| !matches!(l, ChunkLine::Context(_)))
    }
}

/// A line of the patch text with its 1-based number.
struct Line<'a> {
    no: usize,
    text: &'a str,
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const EOF_MARK: &str = "*** End of File";

/// Parses a whole patch text.
pub fn parse(text: &str) -> Result<Patch, Error> {
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let all: Vec<Line> = text
        .split('\n')
        .enumerate()
        .map(|(i, t)| Line {
            no: i + 1,
            text: t.strip_suffix('\r').unwrap_or(t),
        })
        .collect();
    let body = unwrap_envelope(&all)?;
    let mut p = Parser {
        lines: body,
        pos: 0,
    };
    p.patch()
}

/// Strips blank lines around the patch and one wrapper: a shell heredoc (`<<EOF`,
/// `<<'EOF'`, `cat <<'PATCH'`, `apply_patch <<"EOF"` …) or a Markdown code fence.
fn unwrap_envelope<'a, 'b>(all: &'b [Line<'a>]) -> Result<&'b [Line<'a>], Error> {
    let first = all.iter().position(|l| !l.text.trim().is_empty());
    let last = all.iter().rposition(|l| !l.text.trim().is_empty());
    let (Some(mut first), Some(mut last)) = (first, last) else {
        return Err(Error::Syntax {
            line: 1,
            expected: format!("`{BEGIN}`"),
            found: "an empty patch text".into(),
        });
    };
    let opener = all[first].text.trim();
    if opener != BEGIN {
        let closer = heredoc_delimiter(opener).or_else(|| fence(opener).then(|| "```".into()));
        if let Some(closer) = closer {
            first += 1;
            if last > first && all[last].text.trim() == closer {
                last -= 1;
            }
        }
    }
    Ok(all.get(first..=last).unwrap_or(&[]))
}

/// The delimiter of a heredoc opener such as `cat <<'PATCH'` or `<<-EOF`.
fn heredoc_delimiter(line: &str) -> Option<String> {
    let at = line.find("<<")?;
    let rest = line[at + 2..].trim_start_matches('-').trim();
    let word = rest.split_whitespace().next()?;
    let word = word.trim_matches(|c| c == '\'' || c == '"');
    let ok = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    ok.then(|| word.to_string())
}

fn fence(line: &str) -> bool {
    line.starts_with("```")
}

struct Parser<'a, 'b> {
    lines: &'b [Line<'a>],
    pos: usize,
}

/// The kind of a marker line (compared with surrounding blanks removed).
#[derive(PartialEq)]
enum Marker<'a> {
    End,
    Add(&'a str),
    Delete(&'a str),
    Update(&'a str),
    Move(&'a str),
    EndOfFile,
    /// Starts with `***` but is none of the above.
    Unknown,
}

fn marker(text: &str) -> Option<Marker<'_>> {
    let t = text.trim();
    if !t.starts_with("***") {
        return None;
    }
    Some(if t == END {
        Marker::End
    } else if t == EOF_MARK {
        Marker::EndOfFile
    } else if let Some(p) = t.strip_prefix(ADD) {
        Marker::Add(p.trim())
    } else if let Some(p) = t.strip_prefix(DELETE) {
        Marker::Delete(p.trim())
    } else if let Some(p) = t.strip_prefix(UPDATE) {
        Marker::Update(p.trim())
    } else if let Some(p) = t.strip_prefix(MOVE) {
        Marker::Move(p.trim())
    } else {
        Marker::Unknown
    })
}

/// Whether a line ends the body of an operation: the next header or the end.
fn ends_op(text: &str) -> bool {
    matches!(
        marker(text),
        Some(Marker::End | Marker::Add(_) | Marker::Delete(_) | Marker::Update(_))
    )
}

/// The anchor text of an `@@` line, or `None` when the line is not one. A unified-diff
/// range (`@@ -12,4 +12,5 @@ fn f()`) carries no usable line numbers here (the file
/// may have drifted), so only the text after it is kept.
fn anchor(text: &str) -> Option<String> {
    // Only at the start of the line: ` @@ x` is a context line whose text is `@@ x`.
    let rest = text.strip_prefix("@@")?;
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        return None;
    }
    let rest = rest.trim();
    if let Some(after) = unified_range(rest) {
        return Some(after.trim().to_string());
    }
    Some(rest.to_string())
}

/// The text after `-a,b +c,d @@`, when `rest` starts with such a range.
fn unified_range(rest: &str) -> Option<&str> {
    let mut parts = rest.splitn(3, ' ');
    let old = parts.next()?;
    let new = parts.next()?;
    let tail = parts.next().unwrap_or("");
    let is_range = |s: &str, sign: char| {
        s.strip_prefix(sign).is_some_and(|r| {
            !r.is_empty()
                && r.split(',')
                    .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
    };
    if !(is_range(old, '-') && is_range(new, '+')) {
        return None;
    }
    tail.strip_prefix("@@")
}

impl<'a> Parser<'a, '_> {
    fn peek(&self) -> Option<&Line<'a>> {
        self.lines.get(self.pos)
    }

    /// The line number to blame when the text ends early.
    fn end_line(&self) -> usize {
        self.lines.last().map_or(1, |l| l.no + 1)
    }

    fn patch(&mut self) -> Result<Patch, Error> {
        match self.peek() {
            Some(l) if l.text.trim() == BEGIN => self.pos += 1,
            Some(l) => {
                return Err(Error::Syntax {
                    line: l.no,
                    expected: format!("`{BEGIN}`"),
                    found: quote(l.text),
                })
            }
            None => {
                return Err(Error::Syntax {
                    line: self.end_line(),
                    expected: format!("`{BEGIN}`"),
                    found: "the end of the text".into(),
                })
            }
        }
        let mut ops = Vec::new();
        loop {
            let Some(l) = self.peek() else {
                return Err(Error::Syntax {
                    line: self.end_line(),
                    expected: format!("a file operation or `{END}`"),
                    found: "the end of the text (the patch looks truncated)".into(),
                });
            };
            let (no, text) = (l.no, l.text);
            if text.trim().is_empty() {
                self.pos += 1;
                continue;
            }
            match marker(text) {
                Some(Marker::End) => {
                    self.pos += 1;
                    break;
                }
                Some(Marker::Add(path)) => {
                    self.pos += 1;
                    let path = non_empty_path(path, no)?;
                    let lines = self.add_body()?;
                    ops.push(Op::Add {
                        path,
                        lines,
                        line: no,
                    });
                }
                Some(Marker::Delete(path)) => {
                    self.pos += 1;
                    let path = non_empty_path(path, no)?;
                    ops.push(Op::Delete { path, line: no });
                }
                Some(Marker::Update(path)) => {
                    self.pos += 1;
                    let path = non_empty_path(path, no)?;
                    ops.push(self.update_body(path, no)?);
                }
                _ => {
                    return Err(Error::Syntax {
                        line: no,
                        expected: format!(
                            "`{ADD} <path>`, `{DELETE} <path>`, `{UPDATE} <path>` or `{END}`"
                        ),
                        found: quote(text),
                    })
                }
            }
        }
        if let Some(l) = self.lines[self.pos.min(self.lines.len())..]
            .iter()
            .find(|l| !l.text.trim().is_empty())
        {
            return Err(Error::Syntax {
                line: l.no,
                expected: format!("nothing after `{END}`"),
                found: quote(l.text),
            });
        }
        if ops.is_empty() {
            return Err(Error::Empty);
        }
        Ok(Patch { ops })
    }

    /// The `+` lines of an Add. A bare empty line between `+` lines is an empty line
    /// whose `+` got lost; blank lines at the end of the body are dropped.
    fn add_body(&mut self) -> Result<Vec<String>, Error> {
        let mut lines = Vec::new();
        let mut pending_blank = 0usize;
        while let Some(l) = self.peek() {
            if let Some(rest) = l.text.strip_prefix('+') {
                lines.extend(std::iter::repeat_n(String::new(), pending_blank));
                pending_blank = 0;
                lines.push(rest.to_string());
            } else if ends_op(l.text) {
                break;
            } else if l.text.trim().is_empty() {
                pending_blank += 1;
            } else {
                return Err(Error::Syntax {
                    line: l.no,
                    expected: "a `+` line of the added file, or the next file operation".into(),
                    found: quote(l.text),
                });
            }
            self.pos += 1;
        }
        Ok(lines)
    }

    fn update_body(&mut self, path: String, header: usize) -> Result<Op, Error> {
        let mut move_to = None;
        if let Some(l) = self.peek() {
            if let Some(Marker::Move(dest)) = marker(l.text) {
                move_to = Some(non_empty_path(dest, l.no)?);
                self.pos += 1;
            }
        }
        let mut chunks: Vec<Chunk> = Vec::new();
        let mut cur: Option<Chunk> = None;
        // Bare empty lines are held back: inside a chunk they are empty context lines,
        // at its end they are most likely layout and are dropped.
        let mut pending_blank = 0usize;
        while let Some(l) = self.peek() {
            let (no, text) = (l.no, l.text);
            if ends_op(text) {
                break;
            }
            if let Some(m) = marker(text) {
                match m {
                    Marker::EndOfFile => match cur.take() {
                        Some(mut c) if !c.lines.is_empty() => {
                            c.end_of_file = true;
                            chunks.push(c);
                            pending_blank = 0;
                        }
                        _ => {
                            return Err(Error::Syntax {
                                line: no,
                                expected: "chunk lines before `*** End of File`".into(),
                                found: quote(text),
                            })
                        }
                    },
                    Marker::Move(_) => {
                        return Err(Error::Syntax {
                            line: no,
                            expected: format!(
                                "`{MOVE}` only right after its `{UPDATE}` line"
                            ),
                            found: quote(text),
                        })
                    }
                    _ => {
                        return Err(Error::Syntax {
                            line: no,
                            expected: format!(
                                "a chunk line (` `, `-`, `+`, `@@`), `{EOF_MARK}` or the next file operation"
                            ),
                            found: quote(text),
                        })
                    }
                }
                self.pos += 1;
                continue;
            }
            if let Some(a) = anchor(text) {
                pending_blank = 0;
                let c = match cur.take() {
                    // Consecutive `@@` lines stack: class, then method.
                    Some(c) if c.lines.is_empty() => c,
                    Some(c) => {
                        chunks.push(c);
                        new_chunk(no)
                    }
                    None => new_chunk(no),
                };
                let mut c = c;
                if !a.is_empty() {
                    c.anchors.push(a);
                }
                cur = Some(c);
                self.pos += 1;
                continue;
            }
            let body = if let Some(r) = text.strip_prefix(' ') {
                ChunkLine::Context(r.to_string())
            } else if let Some(r) = text.strip_prefix('-') {
                ChunkLine::Remove(r.to_string())
            } else if let Some(r) = text.strip_prefix('+') {
                ChunkLine::Add(r.to_string())
            } else if text.trim().is_empty() {
                pending_blank += 1;
                self.pos += 1;
                continue;
            } else {
                return Err(Error::Syntax {
                    line: no,
                    expected: "a chunk line starting with ` `, `-` or `+`, an `@@` line, or the next file operation".into(),
                    found: quote(text),
                });
            };
            let c = cur.get_or_insert_with(|| new_chunk(no));
            for _ in 0..pending_blank {
                c.lines.push(ChunkLine::Context(String::new()));
            }
            pending_blank = 0;
            c.lines.push(body);
            self.pos += 1;
        }
        if let Some(c) = cur {
            if c.lines.is_empty() {
                return Err(Error::Syntax {
                    line: c.line,
                    expected: "chunk lines after `@@`".into(),
                    found: "none".into(),
                });
            }
            chunks.push(c);
        }
        if chunks.is_empty() && move_to.is_none() {
            return Err(Error::EmptyUpdate { path, line: header });
        }
        Ok(Op::Update {
            path,
            move_to,
            chunks,
            line: header,
        })
    }
}

fn new_chunk(line: usize) -> Chunk {
    Chunk {
        line,
        ..Chunk::default()
    }
}

fn non_empty_path(path: &str, line: usize) -> Result<String, Error> {
    if path.is_empty() {
        return Err(Error::Syntax {
            line,
            expected: "a path after the colon".into(),
            found: "nothing".into(),
        });
    }
    Ok(path.to_string())
}

/// Quotes a patch line for an error message, shortened so that one huge line cannot
/// flood the terminal.
fn quote(text: &str) -> String {
    const MAX: usize = 120;
    if text.chars().count() <= MAX {
        return format!("`{text}`");
    }
    let short: String = text.chars().take(MAX).collect();
    format!("`{short}…`")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syntax_line(text: &str) -> usize {
        match parse(text) {
            Err(Error::Syntax { line, .. }) => line,
            other => panic!("expected a syntax error, got {other:?}"),
        }
    }

    #[test]
    fn parses_all_operations() {
        let p = parse(
            "*** Begin Patch\n*** Add File: a.txt\n+one\n\n+two\n*** Delete File: b.txt\n\
             *** Update File: c.txt\n*** Move to: d.txt\n@@ class A\n@@ def f\n ctx\n-old\n+new\n\
             *** End of File\n*** End Patch\n",
        )
        .unwrap();
        assert_eq!(p.ops.len(), 3);
        assert_eq!(
            p.ops[0],
            Op::Add {
                path: "a.txt".into(),
                lines: vec!["one".into(), "".into(), "two".into()],
                line: 2
            }
        );
        let Op::Update {
            move_to, chunks, ..
        } = &p.ops[2]
        else {
            panic!("update expected");
        };
        assert_eq!(move_to.as_deref(), Some("d.txt"));
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].anchors, vec!["class A", "def f"]);
        assert!(chunks[0].end_of_file);
        assert_eq!(chunks[0].old_lines(), vec!["ctx", "old"]);
        assert_eq!(chunks[0].new_lines(), vec!["ctx", "new"]);
    }

    #[test]
    fn lenient_forms() {
        // CRLF, padded markers, first chunk without @@, bare empty context line.
        let p = parse(
            " *** Begin Patch \r\n  *** Update File: x \r\n a\r\n\r\n-b\r\n+c\r\n\r\n *** End Patch\r\n",
        )
        .unwrap();
        let Op::Update { path, chunks, .. } = &p.ops[0] else {
            panic!("update expected");
        };
        assert_eq!(path, "x");
        assert_eq!(chunks[0].old_lines(), vec!["a", "", "b"]);
        assert_eq!(chunks[0].new_lines(), vec!["a", "", "c"]);
    }

    #[test]
    fn heredoc_and_fence_wrappers() {
        for wrapped in [
            "cat <<'PATCH'\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nPATCH\n",
            "<<EOF\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF",
            "apply_patch <<\"EOF\"\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF\n",
            "```\n*** Begin Patch\n*** Delete File: a\n*** End Patch\n```\n",
        ] {
            let p = parse(wrapped).unwrap();
            assert_eq!(p.ops[0].path(), "a", "{wrapped}");
        }
    }

    #[test]
    fn unified_range_header_keeps_only_its_text() {
        assert_eq!(
            anchor("@@ -1,3 +1,4 @@ fn main()").as_deref(),
            Some("fn main()")
        );
        assert_eq!(anchor("@@ -1 +1 @@").as_deref(), Some(""));
        assert_eq!(anchor("@@ class A").as_deref(), Some("class A"));
        assert_eq!(anchor("@@@"), None);
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(syntax_line("hello\n"), 1);
        assert_eq!(
            syntax_line("*** Begin Patch\n*** Frobnicate File: foo\n*** End Patch\n"),
            2
        );
        assert_eq!(
            syntax_line("*** Begin Patch\n*** Update File: a\n@@\n a\ngarbage\n*** End Patch\n"),
            5
        );
        assert_eq!(syntax_line("*** Begin Patch\n*** Delete File: a\n"), 3);
        assert!(matches!(
            parse("*** Begin Patch\n*** End Patch\n"),
            Err(Error::Empty)
        ));
        assert!(matches!(
            parse("*** Begin Patch\n*** Update File: a\n*** End Patch\n"),
            Err(Error::EmptyUpdate { .. })
        ));
    }
}
