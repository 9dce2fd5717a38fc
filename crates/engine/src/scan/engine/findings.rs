//! Findings: every match of every rule from one traversal of the tree, each node tried
//! against the rules of its kind, with the finding's message, comments and fix.

use crate::lang::Lang;
use ast_grep_core::matcher::MatcherExt;
use ast_grep_core::replacer::Replacer;
use ast_grep_core::tree_sitter::StrDoc;

use super::Finding;
use super::FindingFix;
use super::Tree;
use crate::rewrite;
use crate::scan::suppress::Suppressions;
use crate::scan::Rule;
use crate::scan::Severity;

/// Every match of every rule in `root`, in position order (rule order on ties, then
/// traversal order), from one pre-order traversal: each node is tried only against the
/// rules whose potential kinds hold its kind (ast-grep's `CombinedScan` dispatch).
/// The same matches, in the same order, as running `find_all` once per rule.
pub(super) fn findings(
    path: &str,
    root: &Tree,
    rules: &[&Rule],
    silenced: Option<&Suppressions>,
) -> Vec<Finding> {
    let dispatch = Dispatch::new(rules);
    if dispatch.is_empty() {
        return Vec::new();
    }
    let lines = FixContext::new(root.source());
    let mut hits: Vec<(usize, Finding)> = Vec::new();
    for node in root.root().dfs() {
        for &i in dispatch.rules_for(node.kind_id()) {
            let rule = rules[i];
            if let Some(m) = rule.config.matcher.match_node(node.clone()) {
                if silenced.is_some_and(|s| s.silences(&rule.id, m.start_pos().line())) {
                    continue;
                }
                hits.push((i, finding(path, rule, &m, &lines)));
            }
        }
    }
    // Stable: traversal order stays for one rule's findings at the same position.
    hits.sort_by_key(|(i, f)| (f.line, f.column, *i));
    hits.into_iter().map(|(_, f)| f).collect()
}

/// What a fix's position and text need from the file.
struct FixContext<'a> {
    crlf: bool,
    index: rewrite::LineIndex<'a>,
    len: usize,
}

impl<'a> FixContext<'a> {
    fn new(src: &'a str) -> Self {
        FixContext {
            crlf: rewrite::uses_crlf(src),
            index: rewrite::LineIndex::new(src),
            len: src.len(),
        }
    }
}

fn finding(
    path: &str,
    rule: &Rule,
    m: &ast_grep_core::NodeMatch<'_, StrDoc<Lang>>,
    lines: &FixContext<'_>,
) -> Finding {
    let fix = rule.config.fixer.first().map(|fixer| {
        let mut edit = m.make_edit(&rule.config.matcher, fixer);
        edit.inserted_text = rewrite::tab_indented(m, edit.position, edit.inserted_text);
        let end = (edit.position + edit.deleted_length).min(lines.len);
        let (start_line, start_column) = lines.index.line_col(edit.position);
        let (end_line, end_column) = lines.index.line_col(end);
        let inserted = if lines.crlf {
            rewrite::lf_to_crlf(edit.inserted_text)
        } else {
            edit.inserted_text
        };
        FindingFix {
            start_line,
            start_column,
            end_line,
            end_column,
            inserted: String::from_utf8_lossy(&inserted).into_owned(),
        }
    });
    let start = m.start_pos();
    let end = m.end_pos();
    let message = rule.message_template.generate_replacement(m);
    Finding {
        path: path.to_string(),
        rule: rule.id.clone(),
        severity: rule.severity,
        message: String::from_utf8_lossy(&message).into_owned(),
        note: rule.note.clone(),
        url: rule.url.clone(),
        line: start.line() + 1,
        column: start.column(m) + 1,
        end_line: end.line() + 1,
        end_column: end.column(m) + 1,
        text: m.text().into_owned(),
        comments: comments_in(m),
        fixable: rule.fixable(),
        fix,
    }
}

/// The byte ranges, within a match's text, of the comment nodes inside it (the
/// grammar's extras that name a comment, such as `comment`, `line_comment` or
/// `block_comment`), outermost only; a match that is itself a comment keeps its text.
fn comments_in(m: &ast_grep_core::NodeMatch<'_, StrDoc<Lang>>) -> Vec<(usize, usize)> {
    let start = m.range().start;
    let mut out: Vec<(usize, usize)> = Vec::new();
    for node in m.dfs().skip(1) {
        if !node.is_extra() || !node.kind().contains("comment") {
            continue;
        }
        let r = node.range();
        let (a, b) = (r.start - start, r.end - start);
        // A comment's own parts (a doc comment's marker) lie inside the last one.
        if out.last().is_some_and(|&(_, end)| a < end) {
            continue;
        }
        out.push((a, b));
    }
    out
}

