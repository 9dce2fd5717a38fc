/*!
Structural search over a file set: compile the pattern once per language, skip files
whose text lacks the pattern's literal before parsing them, search in parallel, and
return the hits in path order (the same on every run).
*/

use std::collections::BTreeMap;

use ast_grep_language::SupportLang;

use crate::error::Classify;
use crate::error::Exit;
use crate::files;
use crate::files::FileSet;
use crate::files::Loaded;
use crate::repo::Repo;
use crate::rewrite;
use crate::rewrite::Match;
use crate::rewrite::MatchText;
use crate::rewrite::Query;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Pattern(#[from] rewrite::Error),
    #[error("pattern '{pattern}' does not parse as any language searched ({langs})")]
    ParsesNowhere { pattern: String, langs: String },
}

impl Classify for Error {
    fn code(&self) -> &'static str {
        match self {
            Error::Pattern(e) => e.code(),
            Error::ParsesNowhere { .. } => "bad-pattern",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            Error::Pattern(e) => e.exit(),
            Error::ParsesNowhere { .. } => Exit::BadInput,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            Error::Pattern(e) => e.hint(),
            Error::ParsesNowhere { .. } => Some(
                "a pattern must be valid code in the file's language; force one with -l LANG"
                    .to_string(),
            ),
        }
    }
}

/// The matches of one file.
#[derive(Debug, Clone)]
pub struct FileHits {
    pub path: String,
    pub lang: SupportLang,
    pub matches: Vec<Match>,
}

/// Everything a search found and skipped.
#[derive(Debug, Default)]
pub struct GrepOutcome {
    pub files: Vec<FileHits>,
    /// Matches found in all, before any cap.
    pub total: usize,
    /// Files read and considered.
    pub files_searched: usize,
    pub skipped: files::Skipped,
    /// Paths of files that parsed with errors (searched anyway).
    pub parse_errors: Vec<String>,
    /// Languages the pattern does not parse as: (language, reason). Their files were skipped.
    pub skipped_languages: Vec<(String, String)>,
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
    langs: impl IntoIterator<Item = SupportLang>,
    compile: impl Fn(SupportLang) -> Result<T, rewrite::Error>,
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

/// Searches every file of `set` for `pattern`, in parallel, handing each file with
/// matches to `sink` in path order as soon as it is next (memory stays bounded).
/// `sink` returning `false` stops the search (e.g. the reader of the output left);
/// the summary then counts what was searched until then.
pub fn grep_each(
    repo: &Repo,
    set: &FileSet,
    pattern: &str,
    forced_lang: Option<SupportLang>,
    max_file_size: u64,
    keep_text: MatchText,
    mut sink: impl FnMut(FileHits) -> bool,
) -> Result<GrepSummary, Error> {
    let langs = set.files.iter().map(|f| f.lang).chain(forced_lang);
    let PerLanguage {
        compiled: queries,
        skipped: skipped_languages,
    } = compile_per_language(pattern, langs, |lang| {
        Query::for_language(pattern, lang, forced_lang)
    })?;

    enum One {
        Searched(Option<FileHits>, bool),
        Skipped(files::SkipReason),
        NoLanguage,
    }
    let workdir = repo.workdir.as_path();
    let mut out = GrepSummary {
        skipped: set.skipped.clone(),
        skipped_languages,
        ..Default::default()
    };
    crate::pipeline::map_sized(
        &set.files,
        |f| f.size_hint,
        |file| {
            let Some(query) = queries.get(&file.lang.to_string()) else {
                return One::NoLanguage;
            };
            let text = match files::load(workdir, &file.path, max_file_size) {
                Loaded::Text(t, _) => t,
                Loaded::Skipped(r) => return One::Skipped(r),
            };
            if !query.may_match(&text) {
                return One::Searched(None, false);
            }
            let found = query.find_owned(text, keep_text);
            let hits = (!found.matches.is_empty()).then(|| FileHits {
                path: file.path.clone(),
                lang: file.lang,
                matches: found.matches,
            });
            One::Searched(hits, found.has_parse_error)
        },
        crate::pipeline::Delivery::InOrder,
        |i, one| {
            let file = &set.files[i];
            match one {
                One::Searched(hits, parse_error) => {
                    out.files_searched += 1;
                    if parse_error {
                        out.parse_errors.push(file.path.clone());
                    }
                    if let Some(hits) = hits {
                        out.total += hits.matches.len();
                        out.files_matched += 1;
                        return sink(hits);
                    }
                }
                One::Skipped(reason) => out.skipped.add(reason, &file.path),
                One::NoLanguage => {}
            }
            true
        },
    );
    Ok(out)
}

/// Like [`grep_each`], collecting every file's matches with their captures.
pub fn grep(
    repo: &Repo,
    set: &FileSet,
    pattern: &str,
    forced_lang: Option<SupportLang>,
    max_file_size: u64,
) -> Result<GrepOutcome, Error> {
    let mut files = Vec::new();
    let summary = grep_each(
        repo,
        set,
        pattern,
        forced_lang,
        max_file_size,
        MatchText::WithCaptures,
        |hits| {
            files.push(hits);
            true
        },
    )?;
    Ok(GrepOutcome {
        files,
        total: summary.total,
        files_searched: summary.files_searched,
        skipped: summary.skipped,
        parse_errors: summary.parse_errors,
        skipped_languages: summary.skipped_languages,
    })
}
