/*!
What a preview kind records at staging so that `refresh` can re-derive it, and the
vocabulary that re-derivation is written in. Each op owns its kind's recipe (the edit
one in [`crate::ops::edit::recipe`], scan, patch and run likewise): a typed,
serialized value kept under `details.refresh` of the preview's metadata, and how a
stale preview of that kind is re-derived, either

* path by path ([`PerPath`]): each path whose work-tree content is neither side of
  the preview is re-derived alone (ops re-run, rules re-run, the patch re-resolved,
  or a three-way merge), and `refresh --all` may add files that match now; or
* whole ([`Whole`]): the recorded command (or steps) runs again on the tree as it is
  now, and what it changes this time is the successor.

The driver, [`crate::ops::refresh`], knows no kind: it keeps, drops and re-derives
paths, gathers conflicts and holds the lock.
*/

use std::collections::BTreeSet;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::change::ChangeSet;
use crate::change::FileChange;
use crate::change::FileContent;
use crate::change::FileFlag;
use crate::change::FileMeta;
use crate::change::PreviewMeta;
use crate::lang::Lang;
use crate::repo::Repo;
use crate::report::How;
use crate::txn::Preview;
use crate::txn::StoredEntry;
use crate::Error;

pub mod merge;

use merge::Merge3;
use merge::Region;

/// The key under `details` where a preview records its recipe.
pub const DETAILS_KEY: &str = "refresh";

/// A kind's recipe as it is kept in a preview's metadata: serialized under
/// `details.refresh` (the kind itself is `meta.kind`). Reading is lenient: a field an
/// older version did not record takes its default, and a recipe that does not read
/// at all is no recipe.
pub trait Recorded: Serialize + DeserializeOwned {
    /// Records the recipe in `meta.details`, keeping what else is there.
    fn record(&self, meta: &mut PreviewMeta) {
        insert_detail_at(
            meta,
            DETAILS_KEY,
            serde_json::to_value(self).unwrap_or_default(),
        );
    }

    /// The recipe a preview recorded; `None` when it recorded none (or one that does
    /// not read as this kind's).
    fn recorded(meta: &PreviewMeta) -> Option<Self> {
        let rec = meta.details.get(DETAILS_KEY)?;
        serde_json::from_value(rec.clone()).ok()
    }
}

/// Sets `meta.details[key]`, keeping what is there (a non-object value moves under
/// `engine`).
pub fn insert_detail_at(meta: &mut PreviewMeta, key: &str, value: serde_json::Value) {
    let mut details = match std::mem::take(&mut meta.details) {
        serde_json::Value::Object(map) => map,
        serde_json::Value::Null => serde_json::Map::new(),
        other => {
            let mut map = serde_json::Map::new();
            map.insert("engine".into(), other);
            map
        }
    };
    details.insert(key.into(), value);
    meta.details = serde_json::Value::Object(details);
}

/// One stale path: the work tree holds a file there that is neither side of the
/// preview, and the preview had a file there before.
pub struct Stale<'a> {
    pub repo: &'a Repo,
    /// The old preview's metadata.
    pub meta: &'a PreviewMeta,
    pub entry: &'a StoredEntry,
    /// The preview's before side.
    pub before: &'a [u8],
    /// The preview's after side (`None`: the preview deletes the path).
    pub after: Option<&'a [u8]>,
    /// What the work tree holds now.
    pub current: &'a FileContent,
}

