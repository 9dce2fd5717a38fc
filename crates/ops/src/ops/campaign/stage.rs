//! `campaign stage`: clone or fetch each repository and stage the change there through
//! the same ops as `edit`, `scan --stage` and `patch`; each repository's result is one
//! state commit, a failure recorded with its reason.

use std::path::Path;
use std::path::PathBuf;

use super::clone::current_base;
use super::clone::local_dir;
use super::clone::sync_clone;
use super::outcome;
use super::record;
use super::Loaded;
use crate::cancel::Cancel;
use crate::ops::stage::Audience;
use crate::ops::stage::Staging;
use crate::repo::Repo;
use crate::report::campaign::CampaignReport;
use crate::report::campaign::ForgeKind;
use crate::report::campaign::RepoOutcome;
use crate::report::campaign::RepoSpec;
use crate::report::campaign::RepoState;
use crate::report::campaign::RepoStatus;
use crate::report::ScanMode;
use crate::report::Version;
use crate::Error;

pub struct StageRequest {
    pub spec: Loaded,
    /// Where clones live, one folder per repository key.
    pub workspace: PathBuf,
    /// Only shard `(I, N)`; the state goes to the shard's ref.
    pub shard: Option<(usize, usize)>,
    /// How many repositories are cloned and staged at the same time.
    pub at_once: usize,
}

/// What staging one repository found.
struct Staged {
    checkout: PathBuf,
    base: Option<String>,
    base_commit: Option<String>,
    preview: Option<String>,
    files: Vec<String>,
    replacements: usize,
    /// Files that do not parse, and nothing staged.
    parse_failure: Option<String>,
}

/// `campaign stage`: the spec's repositories and those its `[targets]` find now.
pub fn stage(repo: &Repo, req: &StageRequest) -> Result<CampaignReport, Error> {
    if req.spec.spec.targets.is_none() {
        return stage_listed(repo, req);
    }
    let (spec, from) = super::with_targets(req.spec.clone())?;
    let resolved = StageRequest {
        spec,
        workspace: req.workspace.clone(),
        shard: req.shard,
        at_once: req.at_once,
    };
    let mut report = stage_listed(repo, &resolved)?;
    let mut by_source: Vec<(String, usize)> = Vec::new();
    for (_, why) in &from {
        match by_source.iter_mut().find(|(w, _)| w == why) {
            Some((_, n)) => *n += 1,
            None => by_source.push((why.clone(), 1)),
        }
    }
    for (why, n) in by_source {
        report.notes.push(format!(
            "targets: {n} {} from {why}",
            if n == 1 { "repository" } else { "repositories" }
        ));
    }
    Ok(report)
}

fn stage_listed(repo: &Repo, req: &StageRequest) -> Result<CampaignReport, Error> {
    let name = &req.spec.spec.name;
    let refname = match req.shard {
        Some((i, n)) => format!("{}{i}-of-{n}", super::shard_prefix(name)),
        None => super::state_ref(name),
    };
    let mut state = super::read_state(repo, &refname)?;
    let mut outcomes = Vec::new();
    let mut notes = Vec::new();
    if let Some((i, n)) = req.shard {
        notes.push(format!("shard {i}/{n}: state in {refname}"));
    }
    // Each repository with its entry as this run found it.
    let items: Vec<(usize, &String, &RepoSpec, Option<RepoState>)> = req
        .spec
        .repos
        .iter()
        .enumerate()
        .filter(|(order, _)| super::in_shard(*order, req.shard))
        .map(|(order, (key, spec))| (order, key, spec, state.repos.get(key).cloned()))
        .collect();
    super::pool::in_order_apart(
        &items,
        req.at_once,
        None,
        // Two entries may name one local checkout: they are staged one after the other.
        |(_, key, spec, _)| {
            spec.path
                .as_ref()
                .map(|_| checkout_of(&req.workspace, key, spec))
        },
        |(order, key, spec, previous)| stage_entry(req, *order, key, spec, previous.as_ref()),
        |_| true,
        |(_, key, _, _), result| {
            match result {
                Some(Step::Skipped(o)) => outcomes.push(o),
                Some(Step::Done {
                    entry,
                    action,
                    note,
                    same,
                }) => {
                    if !same {
                        record(
                            repo,
                            &mut state,
                            std::slice::from_ref(entry.as_ref()),
                            &format!("stage {key}: {action}"),
                            &[],
                        )?;
                    }
                    outcomes.push(outcome(&entry, action, note));
                }
                None => {}
            }
            Ok(())
        },
    )?;
    Ok(CampaignReport {
        schema_version: Version,
        name: name.clone(),
        command: "stage".into(),
        state_commit: state.commit.map(|c| c.to_string()),
        totals: super::totals(state.repos.values()),
        outcomes,
        notes,
    })
}

