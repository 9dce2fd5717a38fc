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
mod template;
mod verified;

use derive::FileSites;
use derive::Label;
use derive::SpanKind;

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

/// One site of a file, ready to be grouped: worked out per file, in parallel.
struct Prepared {
    id: String,
    label: Label,
    tmpl: String,
    why: Option<String>,
    diff: SiteDiff,
    /// Index into the file's spans (`None`: the whole entry).
    span: Option<usize>,
}

/// A file's sites with their templates and ids, and how many dependent changes it
/// has (`reported`: the lines of its after side `verify` runs reported on). A site's id hashes its path, label, lines and enclosing line, and how many
/// equal ones came before it in the file (no line number).
fn prepare(
    entry: &crate::txn::StoredEntry,
    sites: &FileSites,
    reruns: bool,
    reported: Option<&std::collections::BTreeSet<usize>>,
) -> (Vec<Prepared>, usize) {
    let mut out = Vec::new();
    let mut dependents = 0;
    // Keyed by a digest of the id's text: a site's lines can be a megabyte each (a
    // minified line holding hundreds of sites), too much to keep once per site.
    let mut seen: HashMap<[u8; 32], usize> = HashMap::new();
    let mut site = |label: Label,
                    tmpl: String,
                    why: Option<String>,
                    (diff, shown): (SiteDiff, SiteDiff),
                    span: Option<usize>,
                    ctx: &str| {
        use sha2::Digest;
        let base = format!(
            "{}\0{}\0{}\0{}\0{ctx}",
            entry.path,
            label_text(&label),
            diff.before,
            diff.after
        );
        let n = seen.entry(sha2::Sha256::digest(&base).into()).or_insert(0);
        *n += 1;
        Prepared {
            id: short_hash(&[&base, &n.to_string()]),
            label,
            tmpl,
            why,
            diff: shown,
            span,
        }
    };
    match sites {
        FileSites::Whole => {
            let what = match (&entry.before, &entry.after) {
                (None, _) => "added file",
                (_, None) => "deleted file",
                _ => "changed file (not text)",
            };
            let diff = SiteDiff {
                path: entry.path.clone(),
                line: 1,
                before: String::new(),
                after: format!("({what})"),
            };
            out.push(site(
                Label::None,
                what.to_string(),
                None,
                (diff.clone(), diff),
                None,
                "",
            ));
        }
        FileSites::Text { before, spans } => {
            let added = added_lines(before, spans);
            let lines = derive::LineStarts::new(before);
            let hit = verified::spans_hit(before, spans, reported);
            for (si, s) in spans.iter().enumerate() {
                if s.kind == SpanKind::Dependent {
                    dependents += 1;
                    continue;
                }
                let why = match s.kind {
                    _ if hit[si] => Some(verified::WHY.to_string()),
                    SpanKind::Differs => Some(
                        "the recipe, re-run on the before side, changes this region otherwise"
                            .to_string(),
                    ),
                    SpanKind::Free if reruns => Some(
                        "no rule or op of the preview makes this change (re-run on the before \
                         side)"
                            .to_string(),
                    ),
                    _ => None,
                };
                let mut tmpl = template::template(
                    &before[s.start..s.end],
                    &s.after,
                    template::indent_at(before, s.start),
                );
                if let Some(added) = &added {
                    tmpl = format!("{tmpl} with {added}");
                }
                let diff = site_diff(&entry.path, before, &lines, s);
                // The enclosing line (no line number) tells equal sites apart.
                let ctx = enclosing(before, s.start);
                out.push(site(s.label.clone(), tmpl, why, diff, Some(si), &ctx));
            }
        }
    }
    (out, dependents)
}

/// The usual change of each rule or op is its largest group; its other groups stand
/// out.
fn mark_outliers(groups: &mut [GroupRec]) {
    let mut largest: HashMap<Label, (usize, usize)> = HashMap::new();
    for (i, g) in groups.iter().enumerate() {
        if g.outlier.is_some() || g.label == Label::None {
            continue;
        }
        let e = largest.entry(g.label.clone()).or_insert((i, 0));
        if g.sites.len() > e.1 {
            *e = (i, g.sites.len());
        }
    }
    for (i, g) in groups.iter_mut().enumerate() {
        if g.outlier.is_some() || g.label == Label::None {
            continue;
        }
        if let Some(&(usual, n)) = largest.get(&g.label) {
            if usual != i {
                g.outlier = Some(format!(
                    "differs from the usual change of its {} ({n} site{})",
                    match g.label {
                        Label::Rule(_) => "rule",
                        _ => "op",
                    },
                    if n == 1 { "" } else { "s" }
                ));
            }
        }
    }
}

