/*!
Structural search over a file set: compile the pattern once per language, skip files
whose text lacks the pattern's literal before parsing them, search in parallel, and
return the hits in path order (the same on every run).
*/

use std::collections::BTreeMap;

use crate::lang::Lang;

use crate::error::Classify;
use crate::error::Exit;
use crate::files;
use crate::files::FileSet;
use crate::repo::Repo;
use crate::rewrite;
use crate::rewrite::Match;
use crate::rewrite::MatchText;
use crate::rewrite::Query;
use crate::worker;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Pattern(#[from] rewrite::Error),
    #[error("pattern '{pattern}' does not parse as any language searched ({langs})")]
    ParsesNowhere { pattern: String, langs: String },
    /// One file's matches hold more text than [`rewrite::MAX_MATCH_TEXT`] (deeply
    /// nested matches each copy everything inside them).
    #[error("the matches in {path} hold more than {limit} bytes of text")]
    MatchesTooLarge { path: String, limit: usize },
    /// A staged file's blob (`--cached`) could not be read.
    #[error(transparent)]
    Read(#[from] files::Error),
}

impl Classify for Error {
    fn code(&self) -> &'static str {
        match self {
            Error::Pattern(e) => e.code(),
            Error::ParsesNowhere { .. } => "bad-pattern",
            Error::MatchesTooLarge { .. } => "matches-too-large",
            Error::Read(e) => e.code(),
        }
    }
    fn exit(&self) -> Exit {
        match self {
            Error::Pattern(e) => e.exit(),
            Error::ParsesNowhere { .. } | Error::MatchesTooLarge { .. } => Exit::BadInput,
            Error::Read(e) => e.exit(),
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            Error::Pattern(e) => e.hint(),
            // One language tried: it was forced (or is the only one there), and naming
            // `-l` again would not help.
            Error::ParsesNowhere { langs, .. } if !langs.contains(',') => Some(format!(
                "a pattern must be code in {langs} with its metavariables standing for nodes \
                 (a fragment that is no whole statement there is matched by its content)"
            )),
            Error::ParsesNowhere { .. } => Some(
                "a pattern must be valid code in the file's language; force one with -l LANG"
                    .to_string(),
            ),
            Error::MatchesTooLarge { .. } => Some(
                "the pattern matches at every level of a deep nest: narrow it, or leave the \
                 file out with a pathspec (`:!PATH`)"
                    .to_string(),
            ),
            Error::Read(e) => e.hint(),
        }
    }
}

/// The matches of one file.
#[derive(Debug, Clone)]
pub struct FileHits {
    pub path: String,
    pub lang: Lang,
    pub matches: Vec<Match>,
    /// The file's text, kept only when asked for (context lines need it).
    pub source: Option<String>,
}

/// What a search keeps of each file besides the match positions, and in which order
/// it hands the files over.
#[derive(Debug, Clone, Copy)]
pub struct Keep {
    pub text: MatchText,
    /// Keep the whole file text in [`FileHits::source`].
    pub source: bool,
    /// Path order (the default), or each file as soon as its search ends.
    pub order: crate::pipeline::Delivery,
}

/// Something compiled once per language, and the languages it does not parse as.
pub struct PerLanguage<T> {
    pub compiled: BTreeMap<String, T>,
    /// (language, reason): their files are skipped with a warning.
    pub skipped: Vec<(String, String)>,
}

