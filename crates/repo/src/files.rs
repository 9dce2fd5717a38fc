/*!
Which files a command works on: the work tree as git sees it (tracked files plus
untracked files that are not ignored), narrowed by git pathspecs, each with a language.

Files that cannot be worked on are skipped and *counted* by reason, never dropped
silently: the caller reports the counts.
*/

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

use crate::lang::Lang;
use gix::dir::entry::Kind;
use gix::dir::entry::Status;

use crate::change::FileMode;
use crate::repo::Repo;

mod error;
mod load;
mod pathspec;
mod remembered;

pub use error::check_max_file_size;
pub use error::Error;
pub use load::classify_bytes;
pub use load::load;
pub use load::load_cached;
pub use load::read_named;
pub use load::Blobs;
pub use load::CachedLoad;
pub use load::Loaded;
pub use pathspec::index_specs;
pub use pathspec::pathspec_search;
pub use pathspec::select_paths;
pub use pathspec::unmatched_in_index;
pub use pathspec::Pathspecs;
pub use remembered::collect_remembered;
use remembered::Witness;

/// Files larger than this are skipped unless the caller raises the limit.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 4 * 1024 * 1024;

/// The most `--max-filesize` may be raised to. A parse tree takes about 70 times its
/// file's size, so a 200 MB file needs some 14 GB (24 GB were seen before the kernel
/// killed the process): 64 MiB keeps one parse near 4.5 GB.
pub const MAX_FILE_SIZE_CEILING: u64 = 64 * 1024 * 1024;

/// Why a file was not searched.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
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
    pub lang: Option<Lang>,
    pub max_file_size: u64,
    /// A project's `languageGlobs`, taken before extensions.
    pub language_globs: LanguageGlobs,
    /// `--globs`: ast-grep's include/exclude globs, on top of the pathspecs.
    pub globs: PathGlobs,
    /// `--no-ignore`: files git ignores are listed too.
    pub no_ignore: bool,
    /// The files' contents are looked up in the result cache: where git keeps an
    /// untracked cache or fsmonitor, ask its `status` what changed instead of walking
    /// (see `cache::status`).
    pub ask_git: bool,
    /// With `ask_git`: git's answer, when the caller asked already (its memo of the
    /// whole answer needs it first, and may ask where a listing would not).
    pub asked: Option<std::sync::Arc<crate::cache::status::Changes>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            pathspecs: Vec::new(),
            lang: None,
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            language_globs: LanguageGlobs::default(),
            globs: PathGlobs::default(),
            no_ignore: false,
            ask_git: false,
            asked: None,
        }
    }
}

impl Options {
    /// The set a listing by these options starts from (its pathspecs and the project's
    /// injections, no file yet), and with `-l` the languages whose files may embed it.
    fn empty_set(&self) -> (FileSet, Vec<Lang>) {
        let set = FileSet {
            pathspecs: self.pathspecs.clone(),
            injections: self.language_globs.injections.clone(),
            ..FileSet::default()
        };
        let hosts = self.lang.map_or_else(Vec::new, |l| {
            crate::lang::Injection::hosts_of(l, &self.language_globs.injections)
        });
        (set, hosts)
    }
}

/// ast-grep's `--globs`: gitignore-style globs that include a path or, after `!`,
/// exclude it. The last glob matching a path decides; when any glob includes, a path
/// no glob matches is left out. A glob without a `/` matches a name at any depth; one
/// with a `/` is relative to the folder the command runs in.
#[derive(Debug, Clone, Default)]
pub struct PathGlobs {
    /// (matcher, includes) in the order given.
    globs: Vec<(globset::GlobSet, bool)>,
    any_include: bool,
}

