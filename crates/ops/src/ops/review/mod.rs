/*!
Reviewing a large preview (`git astedit review`, the MCP `review` tool, the local
page): its sites grouped by what they do, outliers first, decided group by group or
site by site, and `apply` obeying the decisions.

* Sites ([`derive`]): the preview's recipe re-run on its before blobs and matched
  with its stored after blobs; where they differ, that region is a site of its own
  and an outlier.
* Groups: the same rule or op and the same change once the text it keeps is
  abstracted ([`template`]). The usual change of a rule is its largest group; its
  other groups are outliers.
* Decisions ([`decisions`]): per site, in `refs/astedit-review/<id>`, one commit per
  batch; deciding a group decides each of its sites. A site keeps its decision across
  a refresh when it is re-derived the same (its id hashes no line number).
* Apply ([`apply`]): accepted sites applied, rejected ones dropped, undecided ones
  left pending as a preview of their own; `split` cuts accepted groups into previews.

Front ends hold a [`Model`] (the page keeps one for its session) or call [`load`],
[`sites`] and [`decide`].
*/

use std::collections::BTreeMap;
use std::collections::HashMap;

use rayon::prelude::*;

use crate::error::Classify;
use crate::error::Exit;
use crate::repo::Repo;
pub use crate::report::review::Decided;
pub use crate::report::review::Decision;
pub use crate::report::review::DecisionBatch;
pub use crate::report::review::Group;
pub use crate::report::review::Review;
pub use crate::report::review::ReviewState;
pub use crate::report::review::Site;
pub use crate::report::review::SiteDiff;
pub use crate::report::review::SitePage;
use crate::report::Version;
use crate::txn::Preview;
use crate::Error;

pub mod apply;
mod decisions;
mod derive;
pub mod located;
pub mod record;
mod sites;
mod template;
mod verified;

use derive::FileSites;
use derive::Label;
use sites::label_text;
use sites::mark_outliers;
use sites::prepare;
use sites::recorded_sites;
use sites::short_hash;
use sites::texts_of;
use sites::Prepared;

/// What a decision is about.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase", tag = "kind", content = "key")]
pub enum Target {
    /// Every site of the group with this key.
    Group(String),
    /// The site with this id.
    Site(String),
    /// Every site of the preview.
    All,
}

/// Review's errors.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error("preview {preview} has no group '{key}'")]
    UnknownGroup { preview: String, key: String },
    #[error("preview {preview} has no site '{id}'")]
    UnknownSite { preview: String, id: String },
    #[error("no site of preview {0} is accepted (decisions obeyed here): nothing to apply")]
    NothingAccepted(String),
    #[error("no group of preview {0} is accepted whole: nothing to split")]
    NothingToSplit(String),
}

impl Classify for ReviewError {
    fn code(&self) -> &'static str {
        match self {
            ReviewError::UnknownGroup { .. } | ReviewError::UnknownSite { .. } => {
                "unknown-review-target"
            }
            ReviewError::NothingAccepted(_) | ReviewError::NothingToSplit(_) => "nothing-accepted",
        }
    }
    fn exit(&self) -> Exit {
        Exit::BadInput
    }
    fn hint(&self) -> Option<String> {
        match self {
            ReviewError::UnknownGroup { preview, .. }
            | ReviewError::UnknownSite { preview, .. } => Some(format!(
                "`git astedit review {preview} --text` lists the groups"
            )),
            ReviewError::NothingAccepted(id) | ReviewError::NothingToSplit(id) => Some(format!(
                "accept a group first (`git astedit review {id} --accept KEY`), or apply \
                 everything with `git astedit apply {id} --all`"
            )),
        }
    }
}

/// One decidable site of the model.
#[derive(Debug, Clone)]
struct SiteRec {
    id: String,
    /// Index into [`Model::files`].
    file: usize,
    /// Index into the file's spans (`None`: the whole entry).
    span: Option<usize>,
    group: usize,
    diff: SiteDiff,
    outlier: Option<String>,
}

