/*!
`apply` obeying review decisions, and `split` by them.

Once a preview has decisions this repository obeys (made here, or signed by an
allowed signer), `apply ID` applies the accepted sites, drops the rejected ones and
leaves the undecided ones pending as a preview of their own, based on the accepted
part (as `apply ID -- PATHSPEC` leaves the paths it did not select). A dependent
change (an added import, an `edits:` target, a formatter's hunk) is kept exactly when
one of its sites is: those inside the innermost syntax node holding it and a site
(`Model::dependents`); it goes with the accepted part when one of them is accepted,
else with the undecided part when one of them is undecided. `apply --all` applies the whole
preview as staged.

`split` replaces the preview by previews of its accepted sites, one per accepted
group or one per pathspec, and one of the sites no part took (undecided, or accepted
under no pathspec), each on the preview's before side; rejected sites are dropped, as
`apply` drops them.
*/

use std::collections::BTreeMap;

use super::derive::splice;
use super::derive::FileSites;
use super::derive::SpanKind;
use super::Decision;
use super::Model;
use super::ReviewError;
use crate::ops::apply::resolved;
use crate::ops::apply::ApplyRequest;
use crate::repo::Repo;
use crate::report::Action;
use crate::report::ResolveReport;
use crate::txn::StoredEntry;
use crate::Error;

pub use crate::report::review::CutCounts;
pub use crate::report::review::SplitPart;
pub use crate::report::review::SplitReport;

/// Which part a site goes to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Picked,
    Rest,
    Dropped,
}

impl Model {
    /// The part each site goes to under the decisions obeyed here.
    fn part_of(&self, site: usize) -> Part {
        match self.record.obeyed.get(&self.sites[site].id) {
            Some(Decision::Accept) => Part::Picked,
            Some(Decision::Reject) => Part::Dropped,
            None => Part::Rest,
        }
    }

    /// Whether any decision is obeyed here.
    pub fn has_obeyed_decisions(&self) -> bool {
        self.sites
            .iter()
            .any(|s| self.record.obeyed.contains_key(&s.id))
    }

    /// Whether any site has a decision shown (obeyed or fetched): a preview that only
    /// inherits decisions none of its sites has (the undecided remainder of an apply)
    /// applies as any other.
    pub fn has_shown_decisions(&self) -> bool {
        self.sites
            .iter()
            .any(|s| self.record.shown.contains_key(&s.id))
    }

    /// The text of file `fi` with the sites `keep` takes made, and each dependent
    /// change one of whose sites it takes ([`Model::dependents`]); `None` for a whole
    /// entry.
    fn text_with(&self, fi: usize, keep: &dyn Fn(usize) -> bool) -> Option<String> {
        let FileSites::Text { before, spans } = &self.files[fi].sites else {
            return None;
        };
        let by_span: BTreeMap<usize, usize> = self
            .sites
            .iter()
            .enumerate()
            .filter(|(_, s)| s.file == fi)
            .filter_map(|(i, s)| s.span.map(|sp| (sp, i)))
            .collect();
        let dependents = self.dependents(fi);
        let parts = spans.iter().enumerate().filter_map(|(si, s)| {
            let take = match by_span.get(&si) {
                Some(&site) => keep(site),
                None => dependents
                    .get(&si)
                    .is_some_and(|sites| sites.iter().any(|&s| keep(s))),
            };
            take.then_some((s.start, s.end, s.after.as_str()))
        });
        Some(splice(before, parts))
    }

