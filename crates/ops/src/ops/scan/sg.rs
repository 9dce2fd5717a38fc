/*!
ast-grep's finding objects, for `scan --json=stream` (VS Code's YAML rule search reads
them, with git-astedit as the extension's `astGrep.serverPath`).

A finding keeps its position, message and fix, not the match it came from (the result
cache holds no syntax tree), so a file's objects are made after its scan, from the text
the scan read (see [`super::frame`]): the position in bytes and ast-grep's `lines` from
the text, and the captures (`metaVariables`) and `labels` from the rule matched once
more there, as ast-grep makes them: on the file, or on the code of the rule's
language embedded in it (a `<script>` in HTML, a `languageInjections` region), parsed
alone and its positions moved to the file's.
*/

use std::collections::HashMap;

use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::Node;
use ast_grep_core::NodeMatch;

use crate::lang::Lang;
use crate::report::scan::SgFinding;
use crate::report::scan::SgLabel;
use crate::report::FindingRow;
use crate::report::SgCapture;
use crate::report::SgCharCount;
use crate::report::SgMatch;
use crate::report::SgMetaVariables;
use crate::report::SgOffsets;
use crate::report::SgPosition;
use crate::report::SgRange;
use crate::scan::rules::Injection;
use crate::scan::rules::Rule;

/// What the match of a finding gives beyond its position.
struct Matched {
    meta_variables: SgMetaVariables,
    labels: Vec<SgLabel>,
}

/// Gives each row of one file its ast-grep object. `byte` turns a 1-based line and
/// character column into a byte offset of `text`; `rules` are the compiled rules of
/// the rows. A row whose text is no longer at its place (the file changed since) gets
/// none.
pub(super) fn fill(
    text: &str,
    (lang, injections): (Option<Lang>, &[Injection]),
    rules: &[&Rule],
    byte: impl Fn((usize, usize)) -> Option<usize>,
    rows: &mut [FindingRow],
) {
    let mut matched = matches(text, lang, rules, rows);
    if let Some(lang) = lang {
        matched.extend(injected(text, lang, injections, rules, rows));
    }
    for row in rows.iter_mut() {
        let (Some(start), Some(end)) = (
            byte((row.line, row.column)),
            byte((row.end_line, row.end_column)),
        ) else {
            continue;
        };
        if text.get(start..end) != Some(row.text.as_str()) {
            continue;
        }
        let range = SgRange {
            byte_offset: SgOffsets { start, end },
            start: SgPosition {
                line: row.line - 1,
                column: row.column - 1,
            },
            end: SgPosition {
                line: row.end_line - 1,
                column: row.end_column - 1,
            },
        };
        let fix = row.fix.as_ref().and_then(|fix| {
            let a = byte((fix.start_line, fix.start_column))?;
            let b = byte((fix.end_line, fix.end_column))?;
            Some((SgOffsets { start: a, end: b }, fix.inserted.clone()))
        });
        let language = rules
            .iter()
            .find(|r| r.id == row.rule)
            .map(|r| r.lang)
            .or(lang)
            .map_or_else(String::new, |l| l.to_string());
        let found = matched.remove(&(row.rule.clone(), start, end));
        let (meta_variables, labels) = match found {
            Some(m) => (m.meta_variables, m.labels),
            None => (
                SgMetaVariables::default(),
                vec![SgLabel {
                    text: row.text.clone(),
                    range: range.clone(),
                    message: None,
                    style: "primary".into(),
                }],
            ),
        };
        // ast-grep's `lines`: the match with the rest of its first and last lines
        // (without the line feed; a carriage return stays).
        let leading = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let trailing = text[end..].find('\n').map_or(text.len(), |i| end + i);
        let (replacement, replacement_offsets) = match fix {
            Some((offsets, inserted)) => (Some(inserted), Some(offsets)),
            None => (None, None),
        };
        row.ast_grep = Some(Box::new(SgFinding {
            matched: SgMatch {
                text: row.text.clone(),
                range,
                file: row.path.clone(),
                lines: text[leading..trailing].to_string(),
                char_count: SgCharCount {
                    leading: text[leading..start].chars().count(),
                    trailing: text[end..trailing].chars().count(),
                },
                replacement,
                replacement_offsets,
                language,
                meta_variables,
            },
            rule_id: row.rule.clone(),
            severity: row.severity.as_str().to_string(),
            note: row.note.clone(),
            message: row.message.clone(),
            labels,
            metadata: row.metadata.clone(),
        }));
    }
}

/// The captures and labels of the rows' matches, by rule id and byte range: each rule
/// of the file's own language matched once more on `text`.
fn matches(
    text: &str,
    lang: Option<Lang>,
    rules: &[&Rule],
    rows: &[FindingRow],
) -> HashMap<(String, usize, usize), Matched> {
    let mut out = HashMap::new();
    let Some(lang) = lang else {
        return out;
    };
    let rules: Vec<&Rule> = rules
        .iter()
        .copied()
        .filter(|r| r.lang == lang && rows.iter().any(|row| row.rule == r.id))
        .collect();
    if rules.is_empty() {
        return out;
    }
    let Ok(root) = crate::rewrite::parse(text, lang) else {
        return out;
    };
    let place = Place::File;
    for rule in rules {
        for m in root.root().find_all(&rule.config.matcher) {
            let range = m.range();
            out.entry((rule.id.clone(), range.start, range.end))
                .or_insert_with(|| Matched {
                    meta_variables: meta_variables(&m, &place),
                    labels: labels(rule, &m, text, &place),
                });
        }
    }
    out
}