impl Stale<'_> {
    pub fn path(&self) -> &str {
        &self.entry.path
    }

    /// The three-way merge of the path (base = before, ours = the work tree, theirs
    /// = `after`), with the layout rule of [`merge::merge3_layout`], and by syntax node
    /// where the line merge conflicts ([`merge::merge3_file`]).
    pub fn merge(&self, after: &[u8]) -> Result<Merge3, Error> {
        merge::merge3_file(
            self.path(),
            self.before,
            &self.current.bytes,
            after,
            merge::BothChanged::ByLine,
        )
    }

    /// The path merged three-way, as a derived path: what a kind with no recipe, or
    /// one that cannot re-run here, does.
    pub fn merged(&self) -> Result<Derived, Error> {
        let Some(after) = self.after else {
            return Ok(self.conflict("edited, and the preview deletes it", Vec::new()));
        };
        let m = self.merge(after)?;
        if !m.conflicts.is_empty() {
            return Ok(self.conflict(
                "edited where the preview changes it (three-way merge conflict)",
                m.conflicts,
            ));
        }
        let why = merged_why(&m);
        Ok(Derived::Changed {
            after: m.text,
            count: old_count(self.meta, self.path()),
            how: How::Merged,
            flags: old_flags(self.meta, self.path()),
            why,
        })
    }

    /// A conflict at this path.
    pub fn conflict(&self, why: &str, regions: Vec<Region>) -> Derived {
        Derived::Conflict(ConflictFile {
            path: self.entry.path.clone(),
            why: why.into(),
            regions,
        })
    }
}

/// What a file's row says of how it merged, when it was not the plain line merge.
fn merged_why(m: &Merge3) -> Option<String> {
    if m.by_layout {
        return Some(
            "only whitespace at the ends of lines changed next to the preview's change (a \
             formatter?); merged line by line"
                .to_string(),
        );
    }
    m.by_nodes.then(|| {
        "the work tree and the preview changed different declarations next to each other; \
         merged declaration by declaration"
            .to_string()
    })
}

/// One path re-derived.
pub enum Derived {
    /// New after bytes and the count of changes in them.
    Changed {
        after: Vec<u8>,
        count: usize,
        how: How,
        flags: Vec<FileFlag>,
        /// Said in the file's row (e.g. that only the layout at its sites changed).
        why: Option<String>,
    },
    /// No change left to make at this path.
    Dropped(String),
    Conflict(ConflictFile),
}

/// A file a refresh cannot re-derive, and where.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct ConflictFile {
    pub path: String,
    /// What is in the way, e.g. `edited where the preview changes it`.
    pub why: String,
    /// Line regions of the work-tree file (1-based, inclusive) where the edits collide.
    pub regions: Vec<Region>,
}

/// A newly matching file of `refresh --all`: its path, change, count and flags.
pub type NewFile = (String, FileChange, usize, Vec<FileFlag>);

/// A kind re-derived path by path. One value serves one refresh: what it loads (rules,
/// a re-resolved patch) it loads once, on the first stale path that needs it.
pub trait PerPath {
    /// Re-derives one stale path. The default merges it three-way.
    fn path(&mut self, stale: &Stale<'_>, notes: &mut Vec<String>) -> Result<Derived, Error> {
        let _ = notes;
        stale.merged()
    }

    /// Whether the preview was staged from the index (`--cached`): a stale path is then
    /// re-derived only where the work-tree file holds the index's blob (what the
    /// recipe would read), else the refresh is refused (`unstaged-changes`).
    fn cached(&self) -> bool {
        false
    }

    /// `refresh --all`: the files outside `known` that the recipe changes now, over
    /// the file set recorded at staging; `None` when the kind records no file set.
    fn all(
        &mut self,
        repo: &Repo,
        meta: &PreviewMeta,
        known: &BTreeSet<String>,
        notes: &mut Vec<String>,
    ) -> Result<Option<Vec<NewFile>>, Error> {
        let _ = (repo, meta, known, notes);
        Ok(None)
    }
}

/// The kinds that record nothing to re-run (merged, line and string edits, written
/// files, hook journals): each stale path is merged three-way from the blob the
/// change was staged on.
pub struct ThreeWay;

impl PerPath for ThreeWay {}

/// A kind re-derived whole: its recipe runs again on the tree as it is now. The
/// driver runs [`Whole::derive`] without the repository lock for `refresh` (it may
/// take minutes) and takes the lock again for the swap.
pub trait Whole {
    fn derive(&self, repo: &Repo, old: &Preview) -> Result<Derivation, Error>;
}