/// What staging one repository came to.
enum Step {
    /// Left as it was (past staging, or staged on the same base).
    Skipped(RepoOutcome),
    /// Its new entry; `same` when it equals the one recorded (nothing to record).
    Done {
        entry: Box<RepoState>,
        action: &'static str,
        note: Option<String>,
        same: bool,
    },
}

/// Stages one repository (on a worker thread: no access to the state).
fn stage_entry(
    req: &StageRequest,
    order: usize,
    key: &str,
    spec: &RepoSpec,
    previous: Option<&RepoState>,
) -> Step {
    // A repository past staging is refresh's and publish's business.
    if let Some(p) = previous {
        if !matches!(
            p.status,
            RepoStatus::NoChange | RepoStatus::Failed | RepoStatus::Staged
        ) {
            return Step::Skipped(outcome(
                p,
                "skipped",
                Some(format!("already {}", p.status.name())),
            ));
        }
    }
    let mut entry = RepoState {
        key: key.to_string(),
        order,
        source: spec.url.clone().or(spec.path.clone()).unwrap_or_default(),
        local: spec.path.is_some(),
        checkout: None,
        base: spec.base.clone(),
        base_commit: None,
        preview: None,
        files: Vec::new(),
        file_count: 0,
        replacements: 0,
        status: RepoStatus::Failed,
        reason: None,
        branch: Some(req.spec.branch()),
        pushed_commit: None,
        pr_url: None,
        pr_number: None,
        checks: None,
        review: None,
        canary: false,
        forge: Some(spec.forge.unwrap_or(req.spec.spec.forge)).filter(|f| *f != ForgeKind::Github),
        merged_by: None,
        updated: super::now(),
    };
    // Staged on the same base already: nothing to redo.
    if let Some(p) = previous {
        if p.status == RepoStatus::Staged {
            let dir = checkout_of(&req.workspace, key, spec);
            if let Ok(now) = current_base(&dir, spec) {
                if now.1.as_deref() == p.base_commit.as_deref() && now.1.is_some() {
                    return Step::Skipped(outcome(p, "skipped", Some("already staged".into())));
                }
            }
        }
    }
    let (action, note) = match stage_one(&req.spec, &req.workspace, key, spec) {
        Ok(s) => {
            entry.checkout = Some(s.checkout.display().to_string());
            entry.base = s.base;
            entry.base_commit = s.base_commit;
            entry.file_count = s.files.len();
            entry.files = s.files;
            entry.replacements = s.replacements;
            // A file that does not parse may hide matches: such a repository is
            // not published (its preview, if any, stays named for a look).
            entry.preview = s.preview.clone();
            match (s.preview, s.parse_failure) {
                (_, Some(why)) => {
                    entry.status = RepoStatus::Failed;
                    entry.reason = Some(why.clone());
                    ("failed", Some(why))
                }
                (Some(_), None) => {
                    entry.status = RepoStatus::Staged;
                    ("staged", None)
                }
                (None, None) => {
                    entry.status = RepoStatus::NoChange;
                    entry.reason = Some("nothing matches".into());
                    ("no-change", None)
                }
            }
        }
        Err(why) => {
            entry.status = RepoStatus::Failed;
            entry.reason = Some(why.clone());
            ("failed", Some(why))
        }
    };
    // A rerun that finds the same is not a change of state.
    let same = previous.is_some_and(|p| {
        let mut p = p.clone();
        p.updated.clone_from(&entry.updated);
        serde_json::to_value(&p).ok() == serde_json::to_value(&entry).ok()
    });
    Step::Done {
        entry: Box::new(entry),
        action,
        note,
        same,
    }
}

/// The checkout of a repository: the local path, or its clone in the workspace.
fn checkout_of(workspace: &Path, key: &str, spec: &RepoSpec) -> PathBuf {
    match &spec.path {
        Some(p) => local_dir(p),
        None => workspace.join(key),
    }
}

