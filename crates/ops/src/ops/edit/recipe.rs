//! The recipe of an edit preview: its ops (in the metadata's `ops` and `imports`) and
//! the file set they ran over, recorded under `details.refresh`; a stale path has the
//! ops re-run on it, and `refresh --all` re-runs them over the recorded file set.

use std::collections::BTreeSet;

use crate::change::PreviewMeta;
use crate::lang::Lang;
use crate::ops::recipe::Derived;
use crate::ops::recipe::NewFile;
use crate::ops::recipe::Pairs;
use crate::ops::recipe::PerPath;
use crate::ops::recipe::Recorded;
use crate::ops::recipe::Rerun;
use crate::ops::recipe::Stale;
use crate::repo::Repo;
use crate::report::How;
use crate::rewrite::Op;
use crate::rewrite::Rewriter;
use crate::Error;

/// What an edit preview records for `refresh --all`: the pathspecs as typed, the
/// folder they were typed in, the file size limit; and whether it holds a selection
/// of the matches (`edit -i`), which a refresh must not re-run (that would take
/// every match): its changed files are merged three-way instead; and whether it read
/// the index (`--cached`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EditRecipe {
    #[serde(default)]
    pub pathspecs: Vec<String>,
    #[serde(default)]
    pub prefix: String,
    #[serde(default = "default_max_file_size")]
    pub max_file_size: u64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub selected: bool,
    /// Staged from the index (`--cached`); absent from the recipes of the work tree.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
}

fn default_max_file_size() -> u64 {
    crate::files::DEFAULT_MAX_FILE_SIZE
}

impl Recorded for EditRecipe {}

impl EditRecipe {
    /// The re-derivation of a stale edit preview with this recipe (`None`: staged by
    /// a version that recorded none).
    pub fn rederive(
        recipe: Option<EditRecipe>,
        meta: &PreviewMeta,
        notes: &mut Vec<String>,
    ) -> EditRederive {
        let selected = recipe.as_ref().is_some_and(|r| r.selected);
        if selected {
            notes.push(
                "the preview holds a selection of the matches (-i): its changed files are \
                 merged three-way, not re-run"
                    .into(),
            );
        }
        EditRederive {
            ops: if selected { None } else { EditOps::of(meta) },
            recipe,
        }
    }
}

/// An edit preview being refreshed.
pub struct EditRederive {
    ops: Option<EditOps>,
    recipe: Option<EditRecipe>,
}

impl PerPath for EditRederive {
    fn path(&mut self, s: &Stale<'_>, notes: &mut Vec<String>) -> Result<Derived, Error> {
        let (Some(ops), Some(after)) = (&self.ops, s.after) else {
            return s.merged();
        };
        let (Some(rewriter), Ok(now_text), Ok(before_text)) = (
            ops.rewriter(s.path()),
            std::str::from_utf8(&s.current.bytes),
            std::str::from_utf8(s.before),
        ) else {
            return s.merged();
        };
        let path = Some(s.path());
        let (Ok(now), Ok(then)) = (
            rewriter.rewrite_file(path, now_text, &mut |_, _| true),
            rewriter.rewrite_file(path, before_text, &mut |_, _| true),
        ) else {
            return s.merged();
        };
        if let Some(why) = now.as_ref().and_then(|rw| rw.import_conflict.as_ref()) {
            return Ok(s.conflict(
                &format!("{why} (adding it would bind the name twice)"),
                Vec::new(),
            ));
        }
        let rerun = Rerun {
            stale: s,
            lang: Some(rewriter.language()),
            now: pairs(&now),
            then: pairs(&then),
            what: "ops",
            other: "edited where the preview changes it, and re-running the ops there gives \
                    other replacements",
        };
        let why = match rerun.check(after, notes)? {
            Ok(why) => why,
            Err(conflict) => return Ok(conflict),
        };
        Ok(match now.filter(|r| r.text.as_bytes() != s.current.bytes) {
            None => Derived::Dropped("the ops no longer match".into()),
            Some(rw) => Derived::Changed {
                count: rw.replacements.len(),
                flags: rw.flags(),
                after: rw.text.into_bytes(),
                how: How::Rerun,
                why,
            },
        })
    }

    fn cached(&self) -> bool {
        self.recipe.as_ref().is_some_and(|r| r.cached)
    }

    fn all(
        &mut self,
        repo: &Repo,
        _meta: &PreviewMeta,
        known: &BTreeSet<String>,
        notes: &mut Vec<String>,
    ) -> Result<Option<Vec<NewFile>>, Error> {
        if self.cached() && self.ops.is_some() {
            notes.push(
                "--all: the preview was staged from the index (--cached); only its own files \
                 were refreshed"
                    .into(),
            );
            return Ok(Some(Vec::new()));
        }
        match &self.ops {
            Some(ops) => rerun_all(repo, self.recipe.as_ref(), ops, known, notes).map(Some),
            None => Ok(None),
        }
    }
}

/// The edit ops recorded in a preview, and the language forced at staging (review
/// re-runs them on a preview's before side to find its sites).
pub struct EditOps {
    ops: Vec<Op>,
    imports: crate::change::ImportFix,
    forced: Option<Lang>,
}

