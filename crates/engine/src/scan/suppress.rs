/*!
Suppression comments, as ast-grep reads them: a comment whose first word is
`ast-grep-ignore` silences rules, all of them or those it lists after a colon
(`// ast-grep-ignore: no-var, no-eval`).

* A comment alone on its line covers the next line: a match starting there is not
  reported, nor fixed.
* A comment after code on its line covers the statement it trails: matches starting on
  that statement's first line.
* A comment on the file's first line, followed by a blank line (or nothing), covers the
  whole file.

A comment that silenced nothing is unused; `scan` reports it (rule `unused-suppression`,
severity hint) when every rule ran, as ast-grep does, since a comment meant for a rule
that did not run is not unused.
*/

use std::cell::Cell;
use std::collections::HashMap;
use std::collections::HashSet;

use crate::lang::Lang;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::AstGrep;
use ast_grep_core::Node;

type Tree = AstGrep<StrDoc<Lang>>;

/// The word a suppression comment starts with.
pub const IGNORE_TEXT: &str = "ast-grep-ignore";
/// The rule id unused suppressions are reported under.
pub const UNUSED_SUPPRESSION_ID: &str = "unused-suppression";
/// The message of an unused suppression (ast-grep's words).
pub const UNUSED_SUPPRESSION_MESSAGE: &str = "Unused 'ast-grep-ignore' directive.";

/// One suppression comment.
#[derive(Debug)]
pub struct Directive {
    /// The rules it silences; `None`: all.
    rules: Option<HashSet<String>>,
    /// It silenced a match.
    used: Cell<bool>,
    /// Where the comment is: 0-based line and byte range.
    pub line: usize,
    pub start: usize,
    pub end: usize,
    /// 0-based columns in characters, of its start and end.
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    pub text: String,
}

impl Directive {
    fn covers(&self, rule: &str) -> bool {
        self.rules.as_ref().is_none_or(|set| set.contains(rule))
    }
}

/// The suppression comments of one file.
#[derive(Debug, Default)]
pub struct Suppressions {
    directives: Vec<Directive>,
    /// The directive covering the whole file.
    file: Option<usize>,
    /// By the 0-based line it covers.
    lines: HashMap<usize, usize>,
}

impl Suppressions {
    /// The suppression comments of `tree`; `None` when it holds none (the text is
    /// searched first, so a file without one costs no walk).
    pub fn of(tree: &Tree) -> Option<Suppressions> {
        if !tree.source().contains(IGNORE_TEXT) {
            return None;
        }
        let mut found = Suppressions::default();
        for node in tree.root().dfs() {
            let Some((covers, directive)) = directive(&node) else {
                continue;
            };
            let index = found.directives.len();
            let silences_all = directive.rules.is_none();
            found.directives.push(directive);
            match covers {
                Covers::File => {
                    found.file = Some(index);
                    // Nothing else in the file can be reported.
                    if silences_all {
                        break;
                    }
                }
                Covers::Line(line) => {
                    found.lines.insert(line, index);
                }
            }
        }
        (!found.directives.is_empty()).then_some(found)
    }

    /// Whether a match of `rule` starting on 0-based `line` is silenced; the
    /// directive that silences it is marked used.
    pub fn silences(&self, rule: &str, line: usize) -> bool {
        let by_file = self.file.map(|i| &self.directives[i]);
        let by_line = self.lines.get(&line).map(|&i| &self.directives[i]);
        for directive in [by_file, by_line].into_iter().flatten() {
            if directive.covers(rule) {
                directive.used.set(true);
                return true;
            }
        }
        false
    }

    /// The directives that silenced nothing, in file order.
    pub fn unused(&self) -> impl Iterator<Item = &Directive> {
        self.directives.iter().filter(|d| !d.used.get())
    }
}

enum Covers {
    File,
    /// The 0-based line whose matches it silences.
    Line(usize),
}

