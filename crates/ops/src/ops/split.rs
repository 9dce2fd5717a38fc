/*!
Partial apply (`apply ID -- PATHSPEC…`): the part of a preview under some paths is
applied, the rest stays pending as a preview of its own ([`crate::txn::apply_selected`]
splits and applies under the repository lock).
*/

use crate::repo::Repo;
use crate::txn;
use crate::txn::ApplyOptions;
use crate::txn::ApplyReport;
use crate::Error;

/// Applies the part of pending preview `id` (the newest when `None`) that `pathspecs`
/// select (git pathspecs, relative to the current folder). A spec selecting no path of
/// the preview is an error naming it (exit 2), and nothing is split or written.
pub fn apply_part(
    repo: &Repo,
    id: Option<&str>,
    pathspecs: &[String],
    opts: &ApplyOptions,
) -> Result<ApplyReport, Error> {
    let preview = txn::find(repo, id)?;
    let paths: Vec<String> = preview.entries.iter().map(|e| e.path.clone()).collect();
    let selected = crate::files::select_paths(repo, pathspecs, &paths)?;
    if selected.is_empty() {
        // Only exclusions, and they exclude everything.
        return Err(crate::files::Error::PathspecNoMatch(pathspecs.to_vec()).into());
    }
    Ok(txn::apply_selected(
        repo,
        &preview.id,
        &selected,
        pathspecs,
        opts,
    )?)
}
