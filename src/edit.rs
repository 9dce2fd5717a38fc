/*!
Structural rewrite over a file set: every op compiled once per language, run in order
on each file (in parallel), and the result turned into a [`ChangeSet`] whose before-side
is the work tree's bytes as read — uncommitted edits included.
*/

use crate::lang::Lang;

use crate::change::ChangeSet;
use crate::change::FileChange;
use crate::change::FileContent;
use crate::change::FileMeta;
use crate::change::OpMeta;
use crate::change::PreviewMeta;
use crate::error::Classify;
use crate::error::Exit;
use crate::files;
use crate::files::FileSet;
use crate::files::Loaded;
use crate::grep;
use crate::grep::compile_per_language;
use crate::grep::PerLanguage;
use crate::repo::Repo;
use crate::rewrite;
use crate::rewrite::Op;
use crate::rewrite::Replacement;
use crate::rewrite::Rewriter;
use crate::select::Origin;
use crate::select::Proposal;
use crate::select::Select;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Compile(#[from] grep::Error),
    #[error("cannot rewrite {path}")]
    InFile {
        path: String,
        #[source]
        source: rewrite::Error,
    },
}

impl Classify for Error {
    fn code(&self) -> &'static str {
        match self {
            Error::Compile(e) => e.code(),
            Error::InFile { source, .. } => source.code(),
        }
    }
    fn exit(&self) -> Exit {
        match self {
            Error::Compile(e) => e.exit(),
            Error::InFile { source, .. } => source.exit(),
        }
    }
}

/// What happened to one rewritten file.
#[derive(Debug, Clone)]
pub struct FileEdit {
    pub path: String,
    pub replacements: Vec<Replacement>,
    pub introduces_parse_error: bool,
    /// What a reviewer should know ([`rewrite::FileRewrite::flags`]).
    pub flags: Vec<crate::change::FileFlag>,
    /// Outer matches that no longer matched once their inner matches were rewritten;
    /// they were left as the inner rewrites made them.
    pub dropped: Vec<rewrite::Dropped>,
}

/// Everything an edit computed.
#[derive(Debug, Default)]
pub struct EditOutcome {
    /// The changes, in path order (empty from [`edit_each`], which hands them out).
    pub changes: ChangeSet,
    /// Per rewritten file, in path order.
    pub files: Vec<FileEdit>,
    pub files_searched: usize,
    pub skipped: files::Skipped,
    /// Files that parsed with errors before the rewrite (rewritten anyway).
    pub parse_errors: Vec<String>,
    pub skipped_languages: Vec<(String, String)>,
}

impl EditOutcome {
    pub fn replacements(&self) -> usize {
        self.files.iter().map(|f| f.replacements.len()).sum()
    }

    /// `3 replacements in 2 files`.
    pub fn summary(&self) -> String {
        format!(
            "{} in {}",
            crate::text::plural(self.replacements(), "replacement"),
            crate::text::plural(self.files.len(), "file")
        )
    }

    /// The preview metadata of this edit.
    pub fn meta(&self, ops: &[Op], lang: Option<Lang>, reason: Option<String>) -> PreviewMeta {
        PreviewMeta {
            kind: crate::change::PreviewKind::Edit,
            summary: self.summary(),
            reason,
            ops: ops
                .iter()
                .map(|op| OpMeta {
                    pattern: op.pattern.clone(),
                    rewrite: op.rewrite.clone(),
                    lang: lang.map(|l| l.to_string()),
                })
                .collect(),
            files: self
                .files
                .iter()
                .map(|f| FileMeta {
                    path: f.path.clone(),
                    count: f.replacements.len(),
                    flags: f.flags.clone(),
                })
                .collect(),
            replacements: self.replacements(),
            tool_version: crate::VERSION.to_string(),
            ..Default::default()
        }
    }
}

/// Runs `ops` over every file of `set`, collecting the changes in the outcome.
pub fn edit(
    repo: &Repo,
    set: &FileSet,
    ops: &[Op],
    forced_lang: Option<Lang>,
    max_file_size: u64,
) -> Result<EditOutcome, Error> {
    let mut changes = Vec::new();
    let never = crate::cancel::Cancel::never();
    let opts = Options {
        forced_lang,
        max_file_size,
        cancel: &never,
        select: None,
        cache: None,
    };
    let mut out = edit_each(repo, set, ops, opts, |change| {
        changes.push(change);
        true
    })?;
    out.changes.changes = changes;
    out.changes.sort();
    Ok(out)
}