#[derive(Debug, Clone)]
struct GroupRec {
    key: String,
    label: Label,
    template: String,
    outlier: Option<String>,
    /// Indexes into [`Model::sites`], in file order.
    sites: Vec<usize>,
}

/// One file of the preview: its entry and its sites.
struct FileRec {
    entry: usize,
    sites: FileSites,
}

/// A preview's review, held: its sites, groups and decisions.
pub struct Model {
    preview: Preview,
    files: Vec<FileRec>,
    sites: Vec<SiteRec>,
    groups: Vec<GroupRec>,
    by_key: HashMap<String, usize>,
    by_id: HashMap<String, usize>,
    dependents: usize,
    derived: &'static str,
    notes: Vec<String>,
    record: decisions::Record,
}

/// The review of pending preview `id` (the newest pending one when `None`).
pub fn load(repo: &Repo, id: Option<&str>) -> Result<Model, Error> {
    Model::load(repo, id)
}

/// A page of one group's sites.
pub fn sites(
    repo: &Repo,
    id: Option<&str>,
    group: &str,
    offset: usize,
    limit: usize,
) -> Result<SitePage, Error> {
    Model::load(repo, id)?.sites(group, offset, limit)
}

/// Records a batch of decisions on preview `id`, by `by` (`None` in a pair: back to
/// undecided).
pub fn decide(
    repo: &Repo,
    id: Option<&str>,
    decisions: &[(Target, Option<Decision>)],
    by: &str,
) -> Result<Decided, Error> {
    Model::load(repo, id)?.decide(repo, decisions, by)
}

impl Model {
    pub fn load(repo: &Repo, id: Option<&str>) -> Result<Model, Error> {
        let preview = crate::txn::find(repo, id)?;
        // Blobs read in turn (the repository is not shared between threads), sites
        // derived in parallel.
        let texts = preview
            .entries
            .iter()
            .map(|e| texts_of(repo, e))
            .collect::<Result<Vec<_>, Error>>()?;
        let (recorded, notes) = recorded_sites(repo, &preview, &texts);
        // The recipe is loaded only for files the record does not give.
        let rederive = recorded.iter().all(Option::is_none)
            || texts
                .iter()
                .zip(&recorded)
                .any(|(t, r)| t.is_some() && r.is_none());
        let recipe = match rederive {
            true => derive::Recipe::of(repo, &preview),
            false => derive::Recipe::None(String::new()),
        };
        let mut notes = notes;
        let derived = match &recipe {
            _ if recorded.iter().any(Option::is_some) => "recorded",
            derive::Recipe::None(why) => {
                notes.push(why.clone());
                "diff"
            }
            _ => "rerun",
        };
        let reruns = recipe.reruns();
        let reported = verified::reported(repo, &preview)?;
        let (files, prepared): (Vec<FileRec>, Vec<(Vec<Prepared>, usize)>) = texts
            .into_par_iter()
            .zip(recorded)
            .enumerate()
            .map(|(i, (t, recorded))| {
                let entry = &preview.entries[i];
                let file = FileRec {
                    entry: i,
                    sites: match t {
                        None => FileSites::Whole,
                        Some((before, after)) => {
                            let spans = match recorded {
                                Some(spans) => spans,
                                None => derive::file_sites(&recipe, &entry.path, &before, &after),
                            };
                            FileSites::Text { before, spans }
                        }
                    },
                };
                let prepared = prepare(entry, &file.sites, reruns, reported.get(&entry.path));
                (file, prepared)
            })
            .unzip();
        let record = decisions::Record::load(repo, &preview)?;
        let mut model = Model {
            preview,
            files,
            sites: Vec::new(),
            groups: Vec::new(),
            by_key: HashMap::new(),
            by_id: HashMap::new(),
            dependents: 0,
            derived,
            notes,
            record,
        };
        model.index(prepared);
        Ok(model)
    }

    /// The preview's full id.
    pub fn preview_id(&self) -> &str {
        &self.preview.id
    }

    pub fn preview(&self) -> &Preview {
        &self.preview
    }

