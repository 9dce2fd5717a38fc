/*!
Pathspecs: the user's, made into ones gix reads the same from any folder, and the
searches and selections made with them.
*/

use super::literal_pathspecs;
use super::Error;
use crate::repo::Repo;

/// The user's pathspecs turned into ones gix reads the same from any folder: a plain
/// spec becomes `:(top)<path from the root>` (`:(top,literal)…` under
/// `GIT_LITERAL_PATHSPECS`, where every spec is plain).
pub struct Pathspecs {
    /// (spec for gix, spec as typed) of each spec that selects files.
    pub positive: Vec<(String, String)>,
    /// Exclusions (`:!x`, `:^x`, `:(exclude)x`), as typed.
    pub negative: Vec<String>,
    /// Repository paths named by plain specs (for `-l`, which parses those files as
    /// the forced language).
    pub named: std::collections::BTreeSet<String>,
}

impl Pathspecs {
    pub fn new(repo: &Repo, specs: &[String]) -> Result<Pathspecs, Error> {
        let literal = literal_pathspecs();
        let mut out = Pathspecs {
            positive: Vec::new(),
            negative: Vec::new(),
            named: std::collections::BTreeSet::new(),
        };
        for spec in specs {
            let magic = !literal && spec.starts_with(':');
            if magic && is_exclude(spec) {
                out.negative.push(spec.clone());
            } else if magic {
                out.positive.push((spec.clone(), spec.clone()));
            } else {
                let top = repo.repo_path_from_arg(spec).map_err(Error::Pathspec)?;
                out.named.insert(top.clone());
                let gix_spec = match (top.is_empty(), literal) {
                    (true, _) => ":/".to_string(),
                    (false, false) => format!(":(top){top}"),
                    (false, true) => format!(":(top,literal){top}"),
                };
                out.positive.push((gix_spec, spec.clone()));
            }
        }
        Ok(out)
    }

    /// The repository to hand these specs to gix with. gix reads
    /// `GIT_LITERAL_PATHSPECS` too, and would then take our `:(top)` for part of a
    /// file name; the specs already say `literal` where the user's mean it.
    pub fn repository(&self, repo: &Repo) -> gix::Repository {
        let mut git = repo.git.clone();
        if literal_pathspecs() {
            let mut config = git.config_snapshot_mut();
            // A boolean key accepts "false": this cannot fail validation.
            let _ = config.set_value(&gix::config::tree::gitoxide::Pathspec::LITERAL, "false");
        }
        git
    }

    /// `specs` prepared ([`Pathspecs::new`]), the repository to search with them
    /// ([`Pathspecs::repository`]) and its index: what every listing and selection by
    /// pathspec starts from.
    pub fn open(
        repo: &Repo,
        specs: &[String],
    ) -> Result<(Pathspecs, gix::Repository, gix::worktree::Index), Error> {
        let specs = Pathspecs::new(repo, specs)?;
        let git = specs.repository(repo);
        let index = git
            .index_or_empty()
            .map_err(|e| Error::Index(Box::new(e)))?;
        Ok((specs, git, index))
    }
}

/// git's pathspec matcher for `specs` over `index` (pathspec attributes read from the
/// index, as git reads them): every file walk and selection builds its search here.
pub fn pathspec_search<'r>(
    git: &'r gix::Repository,
    specs: impl IntoIterator<Item = impl AsRef<str>>,
    index: &gix::index::State,
) -> Result<gix::Pathspec<'r>, Error> {
    git.pathspec(
        true,
        specs
            .into_iter()
            .map(|s| gix::bstr::BString::from(s.as_ref())),
        true,
        index,
        gix::worktree::stack::state::attributes::Source::IdMapping,
    )
    .map_err(|e| Error::Walk(Box::new(e)))
}

/// The specs of `positive` (as typed) that match no stage-0 entry of `index`: for
/// `--cached`, where the index is the file set and such a spec is an error too.
pub fn unmatched_in_index(
    git: &gix::Repository,
    index: &gix::index::State,
    positive: &[(String, String)],
) -> Result<Vec<String>, Error> {
    let mut unmatched = Vec::new();
    for (spec, typed) in positive {
        let mut pathspec = pathspec_search(git, [spec], index)?;
        let matched = index.entries().iter().any(|entry| {
            entry.stage_raw() == 0 && pathspec.is_included(entry.path(index), Some(false))
        });
        if !matched {
            unmatched.push(typed.clone());
        }
    }
    Ok(unmatched)
}

/// The paths of `paths` (repository paths, e.g. a preview's) that the pathspecs select,
/// with git's pathspec rules, relative to the current folder like every other
/// command's. A spec that selects none of them is an error naming it.
pub fn select_paths(
    repo: &Repo,
    specs: &[String],
    paths: &[String],
) -> Result<std::collections::BTreeSet<String>, Error> {
    let (parsed, git, index) = Pathspecs::open(repo, specs)?;
    // One search per selecting spec (each with every exclusion), so that a spec that
    // selects nothing is told apart from the others.
    let groups: Vec<(Vec<String>, Option<String>)> = if parsed.positive.is_empty() {
        vec![(parsed.negative.clone(), None)]
    } else {
        parsed
            .positive
            .iter()
            .map(|(spec, typed)| {
                let specs = std::iter::once(spec.clone())
                    .chain(parsed.negative.iter().cloned())
                    .collect();
                (specs, Some(typed.clone()))
            })
            .collect()
    };
    let mut selected = std::collections::BTreeSet::new();
    let mut unmatched = Vec::new();
    for (specs, typed) in groups {
        let mut search = pathspec_search(&git, &specs, &index)?;
        let mut any = false;
        for p in paths {
            if search.is_included(gix::bstr::BStr::new(p.as_bytes()), Some(false)) {
                any = true;
                selected.insert(p.clone());
            }
        }
        if !any {
            unmatched.extend(typed);
        }
    }
    if !unmatched.is_empty() {
        return Err(Error::PathspecNoMatch(unmatched));
    }
    Ok(selected)
}

fn is_exclude(spec: &str) -> bool {
    spec.starts_with(":!") || spec.starts_with(":^") || spec.starts_with(":(exclude")
}

/// The specs a search of the index (or of a commit's tree) gets: the selecting ones,
/// then the exclusions; like git, no selecting spec means the current folder and below.
pub fn index_specs(repo: &Repo, specs: Pathspecs) -> Vec<String> {
    let mut out: Vec<String> = specs.positive.into_iter().map(|(s, _)| s).collect();
    let selecting = !out.is_empty();
    out.extend(specs.negative);
    if !selecting {
        match repo.prefix.as_deref() {
            Some(p) if !p.is_empty() => out.push(format!(":(top){p}")),
            _ => out.push(":/".into()),
        }
    }
    out
}