impl PathGlobs {
    /// `prefix`: the current folder as a repository path (`src/` or empty), which
    /// anchored globs are relative to.
    pub fn new(globs: &[String], prefix: &str) -> Result<PathGlobs, Error> {
        let mut out = PathGlobs::default();
        for text in globs {
            let (include, body) = match text.strip_prefix('!') {
                Some(rest) => (false, rest),
                None => (true, text.as_str()),
            };
            let body = body.trim_end_matches('/');
            let anchored = body.contains('/');
            let base = if anchored {
                format!("{prefix}{}", body.trim_start_matches('/'))
            } else {
                format!("**/{body}")
            };
            let mut set = globset::GlobSetBuilder::new();
            // The path itself, or anything under it (a folder's glob).
            for glob in [base.clone(), format!("{base}/**")] {
                let built = globset::GlobBuilder::new(&glob)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| Error::BadGlob(text.clone(), e.to_string()))?;
                set.add(built);
            }
            let set = set
                .build()
                .map_err(|e| Error::BadGlob(text.clone(), e.to_string()))?;
            out.any_include |= include;
            out.globs.push((set, include));
        }
        Ok(out)
    }

    /// Whether the repository path `path` is kept.
    pub fn selects(&self, path: &str) -> bool {
        match self.globs.iter().rev().find(|(set, _)| set.is_match(path)) {
            Some((_, include)) => *include,
            None => !self.any_include,
        }
    }
}

/// An ast-grep project's `languageGlobs`: a path matching one of a language's globs
/// is that language, whatever its extension (`*.blk` as C, `*.js` as TypeScript);
/// other paths get theirs by extension. Globs match the repository path; `*` crosses
/// folders, so `*.blk` matches `src/a.blk`.
#[derive(Debug, Clone, Default)]
pub struct LanguageGlobs {
    by_language: Vec<(Lang, globset::GlobSet)>,
    /// The project's `languageInjections` (where code of one language sits inside
    /// another's files), for `grep` and `edit`.
    pub injections: std::sync::Arc<Vec<crate::lang::Injection>>,
}

impl LanguageGlobs {
    /// From (language name, globs) pairs, in the order given; the first language
    /// whose glob matches wins. The error names the language or glob at fault.
    pub fn new<'a>(
        entries: impl IntoIterator<Item = (&'a str, Vec<String>)>,
    ) -> Result<LanguageGlobs, String> {
        let mut by_language = Vec::new();
        for (name, globs) in entries {
            let lang = parse_language(name).map_err(|e| e.to_string())?;
            let mut set = globset::GlobSetBuilder::new();
            for glob in &globs {
                set.add(globset::Glob::new(glob).map_err(|e| format!("{name}: {e}"))?);
            }
            by_language.push((lang, set.build().map_err(|e| format!("{name}: {e}"))?));
        }
        Ok(LanguageGlobs {
            by_language,
            injections: Default::default(),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.by_language.is_empty()
    }

    /// The language of `path`: by glob first, then by extension.
    pub fn language_of(&self, path: &str) -> Option<Lang> {
        self.by_language
            .iter()
            .find(|(_, set)| set.is_match(path))
            .map(|(lang, _)| *lang)
            .or_else(|| language_of(path))
    }
}

/// A file to work on.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Repository path.
    pub path: String,
    pub lang: Lang,
    /// The size the index recorded (the file's size when untracked): a hint for
    /// scheduling only.
    pub size_hint: u64,
    /// Its index entry, when that entry's id may name the file's bytes while its stat
    /// data match (the result cache's key, without reading the file).
    pub tracked: Option<crate::cache::IndexStat>,
    /// The blob read instead of the work-tree file, and its mode: the staged content
    /// ([`collect_index`], `--cached`).
    pub blob: Option<(gix::ObjectId, FileMode)>,
}

/// The files to work on, sorted by path, and what was skipped.
#[derive(Debug, Default, Clone)]
pub struct FileSet {
    pub files: Vec<Candidate>,
    /// With a language asked for (`-l`): files of other languages that may embed code
    /// of it (HTML's `<script>`, a project's `languageInjections`), each with its own
    /// language. Searched only where they embed it.
    pub hosts: Vec<Candidate>,
    /// The project's `languageInjections`.
    pub injections: std::sync::Arc<Vec<crate::lang::Injection>>,
    pub skipped: Skipped,
    /// The pathspecs it was collected by, as typed (a refresh re-collects by them).
    pub pathspecs: Vec<String>,
    /// Listed from the index and git's `status` answer (not walked): what of the index
    /// the listing read.
    pub by_git: Option<ByGit>,
}

/// What a listing through git's `status` read of the index (see
/// `crate::cache::memo`).
#[derive(Debug, Clone)]
pub struct ByGit {
    /// The index's checksum, as read.
    pub index: Option<Vec<u8>>,
    /// The folders where a `.gitattributes` would be read, none holding one; `None`
    /// when a file's bytes may differ from its blob (see `crate::cache::IndexTrust`),
    /// or the index has a submodule (git's answer does not say whether it is checked
    /// out): no memo of the answer then.
    pub folders: Option<Vec<gix::bstr::BString>>,
}

impl FileSet {
    /// The files to work on with `-l` (`with_hosts`): the files of the language and
    /// those that embed it, in path order; otherwise the files alone.
    pub fn with_hosts(&self, with_hosts: bool) -> std::borrow::Cow<'_, [Candidate]> {
        if !with_hosts || self.hosts.is_empty() {
            return std::borrow::Cow::Borrowed(&self.files);
        }
        let mut all: Vec<Candidate> = self.files.iter().chain(&self.hosts).cloned().collect();
        all.sort_by(|a, b| a.path.cmp(&b.path));
        std::borrow::Cow::Owned(all)
    }
}