    /// Builds the sites and groups from the files' prepared sites (in file order).
    fn index(&mut self, prepared: Vec<(Vec<Prepared>, usize)>) {
        let mut groups: Vec<GroupRec> = Vec::new();
        // A group's key is hashed once, when the group is made.
        let mut by_change: HashMap<(Label, String, Option<String>), usize> = HashMap::new();
        for (fi, (sites, dependents)) in prepared.into_iter().enumerate() {
            self.dependents += dependents;
            for p in sites {
                let change = (p.label, p.tmpl, p.why);
                let g = match by_change.get(&change) {
                    Some(&g) => g,
                    None => {
                        let (label, template, outlier) = change.clone();
                        groups.push(GroupRec {
                            key: short_hash(&[
                                label_text(&label).as_str(),
                                &template,
                                outlier.as_deref().unwrap_or(""),
                            ]),
                            label,
                            template,
                            outlier,
                            sites: Vec::new(),
                        });
                        by_change.insert(change, groups.len() - 1);
                        groups.len() - 1
                    }
                };
                groups[g].sites.push(self.sites.len());
                self.sites.push(SiteRec {
                    id: p.id,
                    file: fi,
                    span: p.span,
                    group: g,
                    diff: p.diff,
                    outlier: None,
                });
            }
        }
        mark_outliers(&mut groups);
        for g in &groups {
            for &s in &g.sites {
                self.sites[s].outlier = g.outlier.clone();
            }
        }
        // Outliers first, then the largest groups, then by key: a stable order.
        let mut order: Vec<usize> = (0..groups.len()).collect();
        order.sort_by(|&a, &b| {
            let (ga, gb) = (&groups[a], &groups[b]);
            gb.outlier
                .is_some()
                .cmp(&ga.outlier.is_some())
                .then(gb.sites.len().cmp(&ga.sites.len()))
                .then(ga.key.cmp(&gb.key))
        });
        let mut remap = vec![0; groups.len()];
        for (new, &old) in order.iter().enumerate() {
            remap[old] = new;
        }
        let mut sorted: Vec<Option<GroupRec>> = groups.into_iter().map(Some).collect();
        self.groups = order.iter().filter_map(|&o| sorted[o].take()).collect();
        for s in &mut self.sites {
            s.group = remap[s.group];
        }
        self.by_key = self
            .groups
            .iter()
            .enumerate()
            .map(|(i, g)| (g.key.clone(), i))
            .collect();
        self.by_id = self
            .sites
            .iter()
            .enumerate()
            .map(|(i, s)| (s.id.clone(), i))
            .collect();
    }

    fn site(&self, i: usize) -> Site {
        let s = &self.sites[i];
        Site {
            id: s.id.clone(),
            group: self.groups[s.group].key.clone(),
            diff: s.diff.clone(),
            outlier: s.outlier.clone(),
            decision: self.record.shown.get(&s.id).copied(),
        }
    }

    /// The review: groups (outliers first) with counts, files, a representative
    /// diff and the decisions shown (fetched ones included).
    pub fn review(&self) -> Review {
        let shown = &self.record.shown;
        let mut groups = Vec::with_capacity(self.groups.len());
        let (mut accepted, mut rejected, mut outliers) = (0, 0, 0);
        for g in &self.groups {
            let mut files: Vec<String> = Vec::new();
            let (mut acc, mut rej) = (0, 0);
            for &s in &g.sites {
                let site = &self.sites[s];
                if files.last() != Some(&site.diff.path) {
                    files.push(site.diff.path.clone());
                }
                match shown.get(&site.id) {
                    Some(Decision::Accept) => acc += 1,
                    Some(Decision::Reject) => rej += 1,
                    None => {}
                }
            }
            files.dedup();
            accepted += acc;
            rejected += rej;
            if g.outlier.is_some() {
                outliers += g.sites.len();
            }
            let count = g.sites.len();
            groups.push(Group {
                key: g.key.clone(),
                rule: match &g.label {
                    Label::Rule(r) => Some(r.clone()),
                    _ => None,
                },
                op: match &g.label {
                    Label::Op(o) => Some(o.clone()),
                    _ => None,
                },
                template: g.template.clone(),
                count,
                files,
                representative: self.sites[g.sites[0]].diff.clone(),
                outlier: g.outlier.clone(),
                decision: if acc == count {
                    Some(Decision::Accept)
                } else if rej == count {
                    Some(Decision::Reject)
                } else {
                    None
                },
                accepted: acc,
                rejected: rej,
            });
        }
        Review {
            schema_version: Version,
            preview: self.preview.id.clone(),
            kind: self.preview.meta.kind.as_str().to_string(),
            summary: self.preview.meta.summary.clone(),
            derived: self.derived.to_string(),
            sites: self.sites.len(),
            outliers,
            dependents: self.dependents,
            accepted,
            rejected,
            undecided: self.sites.len() - accepted - rejected,
            obeyed: self.record.all_obeyed(),
            batches: self.record.batches.clone(),
            notes: self.notes.clone(),
            groups,
        }
    }