/// How an edit runs, besides its ops and its files.
pub struct Options<'a> {
    /// Parse every file as this language.
    pub forced_lang: Option<Lang>,
    pub max_file_size: u64,
    /// Checked as each file is done (the outcome is then partial: a caller that passes
    /// a `cancel` checks it before using the outcome). Files go in parallel.
    pub cancel: &'a crate::cancel::Cancel,
    /// Make only the changes this accepts: files are then read one at a time in path
    /// order (so that changes are offered in that order), and once `select` is
    /// [finished](Select::finished) the rest are not read.
    pub select: Option<&'a mut dyn Select>,
    /// Where to remember which file contents the ops leave unchanged (`None`: no
    /// cache). Not used while selecting.
    pub cache: Option<crate::cache::Settings>,
}

/// Runs `ops` over every file of `set`, handing each changed file to `on_change` as
/// soon as it is known, in no particular order, so that a large edit need not hold
/// every file's text at once. The outcome's `changes` stay empty; its other lists are
/// sorted by path. `on_change` returning `false` stops the edit early; so does
/// `opts.cancel`.
pub fn edit_each(
    repo: &Repo,
    set: &FileSet,
    ops: &[Op],
    opts: Options<'_>,
    on_change: impl FnMut(FileChange) -> bool,
) -> Result<EditOutcome, Error> {
    let drive = match opts.select {
        Some(select) => Drive::Selecting(select),
        None => Drive::AsReady(opts.cancel),
    };
    let setup = Setup {
        forced_lang: opts.forced_lang,
        max_file_size: opts.max_file_size,
        cache: opts.cache.as_ref(),
    };
    run_edit(repo, set, ops, &setup, drive, on_change)
}

/// How [`run_edit`] goes over the files.
enum Drive<'a> {
    /// In parallel, each file's change delivered as it is ready; stops when cancelled.
    AsReady(&'a crate::cancel::Cancel),
    /// One file at a time in path order, each change offered to a person first.
    Selecting(&'a mut dyn Select),
}

/// The payload of a file the ops leave as it is.
const UNCHANGED: &[u8] = b"unchanged";

/// [`Options`] less what drives the run.
struct Setup<'a> {
    forced_lang: Option<Lang>,
    max_file_size: u64,
    cache: Option<&'a crate::cache::Settings>,
}

