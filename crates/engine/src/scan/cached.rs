//! A file's scan result as the result cache stores it: everything but the path
//! (entries are keyed by content, and the same content may sit at several paths).

use serde::Deserialize;
use serde::Serialize;

use super::engine::FileResult;
use super::Finding;
use super::FindingFix;
use super::Severity;
use super::Unconverged;

/// The entries' format, part of the scan's cache key: a build that stores more (the
/// comments inside a match) does not read an older build's entries of the same
/// version as if they had none.
pub(super) const FORMAT: &str = "entry-2";

/// `None`: no rule can match in the file (read, not parsed).
#[derive(Serialize, Deserialize)]
pub(super) struct Entry(pub Option<Result>);

#[derive(Serialize, Deserialize)]
pub(super) struct Result {
    findings: Vec<Row>,
    remaining: Vec<Row>,
    after: Option<String>,
    counts: Vec<(String, usize)>,
    /// (rule, passes).
    unconverged: Vec<(String, usize)>,
    had_parse_error: bool,
    introduces_parse_error: bool,
    unused_suppressions: Vec<Row>,
    /// Sites whose kept text the fix repeats, and whether a deleting fix emptied a
    /// block (the file's flags).
    repeated_kept_text: usize,
    leaves_empty_block: bool,
    /// Clashing edits of captured nodes: (rule, line, detail).
    #[serde(default)]
    conflicts: Vec<(String, usize, String)>,
}

/// A finding as the cache keeps it: all but its path (the cache's key says the file).
/// The scan's memo keeps these too, beside each one's path (`ops::scan::memo`).
#[derive(Clone, Serialize, Deserialize)]
pub struct Row {
    rule: String,
    severity: Severity,
    message: String,
    note: Option<String>,
    url: Option<String>,
    at: [usize; 4],
    text: String,
    /// Comments inside the match (byte ranges in `text`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    comments: Vec<(usize, usize)>,
    fixable: bool,
    fix: Option<([usize; 4], String)>,
}

impl Row {
    pub fn of(f: &Finding) -> Row {
        Row {
            rule: f.rule.clone(),
            severity: f.severity,
            message: f.message.clone(),
            note: f.note.clone(),
            url: f.url.clone(),
            at: [f.line, f.column, f.end_line, f.end_column],
            text: f.text.clone(),
            comments: f.comments.clone(),
            fixable: f.fixable,
            fix: f.fix.as_ref().map(|x| {
                (
                    [x.start_line, x.start_column, x.end_line, x.end_column],
                    x.inserted.clone(),
                )
            }),
        }
    }

    pub fn finding(self, path: &str) -> Finding {
        let [line, column, end_line, end_column] = self.at;
        Finding {
            path: path.to_string(),
            rule: self.rule,
            severity: self.severity,
            message: self.message,
            note: self.note,
            url: self.url,
            line,
            column,
            end_line,
            end_column,
            text: self.text,
            comments: self.comments,
            fixable: self.fixable,
            fix: self.fix.map(|([sl, sc, el, ec], inserted)| FindingFix {
                start_line: sl,
                start_column: sc,
                end_line: el,
                end_column: ec,
                inserted,
            }),
        }
    }
}

impl Result {
    pub fn of(r: &FileResult) -> Result {
        let rows = |fs: &[Finding]| fs.iter().map(Row::of).collect();
        Result {
            findings: rows(&r.findings),
            remaining: rows(&r.remaining),
            after: r.after.clone(),
            counts: r.counts.clone(),
            unconverged: r
                .unconverged
                .iter()
                .map(|u| (u.rule.clone(), u.passes))
                .collect(),
            had_parse_error: r.had_parse_error,
            introduces_parse_error: r.introduces_parse_error,
            unused_suppressions: rows(&r.unused_suppressions),
            repeated_kept_text: r.repeated_kept_text,
            leaves_empty_block: r.leaves_empty_block,
            conflicts: r
                .conflicts
                .iter()
                .map(|c| (c.rule.clone(), c.line, c.detail.clone()))
                .collect(),
        }
    }

    /// Whether using it needs the file's text (its fix replaces the text).
    pub fn changes_text(&self) -> bool {
        self.after.is_some()
    }

    pub fn into_file_result(self, path: &str) -> FileResult {
        let rows = |rs: Vec<Row>| rs.into_iter().map(|r| r.finding(path)).collect();
        FileResult {
            findings: rows(self.findings),
            remaining: rows(self.remaining),
            after: self.after,
            counts: self.counts,
            unconverged: self
                .unconverged
                .into_iter()
                .map(|(rule, passes)| Unconverged {
                    path: path.to_string(),
                    rule,
                    passes,
                })
                .collect(),
            had_parse_error: self.had_parse_error,
            introduces_parse_error: self.introduces_parse_error,
            unused_suppressions: rows(self.unused_suppressions),
            repeated_kept_text: self.repeated_kept_text,
            leaves_empty_block: self.leaves_empty_block,
            conflicts: self
                .conflicts
                .into_iter()
                .map(|(rule, line, detail)| super::EditConflict {
                    path: path.to_string(),
                    rule,
                    line,
                    detail,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    /// A file no rule can match in is stored as `null`, which the scan reads back
    /// without a JSON parse (`cached_one`).
    #[test]
    fn an_entry_with_no_result_is_null() {
        let bytes = serde_json::to_vec(&super::Entry(None)).expect("encode");
        assert_eq!(bytes, b"null");
    }
}
