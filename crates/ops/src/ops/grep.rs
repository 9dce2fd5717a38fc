//! `grep` (and the `ast_grep` tool): structural search, streamed.
//!
//! The search hands each file's shown matches to a sink as soon as it is that file's
//! turn, and keeps only the totals: a search with half a million matches holds one
//! file at a time (issue 26). What the front end does with a file (print its lines,
//! keep its JSON rows, keep rows within a byte budget) is the sink's business.

use crate::cancel::Cancel;
use crate::grep::Context;
use crate::grep::GrepFile;
use crate::grep::Lines;
use crate::pipeline::Delivery;
use crate::repo::Repo;
use crate::report::Diagnostics;
use crate::report::GrepReport;
use crate::report::Version;
use crate::rewrite::MatchText;
use crate::Error;

/// How paths are written in what an operation hands out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paths {
    /// Relative to the current folder, as the CLI shows them.
    Display,
    /// Repository paths (relative to the work-tree root), as the server gives them.
    Repo,
}

impl Paths {
    /// `path` (a repository path) as this style writes it.
    pub fn show(self, repo: &Repo, path: &str) -> String {
        match self {
            Paths::Display => repo.display_path(path),
            Paths::Repo => path.to_string(),
        }
    }
}

/// A search.
#[derive(Debug, Clone)]
pub struct GrepRequest {
    /// The files to search (made files here), and the language every file is parsed
    /// as; with `stdin`, only the language counts.
    pub input: super::input::Input,
    pub pattern: String,
    /// What of each match is kept: its first line (text), or its whole text with the
    /// captures (JSON rows).
    pub text: MatchText,
    /// Lines shown before and after each match (`-B`, `-A`); the file's text is kept
    /// for them.
    pub before: usize,
    pub after: usize,
    /// Path order, or each file as soon as its search ends.
    pub order: Delivery,
    /// Matches passed over before the first one handed out (paging).
    pub offset: usize,
    /// At most this many matches are handed out (0: no limit); the rest are counted.
    pub max_count: usize,
    pub paths: Paths,
    /// `--selector`, `--strictness` (ast-grep's pattern object).
    pub selector: Option<String>,
    pub strictness: Option<crate::levels::Strictness>,
    /// ast-grep's `run --rewrite`: each match carries the replacement ast-grep would
    /// write (nothing is written).
    pub rewrite: Option<String>,
    /// Search this text (standard input) as one file in the input's language, instead
    /// of the input's files.
    pub stdin: Option<String>,
    /// Keep each matching file's lines (for ast-grep's `lines` in `--json=stream`).
    pub keep_lines: bool,
    /// The result cache to use.
    pub cache: super::cache::CacheChoice,
    /// Warn about every language the pattern is not code in, not only those whose
    /// files hold its text (`-v`).
    pub verbose: bool,
}

/// The name a search of standard input gives its one file, as ast-grep's.
pub const STDIN_NAME: &str = "STDIN";

/// How `--debug-query` prints the pattern's tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DebugFormat {
    Ast,
    Cst,
    Sexp,
}

/// The tree of the request's pattern parsed in its input's language (none without
/// one), for `--debug-query`.
pub fn debug_query(
    repo: &Repo,
    req: &GrepRequest,
    format: DebugFormat,
) -> Result<Option<String>, Error> {
    let Some(lang) = req.input.language(repo)? else {
        return Ok(None);
    };
    let format = match format {
        DebugFormat::Ast => crate::rewrite::TreeFormat::Ast,
        DebugFormat::Cst => crate::rewrite::TreeFormat::Cst,
        DebugFormat::Sexp => crate::rewrite::TreeFormat::Sexp,
    };
    Ok(Some(crate::rewrite::debug_tree(
        &req.pattern,
        lang,
        format,
    )?))
}

/// One match of a file as the output prints it (a JSON row, a stream line), without
/// what separates it from the next. The file's `matches` are left empty: each is
/// encoded and dropped in turn.
pub type EncodeRow = fn(&GrepFile<'_>, &crate::rewrite::Match) -> String;

/// Where a search's matches go as it finds them (the front end's printer, the
/// server's rows): the one place that decides how a file's matches travel.
pub enum GrepSink<'s> {
    /// Each file's shown matches, in the request's order.
    Files(&'s mut dyn FnMut(GrepFile<'_>) -> Result<(), Error>),
    /// Each match encoded by the function, on the worker that searched its file, into
    /// the row the output prints; then each file's shown rows, in order. A file
    /// searched early waits for its turn as the text it prints, not as matches with
    /// their captures.
    Rows(EncodeRow, &'s mut dyn FnMut(&[String]) -> Result<(), Error>),
}

