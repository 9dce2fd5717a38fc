//! `--fmt` (issue 37 item 4): the project's formatter, limited to the rewrite.
//!
//! `astedit.toml`'s `[fmt]` names a formatter per language (`python = "ruff format
//! --stdin-filename {path} -"`): the file on stdin, the formatted file on stdout. Each
//! rewritten file is formatted in memory, and of the formatter's changes only the
//! hunks that overlap lines the rewrite itself changed are kept: formatting drift
//! elsewhere in the file is never staged. A formatter that fails (cannot start, exits
//! non-zero, prints no UTF-8) leaves the file as rewritten, with a warning.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::process::Stdio;

use crate::change::FileChange;
use crate::error::UsageError;
use crate::lang::Lang;
use crate::Error;

/// The formatters of `[fmt]`, by language.
#[derive(Debug, Clone, Default)]
pub struct Formatters {
    by_lang: Vec<(Lang, String)>,
}

impl Formatters {
    /// `[fmt]` of the `astedit.toml` at the root of `workdir` (none: no formatter).
    pub fn load(workdir: &Path) -> Result<Formatters, Error> {
        let path = workdir.join(crate::scan::rules::ASTEDIT_TOML);
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Ok(Formatters::default());
        };
        #[derive(serde::Deserialize)]
        struct File {
            #[serde(default)]
            fmt: BTreeMap<String, String>,
        }
        // The rest of the file is the rule loader's to judge.
        let Ok(file) = toml::from_str::<toml::Value>(&text) else {
            return Ok(Formatters::default());
        };
        let fmt: File = file.try_into().map_err(|e| {
            UsageError(format!(
                "astedit.toml: [fmt]: {e}: expected `LANGUAGE = \"COMMAND {{path}} …\"` lines"
            ))
        })?;
        let mut by_lang = Vec::new();
        for (name, command) in fmt.fmt {
            let lang: Lang = name
                .parse()
                .map_err(|e| UsageError(format!("astedit.toml: [fmt]: {e}")))?;
            if words(&command).is_empty() {
                return Err(
                    UsageError(format!("astedit.toml: [fmt]: {name}: an empty command")).into(),
                );
            }
            by_lang.push((lang, command));
        }
        Ok(Formatters { by_lang })
    }

    /// (language, command) of each formatter.
    pub fn by_language(&self) -> impl Iterator<Item = (Lang, &str)> {
        self.by_lang.iter().map(|(l, c)| (*l, c.as_str()))
    }

    pub fn is_empty(&self) -> bool {
        self.by_lang.is_empty()
    }

    /// The command for a file of `lang`.
    pub fn command(&self, lang: Lang) -> Option<&str> {
        self.by_lang
            .iter()
            .find(|(l, _)| *l == lang)
            .map(|(_, c)| c.as_str())
    }

    /// The commands, as recorded in a preview (`language: command`).
    pub fn record(&self) -> Vec<String> {
        self.by_lang
            .iter()
            .map(|(l, c)| format!("{l}: {c}"))
            .collect()
    }

    /// The formatters a preview was staged with (`details.fmt`), for `refresh` to run
    /// them again as staging did; `None` when it was staged without `--fmt`. A line
    /// that does not read (a language this build does not know) is left out.
    pub fn recorded(meta: &crate::change::PreviewMeta) -> Option<Formatters> {
        let lines = meta.details.get(FMT_KEY)?.as_array()?;
        let by_lang = lines
            .iter()
            .filter_map(|line| {
                let (lang, command) = line.as_str()?.split_once(": ")?;
                Some((lang.parse().ok()?, command.to_string()))
            })
            .collect();
        Some(Formatters { by_lang })
    }
}

/// The key under `details` where a preview records its formatters.
const FMT_KEY: &str = "fmt";

/// Records the formatters in the preview (`details.fmt`), for the reviewer.
pub fn record(meta: &mut crate::change::PreviewMeta, fmts: &Formatters) {
    super::recipe::insert_detail_at(meta, FMT_KEY, serde_json::json!(fmts.record()));
}

/// Formats `change`'s new text in `workdir` when a formatter is declared for its
/// language, keeping the formatter's hunks that overlap the rewrite; a warning when
/// the formatter fails (the change is then left as it was).
pub fn format_change(workdir: &Path, fmts: &Formatters, change: &mut FileChange) -> Option<String> {
    let lang = Lang::from_path(&change.path)?;
    let command = fmts.command(lang)?;
    let after = change.after.as_mut()?;
    let new = std::str::from_utf8(&after.bytes).ok()?;
    let old = change
        .before
        .as_ref()
        .and_then(|b| std::str::from_utf8(&b.bytes).ok())
        .unwrap_or("");
    match run(workdir, command, &change.path, new) {
        Ok(formatted) => {
            let kept = limit(old, new, &formatted);
            if let Some(why) = refusal(lang, old, new, &kept) {
                return Some(format!(
                    "{}: the formatter's output is left out: {why}; the file is staged as rewritten",
                    change.path
                ));
            }
            after.bytes = kept.into_bytes();
            None
        }
        Err(why) => Some(format!(
            "{}: the formatter `{command}` failed ({why}); the file is staged as rewritten",
            change.path
        )),
    }
}

