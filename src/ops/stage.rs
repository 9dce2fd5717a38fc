//! Staging: the one path every front end stages through. Files stream from the engine
//! into the preview's objects as they are rewritten (nothing holds every file's text);
//! [`crate::txn::Stager`] stamps the base HEAD and tool version; the request carries
//! the agent.

use ast_grep_language::SupportLang;

use crate::cancel::Cancel;
use crate::change::ChangeSet;
use crate::change::PreviewMeta;
use crate::edit::EditOutcome;
use crate::files::FileSet;
use crate::repo::Repo;
use crate::rewrite::Op;
use crate::select::Select;
use crate::txn;
use crate::txn::Preview;
use crate::Error;

/// A structural rewrite to stage.
pub struct EditRequest<'a> {
    pub set: &'a FileSet,
    pub ops: &'a [Op],
    /// Parse every file as this language.
    pub lang: Option<SupportLang>,
    pub max_file_size: u64,
    pub reason: Option<String>,
    /// The MCP client (`name/version`) staging it.
    pub agent: Option<String>,
}

/// What an edit computed, and its preview (none when nothing would change).
pub struct StagedEdit {
    pub outcome: EditOutcome,
    pub meta: PreviewMeta,
    pub preview: Option<Preview>,
}

/// Runs the ops over the files and stages the result as one preview.
pub fn stage_edit(repo: &Repo, req: &EditRequest<'_>) -> Result<StagedEdit, Error> {
    stage_edit_with(repo, req, &Cancel::never(), None)
}

/// [`stage_edit`], stopping when `cancel` says so: checked before each changed file
/// is staged and before the preview is written, so a cancelled staging leaves no ref
/// and no journal entry (the stager's objects are only in memory until then).
pub fn stage_edit_cancellable(
    repo: &Repo,
    req: &EditRequest<'_>,
    cancel: &Cancel,
) -> Result<StagedEdit, Error> {
    stage_edit_with(repo, req, cancel, None)
}

/// Like [`stage_edit`], staging only the changes `select` accepts (`edit -i`); nothing
/// is staged when it accepts none.
pub fn stage_edit_selecting(
    repo: &Repo,
    req: &EditRequest<'_>,
    select: &mut dyn Select,
) -> Result<StagedEdit, Error> {
    stage_edit_with(repo, req, &Cancel::never(), Some(select))
}

fn stage_edit_with(
    repo: &Repo,
    req: &EditRequest<'_>,
    cancel: &Cancel,
    select: Option<&mut dyn Select>,
) -> Result<StagedEdit, Error> {
    let mut stager = txn::Stager::new(repo);
    let mut stage_error: Option<Error> = None;
    let add = |change| {
        if let Err(e) = cancel.test_delay() {
            stage_error = Some(e.into());
            return false;
        }
        match stager.add(change) {
            Ok(()) => true,
            Err(e) => {
                stage_error = Some(e.into());
                false
            }
        }
    };
    let (set, ops, lang, max) = (req.set, req.ops, req.lang, req.max_file_size);
    let selecting = select.is_some();
    let outcome = match select {
        None => crate::edit::edit_each(repo, set, ops, lang, max, cancel, add)?,
        Some(select) => crate::edit::edit_selecting(repo, set, ops, lang, max, select, add)?,
    };
    if let Some(e) = stage_error {
        return Err(e);
    }
    cancel.check()?;
    let mut meta = outcome.meta(req.ops, req.lang, req.reason.clone());
    meta.agent = req.agent.clone();
    super::refresh::record_edit(
        &mut meta,
        &req.set.pathspecs,
        repo.prefix.as_deref().unwrap_or(""),
        req.max_file_size,
    );
    if selecting {
        super::refresh::record_selection(&mut meta);
    }
    let preview = if outcome.files.is_empty() {
        None
    } else {
        Some(stager.finish(&meta)?)
    };
    Ok(StagedEdit {
        outcome,
        meta,
        preview,
    })
}

/// Stages computed changes (a patch, scan fixes) as one preview with `meta` (the agent
/// set from `agent`); `None` when there is nothing to stage.
pub fn stage_changes(
    repo: &Repo,
    changes: &ChangeSet,
    meta: &mut PreviewMeta,
    agent: Option<String>,
) -> Result<Option<Preview>, Error> {
    if changes.is_empty() {
        return Ok(None);
    }
    meta.agent = agent;
    Ok(Some(txn::stage(repo, changes, meta)?))
}