/// Compiles with `compile` for every distinct language in `langs`. A language the
/// pattern does not parse as is skipped; any other error, or a pattern that parses as
/// none of the languages, is an error.
pub fn compile_per_language<T>(
    what: &str,
    langs: impl IntoIterator<Item = Lang>,
    compile: impl Fn(Lang) -> Result<T, rewrite::Error>,
) -> Result<PerLanguage<T>, Error> {
    let mut out = PerLanguage {
        compiled: BTreeMap::new(),
        skipped: Vec::new(),
    };
    for lang in langs {
        let name = lang.to_string();
        if out.compiled.contains_key(&name) || out.skipped.iter().any(|(n, _)| *n == name) {
            continue;
        }
        match compile(lang) {
            Ok(q) => {
                out.compiled.insert(name, q);
            }
            Err(e @ rewrite::Error::PatternDoesNotParse { .. }) => {
                out.skipped.push((name, e.to_string()))
            }
            Err(e) => return Err(e.into()),
        }
    }
    if out.compiled.is_empty() && !out.skipped.is_empty() {
        return Err(Error::ParsesNowhere {
            pattern: what.to_string(),
            langs: out
                .skipped
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    Ok(out)
}

/// Totals of a search; the matches themselves went to the sink.
#[derive(Debug, Default)]
pub struct GrepSummary {
    /// Matches found in all.
    pub total: usize,
    pub files_searched: usize,
    pub files_matched: usize,
    pub skipped: files::Skipped,
    /// Paths of files that parsed with errors (searched anyway). Files the literal
    /// prefilter ruled out are never parsed, so they are never listed here.
    pub parse_errors: Vec<String>,
    /// Languages the pattern does not parse as: (language, reason). Their files were skipped.
    pub skipped_languages: Vec<(String, String)>,
}

/// How to search, besides the pattern and the files.
#[derive(Debug, Clone, Copy)]
pub struct Options<'a> {
    /// Parse every file as this language.
    pub forced_lang: Option<Lang>,
    pub max_file_size: u64,
    pub keep: Keep,
    /// Checked as each file is done: once it says stop, the search stops and the
    /// summary is partial (the caller checks `cancel` before using it).
    pub cancel: &'a crate::cancel::Cancel,
    /// `--selector`, `--strictness`.
    pub query: &'a rewrite::QueryOptions,
    /// Where to keep and find each file's matches between runs (`None`: no cache).
    pub cache: Option<&'a crate::cache::Settings>,
    /// Only the matches that touch these lines count (`--changed-lines`); the cache
    /// keeps every match, so the same entry serves any lines.
    pub lines: Option<&'a crate::text::LineRanges>,
}

/// A file with matches as the sink of [`grep`] gets it: what the workers made of it
/// (`prepare`'s result), and how many matches it has.
#[derive(Debug)]
pub struct Found<P> {
    pub count: usize,
    pub file: P,
}

/// Searches every file of `set` for `pattern`, in parallel, handing each file with
/// matches to `sink` in path order as soon as it is next (memory stays bounded), or,
/// with `keep.order` [`Delivery::AsReady`](crate::pipeline::Delivery), as soon as it is
/// searched.
///
/// `prepare` runs on the worker that searched the file, before the file waits for its
/// turn: a caller that prints rows encodes them there, so that a file searched early
/// (large files go first) waits as its output, not as matches with their captures.
/// `sink` returning `false` stops the search (e.g. the reader of the output left);
/// the summary then counts what was searched until then.
pub fn grep<P: Send>(
    repo: &Repo,
    set: &FileSet,
    pattern: &str,
    opts: &Options<'_>,
    prepare: impl Fn(FileHits) -> P + Sync,
    mut sink: impl FnMut(Found<P>) -> bool,
) -> Result<GrepSummary, Error> {
    let Options {
        forced_lang,
        max_file_size,
        keep,
        cancel,
        query,
        cache,
        lines,
    } = *opts;
    let langs = set.files.iter().map(|f| f.lang).chain(forced_lang);
    let PerLanguage {
        compiled: queries,
        skipped: skipped_languages,
    } = compile_per_language(pattern, langs, |lang| {
        Query::with_options(pattern, lang, forced_lang, query)
    })?;
    // The matches of a file depend on its bytes, its language, the pattern and its
    // selector and strictness, the forced language and what of a match is kept (the
    // context lines do not).
    let query_key = {
        let mut k = crate::cache::KeyBuilder::new("grep");
        k.add(pattern.as_bytes())
            .add(format!("{forced_lang:?}").as_bytes())
            .add(format!("{:?}", keep.text).as_bytes())
            .add(format!("{:?}/{:?}", query.selector, query.strictness).as_bytes())
            .add(format!("{:?}", query.rewrite).as_bytes());
        k.finish()
    };
    let search = Search {
        queries: &queries,
        forced_lang,
        keep,
        injections: &set.injections,
        prepare: &prepare,
        lines,
        blobs: files::Blobs::for_set(repo, set),
        max_file_size,
    };
    let mut out = GrepSummary {
        skipped_languages,
        ..Default::default()
    };
    // With `-l`, the files that embed the language (HTML's `<script>`, a project's
    // injections) are searched where they do, in path order with the rest.
    let files = set.with_hosts(forced_lang.is_some());
    let run = worker::Run {
        repo,
        max_file_size,
        cache: cache.map(|c| worker::Cache::open(c, query_key)),
        skipped: set.skipped.clone(),
        ids: false,
    };
    let drive = worker::Drive::Parallel {
        order: keep.order,
        cancel,
    };
    let totals = worker::run(&search, &files, run, drive, |file, (found, parse_error)| {
        if parse_error {
            out.parse_errors.push(file.path.clone());
        }
        match found {
            Some(found) => {
                out.total += found.count;
                out.files_matched += 1;
                sink(found)
            }
            None => true,
        }
    })?;
    out.files_searched = totals.files_searched;
    out.skipped = totals.skipped;
    Ok(out)
}

/// A search's work on one file.
struct Search<'a, P> {
    queries: &'a BTreeMap<String, Query>,
    forced_lang: Option<Lang>,
    keep: Keep,
    injections: &'a [crate::lang::Injection],
    prepare: &'a (dyn Fn(FileHits) -> P + Sync),
    lines: Option<&'a crate::text::LineRanges>,
    /// Reads the files that name a blob (`--cached`).
    blobs: Option<files::Blobs>,
    max_file_size: u64,
}

/// A file searched: its matches (in the language searched), whether it parsed with
/// errors, and its text when context lines need it.
struct Searched {
    lang: Lang,
    matches: Vec<Match>,
    parse_error: bool,
    source: Option<String>,
}

impl<P> Search<'_, P> {
    /// The language `file` is searched in, when it is not its own (`-l` on a host).
    fn guest(&self, file: &files::Candidate) -> Option<Lang> {
        self.forced_lang.filter(|l| *l != file.lang)
    }

    fn query(&self, lang: Lang) -> Option<&Query> {
        self.queries.get(&lang.to_string())
    }
}

