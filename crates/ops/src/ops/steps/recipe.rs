//! The recipe of a `steps` preview: the steps themselves (their rule files read in),
//! the file set and the config file they came from, recorded under `details.refresh`.
//! A stale preview is re-derived whole ([`Whole`]): every step runs again, in order, on
//! the tree as it is now, and what they change this time is the successor. A value one
//! step exports may differ now, and with it what the later steps change in other files.

use super::engine;
use super::spec::StepSpec;
use super::StepsError;
use crate::change::FileMeta;
use crate::files;
use crate::ops::recipe::Derivation;
use crate::ops::recipe::Recorded;
use crate::ops::recipe::Whole;
use crate::repo::Repo;
use crate::txn::Preview;
use crate::Error;

/// What a steps preview records.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StepsRecipe {
    /// The file the steps were read from, as shown then.
    #[serde(default)]
    pub config: String,
    pub steps: Vec<StepSpec>,
    /// Each step's number in the config file, when only some of them ran (`--step`);
    /// empty: all of them, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub numbers: Vec<usize>,
    #[serde(default)]
    pub pathspecs: Vec<String>,
    /// The folder the pathspecs were typed in.
    #[serde(default)]
    pub prefix: String,
    #[serde(default = "default_max_file_size")]
    pub max_file_size: u64,
}

fn default_max_file_size() -> u64 {
    files::DEFAULT_MAX_FILE_SIZE
}

impl Recorded for StepsRecipe {}

impl StepsRecipe {
    /// Runs the steps over the file set, from the folder the pathspecs were typed in.
    pub fn execute(&self, repo: &Repo) -> Result<engine::Outcome, Error> {
        let at = Repo::discover_from(&repo.workdir.join(&self.prefix))?;
        let opts = files::Options {
            pathspecs: self.pathspecs.clone(),
            max_file_size: self.max_file_size,
            language_globs: crate::scan::rules::project_language_globs(&at, None)?,
            ..Default::default()
        };
        let set = files::collect(&at, &opts)?;
        engine::run(
            &at,
            &set,
            &self.steps,
            &self.numbers,
            self.max_file_size,
            &self.config,
        )
    }
}

/// A steps preview being refreshed, with the recipe it recorded (`None`: none).
pub struct StepsRederive(pub Option<StepsRecipe>);

impl Whole for StepsRederive {
    fn derive(&self, repo: &Repo, old: &Preview) -> Result<Derivation, Error> {
        let recipe = self
            .0
            .clone()
            .ok_or_else(|| StepsError::NoRecipe(old.id.clone()))?;
        let done = recipe.execute(repo)?;
        let files: Vec<FileMeta> = done.files.clone();
        let mut notes = vec![format!(
            "re-ran {} from {}",
            crate::text::plural(recipe.steps.len(), "step"),
            recipe.config
        )];
        notes.extend(done.warnings);
        Ok(Derivation {
            changes: done.changes,
            files,
            dropped: "the steps no longer change it",
            notes,
            successor: Box::new(move |meta, old_id| {
                recipe.record(meta);
                meta.summary = format!(
                    "{} (refreshed from {old_id})",
                    super::summary(meta.replacements, meta.files.len(), recipe.steps.len()),
                );
            }),
        })
    }
}