impl EditOps {
    /// The ops `meta` recorded; `None` when it recorded none, or a forced language
    /// that no longer parses.
    pub fn of(meta: &PreviewMeta) -> Option<EditOps> {
        if meta.ops.is_empty() {
            return None;
        }
        let forced = match meta.ops[0].lang.as_deref() {
            Some(l) => Some(crate::files::parse_language(l).ok()?),
            None => None,
        };
        Some(EditOps {
            ops: meta
                .ops
                .iter()
                .map(|o| Op {
                    pattern: o.pattern.clone(),
                    rewrite: o.rewrite.clone(),
                    selector: o.selector.clone(),
                })
                .collect(),
            imports: meta.imports.clone(),
            forced,
        })
    }

    /// The ops compiled for `path`'s language (`None`: a file they were not run on
    /// as a whole, or a language they do not compile for).
    pub fn rewriter(&self, path: &str) -> Option<Rewriter> {
        // A file that embeds the forced language (HTML under `-l js`) was edited in its
        // embedded regions only: not re-run as a whole, merged instead.
        if let (Some(forced), Some(own)) = (self.forced, crate::files::language_of(path)) {
            if own != forced && crate::lang::Injection::hosts_of(forced, &[]).contains(&own) {
                return None;
            }
        }
        let lang = self.forced.or_else(|| crate::files::language_of(path))?;
        Rewriter::for_language(&self.ops, lang, self.forced)
            .ok()
            .map(|r| r.with_imports(&self.imports))
    }
}

/// The replacements a re-run made, as (op, matched text, replacement), sorted.
fn pairs(rw: &Option<crate::rewrite::FileRewrite>) -> Pairs {
    let mut v: Pairs = rw
        .iter()
        .flat_map(|r| &r.replacements)
        .map(|r| (r.op, r.before.clone(), r.after.clone()))
        .collect();
    v.sort();
    v
}

/// `refresh --all` of an edit: the ops over the file set recorded at staging, for the
/// files not in the preview. Returns the newly matching ones.
fn rerun_all(
    repo: &Repo,
    recipe: Option<&EditRecipe>,
    ops: &EditOps,
    known: &BTreeSet<String>,
    notes: &mut Vec<String>,
) -> Result<Vec<NewFile>, Error> {
    let (pathspecs, prefix, max_file_size) = match recipe {
        Some(r) => (r.pathspecs.clone(), r.prefix.as_str(), r.max_file_size),
        None => {
            notes.push(
                "the preview did not record its file set (staged by an older version): --all \
                 re-ran over the whole work tree"
                    .into(),
            );
            (Vec::new(), "", crate::files::DEFAULT_MAX_FILE_SIZE)
        }
    };
    // The pathspecs are relative to the folder they were typed in.
    let at = Repo::discover_from(&repo.workdir.join(prefix))?;
    // The project's root sgconfig.yml, as an edit run at the root reads it: its
    // languageGlobs name the files' languages, its injections the embedding ones.
    let language_globs = crate::scan::rules::project_language_globs(&at, None)?;
    let set = crate::files::collect(
        &at,
        &crate::files::Options {
            pathspecs,
            lang: ops.forced,
            max_file_size,
            globs: Default::default(),
            no_ignore: false,
            language_globs,
            ask_git: false,
            asked: None,
        },
    )?;
    let unknown = |files: Vec<crate::files::Candidate>| -> Vec<crate::files::Candidate> {
        files
            .into_iter()
            .filter(|f| !known.contains(&f.path))
            .collect()
    };
    let fresh = crate::files::FileSet {
        files: unknown(set.files),
        hosts: unknown(set.hosts),
        injections: set.injections,
        ..Default::default()
    };
    let outcome = crate::edit::edit(
        repo,
        &fresh,
        &ops.ops,
        &ops.imports,
        ops.forced,
        max_file_size,
    )?;
    let mut out = Vec::new();
    for (change, edit) in outcome.changes.changes.into_iter().zip(&outcome.files) {
        out.push((
            change.path.clone(),
            change,
            edit.replacements.len(),
            edit.flags.clone(),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moved_call_makes_the_same_replacements_an_edited_one_does_not() {
        let meta = PreviewMeta {
            ops: vec![crate::change::OpMeta {
                pattern: "foo($A, $B)".into(),
                rewrite: "foo($B, $A)".into(),
                lang: None,
                selector: None,
            }],
            ..PreviewMeta::default()
        };
        let ops = EditOps::of(&meta).expect("edit ops");
        let rw = ops.rewriter("a.js").expect("compiles for js");
        let run = |t: &str| pairs(&rw.rewrite(t).expect("rewrite"));
        let before = "function h() {}\nfunction m() { foo(1, k); }\n";
        let moved = "function m() { foo(1, k); }\n\nfunction h() {}\n";
        let edited = "function h() {}\nfunction m() { foo(1, j); }\n";
        assert_eq!(run(before), run(moved));
        assert_ne!(run(before), run(edited));
        assert!(ops.rewriter("notes.unknown-extension").is_none());
    }

    #[test]
    fn an_old_recipe_reads_with_defaults_and_records_as_before() {
        let old: EditRecipe =
            serde_json::from_value(serde_json::json!({"pathspecs": ["src"]})).expect("reads");
        assert_eq!(old.prefix, "");
        assert_eq!(old.max_file_size, crate::files::DEFAULT_MAX_FILE_SIZE);
        assert!(!old.selected);
        assert!(!old.cached);
        let mut meta = PreviewMeta::default();
        EditRecipe {
            selected: true,
            ..old
        }
        .record(&mut meta);
        assert_eq!(
            serde_json::to_string(&meta.details).expect("json"),
            r#"{"refresh":{"max_file_size":4194304,"pathspecs":["src"],"prefix":"","selected":true}}"#
        );
    }
}