impl<P: Send> worker::Worker for Search<'_, P> {
    type Task = files::Candidate;
    type Output = Searched;
    type Item = (Option<Found<P>>, bool);
    type Error = Error;

    fn plan(&self, file: &files::Candidate) -> worker::Plan {
        match self.guest(file) {
            // Embedded code is searched where it is, not cached.
            Some(guest) if self.query(guest).is_some() => worker::Plan::Compute,
            None if self.query(file.lang).is_some() => worker::Plan::Cached,
            _ => worker::Plan::Pass,
        }
    }

    fn read(&self, file: &files::Candidate) -> Option<Result<files::Loaded, Error>> {
        let read = self.blobs.as_ref()?.load_file(file, self.max_file_size)?;
        Some(read.map_err(Error::from))
    }

    fn compute(
        &self,
        file: &files::Candidate,
        text: String,
        _mode: crate::change::FileMode,
        _offer: &mut worker::Offer<'_>,
    ) -> Result<Searched, Error> {
        let too_large = || Error::MatchesTooLarge {
            path: file.path.clone(),
            limit: rewrite::MAX_MATCH_TEXT,
        };
        if let Some(guest) = self.guest(file) {
            let query = self.query(guest).expect("planned with a query");
            let found = search_embedded(
                &text,
                file.lang,
                guest,
                query,
                self.injections,
                self.keep.text,
            );
            if found.text_too_large {
                return Err(too_large());
            }
            return Ok(Searched {
                lang: guest,
                parse_error: found.has_parse_error,
                source: (self.keep.source && !found.matches.is_empty()).then_some(text),
                matches: found.matches,
            });
        }
        let query = self.query(file.lang).expect("planned with a query");
        if !query.may_match(&text) {
            return Ok(Searched {
                lang: file.lang,
                matches: Vec::new(),
                parse_error: false,
                source: None,
            });
        }
        // Only a search that prints context pays for the copy.
        let source = self.keep.source.then(|| text.clone());
        let found = query.find_owned(text, self.keep.text);
        if found.text_too_large {
            return Err(too_large());
        }
        Ok(Searched {
            lang: file.lang,
            matches: found.matches,
            parse_error: found.has_parse_error,
            source,
        })
    }

    fn decode(
        &self,
        file: &files::Candidate,
        payload: &[u8],
        text: &mut dyn FnMut() -> Option<(String, crate::change::FileMode)>,
    ) -> Option<Searched> {
        let (parse_error, matches) = serde_json::from_slice::<(bool, Vec<Match>)>(payload).ok()?;
        // Context lines need the text the entry is of.
        let source = match self.keep.source && !matches.is_empty() {
            true => Some(text()?.0),
            false => None,
        };
        Some(Searched {
            lang: file.lang,
            matches,
            parse_error,
            source,
        })
    }

    fn encode(&self, out: &Searched, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        serde_json::to_writer(w, &(out.parse_error, &out.matches)).map_err(std::io::Error::from)
    }

    fn item(&self, file: &files::Candidate, mut out: Searched) -> (Option<Found<P>>, bool) {
        if let Some(lines) = self.lines {
            out.matches
                .retain(|m| lines.touches(&file.path, m.line, m.end_line));
        }
        let found = (!out.matches.is_empty()).then(|| Found {
            count: out.matches.len(),
            file: (self.prepare)(FileHits {
                path: file.path.clone(),
                lang: out.lang,
                matches: out.matches,
                source: out.source,
            }),
        });
        (found, out.parse_error)
    }

    fn found(&self, item: &(Option<Found<P>>, bool)) -> usize {
        item.0.as_ref().map_or(0, |f| f.count)
    }
}

