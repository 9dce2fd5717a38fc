/*!
Deciding, without parsing, that a file cannot match a pattern.

Parsing is most of the cost of a search, and most files of a tree cannot match a
selective pattern. Two checks, both only ever answer "cannot match" when that is sure
(or, for the comment check, when the contrary needs code that hides inside a string):

1. every identifier or keyword of the pattern must occur in the file (ast-grep's CLI
   checks one literal, after parsing, as a substring), as a whole word: an identifier
   or keyword token is never glued to a letter, digit or `_`, which would make it a
   longer token, so an `unwrap_or` alone does not count (a quarter of the rust corpus's
   files with `unwrap` have no other). Other texts (a string's content) may be glued
   to their neighbours (`"\nDone"`) and count anywhere;
2. an occurrence of the longest one must sit on a line that is not plainly a comment:
   a line starting with `//` (or `#` in languages whose comments start with `#`), or a
   `*`-led line of a `/* … */` block opened at the start of a line (the JSDoc and rustdoc
   shape, where examples such as `console.log(x)` or `x.unwrap()` are common), unless
   the opening line holds a `"` or `` ` `` that may end a multi-line string. Lines that
   could interpolate code into a string (`${`, `#{`, `\(`, and `{` for `#` languages) are
   never treated as comments. A pattern that itself holds a comment opener (`# TODO`)
   may match a comment, so for it comment lines count like any other.
*/

use crate::lang::Lang;
use ast_grep_core::matcher::PatternNode;
use ast_grep_core::tree_sitter::LanguageExt;
use ast_grep_core::Pattern;
use ast_grep_language::Language;
use memchr::memmem;

/// How a language writes the comments the prefilter recognizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Comments {
    /// `//` lines and `/* */` blocks.
    Slashes,
    /// `#` lines.
    Hash,
    /// Not recognized: every occurrence counts.
    None,
}

fn comments_of(lang: Lang) -> Comments {
    use crate::lang::SupportLang::*;
    let Some(lang) = lang.builtin() else {
        return Comments::None;
    };
    match lang {
        Rust | JavaScript | TypeScript | Tsx | Go | Java | C | Cpp | CSharp | Kotlin | Scala
        | Swift | Dart | Solidity | Zig | Css => Comments::Slashes,
        Python | Ruby | Bash | Yaml | Nix | Elixir => Comments::Hash,
        _ => Comments::None,
    }
}

/// The literal checks of one pattern in one language.
#[derive(Debug, Clone)]
pub struct Prefilter {
    /// Longest first; the first is the one whose occurrences are located.
    finders: Vec<Literal>,
    comments: Comments,
}

/// One literal of the pattern, and, for an identifier or keyword, whether its ends are
/// word characters (then the text around an occurrence must not be: see the module's
/// check 1).
#[derive(Debug, Clone)]
struct Literal {
    finder: memmem::Finder<'static>,
    word_start: bool,
    word_end: bool,
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

impl Literal {
    fn new(text: &str, whole: bool) -> Literal {
        Literal {
            finder: memmem::Finder::new(text.as_bytes()).into_owned(),
            word_start: whole && text.chars().next().is_some_and(is_word),
            word_end: whole && text.chars().next_back().is_some_and(is_word),
        }
    }