/// As [`matches`], for the rules of other languages than the file's, on the code of
/// their language embedded in it.
fn injected(
    text: &str,
    lang: Lang,
    injections: &[Injection],
    rules: &[&Rule],
    rows: &[FindingRow],
) -> HashMap<(String, usize, usize), Matched> {
    let mut out = HashMap::new();
    let guests: Vec<&Rule> = rules
        .iter()
        .copied()
        .filter(|r| r.lang != lang && rows.iter().any(|row| row.rule == r.id))
        .collect();
    if guests.is_empty() {
        return out;
    }
    let index = crate::rewrite::LineIndex::new(text);
    for region in crate::scan::engine::injected_regions(text, lang, injections) {
        let code = &text[region.start..region.end];
        let Ok(root) = crate::rewrite::parse(code, region.lang) else {
            continue;
        };
        let place = Place::Region {
            start: region.start,
            index: &index,
        };
        for rule in guests.iter().filter(|r| r.lang == region.lang) {
            for m in root.root().find_all(&rule.config.matcher) {
                let range = m.range();
                let key = (
                    rule.id.clone(),
                    region.start + range.start,
                    region.start + range.end,
                );
                out.entry(key).or_insert_with(|| Matched {
                    meta_variables: meta_variables(&m, &place),
                    labels: labels(rule, &m, text, &place),
                });
            }
        }
    }
    out
}

/// Where a matched tree lies in the file: the file itself, or a region of it parsed
/// alone (its nodes' positions are moved to the file's).
enum Place<'a> {
    File,
    Region {
        start: usize,
        index: &'a crate::rewrite::LineIndex<'a>,
    },
}

type Match<'t> = NodeMatch<'t, StrDoc<Lang>>;

/// The match's captures as ast-grep's `metaVariables`: the named single and multiple
/// captures, and the values of the rule's `transform`.
fn meta_variables(m: &Match<'_>, place: &Place<'_>) -> SgMetaVariables {
    let env = m.get_env();
    let mut out = SgMetaVariables::default();
    for var in env.get_matched_variables() {
        match var {
            MetaVariable::Capture(name, _) => {
                if let Some(node) = env.get_match(&name) {
                    out.single.insert(name, capture(node, place));
                } else if let Some(bytes) = env.get_transformed(&name) {
                    let value = String::from_utf8_lossy(bytes).into_owned();
                    out.transformed.insert(name, value);
                }
            }
            MetaVariable::MultiCapture(name) => {
                let nodes = env.get_multiple_matches(&name);
                let nodes = nodes.iter().map(|n| capture(n, place)).collect();
                out.multi.insert(name, nodes);
            }
            _ => {}
        }
    }
    out
}

fn capture(node: &Node<'_, StrDoc<Lang>>, place: &Place<'_>) -> SgCapture {
    SgCapture {
        text: node.text().into_owned(),
        range: range_of(node, node, place),
    }
}

/// From the start of `first` to the end of `last`, 0-based, columns in characters.
fn range_of(
    first: &Node<'_, StrDoc<Lang>>,
    last: &Node<'_, StrDoc<Lang>>,
    place: &Place<'_>,
) -> SgRange {
    if let Place::Region { start, index } = place {
        let (a, b) = (start + first.range().start, start + last.range().end);
        let ((line, column), (end_line, end_column)) = (index.line_col(a), index.line_col(b));
        return SgRange {
            byte_offset: SgOffsets { start: a, end: b },
            start: SgPosition {
                line: line - 1,
                column: column - 1,
            },
            end: SgPosition {
                line: end_line - 1,
                column: end_column - 1,
            },
        };
    }
    let (start, end) = (first.start_pos(), last.end_pos());
    SgRange {
        byte_offset: SgOffsets {
            start: first.range().start,
            end: last.range().end,
        },
        start: SgPosition {
            line: start.line(),
            column: start.column(first),
        },
        end: SgPosition {
            line: end.line(),
            column: end.column(last),
        },
    }
}

/// The rule's `labels` at this match, else ast-grep's default ones (the match, and
/// what its relational rules matched).
fn labels(rule: &Rule, m: &Match<'_>, text: &str, place: &Place<'_>) -> Vec<SgLabel> {
    rule.config
        .get_labels(m)
        .into_iter()
        .map(|l| {
            let range = range_of(&l.start_node, &l.end_node, place);
            let bytes = &range.byte_offset;
            SgLabel {
                text: text.get(bytes.start..bytes.end).unwrap_or("").to_string(),
                range,
                message: l.message.map(str::to_string),
                style: match l.style {
                    ast_grep_config::LabelStyle::Primary => "primary",
                    ast_grep_config::LabelStyle::Secondary => "secondary",
                }
                .into(),
            }
        })
        .collect()
}