/// An unused suppression comment as a finding (a hint; not fixed here, where
/// ast-grep's `-U` would delete the comment).
pub(super) fn unused(path: &str, d: &super::super::suppress::Directive) -> Finding {
    Finding {
        path: path.to_string(),
        rule: super::super::suppress::UNUSED_SUPPRESSION_ID.to_string(),
        severity: Severity::Hint,
        message: super::super::suppress::UNUSED_SUPPRESSION_MESSAGE.to_string(),
        note: None,
        url: None,
        line: d.line + 1,
        column: d.column + 1,
        end_line: d.end_line + 1,
        end_column: d.end_column + 1,
        text: d.text.clone(),
        comments: Vec::new(),
        fixable: false,
        fix: None,
    }
}

/// Rule indices by node kind id, each list in rule order.
struct Dispatch {
    by_kind: Vec<Vec<usize>>,
    /// Rules without known kinds (tried on every node); merged into `by_kind` lists
    /// when both exist, so order stays rule order.
    any_kind: Vec<usize>,
}

impl Dispatch {
    fn new(rules: &[&Rule]) -> Dispatch {
        let mut by_kind: Vec<Vec<usize>> = Vec::new();
        let mut any_kind = Vec::new();
        for (i, rule) in rules.iter().enumerate() {
            match &rule.kinds {
                Some(kinds) => {
                    for &k in kinds {
                        let k = usize::from(k);
                        if by_kind.len() <= k {
                            by_kind.resize_with(k + 1, Vec::new);
                        }
                        by_kind[k].push(i);
                    }
                }
                None => any_kind.push(i),
            }
        }
        if !any_kind.is_empty() {
            for list in &mut by_kind {
                list.extend(&any_kind);
                list.sort_unstable();
                list.dedup();
            }
        }
        Dispatch { by_kind, any_kind }
    }

    fn is_empty(&self) -> bool {
        self.any_kind.is_empty() && self.by_kind.iter().all(Vec::is_empty)
    }

