/*!
The record of a preview's sites, made at staging: where each site is in its file's
before blob, how long its after text is, and which rule or op made it. `review` reads
it instead of re-running the recipe (which costs what staging the preview cost).

Staging records a file only when its replacements, taken as review takes them
([`super::located::exact`]), make its after text exactly; a file they do not (an import
added, a formatter's hunks, `-i` declining some) is left out, and review re-derives
it. The record is a blob in the preview's history ([`crate::txn::sites_record`]), so a
preview fetched from another clone brings one that nothing here vouches for: review
believes a file's record only when splicing its sites into the before blob gives the
after blob byte for byte (the sites' after texts are read from the after blob, so that
check is the whole of it), and re-derives every other file.

The format is text, one line each: `astedit-sites 1`; `label "rule:ID"` (JSON strings)
before a file first uses the label; `file "PATH" N`; then the file's N sites, `GAP LEN
AFTER LABEL` (the bytes from the previous site's end to this one's start, the bytes it
replaces, the bytes of its after text, the label's number in order of appearance).
About 15 bytes a site.
*/

use std::collections::HashMap;
use std::fmt::Write as _;

use super::located::Label;
use super::located::Located;

const HEADER: &str = "astedit-sites 1";

/// Builds a record, file by file.
#[derive(Default)]
pub struct Writer {
    text: String,
    labels: HashMap<Label, usize>,
    files: usize,
}

fn label_text(l: &Label) -> Option<String> {
    match l {
        Label::Rule(r) => Some(format!("rule:{r}")),
        Label::Op(o) => Some(format!("op:{o}")),
        Label::None => None,
    }
}

fn label_of(text: &str) -> Option<Label> {
    if let Some(r) = text.strip_prefix("rule:") {
        Some(Label::Rule(r.to_string()))
    } else {
        text.strip_prefix("op:").map(|o| Label::Op(o.to_string()))
    }
}

fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

impl Writer {
    pub fn new() -> Writer {
        Writer::default()
    }

    /// Records `sites` as the sites of `path`: sorted, not overlapping, each with a rule
    /// or op, and making its after text from its before text (the caller checked it,
    /// with [`super::located::exact`]). A site with no label leaves the file out.
    pub fn file(&mut self, path: &str, sites: &[Located]) {
        if sites.is_empty() || sites.iter().any(|s| s.label == Label::None) {
            return;
        }
        let mut lines = String::new();
        let mut at = 0;
        for s in sites {
            if s.start < at || s.end < s.start {
                return;
            }
            let next = self.labels.len();
            let n = match self.labels.get(&s.label) {
                Some(&n) => n,
                None => {
                    let Some(text) = label_text(&s.label) else {
                        return;
                    };
                    self.labels.insert(s.label.clone(), next);
                    let _ = writeln!(self.text, "label {}", quoted(&text));
                    next
                }
            };
            let _ = writeln!(
                lines,
                "{} {} {} {n}",
                s.start - at,
                s.end - s.start,
                s.after.len()
            );
            at = s.end;
        }
        let _ = writeln!(self.text, "file {} {}", quoted(path), sites.len());
        self.text.push_str(&lines);
        self.files += 1;
    }

    /// The record's bytes; `None` when no file was recorded.
    pub fn finish(self) -> Option<Vec<u8>> {
        (self.files > 0).then(|| format!("{HEADER}\n{}", self.text).into_bytes())
    }
}

/// One recorded site: bytes `start..end` of the before blob become `after` bytes.
#[derive(Debug, Clone, Copy)]
struct Site {
    start: usize,
    end: usize,
    after: usize,
    label: usize,
}

/// A record read back.
#[derive(Debug, Default)]
pub(super) struct Record {
    labels: Vec<Label>,
    files: HashMap<String, Vec<Site>>,
}