/// Searches the request's input, handing each file's shown matches to `sink` as it
/// comes; an error from the sink stops the search and is returned. The report counts
/// everything found and holds no matches (`matches` is the sink's to fill).
pub fn run(
    repo: &Repo,
    req: &GrepRequest,
    cancel: &Cancel,
    sink: GrepSink<'_>,
) -> Result<GrepReport, Error> {
    let files = match &req.stdin {
        Some(_) => super::input::Files {
            lang: req.input.language(repo)?,
            ..Default::default()
        },
        // Through the result cache, git's `status` may tell what changed.
        None => req
            .input
            .files_asking(repo, req.cache.settings(repo).is_some())?,
    };
    let mut report = match sink {
        GrepSink::Files(sink) => search(repo, req, &files, cancel, None, |shown| match shown {
            Shown::Matches(file) => sink(file),
            // No encoder, no rows.
            Shown::Rows(_) => Ok(()),
        })?,
        GrepSink::Rows(encode, sink) => {
            search(
                repo,
                req,
                &files,
                cancel,
                Some(encode),
                |shown| match shown {
                    Shown::Rows(rows) => sink(rows),
                    // Every file is encoded when there is an encoder.
                    Shown::Matches(_) => Ok(()),
                },
            )?
        }
    };
    report.diagnostics.warnings.extend(files.warnings);
    Ok(report)
}