    /// The sites each dependent change of file `fi` goes with (by its span's index):
    /// those inside the innermost syntax node of the before text that holds both the
    /// change and a site. An `edits:` target (the function made `async`) holds the
    /// matches that asked for it; an import holds none, and goes with every site of
    /// the file, as the rule's imports are added wherever it fixed something. A file
    /// no parser reads: every site of the file.
    fn dependents(&self, fi: usize) -> BTreeMap<usize, Vec<usize>> {
        let FileSites::Text { before, spans } = &self.files[fi].sites else {
            return BTreeMap::new();
        };
        let deps: Vec<usize> = (0..spans.len())
            .filter(|&i| spans[i].kind == SpanKind::Dependent)
            .collect();
        if deps.is_empty() {
            return BTreeMap::new();
        }
        let sites: Vec<(usize, std::ops::Range<usize>)> = self
            .file_sites(fi)
            .filter_map(|s| {
                self.sites[s]
                    .span
                    .map(|sp| (s, spans[sp].start..spans[sp].end))
            })
            .collect();
        let every: Vec<usize> = sites.iter().map(|(s, _)| *s).collect();
        let path = &self.preview.entries[self.files[fi].entry].path;
        let Some(lang) = crate::files::language_of(path) else {
            return deps.into_iter().map(|d| (d, every.clone())).collect();
        };
        // Each change without the blank space around it: a line's indentation is not in
        // the node that starts after it.
        let held: Vec<std::ops::Range<usize>> = deps
            .iter()
            .map(|&d| trimmed(before, spans[d].start, spans[d].end))
            .collect();
        let nodes = lang.enclosing(before, &held);
        deps.into_iter()
            .zip(nodes)
            .map(|(d, nodes)| {
                let owners = nodes
                    .iter()
                    .find_map(|n| {
                        let inside: Vec<usize> = sites
                            .iter()
                            .filter(|(_, r)| n.start <= r.start && r.end <= n.end)
                            .map(|(s, _)| *s)
                            .collect();
                        (!inside.is_empty()).then_some(inside)
                    })
                    .unwrap_or_else(|| every.clone());
                (d, owners)
            })
            .collect()
    }

    /// The sites of file `fi`.
    fn file_sites(&self, fi: usize) -> impl Iterator<Item = usize> + '_ {
        self.sites
            .iter()
            .enumerate()
            .filter(move |(_, s)| s.file == fi)
            .map(|(i, _)| i)
    }

    /// The preview cut by the decisions obeyed here: the accepted part (entries on
    /// the before side) and the undecided part (entries on the accepted part's after
    /// side). New blobs are written.
    pub fn cut(
        &self,
        repo: &Repo,
    ) -> Result<(Vec<StoredEntry>, Vec<StoredEntry>, CutCounts), Error> {
        let mut counts = CutCounts {
            obeyed: true,
            ..CutCounts::default()
        };
        for i in 0..self.sites.len() {
            match self.part_of(i) {
                Part::Picked => counts.accepted += 1,
                Part::Rest => counts.undecided += 1,
                Part::Dropped => counts.rejected += 1,
            }
        }
        let (mut picked, mut rest) = (Vec::new(), Vec::new());
        for (fi, f) in self.files.iter().enumerate() {
            let e = &self.preview.entries[f.entry];
            let parts: Vec<Part> = self.file_sites(fi).map(|s| self.part_of(s)).collect();
            let any = |p: Part| parts.contains(&p);
            let Some(mode) = e.after.or(e.before).map(|(_, m)| m) else {
                continue;
            };
            let Some(accepted) = self.text_with(fi, &|s| self.part_of(s) == Part::Picked) else {
                // A whole entry: one site.
                match parts.first() {
                    Some(Part::Picked) => picked.push(e.clone()),
                    Some(Part::Rest) => rest.push(e.clone()),
                    _ => {}
                }
                continue;
            };
            let pending = self
                .text_with(fi, &|s| self.part_of(s) != Part::Dropped)
                .unwrap_or_default();
            let before = e.before;
            let mid = if any(Part::Picked) {
                let blob = crate::txn::keep_blob(repo, accepted.as_bytes())?;
                let mid = Some((blob, mode));
                if mid != before {
                    picked.push(StoredEntry {
                        path: e.path.clone(),
                        before,
                        after: mid,
                    });
                }
                mid
            } else {
                before
            };
            if pending != accepted {
                let blob = crate::txn::keep_blob(repo, pending.as_bytes())?;
                rest.push(StoredEntry {
                    path: e.path.clone(),
                    before: mid,
                    after: Some((blob, mode)),
                });
            }
        }
        Ok((picked, rest, counts))
    }

    /// The preview's entries holding only the sites `keep` takes (and their dependent
    /// changes), each on the before side; new blobs are written.
    fn entries_with(
        &self,
        repo: &Repo,
        keep: &dyn Fn(usize) -> bool,
    ) -> Result<Vec<StoredEntry>, Error> {
        let mut out = Vec::new();
        for (fi, f) in self.files.iter().enumerate() {
            let e = &self.preview.entries[f.entry];
            if !self.file_sites(fi).any(keep) {
                continue;
            }
            let after = match (self.text_with(fi, keep), e.after) {
                (Some(text), Some((_, mode))) => {
                    Some((crate::txn::keep_blob(repo, text.as_bytes())?, mode))
                }
                _ => e.after,
            };
            if after != e.before {
                out.push(StoredEntry {
                    path: e.path.clone(),
                    before: e.before,
                    after,
                });
            }
        }
        Ok(out)
    }

    /// The metadata of a part of the preview holding `entries`: the preview's, its
    /// summary saying which part of it this is.
    fn part_meta(&self, what: &str, entries: &[StoredEntry]) -> crate::change::PreviewMeta {
        let p = &self.preview;
        let mut meta = p.meta.clone();
        meta.summary = format!(
            "{} ({what} of {})",
            p.meta.summary.lines().next().unwrap_or_default(),
            p.id
        );
        let files: std::collections::HashSet<&str> =
            entries.iter().map(|e| e.path.as_str()).collect();
        meta.files.retain(|f| files.contains(f.path.as_str()));
        if let serde_json::Value::Object(details) = &mut meta.details {
            details.insert("split_from".into(), p.id.clone().into());
        }
        crate::txn::mark_selected(&mut meta, "review");
        meta
    }
}