    /// `limit` sites of group `key` from `offset` (0: every site).
    pub fn sites(&self, key: &str, offset: usize, limit: usize) -> Result<SitePage, Error> {
        let g = self.group(key)?;
        let all = &self.groups[g].sites;
        let take = if limit == 0 { usize::MAX } else { limit };
        Ok(SitePage {
            schema_version: Version,
            group: key.to_string(),
            total: all.len(),
            offset,
            sites: all
                .iter()
                .skip(offset)
                .take(take)
                .map(|&s| self.site(s))
                .collect(),
        })
    }

    fn group(&self, key: &str) -> Result<usize, Error> {
        self.by_key.get(key).copied().ok_or_else(|| {
            ReviewError::UnknownGroup {
                preview: self.preview.id.clone(),
                key: key.to_string(),
            }
            .into()
        })
    }

    /// The sites a target names.
    fn targets(&self, t: &Target) -> Result<Vec<usize>, Error> {
        match t {
            Target::All => Ok((0..self.sites.len()).collect()),
            Target::Group(key) => Ok(self.groups[self.group(key)?].sites.clone()),
            Target::Site(id) => self.by_id.get(id).map(|&s| vec![s]).ok_or_else(|| {
                ReviewError::UnknownSite {
                    preview: self.preview.id.clone(),
                    id: id.clone(),
                }
                .into()
            }),
        }
    }

    /// Records a batch of decisions (one commit, authored by `by`); later pairs win
    /// over earlier ones. A batch that changes nothing makes no commit.
    pub fn decide(
        &mut self,
        repo: &Repo,
        decisions: &[(Target, Option<Decision>)],
        by: &str,
    ) -> Result<Decided, Error> {
        let mut batch: BTreeMap<String, Option<Decision>> = BTreeMap::new();
        for (t, d) in decisions {
            for s in self.targets(t)? {
                batch.insert(self.sites[s].id.clone(), *d);
            }
        }
        // Only what changes what this repository obeys (a fetched decision repeated
        // here is a change: it becomes obeyed).
        batch.retain(|id, d| {
            self.record.obeyed.get(id).copied() != *d || self.record.shown.get(id).copied() != *d
        });
        let commit = if batch.is_empty() {
            None
        } else {
            let counts = self.counts_with(&batch);
            Some(
                self.record
                    .write(repo, &self.preview.id, &batch, counts, by)?,
            )
        };
        let review = self.review();
        Ok(Decided {
            schema_version: Version,
            preview: self.preview.id.clone(),
            commit: commit.map(|c| c.to_string()),
            by: by.to_string(),
            changed: batch.len(),
            accepted: review.accepted,
            rejected: review.rejected,
            undecided: review.undecided,
        })
    }
}

impl Model {
    /// The sites and the decisions shown on them once `batch` is taken.
    fn counts_with(&self, batch: &BTreeMap<String, Option<Decision>>) -> decisions::Counts {
        let mut counts = decisions::Counts {
            sites: self.sites.len(),
            ..decisions::Counts::default()
        };
        for s in &self.sites {
            let d = match batch.get(&s.id) {
                Some(d) => *d,
                None => self.record.shown.get(&s.id).copied(),
            };
            match d {
                Some(Decision::Accept) => counts.accepted += 1,
                Some(Decision::Reject) => counts.rejected += 1,
                None => {}
            }
        }
        counts
    }
}