/// Parses a language name or alias (`ts`, `python`, `rs`, …).
pub fn parse_language(name: &str) -> Result<Lang, Error> {
    name.parse::<Lang>()
        .map_err(|_| Error::UnknownLanguage(name.to_string()))
}

/// The known language a mistyped `name` is near enough to be meant (`javscript`:
/// JavaScript), by edit distance, ignoring case.
pub fn closest_language(name: &str) -> Option<String> {
    let typed = name.to_ascii_lowercase();
    Lang::all_langs()
        .iter()
        .map(|l| l.to_string())
        .map(|known| {
            let d = crate::text::edit_distance(&typed, &known.to_ascii_lowercase());
            (d, known)
        })
        .filter(|(d, known)| *d <= 2 && d * 3 <= known.len())
        .min()
        .map(|(_, known)| known)
}

/// The languages we know, for error hints.
pub fn language_names() -> String {
    Lang::all_langs()
        .iter()
        .map(|l| l.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The language of a path by its extension (case-insensitively, unlike ast-grep).
pub fn language_of(path: &str) -> Option<Lang> {
    let p = std::path::Path::new(path);
    if let Some(l) = Lang::from_path(p) {
        return Some(l);
    }
    let lower = path.to_ascii_lowercase();
    Lang::from_path(std::path::Path::new(&lower))
}

/// Whether `GIT_LITERAL_PATHSPECS` is on (git's boolean spelling): every pathspec is
/// then an exact path, with no glob and no `:` magic.
pub fn literal_pathspecs() -> bool {
    std::env::var("GIT_LITERAL_PATHSPECS").is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        ) || v.trim().parse::<i64>().is_ok_and(|n| n != 0)
    })
}

/// Lists the work tree's files (tracked + untracked-not-ignored) matching the pathspecs.
/// With no pathspec, like `git grep`, only the current folder and below are listed.
/// A pathspec that matches no file at all is an error naming it
/// ([`Error::PathspecNoMatch`]).
pub fn collect(repo: &Repo, opts: &Options) -> Result<FileSet, Error> {
    collect_watched(repo, opts, None)
}

/// The walk's delegate: collects entries and, with a witness, notes each folder (and
/// its `.gitignore`) as the walk is about to enter it.
struct Watching<'w> {
    collect: gix::dir::walk::delegate::Collect,
    workdir: &'w std::path::Path,
    witness: Option<&'w mut Witness>,
}

impl gix::dir::walk::Delegate for Watching<'_> {
    fn emit(
        &mut self,
        entry: gix::dir::EntryRef<'_>,
        collapsed_directory_status: Option<Status>,
    ) -> gix::dir::walk::Action {
        self.collect.emit(entry, collapsed_directory_status)
    }

    fn can_recurse(
        &mut self,
        entry: gix::dir::EntryRef<'_>,
        for_deletion: Option<gix::dir::walk::ForDeletionMode>,
        worktree_root_is_repository: bool,
    ) -> bool {
        // The default decision, as `Collect` makes it.
        let recurse = entry.status.can_recurse(
            entry.disk_kind,
            entry.pathspec_match,
            for_deletion,
            worktree_root_is_repository,
        );
        if recurse {
            if let (Some(w), Ok(rel)) = (
                self.witness.as_deref_mut(),
                std::str::from_utf8(entry.rela_path.as_ref()),
            ) {
                let dir = self.workdir.join(rel);
                w.note(dir.join(".gitignore"));
                w.note(dir);
            }
        }
        recurse
    }
}