/// Bytes `start..end` of `text` without the blank space at either end (an empty range
/// where they are all blank, at its start).
fn trimmed(text: &str, start: usize, end: usize) -> std::ops::Range<usize> {
    let part = &text[start..end];
    let lead = part.len() - part.trim_start().len();
    let kept = part.trim().len();
    if kept == 0 {
        start..start
    } else {
        start + lead..start + lead + kept
    }
}

/// How `split` cuts the accepted sites.
#[derive(Debug, Clone)]
pub enum SplitBy {
    /// One preview per accepted group.
    Group,
    /// One preview per pathspec (each relative to the current folder).
    Pathspecs(Vec<String>),
}

/// What `apply` of a reviewed preview did.
pub struct Applied {
    pub report: crate::txn::ApplyReport,
    pub counts: CutCounts,
}

/// Applies pending preview `id` as its decisions say (see the module's notes).
pub fn apply(
    repo: &Repo,
    model: &Model,
    opts: &crate::txn::ApplyOptions,
) -> Result<Applied, Error> {
    let (picked, rest, counts) = model.cut(repo)?;
    if picked.is_empty() {
        return Err(ReviewError::NothingAccepted(model.preview.id.clone()).into());
    }
    let report = crate::txn::apply_cut(repo, &model.preview.id, &picked, &rest, opts)?;
    Ok(Applied { report, counts })
}

