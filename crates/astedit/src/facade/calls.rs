//! Each façade call as one request to an operation, and its report turned into the
//! façade's own type: the path every front end takes (arguments → request → ops).

use astedit_ops::change::ImportFix;
use astedit_ops::ops;
use astedit_ops::ops::input::Input;
use astedit_ops::ops::stage::Audience;
use astedit_ops::ops::stage::DiffOptions;
use astedit_ops::ops::stage::Staging;
use astedit_ops::repo::Repo;
use astedit_ops::report::ResolveReport;
use astedit_ops::report::StageReport;
use serde_json::Value;

use super::edit::Edit;
use super::edit::Kind;
use super::edit::Replace;
use super::edit::Rewrite;
use super::error::Error;
use super::settings::ApplyOptions;
use super::types::from_json;
use super::types::Event;
use super::types::Preview;
use super::types::Resolved;
use super::types::Staged;

/// Who calls: the identity the journal records, and whether programs may run.
pub struct Caller {
    pub agent: Option<String>,
    pub allow_run: bool,
}

/// A call that cannot be cancelled from outside (the library has no signal handler).
fn never() -> astedit_ops::cancel::Cancel {
    astedit_ops::cancel::Cancel::never()
}

/// The verify command's bound when the caller sets none (the CLI's default).
const DEFAULT_VERIFY_TIMEOUT_SECS: u64 = 600;

pub fn stage(owner: &Caller, repo: &Repo, edit: &Edit) -> Result<Staged, Error> {
    let staging = Staging {
        reason: edit.reason.clone(),
        agent: owner.agent.clone(),
        apply: None,
        diff: Some(DiffOptions {
            color: false,
            max_lines: 0,
        }),
        // Repository paths in the report, as the server's.
        audience: Audience::Agent,
        allow_run: owner.allow_run,
    };
    let cancel = never();
    let report = match &edit.kind {
        Kind::Rewrite(rewrite) => ops::edit::run(
            repo,
            &rewrite_request(rewrite, staging),
            ops::edit::EditOptions {
                cancel: &cancel,
                select: None,
            },
        )?,
        Kind::Patch { text, base } => {
            let request = ops::patch::PatchRequest {
                text: text.clone(),
                base: base.clone(),
                staging,
            };
            ops::patch::run(repo, &request, &cancel)?
        }
        Kind::Write {
            path,
            content,
            blob,
        } => {
            let request = ops::replace::WriteRequest {
                path: repo_path(repo, path),
                content: content.clone(),
                blob: blob.clone(),
                staging,
            };
            ops::replace::write(repo, &request, &cancel)?
        }
        Kind::Replace(replace) => {
            let request = replace_request(repo, replace, staging);
            ops::replace::replace(repo, &request, &cancel)?
        }
        Kind::Rules { yaml, paths } => return rules(owner, repo, edit, yaml, paths),
    };
    Ok(staged(report))
}

fn rewrite_request(rewrite: &Rewrite, staging: Staging) -> ops::edit::EditRequest {
    ops::edit::EditRequest {
        input: Input {
            pathspecs: rewrite.paths.clone(),
            lang: rewrite.lang.clone(),
            ..Input::default()
        },
        ops: rewrite.ops.clone(),
        selector: None,
        imports: ImportFix {
            add: rewrite.add_imports.clone(),
            remove: rewrite.remove_imports.clone(),
        },
        staging,
        cache: Default::default(),
        verbose: false,
        fmt: rewrite.fmt,
        allow_fmt: Vec::new(),
    }
}

fn replace_request(
    repo: &Repo,
    replace: &Replace,
    staging: Staging,
) -> ops::replace::ReplaceRequest {
    ops::replace::ReplaceRequest {
        path: repo_path(repo, &replace.path),
        blob: replace.blob.clone(),
        edits: replace
            .edits
            .iter()
            .map(|(old, new, all)| ops::replace::TextEdit {
                old: old.clone(),
                new: new.clone(),
                all: *all,
            })
            .collect(),
        staging,
    }
}

/// A file named by a write or a replacement: a repository path, or an absolute path
/// inside the work tree (made relative to its top).
fn repo_path(repo: &Repo, path: &str) -> String {
    match std::path::Path::new(path).strip_prefix(&repo.workdir) {
        Ok(rel) => rel.to_string_lossy().replace('\\', "/"),
        Err(_) => path.to_string(),
    }
}