fn collect_watched(
    repo: &Repo,
    opts: &Options,
    witness: Option<&mut Witness>,
) -> Result<FileSet, Error> {
    check_max_file_size(opts.max_file_size)?;
    // Asked before the index is read: git refreshes it, and an entry git reports
    // unchanged is then the entry read below.
    let by_status =
        (opts.ask_git && witness.is_none() && opts.pathspecs.is_empty() && !opts.no_ignore)
            .then(|| match &opts.asked {
                Some(asked) => Some(asked.as_ref().clone()),
                None => status_changes(repo, crate::cache::status::Asking::WhereKept),
            })
            .flatten();
    let (specs, git, index) = Pathspecs::open(repo, &opts.pathspecs)?;
    let git = &git;
    let named = specs.named.clone();
    let (mut set, hosts) = opts.empty_set();
    let trust = crate::cache::IndexTrust::new(git, &index);
    let (listed, changed) = match by_status {
        Some(changes) if !index.is_sparse() => {
            let listed = listed_by_status(repo, git, &index, &changes, &mut set)?;
            // git's answer leaves submodules out (`--ignore-submodules=all`), so
            // whether one is checked out is not in it.
            let submodule = || {
                let commit = gix::index::entry::Mode::COMMIT;
                index.entries().iter().any(|e| e.mode == commit)
            };
            set.by_git = Some(ByGit {
                index: index.checksum().map(|c| c.as_slice().to_vec()),
                folders: trust
                    .unfiltered_folders()
                    .filter(|_| !submodule())
                    .map(<[_]>::to_vec),
            });
            (listed, Some(changes.tracked))
        }
        _ => {
            let entries = walk_entries(repo, git, &index, walks(specs), opts.no_ignore, witness)?;
            let listed = listed(repo, entries, opts.no_ignore, &mut set);
            (
                listed.into_iter().map(|(p, k)| (p, k, None)).collect(),
                None,
            )
        }
    };
    for (owned, disk_kind, at) in listed {
        let path = owned.as_str();
        if !opts.globs.selects(path) {
            continue;
        }
        match disk_kind {
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
        let Some((lang, host)) = search_language(opts, &named, &hosts, path, &mut set) else {
            continue;
        };
        let entry = match at {
            Some(at) => index.entries().get(at),
            None => index.entry_by_path(path.into()),
        };
        let size_hint = match entry {
            Some(e) => u64::from(e.stat.size),
            None => std::fs::metadata(repo.workdir.join(path)).map_or(0, |m| m.len()),
        };
        // git's status vouches for the entries it did not report.
        let tracked = entry.and_then(|e| match &changed {
            Some(changed) if !changed.contains(path.as_bytes()) => trust.vouched(e),
            _ => trust.entry(e),
        });
        let candidate = Candidate {
            path: owned,
            lang,
            size_hint,
            tracked,
            blob: None,
        };
        if host {
            set.hosts.push(candidate);
        } else {
            set.files.push(candidate);
        }
    }
    Ok(set)
}

/// The walks [`walk_entries`] makes for `specs`. Every plain pathspec is made relative
/// to the top, and the walk runs once per positive spec (each with all exclusions):
/// gix's walk loses specs that climb above the current folder (`../../x`) when several
/// are given. That also tells which spec matched nothing.
fn walks(specs: Pathspecs) -> Vec<(Vec<String>, Option<String>)> {
    let Pathspecs {
        positive, negative, ..
    } = specs;
    if positive.is_empty() {
        return vec![(negative, None)];
    }
    positive
        .into_iter()
        .map(|(p, typed)| {
            let specs = std::iter::once(p).chain(negative.iter().cloned()).collect();
            (specs, Some(typed))
        })
        .collect()
}

/// What `git status` says changed, where `asking` says git is asked
/// ([`crate::cache::status::ask_when`]); `None`: walk.
pub fn status_changes(
    repo: &Repo,
    asking: crate::cache::status::Asking,
) -> Option<crate::cache::status::Changes> {
    crate::cache::status::ask_when(asking, &repo.git, &repo.git_dir, &repo.workdir)
}

/// A listed file: its path, its kind on disk (`None`: not there), and the place of
/// its index entry when known.
type Listed = (String, Option<Kind>, Option<usize>);

/// The files a walk with no pathspec would list ([`listed`]), from the index and what
/// `git status` reported: the index's entries under the current folder, of the kind
/// their mode says unless git reported them (those are looked at), and the untracked
/// files and folders git reported (a folder is walked).
fn listed_by_status(
    repo: &Repo,
    git: &gix::Repository,
    index: &gix::worktree::Index,
    changes: &crate::cache::status::Changes,
    set: &mut FileSet,
) -> Result<Vec<Listed>, Error> {
    use gix::index::entry::Mode;
    let prefix = folder_prefix(repo);
    let under = |path: &[u8]| path.starts_with(prefix.as_bytes());
    let disk_kind = |path: &str| -> Option<Kind> {
        let meta = std::fs::symlink_metadata(repo.workdir.join(path)).ok()?;
        let kind = meta.file_type();
        Some(if kind.is_symlink() {
            Kind::Symlink
        } else if kind.is_file() {
            Kind::File
        } else if kind.is_dir() && repo.workdir.join(path).join(".git").exists() {
            Kind::Repository
        } else if kind.is_dir() {
            Kind::Directory
        } else {
            return None;
        })
    };
    let mut out: Vec<Listed> = Vec::with_capacity(index.entries().len());
    let mut last: Option<&[u8]> = None;
    for (at, entry) in index.entries().iter().enumerate() {
        let path_b: &[u8] = entry.path(index).as_ref();
        // An unmerged path's stages are one file.
        if last == Some(path_b) || !under(path_b) {
            continue;
        }
        last = Some(path_b);
        let Ok(path) = std::str::from_utf8(path_b) else {
            set.skipped
                .add(SkipReason::NonUtf8Path, &String::from_utf8_lossy(path_b));
            continue;
        };
        let kind = match entry.mode {
            _ if changes.tracked.contains(path_b) => disk_kind(path),
            Mode::FILE | Mode::FILE_EXECUTABLE => Some(Kind::File),
            // A symlink may be checked out as a file (core.symlinks), a submodule
            // may not be: looked at, as the walk does.
            _ => disk_kind(path),
        };
        out.push((path.to_string(), kind, Some(at)));
    }
    for path_b in &changes.untracked {
        if !under(path_b) {
            continue;
        }
        match std::str::from_utf8(path_b) {
            Ok(path) => out.push((path.to_string(), disk_kind(path), None)),
            Err(_) => set
                .skipped
                .add(SkipReason::NonUtf8Path, &String::from_utf8_lossy(path_b)),
        }
    }
    // The untracked folders, each walked (ignore rules and nested repositories as
    // everywhere); a folder above the current one is walked from here down.
    let dirs: Vec<String> = changes
        .untracked_dirs
        .iter()
        .filter_map(|dir| {
            let dir = std::str::from_utf8(dir).ok()?;
            let inside = format!("{dir}/");
            let top = if prefix.starts_with(&inside) {
                prefix.trim_end_matches('/')
            } else if inside.starts_with(&prefix) {
                dir
            } else {
                return None;
            };
            Some(format!(":(top,literal){top}"))
        })
        .collect();
    if !dirs.is_empty() {
        let walks = dirs.into_iter().map(|d| (vec![d], None)).collect();
        let entries = walk_entries(repo, git, index, walks, false, None)?;
        let walked = listed(repo, entries, false, set);
        out.extend(walked.into_iter().map(|(p, k)| (p, k, None)));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.dedup_by(|a, b| a.0 == b.0);
    Ok(out)
}

/// The current folder as a repository path with its `/` (`src/`), empty at the top.
fn folder_prefix(repo: &Repo) -> String {
    match repo.prefix.as_deref() {
        None | Some("") => String::new(),
        Some(p) => format!("{p}/"),
    }
}

/// Lists the index's stage-0 entries matching the pathspecs, the staged content
/// (`--cached`, what a commit would hold), as [`collect`] lists the work tree: with
/// the same languages, `-l`, globs and skips, each file naming its blob
/// ([`Candidate::blob`]), read instead of the work-tree file. Files added with
/// `--intent-to-add` have no content staged and are left out; ignore rules do not
/// apply (the index holds what it holds). A pathspec matching no entry is an error
/// naming it.
pub fn collect_index(repo: &Repo, opts: &Options) -> Result<FileSet, Error> {
    check_max_file_size(opts.max_file_size)?;
    let (specs, git, index) = Pathspecs::open(repo, &opts.pathspecs)?;
    let git = &git;
    let unmatched = unmatched_in_index(git, &index, &specs.positive)?;
    if !unmatched.is_empty() {
        return Err(Error::PathspecNoMatch(unmatched));
    }
    let named = specs.named.clone();
    let mut pathspec = pathspec_search(git, index_specs(repo, specs), &index)?;
    let (mut set, hosts) = opts.empty_set();
    for entry in index.entries() {
        let path_b = entry.path(&index);
        if entry.stage_raw() != 0
            || entry
                .flags
                .contains(gix::index::entry::Flags::INTENT_TO_ADD)
            || !pathspec.is_included(path_b, Some(false))
        {
            continue;
        }
        let Ok(path) = std::str::from_utf8(path_b.as_ref()) else {
            set.skipped
                .add(SkipReason::NonUtf8Path, &path_b.to_string());
            continue;
        };
        if !opts.globs.selects(path) {
            continue;
        }
        let mode = match entry.mode {
            gix::index::entry::Mode::FILE => FileMode::Regular,
            gix::index::entry::Mode::FILE_EXECUTABLE => FileMode::Executable,
            gix::index::entry::Mode::SYMLINK => {
                set.skipped.add(SkipReason::Symlink, path);
                continue;
            }
            gix::index::entry::Mode::COMMIT => {
                set.skipped.add(SkipReason::Submodule, path);
                continue;
            }
            _ => continue,
        };
        let Some((lang, host)) = search_language(opts, &named, &hosts, path, &mut set) else {
            continue;
        };
        let candidate = Candidate {
            path: path.to_string(),
            lang,
            size_hint: u64::from(entry.stat.size),
            tracked: None,
            blob: Some((entry.id, mode)),
        };
        match host {
            true => set.hosts.push(candidate),
            false => set.files.push(candidate),
        }
    }
    // Stage-0 entries are unique and sorted by path.
    Ok(set)
}

/// The walks' entries by path: tracked and untracked files (ignored ones too with
/// `no_ignore`) that each walk's pathspecs select; an error names each spec as typed
/// (the walk's second half) whose walk matched nothing.
fn walk_entries(
    repo: &Repo,
    git: &gix::Repository,
    index: &gix::worktree::Index,
    walks: Vec<(Vec<String>, Option<String>)>,
    no_ignore: bool,
    mut witness: Option<&mut Witness>,
) -> Result<BTreeMap<gix::bstr::BString, gix::dir::Entry>, Error> {
    let walk_opts = git
        .dirwalk_options()
        .map_err(|e| Error::Walk(Box::new(e)))?
        .emit_tracked(true)
        .emit_untracked(gix::dir::walk::EmissionMode::Matching)
        .emit_ignored(no_ignore.then_some(gix::dir::walk::EmissionMode::Matching))
        .empty_patterns_match_prefix(true);
    let mut entries: BTreeMap<gix::bstr::BString, gix::dir::Entry> = BTreeMap::new();
    let mut unmatched: Vec<String> = Vec::new();
    for (specs, typed) in walks {
        let interrupt = AtomicBool::new(false);
        let mut watching = Watching {
            collect: Default::default(),
            workdir: &repo.workdir,
            witness: witness.as_deref_mut(),
        };
        git.dirwalk(
            index,
            specs.iter().map(|s| gix::bstr::BString::from(s.as_str())),
            &interrupt,
            walk_opts,
            &mut watching,
        )
        .map_err(|e| Error::Walk(Box::new(e)))?;
        let collect = watching.collect;
        let mut matched = false;
        for (entry, _) in collect.unorded_entries {
            matched |= matches!(entry.status, Status::Tracked | Status::Untracked)
                || (no_ignore && matches!(entry.status, Status::Ignored(_)));
            entries.entry(entry.rela_path.clone()).or_insert(entry);
        }
        if let (false, Some(typed)) = (matched, typed) {
            unmatched.push(typed);
        }
    }
    if !unmatched.is_empty() {
        return Err(Error::PathspecNoMatch(unmatched));
    }
    Ok(entries)
}

/// The paths of the walk's files with their kinds on disk, sorted; a path that is not
/// UTF-8 is counted as skipped. `--no-ignore`: an ignored folder comes as one entry;
/// its files are listed here.
fn listed(
    repo: &Repo,
    entries: BTreeMap<gix::bstr::BString, gix::dir::Entry>,
    no_ignore: bool,
    set: &mut FileSet,
) -> Vec<(String, Option<Kind>)> {
    let mut listed: Vec<(String, Option<Kind>)> = Vec::new();
    for entry in entries.into_values() {
        let ignored = matches!(entry.status, Status::Ignored(_));
        if !(matches!(entry.status, Status::Tracked | Status::Untracked) || (no_ignore && ignored))
        {
            continue;
        }
        let Ok(path) = std::str::from_utf8(entry.rela_path.as_ref()) else {
            set.skipped
                .add(SkipReason::NonUtf8Path, &entry.rela_path.to_string());
            continue;
        };
        if ignored && entry.disk_kind == Some(Kind::Directory) {
            files_under(&repo.workdir, path, &mut listed);
            continue;
        }
        listed.push((path.to_string(), entry.disk_kind));
    }
    listed.sort_by(|a, b| a.0.cmp(&b.0));
    listed
}

/// The language a file is searched as, and whether it is a host (a file that may
/// embed the `-l` language); `None` for a file the run leaves out (another language's
/// under `-l`, or one of no known language, counted as skipped).
fn search_language(
    opts: &Options,
    named: &std::collections::BTreeSet<String>,
    hosts: &[Lang],
    path: &str,
    set: &mut FileSet,
) -> Option<(Lang, bool)> {
    let by_name = opts.language_globs.language_of(path);
    match (opts.lang, by_name) {
        (Some(forced), _) if named.contains(path) => Some((forced, false)),
        (Some(forced), Some(l)) if l == forced => Some((l, false)),
        // A file that may embed the language: searched where it does.
        (Some(_), Some(l)) if hosts.contains(&l) => Some((l, true)),
        // Another language's file: not part of a `-l` search.
        (Some(_), _) => None,
        (None, Some(l)) => Some((l, false)),
        (None, None) => {
            set.skipped.add(SkipReason::NoLanguage, path);
            None
        }
    }
}

/// Whether [`collect`] leaves the repository path `path` out because git ignores it
/// (without `no_ignore`): it is not in the index, and the exclude stack the walk
/// itself consults (`.gitignore` files, `info/exclude`, `core.excludesFile`) excludes
/// it or a folder above it. The file need not exist (an editor's unsaved buffer).
pub fn is_ignored(repo: &Repo, path: &str) -> Result<bool, Error> {
    let git = &repo.git;
    let index = git
        .index_or_empty()
        .map_err(|e| Error::Index(Box::new(e)))?;
    if index.entry_by_path(path.into()).is_some() {
        return Ok(false);
    }
    let mut excludes = git
        .excludes(
            &index,
            None,
            gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
        )
        .map_err(|e| Error::Walk(Box::new(e)))?;
    let at = excludes
        .at_path(
            std::path::Path::new(path),
            Some(gix::index::entry::Mode::FILE),
        )
        .map_err(|e| Error::Walk(Box::new(e)))?;
    Ok(at.is_excluded())
}

/// The files and symlinks under the folder `dir` (a repository path), for an
/// ignored folder listed whole; nested repositories are not entered.
fn files_under(workdir: &std::path::Path, dir: &str, out: &mut Vec<(String, Option<Kind>)>) {
    let Ok(entries) = std::fs::read_dir(workdir.join(dir)) else {
        return;
    };
    for entry in entries.flatten() {
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let path = format!("{dir}/{name}");
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if name != ".git" && !entry.path().join(".git").exists() {
                files_under(workdir, &path, out);
            }
        } else if kind.is_symlink() {
            out.push((path, Some(Kind::Symlink)));
        } else if kind.is_file() {
            out.push((path, Some(Kind::File)));
        }
    }
}