fn run_edit(
    repo: &Repo,
    set: &FileSet,
    ops: &[Op],
    setup: &Setup<'_>,
    drive: Drive<'_>,
    mut on_change: impl FnMut(FileChange) -> bool,
) -> Result<EditOutcome, Error> {
    let Setup {
        forced_lang,
        max_file_size,
        cache,
    } = *setup;
    let langs = set.files.iter().map(|f| f.lang).chain(forced_lang);
    let what = ops
        .iter()
        .map(|op| op.pattern.as_str())
        .collect::<Vec<_>>()
        .join("', '");
    let PerLanguage {
        compiled: rewriters,
        skipped: skipped_languages,
    } = compile_per_language(&what, langs, |lang| {
        Rewriter::for_language(ops, lang, forced_lang)
    })?;

    enum One {
        Unchanged,
        Rewritten(Box<(FileChange, FileEdit, bool)>),
        Skipped(files::SkipReason),
        NoLanguage,
    }
    let workdir = repo.workdir.as_path();
    // Whether the ops change a file depends on its bytes, its language, the ops and
    // the forced language.
    let query_key = {
        let mut k = crate::cache::KeyBuilder::new("edit");
        for op in ops {
            k.add(op.pattern.as_bytes()).add(op.rewrite.as_bytes());
        }
        k.add(format!("{forced_lang:?}").as_bytes());
        k.finish()
    };
    let bucket = match (&drive, cache) {
        (Drive::AsReady(_), Some(settings)) => {
            Some(crate::cache::Bucket::open(settings, &query_key))
        }
        _ => None,
    };
    let hash_kind = repo.git.object_hash();
    // With `-l`, the files that embed the language (HTML's `<script>`, a project's
    // injections) are rewritten where they do, in path order with the rest.
    let files = set.with_hosts(forced_lang.is_some());
    let work = |file: &files::Candidate, select: &mut Offer<'_>| -> Result<One, Error> {
        if let Some(guest) = forced_lang.filter(|l| *l != file.lang) {
            let Some(rewriter) = rewriters.get(&guest.to_string()) else {
                return Ok(One::NoLanguage);
            };
            let (text, mode) = match files::load(workdir, &file.path, max_file_size) {
                Loaded::Text(t, m) => (t, m),
                Loaded::Skipped(r) => return Ok(One::Skipped(r)),
            };
            let rewritten =
                rewrite_embedded(rewriter, &text, file.lang, guest, &set.injections, select)
                    .map_err(|source| Error::InFile {
                        path: file.path.clone(),
                        source,
                    })?;
            return Ok(match rewritten {
                Some(rw) if rw.text != text => {
                    One::Rewritten(Box::new(changed(file, text, mode, rw)))
                }
                _ => One::Unchanged,
            });
        }
        let Some(rewriter) = rewriters.get(&file.lang.to_string()) else {
            return Ok(One::NoLanguage);
        };
        // Only "unchanged" is remembered: a changed file's text is read anyway.
        let mut store = None;
        let loaded = match &bucket {
            None => files::load(workdir, &file.path, max_file_size),
            Some(b) => {
                let key_of = |id: &gix::oid| {
                    let mut k = crate::cache::KeyBuilder::new("file");
                    k.add(&query_key)
                        .add(id.as_bytes())
                        .add(file.lang.cache_identity().as_bytes());
                    k.finish()
                };
                match files::load_cached(
                    workdir,
                    &file.path,
                    file.tracked.as_ref(),
                    max_file_size,
                    hash_kind,
                    b,
                    key_of,
                ) {
                    files::CachedLoad::Skipped(r) => Loaded::Skipped(r),
                    files::CachedLoad::Hit { key, payload, .. } if payload == UNCHANGED => {
                        b.touch(&key);
                        return Ok(One::Unchanged);
                    }
                    files::CachedLoad::Hit { key, text, .. } => {
                        store = Some(key);
                        match text {
                            Some((t, m)) => Loaded::Text(t, m),
                            None => files::load(workdir, &file.path, max_file_size),
                        }
                    }
                    files::CachedLoad::Miss { key, text } => {
                        store = Some(key);
                        Loaded::Text(text.0, text.1)
                    }
                }
            }
        };
        let unchanged = || {
            if let (Some(b), Some(key)) = (&bucket, &store) {
                b.put(key, UNCHANGED);
            }
            Ok(One::Unchanged)
        };
        let (text, mode) = match loaded {
            Loaded::Text(t, m) => (t, m),
            Loaded::Skipped(r) => return Ok(One::Skipped(r)),
        };
        let rewritten = rewriter
            .rewrite_selecting(&text, &mut |op, p| select(op, p, None))
            .map_err(|source| Error::InFile {
                path: file.path.clone(),
                source,
            })?;
        let Some(rw) = rewritten else {
            return unchanged();
        };
        if rw.text == text {
            return unchanged();
        }
        Ok(One::Rewritten(Box::new(changed(file, text, mode, rw))))
    };

    let mut out = EditOutcome {
        skipped: set.skipped.clone(),
        skipped_languages,
        ..Default::default()
    };
    let mut first_error: Option<Error> = None;
    let never = crate::cancel::Cancel::never();
    let cancel = match &drive {
        Drive::AsReady(cancel) => *cancel,
        Drive::Selecting(_) => &never,
    };
    let mut deliver = |i: usize, one: Result<One, Error>| -> bool {
        if cancel.is_cancelled() {
            return false;
        }
        let file = &files[i];
        let found = match &one {
            Ok(One::Rewritten(boxed)) => boxed.1.replacements.len(),
            _ => 0,
        };
        crate::progress::advance(1, found);
        let one = match one {
            Ok(one) => one,
            Err(e) => {
                first_error = Some(e);
                return false;
            }
        };
        match one {
            One::Unchanged => out.files_searched += 1,
            One::Rewritten(boxed) => {
                let (change, edit, had_error) = *boxed;
                out.files_searched += 1;
                if had_error {
                    out.parse_errors.push(file.path.clone());
                }
                out.files.push(edit);
                if !on_change(change) {
                    return false;
                }
            }
            One::Skipped(reason) => out.skipped.add(reason, &file.path),
            One::NoLanguage => {}
        }
        true
    };
    match drive {
        // As ready, not in order: a finished file's change goes to `on_change` (which
        // may compress it away) at once instead of waiting beside a large file's parse.
        Drive::AsReady(_) => {
            // No bar while a person answers questions (below).
            let _phase = crate::progress::phase(crate::progress::Phase::Search, files.len());
            crate::pipeline::map_sized(
                &files,
                |f| f.size_hint,
                |f| {
                    // SAFETY: every parse inside sees the open arena and makes a parser
                    // of its own (`rewrite::parse_doc`, `parse_owned_from`); the trees
                    // are dropped or pinned inside `work`, which hands out plain Rust
                    // data. Not in `Selecting`: a person's answer may run anything.
                    let _arena = unsafe { crate::alloc::ParseArena::open() };
                    work(f, &mut |_, _, _| true)
                },
                crate::pipeline::Delivery::AsReady,
                &mut deliver,
            )
        }
        // One file at a time, in path order: a person answers for each change.
        Drive::Selecting(select) => {
            let mut order: Vec<usize> = (0..files.len()).collect();
            order.sort_by(|&a, &b| files[a].path.cmp(&files[b].path));
            for i in order {
                if select.finished() {
                    break;
                }
                let file = &files[i];
                let one = work(file, &mut |op, p, around| {
                    select.select(&Proposal {
                        path: &file.path,
                        origin: Origin::Op(op),
                        change: *p,
                        around,
                    })
                });
                if !deliver(i, one) {
                    break;
                }
            }
        }
    }
    if let Some(bucket) = bucket {
        bucket.finish();
    }
    out.files.sort_by(|a, b| a.path.cmp(&b.path));
    out.parse_errors.sort();
    match first_error {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// Offers a change (op index, the change, the host text around an embedded region).
type Offer<'s> = dyn FnMut(usize, &rewrite::Proposed<'_>, Option<(&str, &str)>) -> bool + 's;