/// Runs `command` with `{path}` filled in on `text`; its stdout.
fn run(workdir: &Path, command: &str, path: &str, text: &str) -> Result<String, String> {
    // The path fills a word of its own or part of one, never an option: a path that
    // begins with `-` is written `./-…`.
    let safe = if path.starts_with('-') {
        format!("./{path}")
    } else {
        path.to_string()
    };
    let argv: Vec<String> = words(command)
        .into_iter()
        .map(|w| w.replace("{path}", &safe))
        .collect();
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(workdir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", argv[0]))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let input = text.as_bytes().to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let _ = writer.join();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(format!("{}: {}", out.status, last.trim()));
    }
    String::from_utf8(out.stdout).map_err(|_| "its output is not UTF-8".to_string())
}

/// A command line split into words: whitespace separates, '…' and "…" quote.
pub fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                cur.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => out.extend(cur.take()),
            (None, c) => cur.get_or_insert_with(String::new).push(c),
        }
    }
    out.extend(cur);
    out
}

/// `new` (the rewrite of `old`) with the hunks of `formatted` (the formatter's output
/// for `new`) that overlap lines the rewrite changed; the others left out.
///
/// A hunk whose lines are only respaced, one for one, is taken line by line; any
/// other hunk is taken whole or not at all (a statement re-split into as many lines
/// is one change). A line the formatter moves (an import sorter) links the hunk it
/// leaves to the hunk it lands in: both are taken, or neither.
pub fn limit(old: &str, new: &str, formatted: &str) -> String {
    use similar::TextDiff;
    let touched = rewritten_lines(old, new);
    // Ranges meet when they share a line; an empty one (a point) meets what touches it.
    let overlaps = |s: usize, e: usize| {
        touched.iter().any(|&(ts, te)| {
            if s == e || ts == te {
                s <= te && ts <= e
            } else {
                s < te && ts < e
            }
        })
    };
    let diff = TextDiff::from_lines(new, formatted);
    let (new_lines, formatted_lines) = (diff.old_slices(), diff.new_slices());
    let ops = diff.ops();
    let hunks: Vec<usize> = (0..ops.len())
        .filter(|&i| ops[i].tag() != similar::DiffTag::Equal)
        .collect();
    let group = move_groups(&hunks, ops, new_lines, formatted_lines);
    // A group is taken when one of its hunks meets the rewrite.
    let mut taken = vec![false; hunks.len()];
    for (h, &i) in hunks.iter().enumerate() {
        let o = ops[i].old_range();
        if overlaps(o.start, o.end) {
            taken[group[h]] = true;
        }
    }
    let mut out = String::with_capacity(formatted.len());
    let mut h = 0;
    for (i, op) in ops.iter().enumerate() {
        let (o, n) = (op.old_range(), op.new_range());
        if op.tag() == similar::DiffTag::Equal {
            out.extend(new_lines[o].iter().copied());
            continue;
        }
        debug_assert_eq!(hunks[h], i);
        let (was, now) = (&new_lines[o.clone()], &formatted_lines[n]);
        let alone = group.iter().filter(|&&g| g == group[h]).count() == 1;
        if alone && respaced(was, now) {
            // Line for line: each line is a hunk of its own.
            for (k, (was, now)) in was.iter().zip(now).enumerate() {
                let at = o.start + k;
                out.push_str(if overlaps(at, at + 1) { now } else { was });
            }
        } else if taken[group[h]] {
            out.extend(now.iter().copied());
        } else {
            out.extend(was.iter().copied());
        }
        h += 1;
    }
    out
}

/// Lines of `new` the rewrite of `old` wrote, as half-open ranges (an empty range: a
/// deletion between two lines).
fn rewritten_lines(old: &str, new: &str) -> Vec<(usize, usize)> {
    similar::TextDiff::from_lines(old, new)
        .ops()
        .iter()
        .filter(|op| op.tag() != similar::DiffTag::Equal)
        .map(|op| (op.new_range().start, op.new_range().end))
        .collect()
}

/// Whether `now` is `was` respaced, one line for one.
fn respaced(was: &[&str], now: &[&str]) -> bool {
    let bare = |l: &str| l.split_whitespace().collect::<String>();
    was.len() == now.len() && was.iter().zip(now).all(|(a, b)| bare(a) == bare(b))
}