/// What `review` is asked to do (both front ends; the page calls the [`Model`]).
#[derive(Debug, Clone, Default)]
pub struct ReviewRequest {
    /// A pending preview's id or unique prefix; the newest pending one when `None`.
    pub id: Option<String>,
    /// Group keys or site ids (`all`: every site) to decide, in order.
    pub decide: Vec<(String, Option<Decision>)>,
    /// Who decides: the batch's author.
    pub by: String,
    /// List the sites of this group instead of the groups.
    pub sites: Option<String>,
    pub offset: usize,
    pub limit: usize,
    /// Stage the accepted sites as previews of their own.
    pub split: Option<apply::SplitBy>,
}

/// What `review` did.
pub enum ReviewOutcome {
    Review(Box<Review>),
    Sites(SitePage),
    /// Decisions recorded, and the review after them.
    Decided(Decided, Box<Review>),
    Split(apply::SplitReport),
}

/// Runs one `review` request.
pub fn run(repo: &Repo, req: &ReviewRequest) -> Result<ReviewOutcome, Error> {
    let mut model = Model::load(repo, req.id.as_deref())?;
    if !req.decide.is_empty() {
        let targets = req
            .decide
            .iter()
            .map(|(key, d)| (model.target(key), *d))
            .collect::<Vec<_>>();
        let decided = model.decide(repo, &targets, &req.by)?;
        return Ok(ReviewOutcome::Decided(decided, Box::new(model.review())));
    }
    if let Some(by) = &req.split {
        return Ok(ReviewOutcome::Split(apply::split(repo, &model, by)?));
    }
    if let Some(key) = &req.sites {
        return Ok(ReviewOutcome::Sites(
            model.sites(key, req.offset, req.limit)?,
        ));
    }
    Ok(ReviewOutcome::Review(Box::new(model.review())))
}

impl Model {
    /// What a key typed by a person means: `all`, a group's key, else a site's id.
    pub fn target(&self, key: &str) -> Target {
        if key == "all" {
            Target::All
        } else if self.by_key.contains_key(key) {
            Target::Group(key.to_string())
        } else {
            Target::Site(key.to_string())
        }
    }
}

/// The review of pending preview `id` when it has decisions (its own or inherited
/// through a refresh), for `apply`; `None` when it has none (a plain apply).
pub fn decided(repo: &Repo, id: Option<&str>) -> Result<Option<Model>, Error> {
    let preview = crate::txn::find(repo, id)?;
    if !decisions::exist(repo, &preview.id)? {
        return Ok(None);
    }
    Model::load(repo, Some(&preview.id)).map(Some)
}

/// What was decided on a preview's review (`list`, `show`), read from its batches
/// without re-deriving its sites; `None` when it has no decisions (or they cannot be
/// read).
pub fn state(repo: &Repo, preview: &Preview) -> Option<ReviewState> {
    let record = decisions::Record::load(repo, preview).ok()?;
    if record.batches.is_empty() {
        return None;
    }
    let mut by: Vec<String> = Vec::new();
    for b in record.batches.iter().rev() {
        if !by.contains(&b.by) {
            by.push(b.by.clone());
        }
    }
    let (accepted, rejected, undecided) = match (&record.counts, &record.inherited_from) {
        (Some(c), _) => (
            Some(c.accepted),
            Some(c.rejected),
            Some(c.sites.saturating_sub(c.accepted + c.rejected)),
        ),
        // Inherited: which of them are this preview's sites is known only by deriving.
        (None, Some(_)) => (None, None, None),
        (None, None) => {
            let acc = record
                .shown
                .values()
                .filter(|d| **d == Decision::Accept)
                .count();
            (Some(acc), Some(record.shown.len() - acc), None)
        }
    };
    Some(ReviewState {
        accepted,
        rejected,
        undecided,
        by,
        obeyed: record.all_obeyed(),
        inherited_from: record.inherited_from.clone(),
    })
}