/// A file's rewrite as the change and the edit report.
fn changed(
    file: &files::Candidate,
    text: String,
    mode: crate::change::FileMode,
    rw: rewrite::FileRewrite,
) -> (FileChange, FileEdit, bool) {
    let flags = rw.flags();
    let edit = FileEdit {
        path: file.path.clone(),
        flags,
        replacements: rw.replacements,
        introduces_parse_error: rw.introduces_parse_error,
        dropped: rw.dropped,
    };
    let change = FileChange {
        path: file.path.clone(),
        before: Some(FileContent {
            bytes: text.into_bytes(),
            mode,
        }),
        after: Some(FileContent {
            bytes: rw.text.into_bytes(),
            mode,
        }),
    };
    (change, edit, rw.had_parse_error)
}

/// Rewrites the regions of `text` (a file of `host`) that hold `guest` code, each as a
/// text of its own put back in place, the last first so that the earlier keep their
/// places; positions reported are the host's. `None` when no region changes.
fn rewrite_embedded(
    rewriter: &Rewriter,
    text: &str,
    host: Lang,
    guest: Lang,
    injections: &[crate::lang::Injection],
    select: &mut Offer<'_>,
) -> Result<Option<rewrite::FileRewrite>, rewrite::Error> {
    let mut regions = crate::scan::engine::injected_regions(text, host, injections);
    regions.retain(|r| r.lang == guest);
    regions.reverse();
    let mut current = text.to_string();
    let mut out: Option<rewrite::FileRewrite> = None;
    for region in regions {
        let part = current[region.start..region.end].to_string();
        let base = rewrite::HostBase::of(&current, region.start);
        let rewritten = {
            let around = (&current[..region.start], &current[region.end..]);
            rewriter.rewrite_selecting(&part, &mut |op, p| select(op, p, Some(around)))?
        };
        let Some(mut rw) = rewritten else { continue };
        if rw.text == part {
            continue;
        }
        for r in &mut rw.replacements {
            (r.line, r.column) = base.pos(r.line, r.column);
        }
        for d in &mut rw.dropped {
            (d.line, d.column) = base.pos(d.line, d.column);
        }
        if let Some(e) = &mut rw.first_parse_error {
            (e.line, e.column) = base.pos(e.line, e.column);
        }
        current.replace_range(region.start..region.end, &rw.text);
        out = Some(match out.take() {
            None => rw,
            Some(mut all) => {
                all.replacements.extend(rw.replacements);
                all.dropped.extend(rw.dropped);
                all.introduces_parse_error |= rw.introduces_parse_error;
                all.had_parse_error |= rw.had_parse_error;
                all.leaves_empty_block |= rw.leaves_empty_block;
                all.first_parse_error = rw.first_parse_error.or(all.first_parse_error);
                all
            }
        });
    }
    Ok(out.map(|mut all| {
        all.text = current;
        all.replacements.sort_by_key(|r| (r.line, r.column));
        all.dropped.sort_by_key(|d| (d.line, d.column));
        all
    }))
}