/// Replaces pending preview `id` by previews of its accepted sites (one per accepted
/// group, or per pathspec) and one of the sites no part took (undecided, or accepted
/// under no pathspec); its rejected sites are dropped. Each part is on the preview's
/// before side.
pub fn split(repo: &Repo, model: &Model, by: &SplitBy) -> Result<SplitReport, Error> {
    // The parts carry the preview's recipe and are made here: not of a fetched one that
    // runs a program.
    crate::ops::trust::check_derive(repo, &model.preview)?;
    let picked = |s: usize| model.part_of(s) == Part::Picked;
    // Each cut: what it is of, and its sites.
    let mut cuts: Vec<(String, Vec<usize>)> = Vec::new();
    match by {
        SplitBy::Group => {
            for group in &model.groups {
                let sites: Vec<usize> =
                    group.sites.iter().copied().filter(|&s| picked(s)).collect();
                if !sites.is_empty() {
                    cuts.push((group.key.clone(), sites));
                }
            }
        }
        SplitBy::Pathspecs(specs) => {
            let paths: Vec<String> = model
                .preview
                .entries
                .iter()
                .map(|e| e.path.clone())
                .collect();
            let mut taken = std::collections::BTreeSet::new();
            for spec in specs {
                let chosen = crate::files::select_paths(repo, std::slice::from_ref(spec), &paths)?;
                // A path two pathspecs select goes to the first.
                let chosen: std::collections::BTreeSet<String> =
                    chosen.into_iter().filter(|p| !taken.contains(p)).collect();
                taken.extend(chosen.iter().cloned());
                let sites: Vec<usize> = (0..model.sites.len())
                    .filter(|&s| picked(s) && chosen.contains(&model.sites[s].diff.path))
                    .collect();
                if !sites.is_empty() {
                    cuts.push((spec.clone(), sites));
                }
            }
        }
    }
    if cuts.is_empty() {
        return Err(ReviewError::NothingToSplit(model.preview.id.clone()).into());
    }
    let mut in_part = vec![false; model.sites.len()];
    let mut parts = Vec::with_capacity(cuts.len() + 1);
    for (of, sites) in &cuts {
        for &s in sites {
            in_part[s] = true;
        }
        let entries = model.entries_with(repo, &|s| sites.binary_search(&s).is_ok())?;
        parts.push(crate::txn::Part {
            meta: model.part_meta(&format!("accepted sites: {of}"), &entries),
            entries,
            label: of.clone(),
        });
    }
    let rest = model.entries_with(repo, &|s| !in_part[s] && model.part_of(s) != Part::Dropped)?;
    let has_rest = !rest.is_empty();
    if has_rest {
        parts.push(crate::txn::Part {
            meta: model.part_meta("the sites no part took", &rest),
            entries: rest,
            label: "rest".into(),
        });
    }
    let made = crate::txn::split_cut(repo, &model.preview.id, &parts)?;
    let mut out: Vec<SplitPart> = made
        .iter()
        .zip(&parts)
        .map(|(p, part)| SplitPart {
            id: p.id.clone(),
            of: part.label.clone(),
            files: part.entries.iter().map(|e| e.path.clone()).collect(),
        })
        .collect();
    let remainder = if has_rest { out.pop() } else { None };
    Ok(SplitReport {
        schema_version: crate::report::Version,
        preview: model.preview.id.clone(),
        parts: out,
        remainder,
    })
}

/// `apply` as every front end runs it: a whole apply of a preview with review
/// decisions obeys them, anything else is [`crate::ops::apply::run_cancellable`].
pub fn run(
    repo: &Repo,
    request: &ApplyRequest,
    cancel: &crate::cancel::Cancel,
) -> Result<ResolveReport, Error> {
    match obeying_decisions(repo, request)? {
        Some(report) => Ok(report),
        None => crate::ops::apply::run_cancellable(repo, request, cancel),
    }
}

/// A whole apply of a preview with review decisions: the accepted sites applied, the
/// rejected dropped, the undecided left pending ([`crate::ops::review::apply`]).
/// `None`: the preview has no decisions, or the request is not a whole apply, or
/// `--all`. Decisions none of which is obeyed here (fetched) leave the apply whole,
/// and the report says so.
fn obeying_decisions(repo: &Repo, request: &ApplyRequest) -> Result<Option<ResolveReport>, Error> {
    if !request.obeys_decisions() {
        return Ok(None);
    }
    let Some(model) = super::decided(repo, request.id())? else {
        return Ok(None);
    };
    if !model.has_shown_decisions() {
        return Ok(None);
    }
    let options = &crate::txn::ApplyOptions::from(request.options());
    if !model.has_obeyed_decisions() {
        if request.verifies() {
            return Ok(None);
        }
        let applied = crate::txn::apply(repo, Some(model.preview_id()), options)?;
        let mut report = resolved(
            &applied,
            Action::Applied,
            options.index,
            options.reason.clone(),
        );
        report.review = Some(crate::report::review::CutCounts::default());
        return Ok(Some(report));
    }
    if request.verifies() {
        return Err(crate::error::UsageError(format!(
            "preview {} has review decisions, and verify checks the whole preview: apply \
             --all --verify applies it whole",
            model.preview_id()
        ))
        .into());
    }
    let applied = apply(repo, &model, options)?;
    let mut report = resolved(
        &applied.report,
        Action::Applied,
        options.index,
        options.reason.clone(),
    );
    report.review = Some(applied.counts);
    Ok(Some(report))
}
