/*!
Which files a command works on: the work tree as git sees it (tracked files plus
untracked files that are not ignored), narrowed by git pathspecs, each with a language.

Files that cannot be worked on are skipped and *counted* by reason, never dropped
silently: the caller reports the counts.
*/

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

use ast_grep_language::Language;
use ast_grep_language::SupportLang;
use gix::dir::entry::Kind;
use gix::dir::entry::Status;

use crate::change::FileMode;
use crate::error::Classify;
use crate::error::Exit;
use crate::repo::Repo;

/// Files larger than this are skipped unless the caller raises the limit.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 4 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot list the files of the work tree")]
    Walk(#[source] Box<gix::Error>),
    #[error("cannot read the index")]
    Index(#[source] Box<gix::Error>),
    #[error("unknown language '{0}'")]
    UnknownLanguage(String),
    #[error("bad pathspec")]
    Pathspec(#[source] crate::repo::Error),
}

impl Classify for Error {
    fn code(&self) -> &'static str {
        match self {
            Error::Walk(_) => "file-walk",
            Error::Index(_) => "index",
            Error::UnknownLanguage(_) => "unknown-language",
            Error::Pathspec(e) => e.code(),
        }
    }
    fn exit(&self) -> Exit {
        match self {
            Error::UnknownLanguage(_) => Exit::BadInput,
            // gix reports bad pathspecs through the walk.
            Error::Walk(_) => Exit::BadInput,
            Error::Index(_) => Exit::Internal,
            Error::Pathspec(e) => e.exit(),
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            Error::UnknownLanguage(_) => Some(format!("known languages: {}", language_names())),
            _ => None,
        }
    }
}

/// Why a file was not searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkipReason {
    Binary,
    NonUtf8,
    TooLarge,
    Symlink,
    Submodule,
    NonUtf8Path,
    Unreadable,
    /// No language for the extension (only counted, not reported as a warning).
    NoLanguage,
}

impl SkipReason {
    pub fn describe(self) -> &'static str {
        match self {
            SkipReason::Binary => "binary",
            SkipReason::NonUtf8 => "not UTF-8",
            SkipReason::TooLarge => "over the size limit",
            SkipReason::Symlink => "symlinks",
            SkipReason::Submodule => "submodules",
            SkipReason::NonUtf8Path => "non-UTF-8 paths",
            SkipReason::Unreadable => "unreadable",
            SkipReason::NoLanguage => "no known language",
        }
    }
}

/// Skipped files by reason, with the first few paths of each.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Skipped {
    pub counts: BTreeMap<SkipReason, usize>,
    #[serde(skip)]
    pub examples: BTreeMap<SkipReason, Vec<String>>,
}

impl Skipped {
    pub fn add(&mut self, reason: SkipReason, path: &str) {
        *self.counts.entry(reason).or_default() += 1;
        // The first three paths by name, whatever order the files are seen in.
        let ex = self.examples.entry(reason).or_default();
        if ex.len() < 3 || ex.last().is_some_and(|last| path < last.as_str()) {
            let at = ex.partition_point(|p| p.as_str() < path);
            ex.insert(at, path.to_string());
            ex.truncate(3);
        }
    }
    pub fn merge(&mut self, other: Skipped) {
        for (r, n) in other.counts {
            *self.counts.entry(r).or_default() += n;
        }
        for (r, ex) in other.examples {
            let mine = self.examples.entry(r).or_default();
            for p in ex {
                if mine.len() < 3 {
                    mine.push(p);
                }
            }
        }
    }
    /// One human line such as `skipped 2 binary, 1 symlinks`, ignoring files that just
    /// have no language; `None` when nothing worth saying was skipped.
    pub fn summary(&self) -> Option<String> {
        let parts: Vec<String> = self
            .counts
            .iter()
            .filter(|(r, _)| **r != SkipReason::NoLanguage)
            .map(|(r, n)| {
                let ex = self
                    .examples
                    .get(r)
                    .map(|e| e.join(", "))
                    .unwrap_or_default();
                format!(
                    "{n} {} ({ex}{})",
                    r.describe(),
                    if *n > 3 { ", …" } else { "" }
                )
            })
            .collect();
        (!parts.is_empty()).then(|| format!("skipped {}", parts.join("; ")))
    }
}

/// Options for collecting files.
#[derive(Debug, Clone)]
pub struct Options {
    /// Git pathspecs as the user typed them (relative to the current folder).
    pub pathspecs: Vec<String>,
    /// Only files of this language (by extension), plus files named exactly by a
    /// pathspec, which are parsed as this language whatever their extension.
    pub lang: Option<SupportLang>,
    pub max_file_size: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            pathspecs: Vec::new(),
            lang: None,
            max_file_size: DEFAULT_MAX_FILE_SIZE,
        }
    }
}

/// A file to work on.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Repository path.
    pub path: String,
    pub lang: SupportLang,
    /// The size the index recorded (the file's size when untracked): a hint for
    /// scheduling only.
    pub size_hint: u64,
}

/// The files to work on, sorted by path, and what was skipped.
#[derive(Debug, Default)]
pub struct FileSet {
    pub files: Vec<Candidate>,
    pub skipped: Skipped,
}

/// Parses a language name or alias (`ts`, `python`, `rs`, …).
pub fn parse_language(name: &str) -> Result<SupportLang, Error> {
    name.parse::<SupportLang>()
        .map_err(|_| Error::UnknownLanguage(name.to_string()))
}