fn stage_one(
    loaded: &Loaded,
    workspace: &Path,
    key: &str,
    spec: &RepoSpec,
) -> Result<Staged, String> {
    let (checkout, base, base_commit) = if spec.path.is_some() {
        let dir = checkout_of(workspace, key, spec);
        let (base, commit) = current_base(&dir, spec)?;
        (dir, base, commit)
    } else {
        let (dir, base, commit) = sync_clone(workspace, key, spec)?;
        (dir, Some(base), Some(commit))
    };
    let repo = Repo::discover_from(&checkout).map_err(|e| Error::from(e).to_string())?;
    let (preview, files, replacements, parse_errors) =
        run_change(&repo, loaded, spec).map_err(|e| e.to_string())?;
    let parse_failure = (!parse_errors.is_empty()).then(|| {
        format!(
            "{} file{} do{} not parse: {}",
            parse_errors.len(),
            if parse_errors.len() == 1 { "" } else { "s" },
            if parse_errors.len() == 1 { "es" } else { "" },
            parse_errors.join(", ")
        )
    });
    Ok(Staged {
        checkout,
        base,
        base_commit,
        preview,
        files,
        replacements,
        parse_failure,
    })
}

/// The spec's change in `repo`, through the op the change names: the preview id, its
/// files, replacements, and the files that do not parse.
#[allow(clippy::type_complexity)]
fn run_change(
    repo: &Repo,
    loaded: &Loaded,
    spec: &RepoSpec,
) -> Result<(Option<String>, Vec<String>, usize, Vec<String>), Error> {
    let change = &loaded.spec.change;
    let reason = change
        .reason
        .clone()
        .or_else(|| loaded.spec.pr.title.clone())
        .or_else(|| Some(format!("campaign {}", loaded.spec.name)));
    let staging = Staging {
        reason: reason.clone(),
        agent: None,
        apply: None,
        diff: None,
        audience: Audience::Agent,
        // `campaign stage`: the spec the user gave runs in the campaign's own clones.
        allow_run: true,
    };
    let cancel = Cancel::never();
    if !change.ops.is_empty() {
        // The clone's files as `edit` lists them (its sgconfig.yml's languageGlobs too).
        let req = crate::ops::edit::EditRequest {
            input: crate::ops::input::Input {
                pathspecs: spec.pathspecs.clone(),
                lang: change.lang.clone(),
                ..Default::default()
            },
            ops: change
                .ops
                .iter()
                .map(|o| (o.pattern.clone(), o.rewrite.clone()))
                .collect(),
            selector: None,
            imports: Default::default(),
            staging,
            cache: Default::default(),
            verbose: false,
            fmt: false,
            allow_fmt: Vec::new(),
        };
        let r = crate::ops::edit::run(
            repo,
            &req,
            crate::ops::edit::EditOptions {
                cancel: &cancel,
                select: None,
            },
        )?;
        return Ok((
            r.id,
            r.files.iter().map(|f| f.path.clone()).collect(),
            r.replacements,
            r.diagnostics.parse_errors.paths,
        ));
    }
    if let Some(run) = &change.run {
        return super::run_change::stage(repo, run, spec, staging);
    }
    if let Some(rules) = &change.rules {
        let req = crate::ops::scan::ScanRequest {
            input: crate::ops::input::Input {
                pathspecs: spec.pathspecs.clone(),
                ..Default::default()
            },
            reason,
            ..crate::ops::scan::ScanRequest::new(ScanMode::Stage, vec![loaded.resolve(rules)])
        };
        let r = crate::ops::scan::run(repo, &req, crate::ops::scan::Consumer::Collect)?;
        let files: Vec<String> = r
            .files
            .as_ref()
            .map(|f| f.iter().map(|f| f.path.clone()).collect())
            .unwrap_or_default();
        return Ok((
            r.id,
            files,
            r.fixes.unwrap_or(0),
            r.diagnostics.parse_errors.paths,
        ));
    }
    let path = loaded.resolve(change.patch.as_deref().unwrap_or_default());
    let text = std::fs::read_to_string(&path).map_err(|e| super::CampaignError::Spec {
        path: path.display().to_string(),
        why: e.to_string(),
    })?;
    let req = crate::ops::patch::PatchRequest {
        text,
        base: String::new(),
        staging,
    };
    let r = crate::ops::patch::run(repo, &req, &cancel)?;
    Ok((
        r.id,
        r.files.iter().map(|f| f.path.clone()).collect(),
        r.replacements,
        Vec::new(),
    ))
}
