//! `grep` (and the `ast_grep` tool): structural search, streamed.
//!
//! The search hands each file's shown matches to a sink as soon as it is that file's
//! turn, and keeps only the totals: a search with half a million matches holds one
//! file at a time (issue 26). What the front end does with a file (print its lines,
//! keep its JSON rows, keep rows within a byte budget) is the sink's business.

use ast_grep_language::SupportLang;

use crate::cancel::Cancel;
use crate::files::FileSet;
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
pub struct GrepRequest<'a> {
    pub set: &'a FileSet,
    pub pattern: String,
    /// Parse every file as this language.
    pub lang: Option<SupportLang>,
    pub max_file_size: u64,
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
    /// The result cache to use.
    pub cache: super::cache::CacheChoice,
}

/// Searches `req.set`, handing each file's shown matches to `sink` as it comes; an
/// error from the sink stops the search and is returned. The report counts
/// everything found and holds no matches (`matches` is the sink's to fill).
pub fn run(
    repo: &Repo,
    req: &GrepRequest<'_>,
    cancel: &Cancel,
    mut sink: impl FnMut(GrepFile<'_>) -> Result<(), Error>,
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
    let mut failed: Option<Error> = None;
    let cache = req.cache.settings(repo);
    let opts = crate::grep::Options {
        forced_lang: req.lang,
        max_file_size: req.max_file_size,
        keep: crate::grep::Keep {
            text: req.text,
            source: !context.is_empty(),
            order: req.order,
        },
        cancel,
        cache: cache.as_ref(),
    };
    let found = crate::grep::grep(repo, req.set, &req.pattern, &opts, |file| {
        let passed = skip.min(file.matches.len());
        skip -= passed;
        let take = (file.matches.len() - passed).min(cap - shown);
        if take == 0 {
            // Counted, not shown: past the cap (or before the offset).
            return true;
        }
        shown += take;
        let handed = GrepFile {
            path: req.paths.show(repo, &file.path),
            lang: file.lang,
            matches: &file.matches[passed..passed + take],
            lines: Lines::new(file.source.as_deref().unwrap_or("")),
            context,
        };
        match sink(handed) {
            Ok(()) => true,
            Err(e) => {
                // The reader left (or the disk is full): stop searching.
                failed = Some(e);
                false
            }
        }
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    // A partial search must not pass for a whole one.
    cancel.check()?;
    Ok(GrepReport {
        schema_version: Version,
        pattern: req.pattern.clone(),
        matches: Vec::new(),
        total: found.total,
        shown,
        capped: req.offset + shown < found.total,
        files_searched: found.files_searched,
        files_matched: found.files_matched,
        diagnostics: Diagnostics::of(
            &found.skipped_languages,
            &found.parse_errors,
            &found.skipped,
            |p| req.paths.show(repo, p),
        ),
        max_count: req.max_count,
    })
}
