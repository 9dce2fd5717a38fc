//! Flag groups shared by the commands that read files (`grep`, `edit`).

use ast_grep_language::SupportLang;
use git_astedit::files;
use git_astedit::repo::Repo;
use git_astedit::txn;
use git_astedit::Error;

use git_astedit::report::Action;
use git_astedit::report::Diagnostics;
use git_astedit::report::ResolveReport;

use super::Out;

/// Which files to read.
#[derive(Debug, clap::Args)]
pub struct InputArgs {
    /// Git pathspecs (relative to the current folder); default: the current folder
    #[arg(value_name = "PATHSPEC")]
    pub pathspecs: Vec<String>,

    /// Only files of LANG (by extension); files named exactly are parsed as LANG
    #[arg(short = 'l', long = "lang", value_name = "LANG")]
    pub lang: Option<String>,

    /// Skip files larger than BYTES
    #[arg(long, value_name = "BYTES", default_value_t = files::DEFAULT_MAX_FILE_SIZE)]
    pub max_filesize: u64,

    /// Number of worker threads (default: the number of cores)
    #[arg(short = 'j', long = "threads", value_name = "N")]
    pub threads: Option<usize>,
}

impl InputArgs {
    /// Sets up the thread pool and lists the files.
    pub fn collect(&self, repo: &Repo) -> Result<(files::FileSet, Option<SupportLang>), Error> {
        if let Some(n) = self.threads {
            // Fails only when a pool already exists, which cannot happen this early.
            let _ = rayon::ThreadPoolBuilder::new()
                .num_threads(n.max(1))
                .build_global();
        }
        let lang = self
            .lang
            .as_deref()
            .map(files::parse_language)
            .transpose()?;
        let opts = files::Options {
            pathspecs: self.pathspecs.clone(),
            lang,
            max_file_size: self.max_filesize,
            language_globs: Default::default(),
        };
        Ok((files::collect(repo, &opts)?, lang))
    }
}

/// What happens to a preview right after staging (`edit`, `patch`).
#[derive(Debug, clap::Args)]
pub struct StageArgs {
    /// Why this change is made (recorded in the preview and the journal)
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,

    /// Apply the preview right after staging it
    #[arg(long)]
    pub apply: bool,

    /// Render at most N diff lines (0: no limit); the rest is summarized
    #[arg(long, value_name = "N", default_value_t = 2000)]
    pub max_render: usize,
}

impl StageArgs {
    /// Stores `changes` as a preview and, with `--apply`, applies it at once.
    pub fn stage(
        &self,
        repo: &Repo,
        changes: &git_astedit::change::ChangeSet,
        meta: &git_astedit::change::PreviewMeta,
    ) -> Result<(txn::Preview, Option<txn::ApplyReport>), Error> {
        let preview = txn::stage(repo, changes, meta)?;
        let applied = self.apply_now(repo, &preview)?;
        Ok((preview, applied))
    }

    /// With `--apply`, applies a just-staged preview at once.
    pub fn apply_now(
        &self,
        repo: &Repo,
        preview: &txn::Preview,
    ) -> Result<Option<txn::ApplyReport>, Error> {
        if !self.apply {
            return Ok(None);
        }
        let opts = txn::ApplyOptions {
            reason: self.reason.clone(),
            ..Default::default()
        };
        Ok(Some(txn::apply(repo, Some(&preview.id), &opts)?))
    }
}

/// The last line after staging: the id and what to do next (or what was applied).
pub fn staged_line(preview: &txn::Preview, applied: Option<&txn::ApplyReport>) -> String {
    let id = &preview.id;
    match applied {
        Some(report) => format!(
            "Staged and applied {id} ({} written). Undo with `git astedit undo {id}`.\n",
            git_astedit::render::plural(report.written.len() + report.deleted.len(), "file"),
        ),
        None => format!(
            "Staged preview {id}. Apply with `git astedit apply {id}`, drop with `git astedit discard {id}`.\n"
        ),
    }
}

/// Skip counts, parse errors and skipped languages as the report shape, with the
/// warning lines a person gets on stderr (the same facts in words).
pub fn diagnostics(
    repo: &Repo,
    skipped_languages: &[(String, String)],
    parse_errors: &[String],
    skipped: &files::Skipped,
) -> Diagnostics {
    Diagnostics::of(skipped_languages, parse_errors, skipped, |p| {
        repo.display_path(p)
    })
}

/// Prints a report's warnings on stderr.
pub fn warn_all(out: &mut Out, diag: &Diagnostics) {
    for w in &diag.warnings {
        out.warn(w);
    }
}

/// The report of the apply a `--apply` run made right after staging `preview`, if any.
pub fn apply_report(
    preview: &txn::Preview,
    applied: Option<&txn::ApplyReport>,
    reason: Option<String>,
) -> Option<ResolveReport> {
    applied.map(|a| {
        let files = preview.entries.iter().map(|e| e.path.clone()).collect();
        resolve_report(a, Action::Applied, files, false, reason)
    })
}

/// The report of an apply (or undo) as every command gives it.
pub fn resolve_report(
    report: &txn::ApplyReport,
    action: Action,
    files: Vec<String>,
    index: bool,
    reason: Option<String>,
) -> ResolveReport {
    ResolveReport::of(report, action, Some(files), index, reason)
}