/// One file's shown part, as [`search`] hands it on.
enum Shown<'a> {
    Matches(GrepFile<'a>),
    /// The shown rows.
    Rows(&'a [String]),
}

/// What the workers hand on of a file with matches.
enum Prepared {
    Hits(crate::grep::FileHits),
    /// Every match, encoded.
    Rows(Vec<String>),
    /// Every match, encoded and set aside on disk until the file's turn.
    Spilled(SpilledRows),
    /// Nothing: the cap was reached before the file was searched, so none of its
    /// matches will be shown (they are counted).
    Counted,
}

/// A file's encoded rows kept in an unnamed temporary file until the file's turn.
///
/// Large files are searched first (their trees are the largest part of the memory),
/// so in path order their rows wait longest: an 11 MB sympy test file's JSON rows
/// waited for most of a search of the py corpus. On disk they cost page cache, not
/// this process's memory, and the output's size stops mattering to the peak.
struct SpilledRows {
    file: std::fs::File,
    /// Where each row ends in `file`.
    ends: Vec<u64>,
}

/// Rows of a file above this many bytes wait on disk.
const SPILL_BYTES: usize = 4 << 20;

/// How many rows [`SpilledRows::read`] hands on at once.
const READ_BATCH: usize = 1024;

impl SpilledRows {
    /// `rows` written to a temporary file when they are many bytes; `None` when they
    /// are few, or the file cannot be written (then they stay in memory).
    fn spill(rows: &[String]) -> Option<SpilledRows> {
        let bytes: usize = rows.iter().map(String::len).sum();
        if bytes < SPILL_BYTES {
            return None;
        }
        let file = tempfile::tempfile().ok()?;
        let mut out = std::io::BufWriter::new(file);
        let mut ends = Vec::with_capacity(rows.len());
        let mut at = 0u64;
        for row in rows {
            std::io::Write::write_all(&mut out, row.as_bytes()).ok()?;
            at += row.len() as u64;
            ends.push(at);
        }
        let file = out.into_inner().ok()?;
        Some(SpilledRows { file, ends })
    }

    /// Reads rows `range` back, handing them to `sink` a batch at a time.
    fn read(
        &self,
        range: std::ops::Range<usize>,
        mut sink: impl FnMut(&[String]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        use std::io::Read as _;
        use std::io::Seek as _;
        let failed = |source| crate::error::InputError {
            action: "read back",
            path: "the search's temporary file".into(),
            source,
        };
        let start = range.start.checked_sub(1).map_or(0, |i| self.ends[i]);
        let mut file = &self.file;
        file.seek(std::io::SeekFrom::Start(start)).map_err(failed)?;
        let mut input = std::io::BufReader::new(file);
        let mut at = start;
        let mut batch = Vec::with_capacity(READ_BATCH.min(range.len()));
        for &end in &self.ends[range] {
            let mut row = vec![0u8; (end - at) as usize];
            input.read_exact(&mut row).map_err(failed)?;
            at = end;
            // Written from a String just before.
            let row = String::from_utf8(row)
                .map_err(|e| failed(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
            batch.push(row);
            if batch.len() == READ_BATCH {
                sink(&batch)?;
                batch.clear();
            }
        }
        if !batch.is_empty() {
            sink(&batch)?;
        }
        Ok(())
    }
}

fn search(
    repo: &Repo,
    req: &GrepRequest,
    files: &super::input::Files,
    cancel: &Cancel,
    encode: Option<EncodeRow>,
    mut sink: impl FnMut(Shown<'_>) -> Result<(), Error>,
) -> Result<GrepReport, Error> {
    let context = Context {
        before: req.before,
        after: req.after,
    };
    let cap = match req.max_count {
        0 => usize::MAX,
        n => n,
    };
    let mut skip = req.offset;
    let mut shown = 0usize;
    // Set once `cap` matches were shown: later files are only counted, so the workers
    // drop their matches instead of keeping them until their turn.
    let cap_reached = std::sync::atomic::AtomicBool::new(false);
    let mut failed: Option<Error> = None;
    let cache = req.cache.settings(repo);
    let opts = crate::grep::Options {
        forced_lang: files.lang,
        max_file_size: req.input.max_file_size,
        keep: crate::grep::Keep {
            text: req.text,
            source: !context.is_empty() || req.keep_lines,
            order: req.order,
        },
        cancel,
        query: &crate::rewrite::QueryOptions {
            selector: req.selector.clone(),
            strictness: req.strictness,
            rewrite: req.rewrite.clone(),
        },
        cache: cache.as_ref(),
        lines: files.lines.as_ref(),
    };
    let display = repo.path_display();
    let show_path = |path: &str| match (&req.stdin, req.paths) {
        (Some(_), _) | (None, Paths::Repo) => path.to_string(),
        (None, Paths::Display) => display.show(path),
    };
    let prepare = |hits: crate::grep::FileHits| {
        if cap_reached.load(std::sync::atomic::Ordering::Relaxed) {
            return Prepared::Counted;
        }
        let Some(encode) = encode else {
            return Prepared::Hits(hits);
        };
        let crate::grep::FileHits {
            path,
            lang,
            matches,
            source,
        } = hits;
        let file = GrepFile {
            path: show_path(&path),
            lang,
            matches: &[],
            lines: Lines::new(source.as_deref().unwrap_or("")),
            context,
        };
        // Each match is dropped once encoded: the file never holds both in full.
        let rows: Vec<String> = matches.into_iter().map(|m| encode(&file, &m)).collect();
        match SpilledRows::spill(&rows) {
            Some(spilled) => Prepared::Spilled(spilled),
            None => Prepared::Rows(rows),
        }
    };
    let mut on_file = |found: crate::grep::Found<Prepared>| {
        let passed = skip.min(found.count);
        skip -= passed;
        let take = (found.count - passed).min(cap - shown);
        if take == 0 {
            // Counted, not shown: past the cap (or before the offset).
            return true;
        }
        shown += take;
        if shown >= cap {
            cap_reached.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        if let Prepared::Spilled(spilled) = &found.file {
            // Read back in batches: the file's rows are never all in memory again.
            let sent = spilled.read(passed..passed + take, |rows| sink(Shown::Rows(rows)));
            return match sent {
                Ok(()) => true,
                Err(e) => {
                    failed = Some(e);
                    false
                }
            };
        }
        let handed = match &found.file {
            Prepared::Hits(file) => Shown::Matches(GrepFile {
                path: show_path(&file.path),
                lang: file.lang,
                matches: &file.matches[passed..passed + take],
                lines: Lines::new(file.source.as_deref().unwrap_or("")),
                context,
            }),
            Prepared::Rows(rows) => Shown::Rows(&rows[passed..passed + take]),
            // The cap is never reached before a file that still shows something;
            // spilled rows went above.
            Prepared::Counted | Prepared::Spilled(_) => return true,
        };
        match sink(handed) {
            Ok(()) => true,
            Err(e) => {
                // The reader left (or the disk is full): stop searching.
                failed = Some(e);
                false
            }
        }
    };
    let found = match (&req.stdin, files.lang) {
        (Some(text), Some(lang)) => crate::grep::grep_text(
            STDIN_NAME,
            text.clone(),
            lang,
            &req.pattern,
            &opts,
            |hits| {
                on_file(crate::grep::Found {
                    count: hits.matches.len(),
                    file: prepare(hits),
                })
            },
        )?,
        (Some(_), None) => {
            return Err(crate::error::UsageError(
                "--stdin needs the language of the text: add -l LANG".into(),
            )
            .into())
        }
        (None, _) => {
            crate::grep::grep(repo, &files.set, &req.pattern, &opts, prepare, &mut on_file)?
        }
    };
    if let Some(e) = failed {
        return Err(e);
    }
    // A partial search must not pass for a whole one.
    cancel.check()?;
    Ok(report(repo, req, files, found, shown))
}

/// The report of a search that found `found` and showed `shown` matches.
fn report(
    repo: &Repo,
    req: &GrepRequest,
    files: &super::input::Files,
    found: crate::grep::GrepSummary,
    shown: usize,
) -> GrepReport {
    let mut diagnostics = Diagnostics::of(
        &found.skipped_languages,
        &found.parse_errors,
        &found.skipped,
        |p| req.paths.show(repo, p),
    );
    diagnostics.say_languages(&super::notcode::worth_saying(
        &files.set,
        &found.skipped_languages,
        req.verbose,
    ));
    GrepReport {
        schema_version: Version,
        pattern: req.pattern.clone(),
        matches: Vec::new(),
        total: found.total,
        shown,
        capped: req.offset + shown < found.total,
        files_searched: found.files_searched,
        files_matched: found.files_matched,
        diagnostics,
        max_count: req.max_count,
    }
}