/// For each hunk (an index into `ops`), the hunk that stands for its group: hunks
/// joined by a moved line (a line, up to whitespace, that occurs once among all the
/// removed lines and once among all the added ones, in two different hunks).
fn move_groups(
    hunks: &[usize],
    ops: &[similar::DiffOp],
    new_lines: &[&str],
    formatted_lines: &[&str],
) -> Vec<usize> {
    use std::collections::HashMap;
    // Line (trimmed) → (hunks it was removed from, hunks it was added in).
    let mut seen: HashMap<&str, (Vec<usize>, Vec<usize>)> = HashMap::new();
    for (h, &i) in hunks.iter().enumerate() {
        for line in &new_lines[ops[i].old_range()] {
            seen.entry(line.trim()).or_default().0.push(h);
        }
        for line in &formatted_lines[ops[i].new_range()] {
            seen.entry(line.trim()).or_default().1.push(h);
        }
    }
    let mut group: Vec<usize> = (0..hunks.len()).collect();
    fn find(group: &mut [usize], h: usize) -> usize {
        let mut r = h;
        while group[r] != r {
            r = group[r];
        }
        group[h] = r;
        r
    }
    for (line, (from, to)) in &seen {
        if line.is_empty() || from.len() != 1 || to.len() != 1 || from[0] == to[0] {
            continue;
        }
        let (a, b) = (find(&mut group, from[0]), find(&mut group, to[0]));
        group[a.max(b)] = a.min(b);
    }
    (0..hunks.len()).map(|h| find(&mut group, h)).collect()
}

/// Why the limited formatting of `new` (into `kept`) cannot be staged: it parses
/// with more errors than `new`, or loses an import the rewrite of `old` added.
fn refusal(lang: Lang, old: &str, new: &str, kept: &str) -> Option<String> {
    use crate::rewrite::parse_error_count;
    let (before, after) = (parse_error_count(new, lang), parse_error_count(kept, lang));
    if after > before {
        return Some(format!(
            "it would parse with {after} syntax error(s) where the rewrite has {before}"
        ));
    }
    let names = |text| crate::rewrite::imports::bound_names(lang, text);
    let (Some(had), Some(has), Some(keeps)) = (names(old), names(new), names(kept)) else {
        return None;
    };
    let lost: Vec<&String> = has
        .difference(&had)
        .filter(|b| !keeps.contains(*b))
        .collect();
    let first = lost.first()?;
    Some(format!(
        "it would drop the import the rewrite added (`{first}`)"
    ))
}

#[cfg(test)]
mod tests {
    use super::limit;
    use super::words;

    #[test]
    fn only_the_hunks_over_the_rewrite_are_kept() {
        let old = "a  =  1\nb = 2\nc  =  3\n";
        let new = "a  =  1\nb = f(2)\nc  =  3\n";
        // The formatter also respaces the lines the rewrite did not touch.
        let formatted = "a = 1\nb = f( 2 )\nc = 3\n";
        assert_eq!(limit(old, new, formatted), "a  =  1\nb = f( 2 )\nc  =  3\n");
        assert_eq!(limit(old, old, formatted), old);
    }

    #[test]
    fn a_re_split_statement_is_one_hunk() {
        let old = "let t = sum(a,\n    b,\n    c);\n";
        let new = "let t = sum(a,\n    x,\n    c);\n";
        let formatted = "let t =\n    sum(a, x,\n        c);\n";
        assert_eq!(limit(old, new, formatted), formatted);
        // Respaced one for one: line by line, the drift left out.
        let spaced = "let t = sum(a,\n  x,\n  c);\n";
        assert_eq!(limit(old, new, spaced), "let t = sum(a,\n  x,\n    c);\n");
    }

    #[test]
    fn a_moved_line_keeps_both_ends() {
        let old = "import os\nimport sys\nold(1)\n";
        let new = "import os\nimport sys\nfrom zlib import new\nnew(1)\n";
        let formatted = "from zlib import new\nimport os\nimport sys\nnew(1)\n";
        assert_eq!(limit(old, new, formatted), formatted);
    }

    #[test]
    fn a_lost_import_or_a_worse_parse_is_refused() {
        let python = crate::lang::Lang::Python;
        let (old, new) = ("import os\n", "import os\nfrom z import n\nn()\n");
        let why = super::refusal(python, old, new, "import os\nn()\n").expect("refused");
        assert!(why.contains("z n as n"), "{why}");
        let why = super::refusal(python, old, new, "import os\nfrom z import n\nn((\n");
        assert!(why.expect("refused").contains("syntax error"));
        assert_eq!(super::refusal(python, old, new, new), None);
    }

    #[test]
    fn recorded_formatters_read_back() {
        let mut meta = crate::change::PreviewMeta::default();
        let fmts = super::Formatters {
            by_lang: vec![
                (crate::lang::Lang::Python, "ruff format -".into()),
                (
                    crate::lang::Lang::TypeScript,
                    "prettier --stdin-filepath {path}".into(),
                ),
            ],
        };
        assert!(super::Formatters::recorded(&meta).is_none());
        super::record(&mut meta, &fmts);
        let back = super::Formatters::recorded(&meta).expect("recorded");
        assert_eq!(back.record(), fmts.record());
        assert_eq!(
            back.command(crate::lang::Lang::TypeScript),
            Some("prettier --stdin-filepath {path}")
        );
    }

    #[test]
    fn words_split_on_spaces_and_quotes() {
        assert_eq!(
            words("ruff format --stdin-filename '{path}' -"),
            ["ruff", "format", "--stdin-filename", "{path}", "-"]
        );
        assert_eq!(words("  a \"b c\"  "), ["a", "b c"]);
    }
}
