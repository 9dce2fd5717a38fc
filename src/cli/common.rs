//! Flag groups shared by the commands that read files (`grep`, `edit`).

use ast_grep_language::SupportLang;
use git_astedit::files;
use git_astedit::repo::Repo;
use git_astedit::txn;
use git_astedit::Error;

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
        let mut stager = txn::Stager::new(repo);
        for change in &changes.changes {
            stager.add_borrowed(change)?;
        }
        self.finish(repo, stager, meta)
    }

    /// Finishes a preview built file by file and, with `--apply`, applies it at once.
    pub fn finish(
        &self,
        repo: &Repo,
        stager: txn::Stager<'_>,
        meta: &git_astedit::change::PreviewMeta,
    ) -> Result<(txn::Preview, Option<txn::ApplyReport>), Error> {
        let preview = stager.finish(meta)?;
        if !self.apply {
            return Ok((preview, None));
        }
        let opts = txn::ApplyOptions {
            reason: self.reason.clone(),
            ..Default::default()
        };
        let report = txn::apply(repo, Some(&preview.id), &opts)?;
        Ok((preview, Some(report)))
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

/// Warnings every file-reading command gives: languages skipped, files that parse with
/// errors, files skipped.
pub fn warn_common(
    out: &mut Out,
    repo: &Repo,
    skipped_languages: &[(String, String)],
    parse_errors: &[String],
    skipped: &files::Skipped,
) {
    if let Some(note) = git_astedit::rewrite::skipped_languages_note(skipped_languages) {
        out.warn(&note);
    }
    if !parse_errors.is_empty() {
        let shown: Vec<String> = parse_errors
            .iter()
            .take(3)
            .map(|p| repo.display_path(p))
            .collect();
        let more = if parse_errors.len() > 3 { ", …" } else { "" };
        out.warn(&format!(
            "{} parsed with errors (searched anyway): {}{more}",
            git_astedit::render::plural(parse_errors.len(), "file"),
            shown.join(", ")
        ));
    }
    if let Some(line) = skipped.summary() {
        out.warn(&line);
    }
}

/// The JSON shape of skip counts and warnings, shared by `grep` and `edit`.
pub fn json_diagnostics(
    repo: &Repo,
    skipped_languages: &[(String, String)],
    parse_errors: &[String],
    skipped: &files::Skipped,
) -> serde_json::Value {
    serde_json::json!({
        "skipped": skipped.counts,
        "parse_errors": {
            "count": parse_errors.len(),
            "paths": parse_errors.iter().take(20).map(|p| repo.display_path(p)).collect::<Vec<_>>(),
        },
        "skipped_languages": skipped_languages.iter().map(|(l, r)| serde_json::json!({"lang": l, "reason": r})).collect::<Vec<_>>(),
    })
}

/// Adds the keys of `extra` (an object) to `value` (an object).
pub fn merge(value: &mut serde_json::Value, extra: serde_json::Value) {
    if let (Some(obj), serde_json::Value::Object(d)) = (value.as_object_mut(), extra) {
        obj.extend(d);
    }
}