/// What a whole re-derivation changes now.
pub struct Derivation {
    pub changes: ChangeSet,
    /// Per change, in order: its path, count and flags.
    pub files: Vec<FileMeta>,
    /// Why a path of the old preview the recipe no longer changes drops out.
    pub dropped: &'static str,
    pub notes: Vec<String>,
    /// Completes the successor's metadata (what the new run found; the summary),
    /// given the old preview's id.
    pub successor: Successor,
}

/// Completes a successor's metadata, given the old preview's id.
pub type Successor = Box<dyn FnOnce(&mut PreviewMeta, &str)>;

/// The old preview's count for `path`.
pub fn old_count(meta: &PreviewMeta, path: &str) -> usize {
    meta.files
        .iter()
        .find(|f| f.path == path)
        .map(|f| f.count)
        .unwrap_or(0)
}

/// The old preview's flags for `path`.
pub fn old_flags(meta: &PreviewMeta, path: &str) -> Vec<FileFlag> {
    meta.files
        .iter()
        .find(|f| f.path == path)
        .map(|f| f.flags.clone())
        .unwrap_or_default()
}

/// A re-run's changes, as (op or rule, matched text, inserted text), sorted: the
/// identity of "the same change" wherever it sits in the file.
pub type Pairs = Vec<(usize, String, String)>;

/// Whether two re-runs' replacements are the same sites but for layout: pairwise,
/// the matched texts and the results are the same tokens (a formatter ran between).
pub fn same_sites(lang: Lang, now: &Pairs, then: &Pairs) -> bool {
    let key = |v: &Pairs| {
        let mut k: Vec<(usize, Vec<String>, Vec<String>)> = v
            .iter()
            .map(|(op, b, a)| {
                (
                    *op,
                    crate::rewrite::layout_key(lang, b),
                    crate::rewrite::layout_key(lang, a),
                )
            })
            .collect();
        k.sort();
        k
    };
    now.len() == then.len() && key(now) == key(then)
}

/// Says (in the refresh's notes, and returns for the file's row) that a path was
/// re-derived although its sites changed, because only their layout did.
pub fn reformatted_note(path: &str, what: &str, notes: &mut Vec<String>) -> String {
    let why = "only whitespace changed at the preview's sites (a formatter?); the same \
               replacements were made on the reformatted text";
    notes.push(format!(
        "{}: only whitespace or formatting changed where the preview's {what} apply; re-ran \
         them on the reformatted text",
        crate::text::escape_line(path)
    ));
    why.to_string()
}

/// A re-run of a stale path by a kind that re-runs on text (edit ops, scan rules):
/// `now` and `then` are the re-runs on the work tree's text and on the before side.
/// Accepted where the three-way merge with the preview is clean or the re-run makes
/// the same changes (up to layout); a conflict otherwise.
pub struct Rerun<'a> {
    pub stale: &'a Stale<'a>,
    pub lang: Option<Lang>,
    pub now: Pairs,
    pub then: Pairs,
    /// `ops` or `rules`, in the notes.
    pub what: &'static str,
    /// The conflict's words when the re-run gives other changes.
    pub other: &'static str,
}

impl Rerun<'_> {
    /// `Ok(Err(conflict))` when the re-run is refused, else the row's note (a
    /// reformat).
    pub fn check(
        &self,
        after: &[u8],
        notes: &mut Vec<String>,
    ) -> Result<Result<Option<String>, Derived>, Error> {
        let merge = self.stale.merge(after)?;
        if merge.conflicts.is_empty() || self.now == self.then {
            return Ok(Ok(None));
        }
        if !self
            .lang
            .is_some_and(|l| same_sites(l, &self.now, &self.then))
        {
            return Ok(Err(self.stale.conflict(self.other, merge.conflicts)));
        }
        Ok(Ok(Some(reformatted_note(
            self.stale.path(),
            self.what,
            notes,
        ))))
    }
}