impl Record {
    /// Parses a record; `None` when it is not one (every file is then re-derived).
    pub(super) fn parse(bytes: &[u8]) -> Option<Record> {
        let text = std::str::from_utf8(bytes).ok()?;
        let mut lines = text.lines();
        if lines.next()? != HEADER {
            return None;
        }
        let mut record = Record::default();
        while let Some(line) = lines.next() {
            if let Some(l) = line.strip_prefix("label ") {
                let l: String = serde_json::from_str(l).ok()?;
                record.labels.push(label_of(&l)?);
                continue;
            }
            let rest = line.strip_prefix("file ")?;
            let cut = rest.rfind(' ')?;
            let path: String = serde_json::from_str(&rest[..cut]).ok()?;
            let n: usize = rest[cut + 1..].parse().ok()?;
            let mut sites = Vec::with_capacity(n.min(1 << 16));
            let mut at = 0usize;
            for _ in 0..n {
                let mut nums = lines.next()?.split(' ').map(|x| x.parse::<usize>().ok());
                let mut next = || nums.next().flatten();
                let (gap, len, after, label) = (next()?, next()?, next()?, next()?);
                if label >= record.labels.len() {
                    return None;
                }
                let start = at.checked_add(gap)?;
                let end = start.checked_add(len)?;
                sites.push(Site {
                    start,
                    end,
                    after,
                    label,
                });
                at = end;
            }
            record.files.insert(path, sites);
        }
        Some(record)
    }

    /// Whether the record has `path`.
    pub(super) fn has(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }

    /// The recorded sites of `path`, when splicing them into `before` gives `after`
    /// exactly (their after texts are read from `after`); `None` otherwise (or when
    /// the record has no such file).
    pub(super) fn sites(&self, path: &str, before: &str, after: &str) -> Option<Vec<Located>> {
        let sites = self.files.get(path)?;
        let mut out = Vec::with_capacity(sites.len());
        // Before bytes up to `at` are accounted for, as after bytes up to `out_at`.
        let (mut at, mut out_at) = (0usize, 0usize);
        for s in sites {
            let kept = before.get(at..s.start)?;
            if after.get(out_at..out_at + kept.len())? != kept {
                return None;
            }
            out_at += kept.len();
            before.get(s.start..s.end)?;
            let text = after.get(out_at..out_at.checked_add(s.after)?)?;
            out_at += s.after;
            out.push(Located {
                start: s.start,
                end: s.end,
                after: text.to_string(),
                label: self.labels[s.label].clone(),
            });
            at = s.end;
        }
        let rest = before.get(at..)?;
        (!out.is_empty() && after.get(out_at..)? == rest).then_some(out)
    }
}

/// The record preview `p` was staged with, if it has one that parses.
pub(super) fn read(repo: &crate::repo::Repo, p: gix::ObjectId) -> Option<Record> {
    Record::parse(&crate::txn::sites_record(repo, p)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(start: usize, end: usize, after: &str, rule: &str) -> Located {
        Located {
            start,
            end,
            after: after.into(),
            label: Label::Rule(rule.into()),
        }
    }

    #[test]
    fn a_record_read_back_gives_the_sites_only_where_they_make_the_after_text() {
        let before = "var a = 1;\nvar b = 2;\nx();\n";
        let after = "let a = 1\nlet b = 2\nx();\n";
        let sites = vec![
            site(0, 10, "let a = 1", "use-let"),
            site(11, 21, "let b = 2", "use-let"),
        ];
        let mut w = Writer::new();
        w.file("a.js", &sites);
        w.file("weird \"name\"\n.js", &[site(0, 1, "y", "other")]);
        let bytes = w.finish().expect("a record");
        let text = String::from_utf8(bytes.clone()).expect("text");
        assert!(
            text.starts_with("astedit-sites 1\nlabel \"rule:use-let\"\n"),
            "{text}"
        );
        let record = Record::parse(&bytes).expect("parses");
        assert_eq!(record.sites("a.js", before, after), Some(sites));
        assert!(record.has("weird \"name\"\n.js"));
        // A site's text is read from the after blob: another one of the same length is
        // still these sites. Another length, or other text between or after the sites,
        // is not.
        assert_eq!(
            record
                .sites("a.js", before, "let a = 7\nlet b = 2\nx();\n")
                .map(|s| s[0].after.clone()),
            Some("let a = 7".to_string())
        );
        assert_eq!(
            record.sites("a.js", before, "let a = 10\nlet b = 2\nx();\n"),
            None
        );
        assert_eq!(
            record.sites("a.js", before, "let a = 1\nlet b = 2\ny();\n"),
            None
        );
        assert_eq!(
            record.sites("a.js", before, "let a = 1\nlet b = 2\nx();\n\n"),
            None
        );
        assert_eq!(record.sites("b.js", before, after), None);
        // Not a record, or one naming a label it does not have.
        assert!(Record::parse(b"astedit-sites 2\n").is_none());
        assert!(Record::parse(b"astedit-sites 1\nfile \"a\" 1\n0 1 1 0\n").is_none());
        assert!(Writer::new().finish().is_none());
    }
}