/// Rules' fixes, staged as `scan --stage --inline-rules` stages them.
fn rules(
    owner: &Caller,
    repo: &Repo,
    edit: &Edit,
    yaml: &str,
    paths: &[String],
) -> Result<Staged, Error> {
    let request = ops::scan::ScanRequest {
        input: Input {
            pathspecs: paths.to_vec(),
            ..Input::default()
        },
        reason: edit.reason.clone(),
        inline_rules: Some(yaml.to_string()),
        agent: owner.agent.clone(),
        ..ops::scan::ScanRequest::new(astedit_ops::report::scan::ScanMode::Stage, Vec::new())
    };
    let report = ops::scan::run(repo, &request, ops::scan::Consumer::Collect)?;
    let json = serde_json::to_string(&report).unwrap_or_default();
    let files = report.files.iter().flatten();
    Ok(Staged {
        id: report.id.clone(),
        summary: report.summary.clone().unwrap_or_default(),
        changes: report.fixes.unwrap_or(0),
        files: files.map(|f| f.repo_path.clone()).collect(),
        diff: report.diff.clone().unwrap_or_default(),
        json,
    })
}

fn staged(mut report: StageReport) -> Staged {
    let diff = report.text.diff.take().unwrap_or_default();
    Staged {
        id: report.id.clone(),
        summary: report.summary.clone(),
        changes: report.replacements,
        files: report.files.iter().map(|f| f.path.clone()).collect(),
        diff,
        json: serde_json::to_string(&report).unwrap_or_default(),
    }
}

pub fn diff(repo: &Repo, id: &str) -> Result<String, Error> {
    let request = ops::show::ShowRequest {
        id: Some(id.to_string()),
        ..Default::default()
    };
    let report = ops::show::run(repo, &request, &mut |_| Ok(()))?;
    Ok(report.diff.map(|d| d.diff).unwrap_or_default())
}

pub fn list(repo: &Repo) -> Result<Vec<Preview>, Error> {
    let report = ops::list::run(repo, &Default::default())?;
    let rows = serde_json::to_value(&report.previews).unwrap_or(Value::Null);
    Ok(rows
        .as_array()
        .into_iter()
        .flatten()
        .map(|row| Preview {
            id: from_json::string(row, "id"),
            commit: from_json::string(row, "commit"),
            time: from_json::string(row, "time"),
            kind: from_json::string(row, "kind"),
            summary: from_json::string(row, "summary"),
            reason: from_json::opt(row, "reason"),
            agent: from_json::opt(row, "agent"),
            files: from_json::strings(row, "files"),
            origin: from_json::origin(row),
            json: row.to_string(),
        })
        .collect())
}

pub fn apply(
    owner: &Caller,
    repo: &Repo,
    id: &str,
    options: &ApplyOptions,
) -> Result<Resolved, Error> {
    let commit = options
        .commit
        .as_ref()
        .map(|subject| Some(subject.clone()).filter(|s| !s.is_empty()));
    let verify = options.verify.clone().map(|line| {
        let secs = options
            .verify_timeout
            .map_or(DEFAULT_VERIFY_TIMEOUT_SECS, |d| d.as_secs());
        ops::apply::VerifyPlan::shell(line, secs)
    });
    let request = ops::apply::ApplyRequest::new(
        Some(id.to_string()),
        false,
        Vec::new(),
        ops::apply::ApplyOptions {
            reason: options.reason.clone(),
            index: options.index || commit.is_some(),
            commit,
            agent: owner.agent.clone(),
            allow_run: owner.allow_run,
        },
        verify,
    )
    .map_err(astedit_ops::Error::from)?;
    resolved(ops::review::apply::run(repo, &request, &never())?)
}

pub fn resolved(report: ResolveReport) -> Result<Resolved, Error> {
    let v = serde_json::to_value(&report).unwrap_or(Value::Null);
    Ok(Resolved {
        id: report.id.clone(),
        action: from_json::action(&v),
        written: report.written.clone(),
        deleted: report.deleted.clone(),
        files: report.files.clone(),
        commit: report.commit.clone(),
        reason: report.reason.clone(),
        json: v.to_string(),
    })
}

pub fn journal(repo: &Repo, max: usize) -> Result<Vec<Event>, Error> {
    let request = ops::log::LogRequest {
        id: None,
        session: None,
        max_count: max,
        patch: false,
        all_worktrees: false,
    };
    let report = ops::log::run(repo, &request)?;
    let events = serde_json::to_value(&report.events).unwrap_or(Value::Null);
    Ok(events
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| Event {
            event: from_json::string(e, "event"),
            id: from_json::string(e, "id"),
            time: from_json::string(e, "time"),
            who: from_json::string(e, "who"),
            agent: from_json::opt(e, "agent"),
            reason: from_json::opt(e, "reason"),
            files: from_json::strings(e, "files"),
            json: e.to_string(),
        })
        .collect())
}
