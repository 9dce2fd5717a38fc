//! Every preview kind's recipe, typed: read from a preview's metadata (the kind is
//! `meta.kind`, the recipe `details.refresh`, as each op recorded it) and turned into
//! the kind's re-derivation. The one place that names every kind for a refresh; a
//! new kind adds a variant here and its recipe beside its op.

use crate::change::PreviewKind;
use crate::change::PreviewMeta;
use crate::ops::edit::recipe::EditRecipe;
use crate::ops::patch::recipe::PatchRecipe;
use crate::ops::recipe::PerPath;
use crate::ops::recipe::Recorded;
use crate::ops::recipe::ThreeWay;
use crate::ops::recipe::Whole;
use crate::ops::run::exec::Recipe as RunRecipe;
use crate::ops::run::recipe::RunRederive;
use crate::ops::scan::recipe::ScanRecipe;
use crate::ops::steps::recipe::StepsRederive;
use crate::ops::steps::StepsRecipe;

/// A preview's recipe. `None` inside a variant: the preview was staged by a version
/// that recorded none (or one that does not read); the kind then re-derives what it
/// can without it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recipe {
    /// Ops re-run path by path, and over the recorded file set for `--all`.
    Edit(Option<EditRecipe>),
    /// Rules re-run path by path when their files hash the same.
    Scan(Option<ScanRecipe>),
    /// The patch resolved again.
    Patch(Option<PatchRecipe>),
    /// The command run again, whole.
    Run(Option<RunRecipe>),
    /// Every step run again, in order, whole.
    Steps(Option<StepsRecipe>),
    /// Merged three-way from the blob the lines were read from.
    Lines,
    /// Previews combined: merged three-way.
    Merge,
    /// String edits of a file: merged three-way.
    Replace,
    /// A file written whole: merged three-way.
    Write,
    /// An agent's own edit journalled afterwards: merged three-way.
    Hook,
}

/// How a recipe re-derives a stale preview.
pub enum Rederive {
    PerPath(Box<dyn PerPath>),
    Whole(Box<dyn Whole>),
}

impl Recipe {
    /// The recipe `meta` recorded.
    pub fn of(meta: &PreviewMeta) -> Recipe {
        match meta.kind {
            PreviewKind::Edit => Recipe::Edit(EditRecipe::recorded(meta)),
            PreviewKind::Scan => Recipe::Scan(ScanRecipe::recorded(meta)),
            PreviewKind::Patch => Recipe::Patch(PatchRecipe::recorded(meta)),
            PreviewKind::Run => Recipe::Run(RunRecipe::recorded(meta)),
            PreviewKind::Lines => Recipe::Lines,
            PreviewKind::Merge => Recipe::Merge,
            PreviewKind::Replace => Recipe::Replace,
            PreviewKind::Write => Recipe::Write,
            PreviewKind::Hook => Recipe::Hook,
            PreviewKind::Steps => Recipe::Steps(StepsRecipe::recorded(meta)),
        }
    }

    /// Whether the preview is re-derived whole (its recipe runs without the lock).
    pub fn is_whole(&self) -> bool {
        matches!(self, Recipe::Run(_) | Recipe::Steps(_))
    }

    /// The re-derivation of a stale preview with `meta` (notes said at the start go
    /// to `notes`).
    pub fn rederive(self, meta: &PreviewMeta, notes: &mut Vec<String>) -> Rederive {
        match self {
            Recipe::Edit(r) => Rederive::PerPath(Box::new(EditRecipe::rederive(r, meta, notes))),
            Recipe::Scan(r) => Rederive::PerPath(Box::new(ScanRecipe::rederive(r))),
            Recipe::Patch(r) => Rederive::PerPath(Box::new(PatchRecipe::rederive(r))),
            Recipe::Run(r) => Rederive::Whole(Box::new(RunRederive(r))),
            Recipe::Steps(r) => Rederive::Whole(Box::new(StepsRederive(r))),
            Recipe::Lines | Recipe::Merge | Recipe::Replace | Recipe::Write | Recipe::Hook => {
                Rederive::PerPath(Box::new(ThreeWay))
            }
        }
    }

    /// What the summary counts for this kind (`3 replacements in 2 files`).
    pub fn unit(&self) -> &'static str {
        match self {
            Recipe::Edit(_) | Recipe::Replace => "replacement",
            Recipe::Scan(_) => "fix",
            Recipe::Patch(_) => "chunk",
            Recipe::Merge | Recipe::Run(_) | Recipe::Steps(_) => "change",
            Recipe::Lines => "line range",
            Recipe::Write | Recipe::Hook => "file",
        }
    }
}