/// The languages we know, for error hints.
pub fn language_names() -> String {
    SupportLang::all_langs()
        .iter()
        .map(|l| l.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The language of a path by its extension (case-insensitively, unlike ast-grep).
pub fn language_of(path: &str) -> Option<SupportLang> {
    let p = std::path::Path::new(path);
    if let Some(l) = SupportLang::from_path(p) {
        return Some(l);
    }
    let lower = path.to_ascii_lowercase();
    SupportLang::from_path(std::path::Path::new(&lower))
}

/// Lists the work tree's files (tracked + untracked-not-ignored) matching the pathspecs.
/// With no pathspec, like `git grep`, only the current folder and below are listed.
pub fn collect(repo: &Repo, opts: &Options) -> Result<FileSet, Error> {
    let git = &repo.git;
    let index = git
        .index_or_empty()
        .map_err(|e| Error::Index(Box::new(e)))?;
    let walk_opts = git
        .dirwalk_options()
        .map_err(|e| Error::Walk(Box::new(e)))?
        .emit_tracked(true)
        .emit_untracked(gix::dir::walk::EmissionMode::Matching)
        .emit_ignored(None)
        .empty_patterns_match_prefix(true);
    // Make every plain pathspec relative to the top ourselves, and walk once per positive
    // spec (each with all exclusions): gix's walk loses specs that climb above the current
    // folder (`../../x`) when several are given.
    let mut positive: Vec<String> = Vec::new();
    let mut negative: Vec<String> = Vec::new();
    let mut named: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for spec in &opts.pathspecs {
        if spec.starts_with(":!") || spec.starts_with(":^") || spec.starts_with(":(exclude") {
            negative.push(spec.clone());
        } else if spec.starts_with(':') {
            positive.push(spec.clone());
        } else {
            let top = repo.repo_path_from_arg(spec).map_err(Error::Pathspec)?;
            named.insert(top.clone());
            positive.push(if top.is_empty() {
                ":/".to_string()
            } else {
                format!(":(top){top}")
            });
        }
    }
    let walks: Vec<Vec<String>> = if positive.is_empty() {
        vec![negative.clone()]
    } else {
        positive
            .into_iter()
            .map(|p| std::iter::once(p).chain(negative.iter().cloned()).collect())
            .collect()
    };
    let mut entries: BTreeMap<gix::bstr::BString, gix::dir::Entry> = BTreeMap::new();
    for specs in walks {
        let interrupt = AtomicBool::new(false);
        let mut collect = gix::dir::walk::delegate::Collect::default();
        git.dirwalk(
            &index,
            specs.iter().map(|s| gix::bstr::BString::from(s.as_str())),
            &interrupt,
            walk_opts,
            &mut collect,
        )
        .map_err(|e| Error::Walk(Box::new(e)))?;
        for (entry, _) in collect.unorded_entries {
            entries.entry(entry.rela_path.clone()).or_insert(entry);
        }
    }

    let mut set = FileSet::default();
    for entry in entries.into_values() {
        if !matches!(entry.status, Status::Tracked | Status::Untracked) {
            continue;
        }
        let Ok(path) = std::str::from_utf8(entry.rela_path.as_ref()) else {
            set.skipped
                .add(SkipReason::NonUtf8Path, &entry.rela_path.to_string());
            continue;
        };
        match entry.disk_kind {
            Some(Kind::File) => {}
            Some(Kind::Symlink) => {
                set.skipped.add(SkipReason::Symlink, path);
                continue;
            }
            Some(Kind::Repository) => {
                set.skipped.add(SkipReason::Submodule, path);
                continue;
            }
            // Tracked but deleted from disk, folders, fifos: nothing to read.
            _ => continue,
        }
        let by_extension = language_of(path);
        let lang = match (opts.lang, by_extension) {
            (Some(forced), _) if named.contains(path) => forced,
            (Some(forced), Some(l)) if l == forced => l,
            // Another language's file: not part of a `-l` search.
            (Some(_), _) => continue,
            (None, Some(l)) => l,
            (None, None) => {
                set.skipped.add(SkipReason::NoLanguage, path);
                continue;
            }
        };
        let size_hint = match index.entry_by_path(path.into()) {
            Some(e) => u64::from(e.stat.size),
            None => std::fs::metadata(repo.workdir.join(path)).map_or(0, |m| m.len()),
        };
        set.files.push(Candidate {
            path: path.to_string(),
            lang,
            size_hint,
        });
    }
    Ok(set)
}

/// A file's text, or why it was skipped.
pub enum Loaded {
    Text(String, FileMode),
    Skipped(SkipReason),
}

/// Reads a candidate once, checking size, binary content and UTF-8.
pub fn load(workdir: &std::path::Path, path: &str, max_file_size: u64) -> Loaded {
    let abs = workdir.join(path);
    let meta = match std::fs::symlink_metadata(&abs) {
        Ok(m) => m,
        Err(_) => return Loaded::Skipped(SkipReason::Unreadable),
    };
    if meta.file_type().is_symlink() {
        return Loaded::Skipped(SkipReason::Symlink);
    }
    if meta.len() > max_file_size {
        return Loaded::Skipped(SkipReason::TooLarge);
    }
    let bytes = match std::fs::read(&abs) {
        Ok(b) => b,
        Err(_) => return Loaded::Skipped(SkipReason::Unreadable),
    };
    classify_bytes(bytes, FileMode::from_metadata(&meta))
}

/// Decides whether bytes are text we can work on.
pub fn classify_bytes(bytes: Vec<u8>, mode: FileMode) -> Loaded {
    // Like git: a NUL byte in the first 8000 bytes means binary.
    let head = &bytes[..bytes.len().min(8000)];
    if memchr::memchr(0, head).is_some() {
        return Loaded::Skipped(SkipReason::Binary);
    }
    match String::from_utf8(bytes) {
        Ok(s) => Loaded::Text(s, mode),
        Err(_) => Loaded::Skipped(SkipReason::NonUtf8),
    }
}
