/*!
Running rules on one file's text: findings, and fixes until the text stops changing.

Fixes go through [`rewrite_nested`], the routine `edit` uses, so nested matches of a
rule are all fixed in one pass. A fix can still produce new matches (its output is not
searched within a pass), and one rule's fix can create another's match; so each rule
is re-run on its own output until nothing changes, and the whole rule list is re-run
until a round changes nothing. Both loops are bounded by `max_passes`; hitting the bound
is reported, never silent. The goal is the property CI relies on: after one
`scan --apply`, `scan --check` passes.
*/

use ast_grep_core::source::Edit;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::AstGrep;
use ast_grep_core::replacer::Replacer;
use ast_grep_language::SupportLang;

use super::Error;
use super::Mode;
use super::Rule;
use super::Severity;
use super::Unconverged;
use crate::rewrite;
use crate::rewrite::rewrite_nested;

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
    let parse = |t: &str, rule: &Rule| {
        rewrite::parse(t, lang).map_err(|source| Error::Rewrite {
            rule: rule.id.clone(),
            path: path.to_string(),
            source,
        })
    };
    let Some(first_rule) = rules.first() else {
        return Ok(FileResult::default());
    };
    let input_tree = parse(text, first_rule)?;
    let mut result = FileResult {
        had_parse_error: rewrite::has_parse_error(&input_tree),
        ..Default::default()
    };
    result.findings = findings(path, &input_tree, rules);
    if mode == Mode::Report {
        return Ok(result);
    }

    let mut current = text.to_string();
    // A tree of `current`, while no fix has changed it since it was parsed.
    let mut tree: Option<Tree> = Some(input_tree);
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
            let mut passes = 0;
            loop {
                if passes == max_passes {
                    stuck[i] = Some(passes);
                    break;
                }
                passes += 1;
                let root = match tree.take() {
                    Some(t) => t,
                    None => parse(&current, rule)?,
                };
                let (fixed, n) = fix_once(&root, rule, fixer).map_err(|source| Error::Rewrite {
                    rule: rule.id.clone(),
                    path: path.to_string(),
                    source,
                })?;
                if fixed == current {
                    tree = Some(root);
                    break;
                }
                counts[i] += n;
                current = fixed;
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

    let final_tree = match tree.take() {
        Some(t) => t,
        None => parse(&current, first_rule)?,
    };
    result.remaining = findings(path, &final_tree, rules);
    if current != text {
        result.introduces_parse_error =
            !result.had_parse_error && rewrite::has_parse_error(&final_tree);
        result.after = Some(current);
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

/// One pass of a rule's fix over `root`: every match, nested ones included. Matches
/// that overlap without nesting cannot all be fixed in one pass; then the earliest of
/// each overlapping group is fixed and the next pass takes the rest.
fn fix_once(
    root: &Tree,
    rule: &Rule,
    fixer: &ast_grep_config::Fixer,
) -> Result<(String, usize), rewrite::Error> {
    let matcher = &rule.config.matcher;
    match rewrite_nested(root, matcher, |m| m.make_edit(matcher, fixer)) {
        Ok(nested) => Ok((nested.text, nested.changes.len())),
        Err(rewrite::Error::OverlappingMatches { .. }) => {
            let mut edits: Vec<Edit<String>> = root
                .root()
                .find_all(matcher)
                .map(|m| m.make_edit(matcher, fixer))
                .collect();
            edits.sort_by(|a, b| {
                a.position
                    .cmp(&b.position)
                    .then(b.deleted_length.cmp(&a.deleted_length))
            });
            let mut kept: Vec<Edit<String>> = Vec::new();
            for e in edits {
                let free = kept
                    .last()
                    .is_none_or(|k| k.position + k.deleted_length <= e.position);
                if free {
                    kept.push(e);
                }
            }
            let src = root.source();
            let n = kept
                .iter()
                .filter(|e| {
                    src.as_bytes()
                        .get(e.position..e.position + e.deleted_length)
                        .is_some_and(|old| old != e.inserted_text.as_slice())
                })
                .count();
            Ok((apply_edits(src, &kept), n))
        }
        Err(e) => Err(e),
    }
}

/// Applies sorted, disjoint edits.
fn apply_edits(text: &str, edits: &[Edit<String>]) -> String {
    let bytes = text.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(text.len());
    let mut at = 0;
    for e in edits {
        if e.position < at || e.position + e.deleted_length > bytes.len() {
            continue;
        }
        out.extend_from_slice(&bytes[at..e.position]);
        out.extend_from_slice(&e.inserted_text);
        at = e.position + e.deleted_length;
    }
    out.extend_from_slice(&bytes[at..]);
    match String::from_utf8(out) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// Every match of every rule in `root`, in position order (rule order on ties).
fn findings(path: &str, root: &Tree, rules: &[&Rule]) -> Vec<Finding> {
    let mut out = Vec::new();
    for rule in rules {
        for m in root.root().find_all(&rule.config.matcher) {
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
            });
        }
    }
    // Stable: rule order stays for findings at the same position.
    out.sort_by_key(|f| (f.line, f.column));
    out
}