    /// Where the literal occurs in `text` as a whole word.
    fn find_iter<'t>(&'t self, text: &'t str) -> impl Iterator<Item = usize> + 't {
        let len = self.finder.needle().len();
        self.finder.find_iter(text.as_bytes()).filter(move |&at| {
            // The needle is UTF-8 starting with a whole character, so both ends of an
            // occurrence are character boundaries.
            let before = text.get(..at).and_then(|t| t.chars().next_back());
            let after = text.get(at + len..).and_then(|t| t.chars().next());
            !(self.word_start && before.is_some_and(is_word)
                || self.word_end && after.is_some_and(is_word))
        })
    }
}

impl Prefilter {
    /// Collects the identifiers and keywords of `pattern` (compiled from `source`). In
    /// languages whose keywords are case-insensitive (PHP) only named tokens count.
    pub fn new(source: &str, pattern: &Pattern, lang: Lang) -> Prefilter {
        let exact_keywords = lang != Lang::Php;
        let expando = lang.expando_char();
        let ts_lang = lang.get_ts_language();
        // (text, whether it is a whole word in any file that matches)
        let mut texts: Vec<(String, bool)> = Vec::new();
        let mut stack = vec![&pattern.node];
        while let Some(node) = stack.pop() {
            match node {
                PatternNode::Terminal {
                    text,
                    is_named,
                    kind_id,
                } => {
                    let usable = (*is_named || exact_keywords)
                        && !text.contains(expando)
                        && text.chars().any(is_word);
                    if !usable {
                        continue;
                    }
                    // Identifiers and keywords are whole tokens. String contents are
                    // not: in `"\nDone"` the content `Done` follows the escape's `n`.
                    let whole = if *is_named {
                        ts_lang
                            .node_kind_for_id(*kind_id)
                            .is_some_and(|kind| kind.contains("identifier"))
                    } else {
                        text.chars().all(is_word)
                    };
                    match texts.iter_mut().find(|(t, _)| t == text) {
                        Some((_, seen_whole)) => *seen_whole &= whole,
                        None => texts.push((text.to_string(), whole)),
                    }
                }
                PatternNode::Internal { children, .. } => stack.extend(children.iter().rev()),
                PatternNode::MetaVar { .. } => {}
            }
        }
        // Longest first: the rarest, as a rule, and the one located below.
        texts.sort_by(|(a, _), (b, _)| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        Prefilter {
            finders: texts
                .iter()
                .map(|(t, whole)| Literal::new(t, *whole))
                .collect(),
            comments: match comments_of(lang) {
                Comments::Slashes if source.contains("//") || source.contains("/*") => {
                    Comments::None
                }
                Comments::Hash if source.contains('#') => Comments::None,
                comments => comments,
            },
        }
    }

    /// No literal checks: every text may match.
    pub fn none() -> Prefilter {
        Prefilter {
            finders: Vec::new(),
            comments: Comments::None,
        }
    }

    /// The longest literal, if any (for reporting).
    pub fn literal(&self) -> Option<&str> {
        self.finders
            .first()
            .and_then(|f| std::str::from_utf8(f.finder.needle()).ok())
    }

    /// False only when `text` cannot contain a match.
    pub fn may_match(&self, text: &str) -> bool {
        let Some((first, rest)) = self.finders.split_first() else {
            return true;
        };
        let bytes = text.as_bytes();
        let mut occurrences = first.find_iter(text).peekable();
        if occurrences.peek().is_none() {
            return false;
        }
        if rest.iter().any(|f| f.find_iter(text).next().is_none()) {
            return false;
        }
        if self.comments == Comments::None {
            return true;
        }
        let lines = CommentLines::new(bytes, self.comments);
        occurrences.any(|at| !lines.is_comment_at(at))
    }
}

/// Which byte ranges of a file are plainly comment lines.
struct CommentLines {
    /// Sorted, disjoint byte ranges that are comments.
    ranges: Vec<(usize, usize)>,
}

impl CommentLines {
    fn new(bytes: &[u8], style: Comments) -> CommentLines {
        let mut ranges = Vec::new();
        let mut in_block = false;
        let mut start = 0usize;
        while start < bytes.len() {
            let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
            let line = &bytes[start..end];
            let indent = line
                .iter()
                .take_while(|b| **b == b' ' || **b == b'\t')
                .count();
            let body = &line[indent..];
            // Asked only of lines that could be comments: most lines are code.
            let interpolates = || may_interpolate(line, style);
            match style {
                Comments::Slashes => {
                    if in_block {
                        let star_led = body.starts_with(b"*") && !body.starts_with(b"*/");
                        if star_led || body.is_empty() {
                            // A `*`-led line of the block: comment up to a `*/` on it.
                            let close = memmem::find(body, b"*/");
                            if !interpolates() {
                                let stop = close.map_or(end, |c| start + indent + c);
                                ranges.push((start, stop));
                            }
                            if close.is_some() {
                                in_block = false;
                            }
                        } else {
                            // Not the shape we know (or the closing `*/` line): stop
                            // trusting the block and count the line as code.
                            in_block = false;
                        }
                    } else if body.starts_with(b"//") {
                        if !interpolates() {
                            ranges.push((start, end));
                        }
                    } else if body.starts_with(b"/*") {
                        let close = memmem::find(&body[2..], b"*/");
                        // A quote after an opener left open may end a string that spans
                        // lines (`2 * "\n/*".len()\n * y.unwrap()`): then the `/*` is
                        // string text and the `*`-led lines after it may be code.
                        let may_end_string =
                            close.is_none() && memchr::memchr2(b'"', b'`', &body[2..]).is_some();
                        if !may_end_string && !interpolates() {
                            let stop = close.map_or(end, |c| start + indent + 2 + c);
                            ranges.push((start, stop));
                        }
                        in_block = close.is_none() && !may_end_string;
                    }
                }
                Comments::Hash => {
                    if body.starts_with(b"#") && !interpolates() {
                        ranges.push((start, end));
                    }
                }
                Comments::None => {}
            }
            start = end + 1;
        }
        CommentLines { ranges }
    }

