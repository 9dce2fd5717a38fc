//! The refresh of a `run` preview: its recorded command ([`Recipe`]) runs again on the
//! tree as it is now, and what it changes this time is the successor. The command,
//! not the preview, decides its scope, and it saw the user's edits: there are no
//! conflicts.

use super::exec;
use super::exec::Recipe;
use super::exec::RunError;
use crate::cancel::Cancel;
use crate::change::FileMeta;
use crate::ops::recipe::Derivation;
use crate::ops::recipe::Whole;
use crate::repo::Repo;
use crate::txn::Preview;
use crate::Error;

/// A `run` preview being refreshed, with the recipe it recorded (`None`: none).
pub struct RunRederive(pub Option<Recipe>);

impl Whole for RunRederive {
    fn derive(&self, repo: &Repo, old: &Preview) -> Result<Derivation, Error> {
        let recipe = self
            .0
            .clone()
            .ok_or_else(|| RunError::NoRecipe(old.id.clone()))?;
        let done = exec::execute(repo, &recipe, &Cancel::never())?;
        let files = done
            .changes
            .changes
            .iter()
            .map(|change| FileMeta {
                path: change.path.clone(),
                count: 1,
                flags: exec::flags(change),
            })
            .collect();
        let facts = done.facts;
        Ok(Derivation {
            changes: done.changes,
            files,
            dropped: "the command no longer changes it",
            notes: vec![format!("re-ran `{}`: it {}", facts.command, facts.how())],
            successor: Box::new(move |meta, old_id| {
                recipe.record_with(meta, &facts);
                meta.summary = format!(
                    "{} (refreshed from {old_id})",
                    exec::summary(meta.files.len(), &recipe.display()),
                );
            }),
        })
    }
}