/// The matches of `query` (a pattern of `guest`) in the regions of `text`, a file of
/// `host`, that hold `guest` code, with host positions.
fn search_embedded(
    text: &str,
    host: Lang,
    guest: Lang,
    query: &Query,
    injections: &[crate::lang::Injection],
    keep: MatchText,
) -> rewrite::FileMatches {
    let mut out = rewrite::FileMatches::default();
    for region in crate::scan::engine::injected_regions(text, host, injections) {
        if region.lang != guest {
            continue;
        }
        let part = &text[region.start..region.end];
        if !query.may_match(part) {
            continue;
        }
        let found = query.find_owned(part.to_string(), keep);
        out.has_parse_error |= found.has_parse_error;
        out.text_too_large |= found.text_too_large;
        let base = rewrite::HostBase::of(text, region.start);
        out.matches
            .extend(found.matches.into_iter().map(|m| base.shift_match(m)));
    }
    out
}

/// Searches `text` (standard input, `--stdin`) as a file named `name` in `lang`,
/// handing its matches to `sink` when there are any.
pub fn grep_text(
    name: &str,
    text: String,
    lang: Lang,
    pattern: &str,
    opts: &Options<'_>,
    sink: impl FnOnce(FileHits) -> bool,
) -> Result<GrepSummary, Error> {
    let query = Query::with_options(pattern, lang, Some(lang), opts.query)?;
    let mut out = GrepSummary {
        files_searched: 1,
        ..Default::default()
    };
    let source = opts.keep.source.then(|| text.clone());
    let found = query.find_owned(text, opts.keep.text);
    if found.text_too_large {
        return Err(Error::MatchesTooLarge {
            path: name.to_string(),
            limit: rewrite::MAX_MATCH_TEXT,
        });
    }
    if found.has_parse_error {
        out.parse_errors.push(name.to_string());
    }
    if !found.matches.is_empty() {
        out.total = found.matches.len();
        out.files_matched = 1;
        sink(FileHits {
            path: name.to_string(),
            lang,
            matches: found.matches,
            source,
        });
    }
    Ok(out)
}

/// One file's matches as a search shows them (`ops::grep` hands these to its sink;
/// the printers read them).
pub struct GrepFile<'a> {
    /// The path, written as the caller asked.
    pub path: String,
    pub lang: Lang,
    /// The matches to show, in position order.
    pub matches: &'a [Match],
    /// The file's lines (empty unless context was asked for).
    pub lines: Lines<'a>,
    pub context: Context,
}

/// How many lines of context to show around each match (`-B`, `-A`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Context {
    pub before: usize,
    pub after: usize,
}

impl Context {
    pub fn is_empty(&self) -> bool {
        self.before == 0 && self.after == 0
    }
}

/// A file's lines, for context: 1-based, without their line ending (`\n` or `\r\n`).
pub struct Lines<'a> {
    lines: Vec<&'a str>,
}

impl<'a> Lines<'a> {
    pub fn new(text: &'a str) -> Lines<'a> {
        Lines {
            lines: text
                .lines()
                .map(|l| l.strip_suffix('\r').unwrap_or(l))
                .collect(),
        }
    }

    /// How many lines the file has (a last line without `\n` counts).
    pub fn count(&self) -> usize {
        self.lines.len()
    }

    /// Line `n` (1-based); empty past the end.
    pub fn get(&self, n: usize) -> &'a str {
        n.checked_sub(1)
            .and_then(|i| self.lines.get(i))
            .copied()
            .unwrap_or("")
    }

    /// The line numbers of a match's context: `before` lines above its first line and
    /// `after` lines below its last, clipped to the file.
    pub fn around(
        &self,
        m: &Match,
        context: Context,
    ) -> (
        std::ops::RangeInclusive<usize>,
        std::ops::RangeInclusive<usize>,
    ) {
        let first = m.line.saturating_sub(context.before).max(1);
        let last = m.end_line.saturating_add(context.after).min(self.count());
        (first..=m.line.saturating_sub(1), m.end_line + 1..=last)
    }
}

/// One line of a context group, as `grep -C` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupLine<'a> {
    /// A match starting on this line (a line with two matches has two of these).
    MatchStart(&'a Match),
    /// A later line of a multi-line match.
    MatchContinued(usize),
    /// A line around the matches.
    Context(usize),
}

