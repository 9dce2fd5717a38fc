/*!
The source around each finding, for a rich report (`scan --report-style rich`): the
lines a code frame shows and what it underlines, as ast-grep's rich report shows them.

A finding does not keep the text it was found in (the result cache holds none), so a
file's frames are made after its scan, from the same place the scan read it (the work
tree, or the staged blob with `--cached`), and only for files with findings. The rules
of those findings are matched once more on that text for their labels: the rule's
`labels`, else the match and what its relational rules matched (ast-grep's default
labels). A finding whose text is no longer at its place (the file changed since) gets
no frame, and is printed without one.
*/

use std::collections::HashMap;
use std::collections::HashSet;

use crate::files;
use crate::lang::Lang;
use crate::repo::Repo;
use crate::report::scan::Frame;
use crate::report::scan::FrameLabel;
use crate::report::FindingRow;
use crate::scan;

/// Lines of context a fix's diff shows on each side (ast-grep's).
const DIFF_CONTEXT: usize = 3;

/// Makes the frames of a scan's findings.
pub(super) struct Framer<'a> {
    repo: &'a Repo,
    rules: &'a scan::rules::Rules,
    inputs: &'a scan::source::Inputs,
    blobs: Option<files::Blobs>,
    max_file_size: u64,
    /// Only the findings of rules with `labels`.
    labelled_only: bool,
    /// ast-grep's objects instead of frames (`scan --json=stream`).
    ast_grep: bool,
}

impl<'a> Framer<'a> {
    pub(super) fn new(
        repo: &'a Repo,
        rules: &'a scan::rules::Rules,
        inputs: &'a scan::source::Inputs,
        req: &super::ScanRequest,
    ) -> Framer<'a> {
        let blobs = inputs
            .files
            .iter()
            .any(|f| f.blob.is_some())
            .then(|| files::Blobs::new(repo));
        Framer {
            repo,
            rules,
            inputs,
            blobs,
            max_file_size: req.input.max_file_size,
            labelled_only: req.frames == super::Frames::Labelled,
            ast_grep: req.frames == super::Frames::AstGrep,
        }
    }

    /// Gives each row its frame (rows of one file or of many, in path order).
    pub(super) fn frame(&self, rows: &mut [FindingRow]) {
        for file in rows.chunk_by_mut(|a, b| a.repo_path == b.repo_path) {
            if self.ast_grep {
                self.ast_grep_objects(file);
                continue;
            }
            let labelled = match self.labelled_only {
                true => self.labelled_rules(file),
                false => None,
            };
            if labelled.as_ref().is_some_and(HashSet::is_empty) {
                continue;
            }
            let Some((text, lang)) = self.text(&file[0].repo_path) else {
                continue;
            };
            let labels = self.labels(&text, lang, file);
            let lines = Lines::new(&text);
            for row in file.iter_mut() {
                if labelled.as_ref().is_some_and(|l| !l.contains(&row.rule)) {
                    continue;
                }
                let found = labels.get(&(row.rule.clone(), row.line, row.column));
                row.frame = lines.frame(row, found.map(Vec::as_slice));
            }
        }
    }

    /// Gives each row of one file its ast-grep object (see [`super::sg`]).
    fn ast_grep_objects(&self, file: &mut [FindingRow]) {
        let Some((text, lang)) = self.text(&file[0].repo_path) else {
            return;
        };
        let ids: HashSet<&str> = file.iter().map(|r| r.rule.as_str()).collect();
        let set = self.rules.compiled_some(self.repo, &ids).ok();
        let rules: Vec<&scan::rules::Rule> = set
            .iter()
            .flat_map(|set| &set.rules)
            .filter(|r| ids.contains(r.id.as_str()))
            .collect();
        let injections = set.map_or(&[][..], |set| &set.injections[..]);
        let lines = Lines::new(&text);
        let place = (lang, injections);
        super::sg::fill(&text, place, &rules, |at| lines.byte(at), file);
    }

    /// The ids of the rules of `rows` that have `labels`.
    fn labelled_rules(&self, rows: &[FindingRow]) -> Option<HashSet<String>> {
        let ids: HashSet<&str> = rows.iter().map(|r| r.rule.as_str()).collect();
        let set = self.rules.compiled_some(self.repo, &ids).ok()?;
        Some(
            set.rules
                .iter()
                .filter(|r| r.config.labels.is_some() && ids.contains(r.id.as_str()))
                .map(|r| r.id.clone())
                .collect(),
        )
    }

    /// The text the scan read at `path`, and its language.
    fn text(&self, path: &str) -> Option<(String, Option<Lang>)> {
        let candidate = self
            .inputs
            .files
            .binary_search_by(|c| c.path.as_str().cmp(path))
            .ok()
            .map(|i| &self.inputs.files[i]);
        let loaded = match (candidate.and_then(|c| c.blob), &self.blobs) {
            (Some((id, mode)), Some(blobs)) => {
                blobs.load(path, id, mode, self.max_file_size).ok()?
            }
            _ => files::load(&self.repo.workdir, path, self.max_file_size),
        };
        match loaded {
            files::Loaded::Text(text, _) => Some((text, candidate.map(|c| c.lang))),
            files::Loaded::Skipped(_) => None,
        }
    }

    /// The labels of each match of the rules of `rows` that run in the file's own
    /// language, by rule id and start (1-based line, character column).
    fn labels(&self, text: &str, lang: Option<Lang>, rows: &[FindingRow]) -> Labels {
        let mut out = Labels::new();
        let Some(lang) = lang else {
            return out;
        };
        let ids: HashSet<&str> = rows.iter().map(|r| r.rule.as_str()).collect();
        let Ok(set) = self.rules.compiled_some(self.repo, &ids) else {
            return out;
        };
        let rules: Vec<&scan::rules::Rule> = set
            .rules
            .iter()
            .filter(|r| r.lang == lang && ids.contains(r.id.as_str()))
            .collect();
        if rules.is_empty() {
            return out;
        }
        let Ok(root) = crate::rewrite::parse(text, lang) else {
            return out;
        };
        let index = crate::rewrite::LineIndex::new(text);
        for rule in rules {
            for m in root.root().find_all(&rule.config.matcher) {
                let (line, column) = index.line_col(m.range().start);
                let labels = rule
                    .config
                    .get_labels(&m)
                    .into_iter()
                    .map(|l| {
                        let range = l.range();
                        Labelled {
                            primary: l.style == ast_grep_config::LabelStyle::Primary,
                            start: index.line_col(range.start),
                            end: index.line_col(range.end),
                            message: l.message.map(str::to_string),
                        }
                    })
                    .collect();
                out.entry((rule.id.clone(), line, column)).or_insert(labels);
            }
        }
        out
    }
}

