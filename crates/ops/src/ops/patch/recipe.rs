//! The recipe of a patch preview: the patch text and the folder its paths are relative
//! to, recorded under `details.refresh`. A refresh resolves the patch again on the
//! work tree as it is now (once, on the first stale path) and takes each stale path's
//! new content from it; when it no longer resolves cleanly, stale paths are merged
//! three-way instead.

use std::collections::BTreeMap;

use crate::change::FileContent;
use crate::change::FileFlag;
use crate::ops::recipe::Derived;
use crate::ops::recipe::PerPath;
use crate::ops::recipe::Recorded;
use crate::ops::recipe::Stale;
use crate::repo::Repo;
use crate::report::How;
use crate::Error;

/// What a patch preview records: the whole patch text and its base folder (a
/// repository path, `""` for the top).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PatchRecipe {
    #[serde(default)]
    pub patch: Option<String>,
    #[serde(default)]
    pub base: String,
}

impl Recorded for PatchRecipe {}

impl PatchRecipe {
    pub fn new(text: &str, base: &str) -> PatchRecipe {
        PatchRecipe {
            patch: Some(text.to_string()),
            base: base.to_string(),
        }
    }

    /// The re-derivation of a stale patch preview with this recipe (`None`: staged by
    /// a version that recorded none).
    pub fn rederive(recipe: Option<PatchRecipe>) -> PatchRederive {
        PatchRederive {
            recipe,
            repatched: None,
        }
    }
}

/// A patch preview being refreshed.
pub struct PatchRederive {
    recipe: Option<PatchRecipe>,
    repatched: Option<Result<Repatched, String>>,
}

impl PerPath for PatchRederive {
    fn path(&mut self, s: &Stale<'_>, notes: &mut Vec<String>) -> Result<Derived, Error> {
        let recipe = &self.recipe;
        let res = self.repatched.get_or_insert_with(|| {
            let r = repatch(s.repo, recipe.as_ref(), notes);
            if let Err(why) = &r {
                notes.push(format!("{why}; changed files are merged three-way instead"));
            }
            r
        });
        let Ok(map) = res else {
            return s.merged();
        };
        Ok(match map.get(s.path()) {
            Some((Some(a), count, flags)) => Derived::Changed {
                after: a.bytes.clone(),
                count: *count,
                how: How::Repatched,
                flags: flags.clone(),
                why: None,
            },
            Some((None, ..)) => s.conflict("edited, and the patch deletes it", Vec::new()),
            None => Derived::Dropped("the patch no longer changes it".into()),
        })
    }
}

/// A recorded patch re-resolved on the current work tree: path → (after, count, flags).
type Repatched = BTreeMap<String, (Option<FileContent>, usize, Vec<FileFlag>)>;

fn repatch(
    repo: &Repo,
    recipe: Option<&PatchRecipe>,
    notes: &mut Vec<String>,
) -> Result<Repatched, String> {
    let recipe =
        recipe.ok_or("the preview did not record its patch (staged by an older version)")?;
    let text = recipe
        .patch
        .as_deref()
        .ok_or("the preview did not record its patch")?;
    let tree = crate::patch::FsTree::for_repo(repo).map_err(|e| e.to_string())?;
    // Re-indented context (a formatter) is placed with indentation ignored: the patch
    // placed once already, so a unique match of the same lines is the same place.
    let opts = crate::patch::Options { reindent: true };
    let res = crate::patch::resolve_text_with(text, &tree, &recipe.base, opts)
        .map_err(|e| format!("the patch no longer resolves: {e}"))?;
    // A rescue overwrites drifted lines: someone's edit there would be lost unseen.
    if res.report.rescued() > 0 {
        return Err(
            "the patch resolves again only by a rescue that overwrites drifted lines".into(),
        );
    }
    for op in &res.report.ops {
        use crate::patch::Level;
        let has = |l: Level| op.chunks.iter().any(|c| c.level == l);
        let path = crate::text::escape_line(&op.path);
        if has(Level::Indentation) {
            notes.push(format!(
                "{path}: the patch's context differs from the file only in indentation (a \
                 formatter?); placed with indentation ignored and its added lines re-indented"
            ));
        } else if has(Level::TrailingWhitespace) || has(Level::UnicodeTrailingWhitespace) {
            notes.push(format!(
                "{path}: the patch's context differs from the file only in trailing whitespace; \
                 the file's lines were kept"
            ));
        }
    }
    let files = crate::patch::meta::preview_meta(&res, "", None).files;
    Ok(res
        .changes
        .changes
        .into_iter()
        .map(|c| {
            let f = files.iter().find(|f| f.path == c.path);
            let count = f.map(|f| f.count).unwrap_or(0);
            let flags = f.map(|f| f.flags.clone()).unwrap_or_default();
            (c.path, (c.after, count, flags))
        })
        .collect())
}