/// The lines a file's dependent changes add where nothing was (an import, mostly),
/// as templates (`+import…;`), when every site of the file has one rule or op: part of
/// those sites' change, so an import added in one file only stands apart from the same
/// change elsewhere. `None` when there are none, or the file's sites have several
/// rules or ops (an added line is not told whose it is).
fn added_lines(before: &str, spans: &[derive::Span]) -> Option<String> {
    let mut labels = spans
        .iter()
        .filter(|s| s.kind != SpanKind::Dependent)
        .map(|s| &s.label);
    let first = labels.next()?;
    if labels.any(|l| l != first) {
        return None;
    }
    let mut added: Vec<String> = spans
        .iter()
        .filter(|s| {
            s.kind == SpanKind::Dependent
                && before[s.start..s.end].trim().is_empty()
                && !s.after.trim().is_empty()
        })
        .map(|s| template::template("", &s.after, ""))
        .collect();
    added.sort_unstable();
    added.dedup();
    (!added.is_empty()).then(|| added.join(" "))
}

/// The sites of each text file as the preview's record of sites gives them
/// ([`record`]), `None` for a file it does not give (no record, the file not in it, or
/// its sites not making the file's after text), and a note when the record was refused
/// for some files.
#[allow(clippy::type_complexity)]
fn recorded_sites(
    repo: &Repo,
    preview: &Preview,
    texts: &[Option<(String, String)>],
) -> (Vec<Option<Vec<derive::Span>>>, Vec<String>) {
    let Some(record) = record::read(repo, preview.commit) else {
        return (vec![None; texts.len()], Vec::new());
    };
    let recorded: Vec<Option<Vec<derive::Span>>> = texts
        .par_iter()
        .zip(&preview.entries)
        .map(|(t, e)| {
            let (before, after) = t.as_ref()?;
            let sites = record.sites(&e.path, before, after)?;
            Some(sites.into_iter().map(derive::Span::exact).collect())
        })
        .collect();
    // Files the record has whose sites do not make their after side (a forged or stale
    // record), and text files it does not have (their replacements did not make the
    // staged text: an import, a formatter, a scan's pass that moved text).
    let (mut refused, mut absent) = (0, 0);
    for ((t, e), r) in texts.iter().zip(&preview.entries).zip(&recorded) {
        if t.is_some() && r.is_none() {
            match record.has(&e.path) {
                true => refused += 1,
                false => absent += 1,
            }
        }
    }
    let files = |n: usize| format!("{n} file{}", if n == 1 { "" } else { "s" });
    let mut notes = Vec::new();
    if refused > 0 {
        notes.push(format!(
            "the record of sites staged with the preview does not make the after side of \
             {}: re-derived",
            files(refused)
        ));
    }
    if absent > 0 && recorded.iter().any(Option::is_some) {
        notes.push(format!(
            "{} not in the record of sites (staging's replacements did not make the \
             staged text): re-derived",
            files(absent)
        ));
    }
    (recorded, notes)
}

/// An entry's before and after text (`None`: added, deleted, a mode change, not
/// UTF-8: a site of its own, whole).
fn texts_of(repo: &Repo, e: &crate::txn::StoredEntry) -> Result<Option<(String, String)>, Error> {
    let (Some((b, bm)), Some((a, am))) = (e.before, e.after) else {
        return Ok(None);
    };
    if bm != am {
        return Ok(None);
    }
    let (before, after) = (crate::txn::blob(repo, b)?, crate::txn::blob(repo, a)?);
    match (String::from_utf8(before), String::from_utf8(after)) {
        (Ok(before), Ok(after)) => Ok(Some((before, after))),
        _ => Ok(None),
    }
}