    fn rules_for(&self, kind: u16) -> &[usize] {
        self.by_kind
            .get(usize::from(kind))
            .map_or(&self.any_kind[..], Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use ast_grep_core::matcher::Matcher;

    use super::super::live_rules;
    use super::super::run_file;
    use super::*;
    use crate::scan::rules::from_text;
    use crate::scan::rules::TextFormat;
    use crate::scan::Mode;
    use ast_grep_core::AstGrep;

    /// Rules of every shape the dispatch must serve alike: kind only, several kinds
    /// (`any`), `all`/`not`, `inside`/`has`, `follows`/`precedes`, `nthChild`, local
    /// utils through `matches`, constraints, a regex, two rules matching the same node,
    /// a rule on every node kind a pattern can root at, and one with `severity: off`.
    const RULES: &str = r#"
id: kind-only
language: javascript
rule: { kind: string }
---
id: any-kinds
language: javascript
rule:
  any:
    - kind: number
    - pattern: console.log($A)
---
id: all-not
language: javascript
rule:
  all:
    - kind: call_expression
    - not: { pattern: console.log($$$) }
---
id: inside-has
language: javascript
rule:
  kind: identifier
  inside: { kind: arguments, stopBy: end }
  not: { has: { kind: string } }
---
id: follows-precedes
language: javascript
rule:
  kind: expression_statement
  follows: { kind: lexical_declaration, stopBy: end }
  precedes: { kind: expression_statement }
---
id: nth-child
language: javascript
rule:
  kind: number
  nthChild: 2
---
id: util-matches
language: javascript
utils:
  logged:
    kind: call_expression
    has: { kind: member_expression, regex: ^console }
rule:
  kind: expression_statement
  has: { matches: logged }
---
id: constrained
language: javascript
message: $A plus $B
rule: { pattern: $A + $B }
constraints:
  B: { kind: number }
---
id: same-node-as-kind-only
language: javascript
rule: { kind: string, regex: "^'a" }
---
id: disabled
language: javascript
severity: off
rule: { kind: identifier }
"#;

    const SOURCES: &[&str] = &[
        "const a = 'a';\nconsole.log(a, 1 + 2, 'b');\nfoo(x, y)(z);\nconsole.log(x);\n",
        "let q = [1, 2, 3];\nq.push(4 + 5);\nbar(q, 'abc', baz(q));\n{ let r = 1; r + 1; r; }\n",
        "function f(x) { return x + 1 + 2; }\nf(f(f(1)));\nconsole.error('a' + 'b');\n",
    ];

    /// The old way: one `find_all` per rule, concatenated in rule order, then a stable
    /// sort by start.
    fn per_rule(path: &str, root: &Tree, rules: &[&Rule]) -> Vec<Finding> {
        let mut out = Vec::new();
        let lines = FixContext::new(root.source());
        for rule in rules {
            for m in root.root().find_all(&rule.config.matcher) {
                out.push(finding(path, rule, &m, &lines));
            }
        }
        out.sort_by_key(|f| (f.line, f.column));
        out
    }

    #[test]
    fn one_traversal_finds_what_one_traversal_per_rule_finds() {
        let set = from_text(RULES, TextFormat::Yaml, "rules.yml").expect("rules load");
        assert_eq!(set.disabled, vec!["disabled".to_string()]);
        let rules: Vec<&Rule> = set.rules.iter().collect();
        assert!(rules.iter().all(|r| r.kinds.is_some()));
        for (n, text) in SOURCES.iter().enumerate() {
            let doc = rewrite::parse_doc(text, Lang::JavaScript).expect("parse");
            let tree = AstGrep::doc(doc);
            let expected = per_rule("a.js", &tree, &rules);
            let got = findings("a.js", &tree, &rules, None);
            assert_eq!(got, expected, "source #{n}");
            // Every rule of the set found something somewhere, so each shape is tested.
            if n == 0 {
                for id in [
                    "kind-only",
                    "any-kinds",
                    "all-not",
                    "inside-has",
                    "constrained",
                ] {
                    assert!(got.iter().any(|f| f.rule == id), "{id} found nothing");
                }
            }
        }
        let all: Vec<Finding> = SOURCES
            .iter()
            .flat_map(|t| {
                let tree = AstGrep::doc(rewrite::parse_doc(t, Lang::JavaScript).unwrap());
                findings("a.js", &tree, &rules, None)
            })
            .collect();
        for rule in &rules {
            assert!(
                all.iter().any(|f| f.rule == rule.id),
                "{} found nothing",
                rule.id
            );
        }
    }

    #[test]
    fn a_rule_whose_kinds_are_unknown_is_tried_on_every_node_in_rule_order() {
        let set = from_text(RULES, TextFormat::Yaml, "rules.yml").expect("rules load");
        let mut unknown = from_text(RULES, TextFormat::Yaml, "rules.yml").expect("rules load");
        for rule in &mut unknown.rules {
            if rule.id == "kind-only" || rule.id == "constrained" {
                rule.kinds = None;
            }
        }
        let refs: Vec<&Rule> = unknown.rules.iter().collect();
        for text in SOURCES {
            let tree = AstGrep::doc(rewrite::parse_doc(text, Lang::JavaScript).unwrap());
            assert_eq!(
                findings("a.js", &tree, &refs, None),
                per_rule("a.js", &tree, &refs)
            );
        }
        // The kinds computed at load are the matcher's own.
        for r in &set.rules {
            let kinds: Option<Vec<u16>> = r
                .config
                .matcher
                .potential_kinds()
                .map(|s| s.iter().map(|k| k as u16).collect());
            assert_eq!(r.kinds, kinds);
        }
    }

    #[test]
    fn rules_whose_text_need_fails_are_not_run_and_fixes_still_chain() {
        // `b-to-c` cannot match the input (no `b(`), but `a-to-b`'s fix creates its match.
        let set = from_text(
            "id: a-to-b\nlanguage: javascript\nrule: { pattern: a($X) }\nfix: b($X)\n---\n\
             id: b-to-c\nlanguage: javascript\nrule: { pattern: b($X) }\nfix: c($X)\n",
            TextFormat::Yaml,
            "rules.yml",
        )
        .expect("rules load");
        let rules: Vec<&Rule> = set.rules.iter().collect();
        let text = "a(1);\n";
        assert_eq!(live_rules(&rules, text).len(), 1);
        let result = run_file("x.js", text, Lang::JavaScript, &rules, Mode::Fix, 10).expect("runs");
        assert_eq!(result.findings.len(), 1);
        assert_eq!(result.after.as_deref(), Some("c(1);\n"));
        assert!(result.remaining.is_empty());
        assert_eq!(
            result.counts,
            vec![("a-to-b".to_string(), 1), ("b-to-c".to_string(), 1)]
        );
    }
}