/// The matches of a file (in position order) grouped with their context, as ripgrep and
/// `git grep` show them: overlapping or touching contexts merge into one group; groups
/// are printed with `--` between them.
pub fn context_groups<'m>(
    matches: &'m [Match],
    lines: &Lines<'_>,
    context: Context,
) -> Vec<Vec<GroupLine<'m>>> {
    // First the line spans of the groups, then each group's lines in order.
    let mut spans: Vec<(usize, usize, Vec<&'m Match>)> = Vec::new();
    for m in matches {
        let first = m.line.saturating_sub(context.before).max(1);
        // A match's own lines always show, even past the counted end (an empty last line).
        let last = m
            .end_line
            .saturating_add(context.after)
            .min(lines.count())
            .max(m.end_line);
        match spans.last_mut() {
            Some((_, end, group)) if first <= end.saturating_add(1) => {
                *end = (*end).max(last);
                group.push(m);
            }
            _ => spans.push((first, last, vec![m])),
        }
    }
    spans
        .into_iter()
        .map(|(first, last, group)| {
            let mut out = Vec::new();
            // The last line a match covers so far, to tell match lines from context.
            let mut covered = 0usize;
            let mut next = group.iter().peekable();
            for n in first..=last {
                let mut starts = false;
                while let Some(m) = next.next_if(|m| m.line == n) {
                    out.push(GroupLine::MatchStart(m));
                    covered = covered.max(m.end_line);
                    starts = true;
                }
                if starts {
                    continue;
                }
                if n <= covered {
                    out.push(GroupLine::MatchContinued(n));
                } else {
                    out.push(GroupLine::Context(n));
                }
            }
            out
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: usize, end_line: usize) -> Match {
        Match {
            line,
            column: 1,
            end_line,
            end_column: 2,
            start_byte: 0,
            end_byte: 1,
            text: String::new(),
            captures: Vec::new(),
            replaced_end: None,
            replacement: None,
        }
    }

    fn shape(groups: &[Vec<GroupLine<'_>>]) -> Vec<Vec<String>> {
        groups
            .iter()
            .map(|g| {
                g.iter()
                    .map(|l| match l {
                        GroupLine::MatchStart(m) => format!("m{}", m.line),
                        GroupLine::MatchContinued(n) => format!("+{n}"),
                        GroupLine::Context(n) => format!("c{n}"),
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn lines_drop_line_endings_and_count_a_last_unterminated_line() {
        let lines = Lines::new("a\r\nb\nc");
        assert_eq!(lines.count(), 3);
        assert_eq!((lines.get(1), lines.get(2), lines.get(3)), ("a", "b", "c"));
        assert_eq!((lines.get(0), lines.get(4)), ("", ""));
        assert_eq!(Lines::new("a\n").count(), 1);
    }

    #[test]
    fn contexts_clip_to_the_file_and_merge_when_they_touch() {
        let text = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
        let lines = Lines::new(text);
        let c1 = Context {
            before: 1,
            after: 1,
        };
        // 2 and 4: contexts 1-3 and 3-5 overlap; 8: 7-9 is apart.
        let ms = [at(2, 2), at(4, 4), at(8, 8)];
        assert_eq!(
            shape(&context_groups(&ms, &lines, c1)),
            [vec!["c1", "m2", "c3", "m4", "c5"], vec!["c7", "m8", "c9"]]
        );
        // 1-3 and 4-6 touch: one group, no separator (as ripgrep).
        let ms = [at(2, 2), at(5, 5)];
        assert_eq!(
            shape(&context_groups(&ms, &lines, c1)),
            [vec!["c1", "m2", "c3", "c4", "m5", "c6"]]
        );
        let ms = [at(1, 1), at(10, 10)];
        let c2 = Context {
            before: 2,
            after: 2,
        };
        assert_eq!(
            shape(&context_groups(&ms, &lines, c2)),
            [vec!["m1", "c2", "c3"], vec!["c8", "c9", "m10"]]
        );
    }

    #[test]
    fn multi_line_matches_show_every_line_and_same_line_matches_each_start() {
        let lines = Lines::new("a\nb\nc\nd\ne\n");
        let ms = [at(2, 4), at(3, 3)];
        assert_eq!(
            shape(&context_groups(
                &ms,
                &lines,
                Context {
                    before: 0,
                    after: 1
                }
            )),
            [vec!["m2", "m3", "+4", "c5"]]
        );
        let ms = [at(2, 2), at(2, 2)];
        assert_eq!(
            shape(&context_groups(&ms, &lines, Context::default())),
            [vec!["m2", "m2"]]
        );
    }
}