/// Labels by rule id and match start.
type Labels = HashMap<(String, usize, usize), Vec<Labelled>>;

/// A label of a match, at 1-based (line, character column) bounds.
struct Labelled {
    primary: bool,
    start: (usize, usize),
    end: (usize, usize),
    message: Option<String>,
}

/// A file's text and where its lines start.
struct Lines<'t> {
    text: &'t str,
    starts: Vec<usize>,
}

impl<'t> Lines<'t> {
    fn new(text: &'t str) -> Lines<'t> {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        Lines { text, starts }
    }

    /// The byte offset of 1-based `line` and character `column` (past the last
    /// character of the line: its end).
    fn byte(&self, (line, column): (usize, usize)) -> Option<usize> {
        let start = *self.starts.get(line.checked_sub(1)?)?;
        let rest = &self.text[start..];
        let skip = column.checked_sub(1)?;
        match rest.char_indices().nth(skip) {
            Some((i, _)) => Some(start + i),
            None if rest.chars().count() == skip => Some(self.text.len()),
            None => None,
        }
    }

    /// The 1-based line that holds byte `at`.
    fn line_of(&self, at: usize) -> usize {
        self.starts.partition_point(|&s| s <= at).max(1)
    }

    /// The frame of `row`, with the labels its rule gave at its place (else the
    /// match alone, underlined).
    fn frame(&self, row: &FindingRow, labels: Option<&[Labelled]>) -> Option<Frame> {
        let start = self.byte((row.line, row.column))?;
        let end = self.byte((row.end_line, row.end_column))?;
        if self.text.get(start..end) != Some(row.text.as_str()) {
            return None;
        }
        let spans: Vec<(bool, std::ops::Range<usize>, Option<String>)> = match labels {
            Some(labels) => labels
                .iter()
                .map(|l| {
                    let range = self.byte(l.start)?..self.byte(l.end)?;
                    Some((l.primary, range, l.message.clone()))
                })
                .collect::<Option<_>>()?,
            None => vec![(true, start..end, None)],
        };
        let fix = match &row.fix {
            Some(fix) => {
                let a = self.byte((fix.start_line, fix.start_column))?;
                let b = self.byte((fix.end_line, fix.end_column))?;
                Some((a..b, fix.inserted.clone()))
            }
            None => None,
        };
        let mut first = spans.iter().map(|s| self.line_of(s.1.start)).min()?;
        let mut last = spans.iter().map(|s| self.line_of(s.1.end)).max()?;
        if let Some((range, _)) = &fix {
            first = first.min(
                self.line_of(range.start)
                    .saturating_sub(DIFF_CONTEXT)
                    .max(1),
            );
            last = last.max(self.line_of(range.end) + DIFF_CONTEXT);
        }
        let last = last.min(self.starts.len());
        let from = self.starts[first - 1];
        let to = self.starts.get(last).copied().unwrap_or(self.text.len());
        let shift = |r: &std::ops::Range<usize>| r.start - from..r.end - from;
        Some(Frame {
            first_line: first,
            text: self.text[from..to].to_string(),
            labels: spans
                .iter()
                .map(|(primary, range, message)| FrameLabel {
                    primary: *primary,
                    range: shift(range),
                    message: message.clone(),
                })
                .collect(),
            fix: fix.map(|(range, inserted)| (shift(&range), inserted)),
        })
    }
}