/// A suppression comment's reach and content, if `node` is one.
fn directive(node: &Node<'_, StrDoc<Lang>>) -> Option<(Covers, Directive)> {
    if !node.kind().contains("comment") {
        return None;
    }
    let text = node.text();
    // The directive must be the comment's first word, else it is prose about one.
    let first_word = text.find(char::is_alphabetic)?;
    if !text[first_word..].starts_with(IGNORE_TEXT) {
        return None;
    }
    let start = node.start_pos();
    let line = start.line();
    // After code on its line (the end of the previous sibling): it covers that
    // statement, by the line the statement starts on, where its matches start.
    let trailing = node.prev().filter(|prev| prev.end_pos().line() == line);
    let covers = match &trailing {
        None if line == 0 && node.next().is_none_or(|next| next.start_pos().line() >= 2) => {
            Covers::File
        }
        None => Covers::Line(line + 1),
        Some(prev) => Covers::Line(prev.start_pos().line()),
    };
    let end = node.end_pos();
    let range = node.range();
    Some((
        covers,
        Directive {
            rules: listed_rules(&text),
            used: Cell::new(false),
            line,
            start: range.start,
            end: range.end,
            column: start.column(node),
            end_line: end.line(),
            end_column: end.column(node),
            text: text.to_string(),
        },
    ))
}

/// The rule ids after `ast-grep-ignore:`; `None` (all rules) when there is no list.
/// An id ends at a comma or at whitespace (`/* ast-grep-ignore: a, b */`).
fn listed_rules(text: &str) -> Option<HashSet<String>> {
    let (_, after) = text.trim().split_once(IGNORE_TEXT)?;
    let after = after.trim();
    if after.is_empty() {
        return None;
    }
    // Words after the directive but no colon: ast-grep silences all rules then too.
    let (_, list) = after.split_once(':')?;
    Some(
        list.split(',')
            .filter_map(|id| id.trim_start().split(' ').next())
            .map(|id| id.trim().to_string())
            .filter(|id| !id.is_empty())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ast_grep_core::tree_sitter::LanguageExt;

    fn sup(lang: Lang, code: &str) -> Suppressions {
        Suppressions::of(&lang.ast_grep(code)).expect("directives")
    }

    #[test]
    fn next_line_same_line_and_lists() {
        let code = "// ast-grep-ignore\nvar a = 1;\nvar b = 2; // ast-grep-ignore: no-var, other\n// ast-grep-ignore: x\nvar c = 3;\n";
        let s = sup(Lang::TypeScript, code);
        assert!(s.silences("anything", 1));
        assert!(s.silences("no-var", 2));
        assert!(s.silences("other", 2));
        assert!(!s.silences("third", 2));
        assert!(!s.silences("no-var", 4));
        assert!(s.silences("x", 4));
        assert!(!s.silences("no-var", 0));
        assert_eq!(s.unused().count(), 0);
    }

    #[test]
    fn first_line_with_a_blank_line_after_covers_the_file() {
        let s = sup(Lang::Python, "# ast-grep-ignore: r1\n\nx = 1\n\ny = 2\n");
        assert!(s.silences("r1", 4));
        assert!(!s.silences("r2", 4));
        // Without the blank line it covers the next line only.
        let s = sup(Lang::Python, "# ast-grep-ignore\nx = 1\ny = 2\n");
        assert!(s.silences("r", 1));
        assert!(!s.silences("r", 2));
    }

    #[test]
    fn prose_is_not_a_directive_and_unused_ones_are_listed() {
        let tree = Lang::TypeScript.ast_grep("// see ast-grep-ignore docs\nlet a = 1;\n");
        assert!(Suppressions::of(&tree).is_none());
        let s = sup(
            Lang::TypeScript,
            "let a = 1;\n/* ast-grep-ignore: r */\nlet b = 2;\n",
        );
        let unused: Vec<_> = s.unused().collect();
        assert_eq!(unused.len(), 1);
        assert_eq!(unused[0].text, "/* ast-grep-ignore: r */");
        assert_eq!((unused[0].line, unused[0].column), (1, 0));
        assert!(s.silences("r", 2));
        assert_eq!(s.unused().count(), 0);
    }

    #[test]
    fn a_comment_trailing_a_multi_line_statement_covers_its_first_line() {
        let code = "let a = f(\n  1,\n); // ast-grep-ignore\nlet b = 2;\n";
        let s = sup(Lang::TypeScript, code);
        assert!(s.silences("r", 0));
        assert!(!s.silences("r", 3));
    }
}