/// How much of the line around a site its shown diff keeps on each side (in
/// characters): minified code puts hundreds of sites on one line of megabytes.
const CONTEXT_CHARS: usize = 160;
/// Where each side of a site's shown diff stops (a site can be a whole bundle), as
/// the HTML file's diffs stop.
const SIDE_BYTES: usize = 32 * 1024;

/// The whole lines a span sits on, before and after (no trailing line break), and
/// the same as shown: at most [`CONTEXT_CHARS`] of the line on either side of the
/// span, each side at most [`SIDE_BYTES`], saying what it left out. A site's id is
/// of the whole lines. `lines` are `before`'s line starts.
fn site_diff(
    path: &str,
    before: &str,
    lines: &derive::LineStarts,
    s: &derive::Span,
) -> (SiteDiff, SiteDiff) {
    let whole = whole_lines(path, before, lines, s);
    let head = s.start - before[..s.start].rfind('\n').map_or(0, |i| i + 1);
    let shown = SiteDiff {
        before: clip(&whole.before, head, s.end.max(s.start) - s.start),
        after: clip(&whole.after, head, s.after.len()),
        ..whole.clone()
    };
    (whole, shown)
}

/// `text` (a site's lines, the site at bytes `head..head + len`) with at most
/// [`CONTEXT_CHARS`] characters kept on either side of the site, and at most
/// [`SIDE_BYTES`] bytes in all, a note included; `…` where it cut.
fn clip(text: &str, head: usize, len: usize) -> String {
    let head = head.min(text.len());
    let stop = (head + len).min(text.len());
    let (pre, post) = (&text[..head], &text[stop..]);
    let mut out = String::new();
    match pre.char_indices().rev().nth(CONTEXT_CHARS - 1) {
        Some((i, _)) if i > 0 => {
            out.push('…');
            out.push_str(&pre[i..]);
        }
        _ => out.push_str(pre),
    }
    out.push_str(&text[head..stop]);
    match post.char_indices().nth(CONTEXT_CHARS) {
        Some((i, _)) => {
            out.push_str(&post[..i]);
            out.push('…');
        }
        None => out.push_str(post),
    }
    if out.len() > SIDE_BYTES {
        let mut cut = SIDE_BYTES - 64;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        let left = out.len() - cut;
        out.truncate(cut);
        out.push_str(&format!("\n… ({left} more bytes left out)"));
    }
    out
}

/// The whole lines a span sits on, before and after (no trailing line break);
/// `lines` are `before`'s line starts.
fn whole_lines(path: &str, before: &str, lines: &derive::LineStarts, s: &derive::Span) -> SiteDiff {
    let line_start = before[..s.start].rfind('\n').map_or(0, |i| i + 1);
    let end = s.end.max(s.start);
    let line_end = if end > s.start && before[..end].ends_with('\n') {
        end
    } else {
        before[end..].find('\n').map_or(before.len(), |i| end + i)
    };
    let before_lines = &before[line_start..line_end];
    let after_lines = format!(
        "{}{}{}",
        &before[line_start..s.start],
        s.after,
        &before[end..line_end]
    );
    SiteDiff {
        path: path.to_string(),
        line: lines.line_of(s.start) + 1,
        before: before_lines.trim_end_matches('\n').to_string(),
        after: after_lines.trim_end_matches('\n').to_string(),
    }
}

/// The nearest line above `at` indented less than `at`'s line (its enclosing
/// declaration, mostly), trimmed: part of a site's id, so that equal changes in
/// different functions have different ids, and none holds a line number.
fn enclosing(text: &str, at: usize) -> String {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let indent = |l: &str| l.len() - l.trim_start().len();
    let own = indent(&text[line_start..]);
    if own == 0 {
        return String::new();
    }
    text[..line_start]
        .lines()
        .rev()
        .take(500)
        .find(|l| !l.trim().is_empty() && indent(l) < own)
        .map(|l| l.trim().chars().take(80).collect())
        .unwrap_or_default()
}

fn label_text(l: &Label) -> String {
    match l {
        Label::Op(o) => format!("op:{o}"),
        Label::Rule(r) => format!("rule:{r}"),
        Label::None => String::new(),
    }
}

/// The first 16 hex digits of SHA-256 over `parts` (each length-prefixed).
fn short_hash(parts: &[&str]) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    let d = h.finalize();
    d.iter().take(8).map(|b| format!("{b:02x}")).collect()
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
