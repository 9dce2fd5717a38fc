/*!
Structural rewrite over a file set: every op compiled once per language, run in order
on each file (in parallel), and the result turned into a [`ChangeSet`] whose before-side
is the work tree's bytes as read — uncommitted edits included — or, for a file that names
its blob (`--cached`), the staged bytes.
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
use crate::grep;
use crate::grep::compile_per_language;
use crate::grep::PerLanguage;
use crate::repo::Repo;
use crate::rewrite;
use crate::rewrite::imports::ImportFix;
use crate::rewrite::Op;
use crate::rewrite::Replacement;
use crate::rewrite::Rewriter;
use crate::select::Origin;
use crate::select::Proposal;
use crate::select::Select;
use crate::worker;

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
    /// A staged file's blob (`--cached`) could not be read.
    #[error(transparent)]
    Read(#[from] files::Error),
}

impl Classify for Error {
    fn code(&self) -> &'static str {
        match self {
            Error::Compile(e) => e.code(),
            Error::InFile { source, .. } => source.code(),
            Error::Read(e) => e.code(),
        }
    }
    fn exit(&self) -> Exit {
        match self {
            Error::Compile(e) => e.exit(),
            Error::InFile { source, .. } => source.exit(),
            Error::Read(e) => e.exit(),
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
    /// An import the rewrite needs binds a name another import binds: the file is left
    /// out of the changes, with this note.
    pub import_conflict: Option<rewrite::ImportConflict>,
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
    /// Files left out because an import the rewrite needs binds a name another import
    /// binds: (path, what), in path order.
    pub import_conflicts: Vec<(String, String)>,
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
                    selector: op.selector.clone(),
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
    imports: &ImportFix,
    forced_lang: Option<Lang>,
    max_file_size: u64,
) -> Result<EditOutcome, Error> {
    let mut changes = Vec::new();
    let never = crate::cancel::Cancel::never();
    let opts = Options {
        imports: imports.clone(),
        forced_lang,
        max_file_size,
        cancel: &never,
        select: None,
        cache: None,
    };
    let mut out = edit_each(repo, set, ops, opts, |change, _| {
        changes.push(change);
        true
    })?;
    out.changes.changes = changes;
    out.changes.sort();
    Ok(out)
}

/// How an edit runs, besides its ops and its files.
pub struct Options<'a> {
    /// The imports to fix up in each file the ops change.
    pub imports: ImportFix,
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

/// Runs `ops` over every file of `set`, handing each changed file (with its report:
/// the replacements) to `on_change` as soon as it is known, in no particular order, so
/// that a large edit need not hold every file's text at once. The outcome's `changes` stay empty; its other lists are
/// sorted by path. `on_change` returning `false` stops the edit early; so does
/// `opts.cancel`.
pub fn edit_each(
    repo: &Repo,
    set: &FileSet,
    ops: &[Op],
    opts: Options<'_>,
    mut on_change: impl FnMut(FileChange, &FileEdit) -> bool,
) -> Result<EditOutcome, Error> {
    let Options {
        imports,
        forced_lang,
        max_file_size,
        cancel,
        select,
        cache,
    } = opts;
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
        Rewriter::for_language(ops, lang, forced_lang).map(|r| r.with_imports(&imports))
    })?;
    // Whether the ops change a file depends on its bytes, its language, the ops and
    // the forced language.
    let query_key = {
        let mut k = crate::cache::KeyBuilder::new("edit");
        for op in ops {
            k.add(op.pattern.as_bytes()).add(op.rewrite.as_bytes());
            if let Some(kind) = &op.selector {
                k.add(b"selector").add(kind.as_bytes());
            }
        }
        k.add(format!("{forced_lang:?}").as_bytes());
        for stmt in &imports.add {
            k.add(b"add-import").add(stmt.as_bytes());
        }
        for name in &imports.remove {
            k.add(b"remove-import").add(name.as_bytes());
        }
        k.finish()
    };
    let rewrite = Rewrite {
        rewriters: &rewriters,
        forced_lang,
        injections: &set.injections,
        // Not while a person answers: the answer may run anything.
        arena: select.is_none(),
        blobs: files::Blobs::for_set(repo, set),
        max_file_size,
    };
    // A person's answers are not cached.
    let cache = cache.filter(|_| select.is_none());
    let drive = match select {
        // One file at a time, in path order: a person answers for each change.
        Some(select) => worker::Drive::Selecting(select),
        // As ready, not in order: a finished file's change goes to `on_change` (which
        // may compress it away) at once instead of waiting beside a large file's parse.
        None => worker::Drive::Parallel {
            order: crate::pipeline::Delivery::AsReady,
            cancel,
        },
    };
    let run = worker::Run {
        repo,
        max_file_size,
        cache: cache.map(|c| worker::Cache::open(&c, query_key)),
        skipped: set.skipped.clone(),
        ids: false,
    };
    let mut out = EditOutcome {
        skipped_languages,
        ..Default::default()
    };
    // With `-l`, the files that embed the language (HTML's `<script>`, a project's
    // injections) are rewritten where they do, in path order with the rest.
    let files = set.with_hosts(forced_lang.is_some());
    let totals = worker::run(&rewrite, &files, run, drive, |file, rewritten| {
        let Some(boxed) = rewritten else {
            return true;
        };
        let (change, edit, had_error) = *boxed;
        if let Some(why) = edit.import_conflict {
            out.import_conflicts
                .push((file.path.clone(), why.to_string()));
            return true;
        }
        if had_error {
            out.parse_errors.push(file.path.clone());
        }
        let go_on = on_change(change, &edit);
        out.files.push(edit);
        go_on
    })?;
    out.files_searched = totals.files_searched;
    out.skipped = totals.skipped;
    out.files.sort_by(|a, b| a.path.cmp(&b.path));
    out.parse_errors.sort();
    out.import_conflicts.sort();
    Ok(out)
}

/// The payload of a file the ops leave as it is.
const UNCHANGED: &[u8] = b"unchanged";

/// An edit's work on one file.
struct Rewrite<'a> {
    rewriters: &'a std::collections::BTreeMap<String, Rewriter>,
    forced_lang: Option<Lang>,
    injections: &'a [crate::lang::Injection],
    /// Parse in an arena ([`crate::alloc::ParseArena`]).
    arena: bool,
    /// Reads the files that name a blob (`--cached`).
    blobs: Option<files::Blobs>,
    max_file_size: u64,
}

/// A rewritten file: its change, its report and whether it parsed with errors
/// before (`None`: the ops leave it as it is).
type Rewritten = Option<Box<(FileChange, FileEdit, bool)>>;

impl Rewrite<'_> {
    /// The language `file` is rewritten in, when it is not its own (`-l` on a host).
    fn guest(&self, file: &files::Candidate) -> Option<Lang> {
        self.forced_lang.filter(|l| *l != file.lang)
    }

    fn rewriter(&self, file: &files::Candidate) -> Option<&Rewriter> {
        let lang = self.guest(file).unwrap_or(file.lang);
        self.rewriters.get(&lang.to_string())
    }

    fn rewrite(
        &self,
        file: &files::Candidate,
        text: &str,
        offer: &mut worker::Offer<'_>,
    ) -> Result<Option<rewrite::FileRewrite>, rewrite::Error> {
        let rewriter = self.rewriter(file).expect("planned with a rewriter");
        let mut offer = |op: usize, p: &rewrite::Proposed<'_>, around: Option<(&str, &str)>| {
            offer(&Proposal {
                path: &file.path,
                origin: Origin::Op(op),
                change: *p,
                around,
            })
        };
        match self.guest(file) {
            Some(guest) => rewrite_embedded(
                rewriter,
                &file.path,
                text,
                file.lang,
                guest,
                self.injections,
                &mut offer,
            ),
            None => rewriter.rewrite_file(Some(&file.path), text, &mut |op, p| offer(op, p, None)),
        }
    }
}

impl worker::Worker for Rewrite<'_> {
    type Task = files::Candidate;
    type Output = Rewritten;
    type Item = Rewritten;
    type Error = Error;

    fn plan(&self, file: &files::Candidate) -> worker::Plan {
        match (self.rewriter(file), self.guest(file)) {
            (None, _) => worker::Plan::Pass,
            // Embedded code is rewritten where it is, not cached.
            (Some(_), Some(_)) => worker::Plan::Compute,
            (Some(_), None) => worker::Plan::Cached,
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
        mode: crate::change::FileMode,
        offer: &mut worker::Offer<'_>,
    ) -> Result<Rewritten, Error> {
        // SAFETY: every parse inside sees the open arena and makes a parser of its own
        // (`rewrite::parse_doc`, `parse_owned_from`); the trees are dropped or pinned
        // inside `rewrite`, which hands out plain Rust data. Not while selecting: a
        // person's answer may run anything.
        let _arena = self
            .arena
            .then(|| unsafe { crate::alloc::ParseArena::open() });
        let rewritten = self
            .rewrite(file, &text, offer)
            .map_err(|source| Error::InFile {
                path: file.path.clone(),
                source,
            })?;
        Ok(match rewritten {
            Some(rw) if rw.text != text => Some(Box::new(changed(file, text, mode, rw))),
            _ => None,
        })
    }

    fn decode(
        &self,
        _file: &files::Candidate,
        payload: &[u8],
        _text: &mut dyn FnMut() -> Option<(String, crate::change::FileMode)>,
    ) -> Option<Rewritten> {
        // Only "unchanged" is remembered: a changed file's text is read anyway.
        (payload == UNCHANGED).then_some(None)
    }

    fn stores(&self, out: &Rewritten) -> bool {
        out.is_none()
    }

    fn encode(&self, _out: &Rewritten, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        w.write_all(UNCHANGED)
    }

    fn item(&self, _file: &files::Candidate, out: Rewritten) -> Rewritten {
        out
    }

    fn found(&self, item: &Rewritten) -> usize {
        item.as_ref().map_or(0, |b| b.1.replacements.len())
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
        import_conflict: rw.import_conflict,
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
    path: &str,
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
            rewriter.rewrite_file(Some(path), &part, &mut |op, p| select(op, p, Some(around)))?
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
                all.import_conflict = all.import_conflict.or(rw.import_conflict);
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