    fn is_comment_at(&self, at: usize) -> bool {
        let i = self.ranges.partition_point(|(_, end)| *end <= at);
        self.ranges.get(i).is_some_and(|(s, e)| *s <= at && at < *e)
    }
}

/// Whether a line could splice code into a string (template literals, interpolation).
fn may_interpolate(line: &[u8], style: Comments) -> bool {
    // Every opener is two bytes: look at each `$`, `#` or `\` and the byte after it
    // (one pass, no searcher built per line).
    let openers = memchr::memchr3_iter(b'$', b'#', b'\\', line)
        .any(|i| line.get(i + 1) == Some(if line[i] == b'\\' { &b'(' } else { &b'{' }));
    openers || (style == Comments::Hash && memchr::memchr(b'{', line).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(pattern: &str, lang: Lang) -> Prefilter {
        let p = Pattern::try_new(pattern, lang).expect("pattern");
        Prefilter::new(pattern, &p, lang)
    }

    #[test]
    fn a_pattern_holding_a_comment_may_match_in_comment_lines() {
        let p = filter("# TODO later", Lang::Python);
        assert!(p.may_match("# TODO later\nx = 1\n"));
        let r = filter("/* TODO */", Lang::Rust);
        assert!(r.may_match("fn f() {}\n/* TODO */\n"));
    }

    #[test]
    fn a_literal_counts_only_as_a_whole_word() {
        let f = filter("$A.unwrap()", Lang::Rust);
        assert!(!f.may_match("fn f() { x.unwrap_or(1); y.try_unwrap(); unwrap2(); }\n"));
        assert!(!f.may_match("fn f() { é_unwrap(); unwrapé(); }\n"));
        assert!(f.may_match("fn f() { x.unwrap(); }\n"));
        assert!(f.may_match("unwrap"));
        assert!(f.may_match("x.unwrap_or(1); y.unwrap()"));
        // Glued to a character that is no word character: a boundary.
        assert!(f.may_match("fn f() { (x).unwrap/*c*/() }\n"));
        // A string's content may follow an escape sequence's letter.
        let s = filter(r#"print("\nDone")"#, Lang::Python);
        assert!(s.may_match("print(\"\\nDone\")\n"));
        assert!(!s.may_match("printer(\"\\nDone\")\n"));
    }

    #[test]
    fn every_identifier_must_occur() {
        let f = filter("console.log($A)", Lang::TypeScript);
        assert!(f.may_match("console.log(1)"));
        assert!(f.may_match("console\n  .log(1)"));
        assert!(!f.may_match("console.error(1)"));
        assert!(!f.may_match("log(1)"));
    }

    #[test]
    fn occurrences_in_comment_lines_do_not_count() {
        let f = filter("console.log($A)", Lang::TypeScript);
        assert!(!f.may_match("// console.log(1)\nlet x = 1;\n"));
        assert!(!f.may_match("/**\n * @example\n * console.log(1)\n */\nexport const a = 1;\n"));
        assert!(f.may_match("/**\n * docs\n */\nconsole.log(1)\n"));
        assert!(f.may_match("/* c */ console.log(1)\n"));
        assert!(f.may_match("let s = 'http://x'; console.log(1)\n"));
    }

    #[test]
    fn interpolating_lines_always_count() {
        let f = filter("console.log($A)", Lang::TypeScript);
        assert!(f.may_match("const s = `\n// ${console.log(1)}\n`;\n"));
        let p = filter("print($A)", Lang::Python);
        assert!(p.may_match("s = f'''\n# {print(1)}\n'''\n"));
        assert!(!p.may_match("# print(1)\nx = 1\n"));
        // Each two-byte opener, anywhere on the line; a lone `$`, `#` or `\` is not one.
        let r = filter("$A.unwrap()", Lang::Rust);
        assert!(r.may_match("// #{x.unwrap()}\n"));
        assert!(r.may_match("/// \\(x.unwrap())\n"));
        assert!(r.may_match("/**\n * a ${x.unwrap()}\n */\n"));
        assert!(!r.may_match("// $ {x.unwrap()} #\n"));
        assert!(!r.may_match("// \\ (x.unwrap()) $\n"));
    }

    #[test]
    fn block_of_unknown_shape_is_not_trusted() {
        let f = filter("$A.unwrap()", Lang::Rust);
        // A `/*` line inside a string must not hide the code after it.
        assert!(f.may_match("let s = \"\n/* not a comment\n\";\nx.unwrap();\n"));
        assert!(!f.may_match("/// x.unwrap()\nfn f() {}\n"));
        // A `/*` line that ends a multi-line string, then a `*`-led line of code.
        assert!(f.may_match("fn f() -> usize {\n    2 * \"\n/*\".len()\n    * y.unwrap()\n}\n"));
        let t = filter("console.log($A)", Lang::TypeScript);
        assert!(t.may_match("const n = 2 * `\n/*`.length\n  * console.log(1);\n"));
        // Doc blocks whose opening line quotes something are still trusted when closed.
        assert!(!t.may_match("/** Returns \"x\" */\n// console.log(1)\nlet a = 1;\n"));
    }

    #[test]
    fn pattern_without_identifiers_always_may_match() {
        let f = filter("$A + $B", Lang::JavaScript);
        assert!(f.may_match("1 - 2"));
        assert_eq!(f.literal(), None);
    }
}
