/*!
Running rules on one file's text: findings, and fixes until the text stops changing.

Fixes go through [`rewrite_nested_with`], the routine `edit` uses, so nested matches
of a rule are all fixed in one pass. Matches that overlap without nesting cannot all be
fixed at once: the first is, the others wait for the next pass (`edit` refuses them
instead; a scan must get the tree clean). A fix can also produce new matches (its
output is not searched within a pass), and one rule's fix can create another's match;
so each rule is re-run on its own output until nothing changes, and the whole rule
list is re-run until a round changes nothing. Both loops are bounded by `max_passes`; hitting the bound
is reported, never silent. The goal is the property CI relies on: after one
`scan --apply`, `scan --check` passes.
*/

use ast_grep_core::replacer::Replacer;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::AstGrep;
use ast_grep_language::SupportLang;

use super::Error;
use super::Mode;
use super::Rule;
use super::Severity;
use super::Unconverged;
use crate::rewrite;
use crate::rewrite::rewrite_nested_with;
use crate::rewrite::NestedOptions;
use crate::rewrite::Overlap;

type Tree = AstGrep<StrDoc<SupportLang>>;

/// One match of a rule. Positions are 1-based, columns in characters.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    pub path: String,
    pub rule: String,
    pub severity: Severity,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    /// The matched text.
    pub text: String,
    /// The rule has a fix (`scan --apply` would change this).
    pub fixable: bool,
    /// What the rule's fix does to the input at this finding (SARIF `fixes`); not
    /// part of `--json`, whose fix modes show the diff.
    #[serde(skip)]
    pub fix: Option<FindingFix>,
}

/// One finding's fix as a replacement of a region of the input text. Positions are
/// 1-based, columns in characters, the end exclusive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindingFix {
    pub start_line: usize,
    pub start_column: usize,
    pub end_line: usize,
    pub end_column: usize,
    pub inserted: String,
}

/// What running the rules on one file gave.
#[derive(Debug, Default)]
pub struct FileResult {
    /// Findings in the input text.
    pub findings: Vec<Finding>,
    /// In fix mode: findings in the fixed text (what fixing leaves to a person).
    pub remaining: Vec<Finding>,
    /// The fixed text, when fixes changed it.
    pub after: Option<String>,
    /// Fixes per rule id, in rule order (rules that fixed nothing left out).
    pub counts: Vec<(String, usize)>,
    pub unconverged: Vec<Unconverged>,
    pub had_parse_error: bool,
    pub introduces_parse_error: bool,
}

/// Runs `rules` (all applicable to this file, in declaration order) on `text`.
pub fn run_file(
    path: &str,
    text: &str,
    lang: SupportLang,
    rules: &[&Rule],
    mode: Mode,
    max_passes: usize,
) -> Result<FileResult, Error> {
    let fail = |rule: &Rule| {
        let rule = rule.id.clone();
        move |source| Error::Rewrite {
            rule,
            path: path.to_string(),
            source,
        }
    };
    let Some(first_rule) = rules.first() else {
        return Ok(FileResult::default());
    };
    let mut doc = rewrite::parse_doc(text, lang).map_err(fail(first_rule))?;
    let input_tree = AstGrep::doc(doc.clone());
    let mut result = FileResult {
        had_parse_error: rewrite::has_parse_error(&input_tree),
        findings: findings(path, &input_tree, rules),
        ..Default::default()
    };
    if mode == Mode::Report {
        return Ok(result);
    }

    let crlf = rewrite::uses_crlf(text);
    let nested_opts = NestedOptions {
        overlap: Overlap::SkipLater,
        ..NestedOptions::default()
    };
    let mut counts: Vec<usize> = vec![0; rules.len()];
    let mut stuck: Vec<Option<usize>> = vec![None; rules.len()];
    let mut settled = false;
    let mut changed_last_round: Vec<bool> = vec![false; rules.len()];
    for _round in 0..max_passes {
        changed_last_round.iter_mut().for_each(|c| *c = false);
        for (i, rule) in rules.iter().enumerate() {
            let Some(fixer) = rule.config.fixer.first() else {
                continue;
            };
            let matcher = &rule.config.matcher;
            let mut passes = 0;
            loop {
                if passes == max_passes {
                    stuck[i] = Some(passes);
                    break;
                }
                passes += 1;
                let before = doc.src.clone();
                // Overlapping matches: fix the first, leave the rest to the next pass.
                let nested = rewrite_nested_with(&mut doc, matcher, nested_opts, |m| {
                    let mut edit = m.make_edit(matcher, fixer);
                    if crlf {
                        edit.inserted_text = rewrite::lf_to_crlf(edit.inserted_text);
                    }
                    edit
                })
                .map_err(fail(rule))?;
                if doc.src == before {
                    break;
                }
                counts[i] += nested.changes.len();
                changed_last_round[i] = true;
            }
        }
        if !changed_last_round.contains(&true) {
            settled = true;
            break;
        }
    }
    if !settled {
        // The rules keep feeding each other: name those still changing the text.
        for (i, changed) in changed_last_round.iter().enumerate() {
            if *changed && stuck[i].is_none() {
                stuck[i] = Some(max_passes);
            }
        }
    }

    let final_tree = AstGrep::doc(doc.clone());
    result.remaining = findings(path, &final_tree, rules);
    if doc.src != text {
        result.introduces_parse_error =
            !result.had_parse_error && rewrite::has_parse_error(&final_tree);
        result.after = Some(doc.src);
    }
    result.counts = rules
        .iter()
        .zip(&counts)
        .filter(|(_, n)| **n > 0)
        .map(|(r, n)| (r.id.clone(), *n))
        .collect();
    result.unconverged = rules
        .iter()
        .zip(&stuck)
        .filter_map(|(r, s)| {
            s.map(|passes| Unconverged {
                path: path.to_string(),
                rule: r.id.clone(),
                passes,
            })
        })
        .collect();
    Ok(result)
}

/// Every match of every rule in `root`, in position order (rule order on ties).
fn findings(path: &str, root: &Tree, rules: &[&Rule]) -> Vec<Finding> {
    let mut out = Vec::new();
    let src = root.source();
    let crlf = rewrite::uses_crlf(src);
    let index = rewrite::LineIndex::new(src);
    for rule in rules {
        let fixer = rule.config.fixer.first();
        for m in root.root().find_all(&rule.config.matcher) {
            let fix = fixer.map(|fixer| {
                let edit = m.make_edit(&rule.config.matcher, fixer);
                let end = (edit.position + edit.deleted_length).min(src.len());
                let (start_line, start_column) = index.line_col(edit.position);
                let (end_line, end_column) = index.line_col(end);
                let inserted = if crlf {
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
            let message = rule.message_template.generate_replacement(&m);
            out.push(Finding {
                path: path.to_string(),
                rule: rule.id.clone(),
                severity: rule.severity,
                message: String::from_utf8_lossy(&message).into_owned(),
                note: rule.note.clone(),
                url: rule.url.clone(),
                line: start.line() + 1,
                column: start.column(&m) + 1,
                end_line: end.line() + 1,
                end_column: end.column(&m) + 1,
                text: m.text().into_owned(),
                fixable: rule.fixable(),
                fix,
            });
        }
    }
    // Stable: rule order stays for findings at the same position.
    out.sort_by_key(|f| (f.line, f.column));
    out
}
